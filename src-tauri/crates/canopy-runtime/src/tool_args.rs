//! Limits on the tool arguments a model sends: the size above which a call is refused before it
//! runs, the name given to a call that came without one, and how arguments are shortened for the
//! trace (like tool outputs), so a model cannot make a trace grow by megabytes per call.

use serde_json::Value;

/// The most bytes of JSON arguments one tool call may have. Real calls are far smaller (the largest
/// are Write contents, and a model's whole output per turn is well under this); a bigger one is
/// refused with an error result, not run.
pub const MAX_TOOL_ARGUMENT_BYTES: usize = 1024 * 1024;

/// The name a tool call gets when the model sent an empty one. Providers reject an empty name when
/// the history is sent back, so the call is renamed, and its result tells the model what happened.
pub const UNNAMED_TOOL: &str = "unnamed_tool";

/// The key of the object that stands in for arguments over [`MAX_TOOL_ARGUMENT_BYTES`].
const OVERSIZED_KEY: &str = "canopy_oversized_arguments_bytes";

/// Replaces arguments over [`MAX_TOOL_ARGUMENT_BYTES`] by a small object recording their size, as
/// soon as the response arrives: kept in the history, megabytes of arguments would be sent back
/// with every later request and overflow the context, ending the run instead of informing the
/// model; kept in the trace, they would bloat it.
pub fn mark_oversized(call: &mut canopy_protocol::ToolCall) {
    if call.arguments.len() > MAX_TOOL_ARGUMENT_BYTES {
        call.arguments = serde_json::json!({ OVERSIZED_KEY: call.arguments.len() }).to_string();
    }
}

/// The original size of arguments that [`mark_oversized`] replaced.
pub fn oversized(arguments: &str) -> Option<usize> {
    if arguments.len() > 100 || !arguments.contains(OVERSIZED_KEY) {
        return None;
    }
    let v: Value = serde_json::from_str(arguments).ok()?;
    let map = v.as_object()?;
    if map.len() != 1 {
        return None;
    }
    map.get(OVERSIZED_KEY)?.as_u64().map(|n| n as usize)
}

/// The error result for arguments over [`MAX_TOOL_ARGUMENT_BYTES`].
pub fn too_big(bytes: usize) -> String {
    format!(
        "Error: the arguments are {bytes} bytes; a tool call's arguments may be at most {MAX_TOOL_ARGUMENT_BYTES} bytes. The call was not run: send smaller arguments (split a big Write into a Write and Edits)."
    )
}

/// The error result for a call without a tool name.
pub fn unnamed(available: &[&str]) -> String {
    format!(
        "Error: the tool call had no tool name, so nothing was run. Call one of: {}.",
        available.join(", ")
    )
}

/// `text` cut to at most `cap` bytes (at a character boundary) with a note of the full size, or
/// unchanged when it fits.
pub fn cap_text(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}…[cut by the host: {} bytes in all]",
        &text[..end],
        text.len()
    )
}

/// `args` as the trace keeps them: every string longer than `cap` bytes cut by [`cap_text`] (keys
/// and structure kept, so readers still find `path` or `command`). Nesting is bounded by the JSON
/// parser's recursion limit.
pub fn cap_value(args: &Value, cap: usize) -> Value {
    match args {
        Value::String(s) if s.len() > cap => Value::String(cap_text(s, cap)),
        Value::Array(items) => Value::Array(items.iter().map(|v| cap_value(v, cap)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (cap_text(k, cap), cap_value(v, cap)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn oversized_arguments_are_replaced_by_their_size() {
        let mut call = canopy_protocol::ToolCall {
            id: "c".into(),
            name: "Read".into(),
            arguments: format!("{{\"path\":\"{}\"}}", "a".repeat(MAX_TOOL_ARGUMENT_BYTES)),
        };
        let bytes = call.arguments.len();
        mark_oversized(&mut call);
        assert_eq!(oversized(&call.arguments), Some(bytes));
        let mut small = canopy_protocol::ToolCall {
            arguments: r#"{"path":"src/a.rs"}"#.into(),
            ..call
        };
        mark_oversized(&mut small);
        assert_eq!(small.arguments, r#"{"path":"src/a.rs"}"#);
        assert_eq!(oversized(&small.arguments), None);
    }

    #[test]
    fn only_long_strings_are_cut_and_the_cut_says_so() {
        let v = json!({"path": "src/a.rs", "content": "é".repeat(100), "n": 3, "list": ["x".repeat(50)]});
        let capped = cap_value(&v, 21);
        assert_eq!(capped["path"], "src/a.rs");
        assert_eq!(capped["n"], 3);
        assert_eq!(
            capped["content"],
            format!("{}…[cut by the host: 200 bytes in all]", "é".repeat(10))
        );
        assert_eq!(
            capped["list"][0],
            format!("{}…[cut by the host: 50 bytes in all]", "x".repeat(21))
        );
    }
}
