//! The wire formats as the mock server speaks them: request validation (the checks the real APIs
//! make that catch client bugs), a provider-neutral view of a request for rule matching, error bodies,
//! and the byte streams of a scripted turn. One module per format (`openai`, `anthropic`, `ollama`);
//! this one holds what they share: the request view, error bodies, the model list and a turn to render.

mod anthropic;
mod ollama;
mod openai;

pub use anthropic::{anthropic_stream, parse_anthropic};
pub use ollama::{ollama_stream, ollama_to_openai};
pub use openai::{openai_stream, parse_openai};

use serde_json::{json, Map, Value};

use crate::script::{ScriptUsage, StreamError, Turn};

/// Which API a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST /v1/chat/completions`.
    Openai,
    /// `POST /v1/messages`.
    Anthropic,
    /// Ollama's native `POST /api/chat` (newline-delimited JSON).
    Ollama,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Openai => "openai",
            Api::Anthropic => "anthropic",
            Api::Ollama => "ollama",
        }
    }
}

/// What rule matching looks at.
#[derive(Debug, Default)]
pub struct RequestView {
    pub model: String,
    pub system: String,
    /// Text of each user message that has text, in order.
    pub user_texts: Vec<String>,
    /// Every piece of message text, tool call arguments and tool results.
    pub all_texts: Vec<String>,
    pub assistant_count: usize,
    /// OpenAI: `stream_options.include_usage`.
    pub include_usage: bool,
    /// Anthropic: thinking is enabled (with this budget).
    pub thinking_budget: Option<u64>,
}

/// A provider-shaped error body.
pub fn error_body(api: Api, status: u16, message: &str) -> Value {
    match api {
        Api::Openai => {
            let (kind, code) = match status {
                401 | 403 => ("invalid_request_error", Value::from("invalid_api_key")),
                404 => ("invalid_request_error", Value::from("model_not_found")),
                429 => ("requests", Value::from("rate_limit_exceeded")),
                s if s >= 500 => ("server_error", Value::Null),
                _ => ("invalid_request_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        Api::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                s if s >= 500 => "api_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Api::Ollama => json!({ "error": message }),
    }
}

/// The real APIs' context-length error bodies.
pub fn context_length_body(api: Api) -> Value {
    match api {
        Api::Openai => json!({"error": {
            "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded"
        }}),
        Api::Anthropic => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum"
        }}),
        Api::Ollama => json!({"error": "the input length exceeds the context length"}),
    }
}

/// A human-readable default message for a fault status.
pub fn status_message(status: u16) -> &'static str {
    match status {
        429 => "Rate limit reached for requests. Please try again later.",
        500 => "The server had an error while processing your request.",
        502 => "Bad gateway.",
        503 => "The service is temporarily unavailable.",
        529 => "Overloaded",
        _ => "Scripted failure.",
    }
}

/// A tool call ready to stream.
pub struct OutCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Everything needed to render one turn.
pub struct Rendered<'a> {
    pub turn: &'a Turn,
    pub text: &'a str,
    /// Reasoning to stream first (empty: none).
    pub reasoning: &'a str,
    /// Anthropic: thinking is enabled, so reasoning goes out as signed thinking blocks.
    pub thinking: bool,
    /// OpenAI-compatible: an error chunk after the first event, ending the stream.
    pub stream_error: Option<&'a StreamError>,
    pub calls: Vec<OutCall>,
    pub usage: ScriptUsage,
    pub finish_reason: String,
    pub model: &'a str,
    pub message_id: String,
    pub include_usage: bool,
}

/// Splits `s` into pieces of about `n` bytes, on char boundaries.
pub(super) fn pieces(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// Size of the text/argument pieces each delta event carries.
pub(super) const FRAGMENT: usize = 5;

pub(super) fn data_line(out: &mut Vec<u8>, event: Option<&str>, data: &Value) {
    if let Some(e) = event {
        out.extend_from_slice(format!("event: {e}\n").as_bytes());
    }
    out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
}

/// The model list in the shape of `api`; OpenAI-style entries carry OpenRouter's
/// `context_length` and `pricing` where the script gives them.
pub fn models_body(
    api: Api,
    models: &[String],
    details: &std::collections::BTreeMap<String, crate::ModelDetail>,
) -> Value {
    match api {
        Api::Openai | Api::Ollama => json!({
            "object": "list",
            "data": models.iter().map(|m| {
                let mut entry = json!({"id": m, "object": "model", "created": 1_700_000_000u64, "owned_by": "canopy-mock"});
                if let (Some(d), Some(o)) = (details.get(m), entry.as_object_mut()) {
                    if let Some(n) = d.context_length {
                        o.insert("context_length".into(), n.into());
                    }
                    if d.prompt_price.is_some() || d.completion_price.is_some() {
                        o.insert("pricing".into(), json!({"prompt": d.prompt_price, "completion": d.completion_price}));
                    }
                }
                entry
            }).collect::<Vec<_>>(),
        }),
        Api::Anthropic => {
            let data: Vec<Value> = models
                .iter()
                .map(|m| json!({"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}))
                .collect();
            let mut body = Map::new();
            body.insert(
                "first_id".into(),
                models
                    .first()
                    .map_or(Value::Null, |m| Value::from(m.clone())),
            );
            body.insert(
                "last_id".into(),
                models
                    .last()
                    .map_or(Value::Null, |m| Value::from(m.clone())),
            );
            body.insert("has_more".into(), Value::Bool(false));
            body.insert("data".into(), Value::Array(data));
            Value::Object(body)
        }
    }
}
