//! Argument parsing and schemas shared by every tool: one place turns serde errors into
//! `InvalidArguments` that name the offending field, and one place derives the schema the model sees.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::ToolError;

/// Parses a tool's JSON arguments; the error names the field that was unknown, missing or mistyped.
pub(crate) fn parse<T: DeserializeOwned>(args: serde_json::Value) -> Result<T, ToolError> {
    if !args.is_object() {
        return Err(ToolError::InvalidArguments(format!(
            "expected a JSON object of arguments, got {}",
            kind_of(&args)
        )));
    }
    serde_path_to_error::deserialize::<_, T>(args).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner().to_string();
        if path == "." || path.is_empty() {
            // Missing and unknown fields are reported at the top level; serde already names them.
            ToolError::InvalidArguments(inner)
        } else {
            ToolError::InvalidArguments(format!("field `{path}`: {inner}"))
        }
    })
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The JSON schema of `T`, without the meta keys providers do not need.
pub fn schema<T: JsonSchema>() -> serde_json::Value {
    // Inlined sub-schemas: some OpenAI-compatible servers (local models) do not resolve `$ref`.
    let generator = schemars::generate::SchemaSettings::default()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

/// A string argument from a raw (possibly invalid) argument object, for `summarize`.
pub(crate) fn str_field<'a>(args: &'a serde_json::Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(serde_json::Value::as_str)
}
