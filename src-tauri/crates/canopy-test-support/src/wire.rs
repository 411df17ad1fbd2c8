//! The two wire formats as the mock server speaks them: request validation (the checks the real APIs
//! make that catch client bugs), a provider-neutral view of a request for rule matching, error bodies,
//! and the SSE byte streams of a scripted turn.

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

fn text_of_openai_content(content: &Value) -> Result<String, String> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            let mut out = String::new();
            for part in parts {
                if let Some(t) = part.get("text").and_then(Value::as_str) {
                    out.push_str(t);
                }
            }
            Ok(out)
        }
        other => Err(format!(
            "content must be a string or an array of parts, got {other}"
        )),
    }
}

/// Validates an OpenAI Chat Completions request and extracts the matching view.
pub fn parse_openai(body: &Value) -> Result<RequestView, String> {
    let obj = body
        .as_object()
        .ok_or("request body must be a JSON object")?;
    let model = obj
        .get("model")
        .and_then(Value::as_str)
        .ok_or("you must provide a model parameter")?
        .to_string();
    let has_tools = match obj.get("tools") {
        None | Some(Value::Null) => false,
        Some(Value::Array(tools)) if tools.is_empty() => {
            return Err("Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.".into())
        }
        Some(Value::Array(tools)) => {
            for (i, tool) in tools.iter().enumerate() {
                let ok = tool.get("type").and_then(Value::as_str) == Some("function")
                    && tool.pointer("/function/name").and_then(Value::as_str).is_some();
                if !ok {
                    return Err(format!(
                        "Invalid 'tools[{i}]': expected {{\"type\": \"function\", \"function\": {{\"name\": …}}}}"
                    ));
                }
            }
            true
        }
        Some(_) => return Err("Invalid type for 'tools': expected an array".into()),
    };
    if obj.contains_key("tool_choice") && !has_tools {
        return Err("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.".into());
    }
    let stream = obj.get("stream").and_then(Value::as_bool).unwrap_or(false);
    if obj.contains_key("stream_options") && !stream {
        return Err(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.".into(),
        );
    }
    if !stream {
        return Err("this mock server only serves streaming requests ('stream': true)".into());
    }
    let include_usage = obj
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let messages = obj
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("Missing required parameter: 'messages'.")?;
    if messages.is_empty() {
        return Err(
            "Invalid 'messages': empty array. Expected an array with minimum length 1.".into(),
        );
    }
    let mut view = RequestView {
        model,
        include_usage,
        ..RequestView::default()
    };
    // Tool call ids of the last assistant message that still await a `tool` message.
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("Missing required parameter: 'messages[{i}].role'."))?;
        if role != "tool" && !pending.is_empty() {
            return Err(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                pending.join(", ")
            ));
        }
        let content = m.get("content").unwrap_or(&Value::Null);
        let text = text_of_openai_content(content).map_err(|e| format!("messages[{i}]: {e}"))?;
        match role {
            "system" | "developer" => {
                if !view.system.is_empty() {
                    view.system.push('\n');
                }
                view.system.push_str(&text);
            }
            "user" => {
                if content.is_null() {
                    return Err(format!(
                        "Invalid value for 'messages[{i}].content': a user message needs content."
                    ));
                }
                view.user_texts.push(text.clone());
                view.all_texts.push(text);
            }
            "assistant" => {
                view.assistant_count += 1;
                let calls = match m.get("tool_calls") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(calls)) => calls.clone(),
                    Some(_) => {
                        return Err(format!(
                            "Invalid type for 'messages[{i}].tool_calls': expected an array"
                        ))
                    }
                };
                if calls.is_empty() && content.is_null() {
                    return Err(format!(
                        "Invalid value for 'messages[{i}]': an assistant message needs 'content' or 'tool_calls'."
                    ));
                }
                for (j, c) in calls.iter().enumerate() {
                    let id = c.get("id").and_then(Value::as_str).ok_or_else(|| {
                        format!("Missing required parameter: 'messages[{i}].tool_calls[{j}].id'.")
                    })?;
                    if c.pointer("/function/name")
                        .and_then(Value::as_str)
                        .is_none()
                    {
                        return Err(format!(
                            "Missing required parameter: 'messages[{i}].tool_calls[{j}].function.name'."
                        ));
                    }
                    let args = c.pointer("/function/arguments").ok_or_else(|| {
                        format!("Missing required parameter: 'messages[{i}].tool_calls[{j}].function.arguments'.")
                    })?;
                    let args = args.as_str().ok_or_else(|| {
                        format!("Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': expected a string, but got an object instead.")
                    })?;
                    view.all_texts.push(args.to_string());
                    pending.push(id.to_string());
                }
                view.all_texts.push(text);
            }
            "tool" => {
                let id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        format!("Missing required parameter: 'messages[{i}].tool_call_id'.")
                    })?;
                match pending.iter().position(|p| p == id) {
                    Some(pos) => {
                        pending.remove(pos);
                    }
                    None => {
                        return Err(format!(
                            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages[{i}].tool_call_id = {id})."
                        ))
                    }
                }
                view.all_texts.push(text);
            }
            other => return Err(format!("Invalid value for 'messages[{i}].role': '{other}'")),
        }
    }
    if !pending.is_empty() {
        return Err(format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            pending.join(", ")
        ));
    }
    Ok(view)
}

/// Validates an Anthropic Messages request and extracts the matching view.
pub fn parse_anthropic(body: &Value) -> Result<RequestView, String> {
    let obj = body
        .as_object()
        .ok_or("request body must be a JSON object")?;
    let model = obj
        .get("model")
        .and_then(Value::as_str)
        .ok_or("model: Field required")?
        .to_string();
    match obj.get("max_tokens") {
        Some(v) if v.as_u64().is_some_and(|n| n >= 1) => {}
        Some(_) => return Err("max_tokens: Input should be a positive integer".into()),
        None => return Err("max_tokens: Field required".into()),
    }
    if obj.get("stream").and_then(Value::as_bool) != Some(true) {
        return Err("this mock server only serves streaming requests ('stream': true)".into());
    }
    let has_tools = match obj.get("tools") {
        None => false,
        Some(Value::Array(tools)) => {
            for (i, tool) in tools.iter().enumerate() {
                if tool.get("name").and_then(Value::as_str).is_none()
                    || tool.get("input_schema").is_none()
                {
                    return Err(format!(
                        "tools.{i}: each tool needs 'name' and 'input_schema'"
                    ));
                }
            }
            !tools.is_empty()
        }
        Some(_) => return Err("tools: Input should be a valid list".into()),
    };
    if obj.contains_key("tool_choice") && !has_tools {
        return Err(
            "tool_choice: 'tool_choice' may only be specified while providing 'tools'.".into(),
        );
    }
    let mut view = RequestView {
        model,
        ..RequestView::default()
    };
    match obj.get("system") {
        None => {}
        Some(Value::String(s)) => view.system = s.clone(),
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                let t = b
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("system.{i}: expected a text block"))?;
                if t.is_empty() {
                    return Err(format!("system.{i}: text content blocks must be non-empty"));
                }
                view.system.push_str(t);
            }
        }
        Some(_) => {
            return Err("system: Input should be a valid string or list of text blocks".into())
        }
    }
    let messages = obj
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("messages: Field required")?;
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    let mut uses_tools_in_history = false;
    // tool_use ids of the previous assistant turn, which the very next user turn must answer.
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("messages.{i}.role: Field required"))?;
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) => {
                if s.is_empty() {
                    return Err(format!(
                        "messages.{i}: text content blocks must be non-empty"
                    ));
                }
                vec![json!({"type": "text", "text": s})]
            }
            Some(Value::Array(b)) => b.clone(),
            _ => return Err(format!("messages.{i}.content: Field required")),
        };
        if blocks.is_empty() {
            return Err(format!(
                "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
            ));
        }
        let mut answered: Vec<String> = Vec::new();
        let mut turn_text = String::new();
        let mut tool_uses: Vec<String> = Vec::new();
        for (j, b) in blocks.iter().enumerate() {
            let kind = b
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("messages.{i}.content.{j}.type: Field required"))?;
            match (role, kind) {
                (_, "text") => {
                    let t = b
                        .get("text")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("messages.{i}.content.{j}.text: Field required"))?;
                    if t.is_empty() {
                        return Err(format!(
                            "messages.{i}.content.{j}: text content blocks must be non-empty"
                        ));
                    }
                    turn_text.push_str(t);
                }
                // Signatures and placement are checked in `quirks` when thinking is on.
                ("assistant", "thinking") | ("assistant", "redacted_thinking") => {}
                ("assistant", "tool_use") => {
                    uses_tools_in_history = true;
                    let id = b.get("id").and_then(Value::as_str).ok_or_else(|| {
                        format!("messages.{i}.content.{j}.tool_use.id: Field required")
                    })?;
                    if b.get("name").and_then(Value::as_str).is_none() {
                        return Err(format!(
                            "messages.{i}.content.{j}.tool_use.name: Field required"
                        ));
                    }
                    let input = b.get("input").ok_or_else(|| {
                        format!("messages.{i}.content.{j}.tool_use.input: Field required")
                    })?;
                    if !input.is_object() {
                        return Err(format!(
                            "messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"
                        ));
                    }
                    view.all_texts.push(input.to_string());
                    tool_uses.push(id.to_string());
                }
                ("user", "tool_result") => {
                    uses_tools_in_history = true;
                    let id = b
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| {
                            format!(
                                "messages.{i}.content.{j}.tool_result.tool_use_id: Field required"
                            )
                        })?;
                    if !pending.iter().any(|p| p == id) {
                        return Err(format!(
                            "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        ));
                    }
                    if let Some(is_error) = b.get("is_error") {
                        if !is_error.is_boolean() {
                            return Err(format!("messages.{i}.content.{j}.is_error: Input should be a valid boolean"));
                        }
                    }
                    match b.get("content") {
                        None => {}
                        Some(Value::String(s)) => view.all_texts.push(s.clone()),
                        Some(Value::Array(parts)) => {
                            for (k, p) in parts.iter().enumerate() {
                                let t = p.get("text").and_then(Value::as_str).unwrap_or("");
                                if p.get("type").and_then(Value::as_str) == Some("text") && t.is_empty() {
                                    return Err(format!(
                                        "messages.{i}.content.{j}.content.{k}: text content blocks must be non-empty"
                                    ));
                                }
                                view.all_texts.push(t.to_string());
                            }
                        }
                        Some(_) => {
                            return Err(format!(
                                "messages.{i}.content.{j}.content: Input should be a string or a list of blocks"
                            ))
                        }
                    }
                    answered.push(id.to_string());
                }
                (r, k) => {
                    return Err(format!(
                        "messages.{i}.content.{j}: a '{r}' message cannot hold a '{k}' block"
                    ))
                }
            }
        }
        let missing: Vec<&String> = pending.iter().filter(|p| !answered.contains(p)).collect();
        if !missing.is_empty() {
            return Err(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        match role {
            "user" => {
                if !turn_text.is_empty() {
                    view.user_texts.push(turn_text.clone());
                }
            }
            "assistant" => view.assistant_count += 1,
            other => {
                return Err(format!(
                    "messages.{i}.role: Input should be 'user' or 'assistant', got '{other}'"
                ))
            }
        }
        if !turn_text.is_empty() {
            view.all_texts.push(turn_text);
        }
        pending = tool_uses;
    }
    if !pending.is_empty() {
        return Err(format!(
            "`tool_use` ids were found without `tool_result` blocks immediately after: {}",
            pending.join(", ")
        ));
    }
    if uses_tools_in_history && !has_tools {
        return Err(
            "Requests which include `tool_use` or `tool_result` blocks must define tools.".into(),
        );
    }
    Ok(view)
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
fn pieces(s: &str, n: usize) -> Vec<&str> {
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
const FRAGMENT: usize = 5;

fn openai_chunk(r: &Rendered<'_>, choice: Value) -> Value {
    let mut chunk = json!({
        "id": r.message_id,
        "object": "chat.completion.chunk",
        "created": 1_700_000_000u64,
        "model": r.model,
        "system_fingerprint": "fp_canopy_mock",
        "choices": [choice],
    });
    if r.include_usage {
        if let Some(o) = chunk.as_object_mut() {
            o.insert("usage".into(), Value::Null);
        }
    }
    chunk
}

fn data_line(out: &mut Vec<u8>, event: Option<&str>, data: &Value) {
    if let Some(e) = event {
        out.extend_from_slice(format!("event: {e}\n").as_bytes());
    }
    out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
}

/// The SSE events of a turn in Chat Completions format; returns the body and the byte offset where the
/// first event ends.
pub fn openai_stream(r: &Rendered<'_>) -> (Vec<u8>, usize) {
    let mut events: Vec<Value> = Vec::new();
    let choice = |delta: Value, finish: Value| json!({"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish});
    let headers: Vec<Value> = r
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut h = json!({"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": ""}});
            if let (true, Some(o)) = (r.turn.omit_tool_call_index, h.as_object_mut()) {
                o.remove("index");
            }
            h
        })
        .collect();
    let mut first_header_sent = false;
    if r.text.is_empty() && !headers.is_empty() && !r.turn.interleave_tool_calls {
        // As real servers do without text: the first tool-call header rides on the role chunk.
        events.push(choice(
            json!({"role": "assistant", "content": null, "tool_calls": [headers[0].clone()]}),
            Value::Null,
        ));
        first_header_sent = true;
    } else {
        events.push(choice(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        ));
    }
    for p in pieces(r.reasoning, FRAGMENT) {
        events.push(choice(
            json!({"content": null, "reasoning_content": p}),
            Value::Null,
        ));
    }
    for p in pieces(r.text, FRAGMENT) {
        events.push(choice(json!({"content": p}), Value::Null));
    }
    let mut per_call: Vec<Vec<Value>> = Vec::new();
    for (i, c) in r.calls.iter().enumerate() {
        let mut frags = Vec::new();
        if !(i == 0 && first_header_sent) {
            frags.push(json!({"tool_calls": [headers[i].clone()]}));
        }
        for p in pieces(&c.arguments, FRAGMENT) {
            frags.push(json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}));
        }
        if r.turn.omit_tool_call_index {
            for f in &mut frags {
                if let Some(calls) = f.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    for c in calls.iter_mut().filter_map(Value::as_object_mut) {
                        c.remove("index");
                    }
                }
            }
        }
        per_call.push(frags);
    }
    if r.turn.interleave_tool_calls {
        let longest = per_call.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..longest {
            for frags in &per_call {
                if let Some(f) = frags.get(k) {
                    events.push(choice(f.clone(), Value::Null));
                }
            }
        }
    } else {
        for frags in per_call {
            for f in frags {
                events.push(choice(f, Value::Null));
            }
        }
    }
    events.push(choice(json!({}), Value::from(r.finish_reason.clone())));
    let mut out = Vec::new();
    let mut first_end = 0;
    for (i, c) in events.into_iter().enumerate() {
        data_line(&mut out, None, &openai_chunk(r, c));
        if i == 0 {
            first_end = out.len();
            if let Some(e) = r.stream_error {
                // OpenRouter: the error as a chunk of its own, `finish_reason: "error"`, then the
                // connection ends without `[DONE]`.
                let mut chunk = openai_chunk(
                    r,
                    json!({"index": 0, "delta": {"content": ""}, "finish_reason": "error"}),
                );
                if let Some(o) = chunk.as_object_mut() {
                    o.insert(
                        "error".into(),
                        json!({"code": e.code, "message": e.message}),
                    );
                }
                data_line(&mut out, None, &chunk);
                return (out, first_end);
            }
        }
    }
    let reasoning_tokens = crate::quirks::tokens_of(r.reasoning.len());
    if r.include_usage {
        let mut last = json!({
            "id": r.message_id,
            "object": "chat.completion.chunk",
            "created": 1_700_000_000u64,
            "model": r.model,
            "system_fingerprint": "fp_canopy_mock",
            "choices": [],
            "usage": r.turn.openai_usage.clone().unwrap_or_else(|| json!({
                "prompt_tokens": r.usage.input_tokens,
                "completion_tokens": r.usage.output_tokens + reasoning_tokens,
                "total_tokens": r.usage.input_tokens + r.usage.output_tokens + reasoning_tokens,
                "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            }))
        });
        if let Some(o) = last.as_object_mut() {
            o.entry("service_tier").or_insert(Value::from("default"));
        }
        data_line(&mut out, None, &last);
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    (out, first_end)
}

/// Anthropic's word for an OpenAI-style finish reason.
fn anthropic_stop_reason(reason: &str) -> String {
    match reason {
        "stop" => "end_turn".into(),
        "tool_calls" => "tool_use".into(),
        "length" => "max_tokens".into(),
        other => other.into(),
    }
}

/// The SSE events of a turn in Messages format; returns the body and where the first event ends.
pub fn anthropic_stream(r: &Rendered<'_>) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    data_line(
        &mut out,
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": r.message_id, "type": "message", "role": "assistant", "model": r.model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": r.usage.input_tokens, "output_tokens": 1}
        }}),
    );
    let first_end = out.len();
    let mut index = 0usize;
    let mut pinged = false;
    let mut ping = |out: &mut Vec<u8>| {
        if !pinged {
            pinged = true;
            data_line(out, Some("ping"), &json!({"type": "ping"}));
        }
    };
    let mut thinking_tokens = 0;
    if r.thinking && !r.reasoning.is_empty() {
        thinking_tokens = crate::quirks::tokens_of(r.reasoning.len());
        data_line(
            &mut out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        );
        ping(&mut out);
        for p in pieces(r.reasoning, FRAGMENT) {
            data_line(
                &mut out,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}}),
            );
        }
        let signature = crate::quirks::signature_for(r.reasoning);
        data_line(
            &mut out,
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}}),
        );
        data_line(
            &mut out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    if let (true, Some(data)) = (r.thinking, r.turn.redacted_thinking.as_deref()) {
        data_line(
            &mut out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "redacted_thinking", "data": data}}),
        );
        data_line(
            &mut out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    if !r.text.is_empty() {
        data_line(
            &mut out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        );
        ping(&mut out);
        for p in pieces(r.text, FRAGMENT) {
            data_line(
                &mut out,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}),
            );
        }
        data_line(
            &mut out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    for c in &r.calls {
        data_line(
            &mut out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}}),
        );
        ping(&mut out);
        let mut parts = vec![""];
        parts.extend(pieces(&c.arguments, FRAGMENT));
        for p in parts {
            data_line(
                &mut out,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": p}}),
            );
        }
        data_line(
            &mut out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    ping(&mut out);
    data_line(
        &mut out,
        Some("message_delta"),
        &json!({"type": "message_delta",
                "delta": {"stop_reason": anthropic_stop_reason(&r.finish_reason), "stop_sequence": null},
                "usage": {"output_tokens": r.usage.output_tokens + thinking_tokens}}),
    );
    data_line(
        &mut out,
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    );
    (out, first_end)
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

/// The native chat stream of a turn, as Ollama sends it: one JSON object per line, `thinking` and
/// `content` pieces, tool calls whole (arguments as an object), and a final `done` line with
/// `prompt_eval_count` / `eval_count`. Returns the body and where the first line ends.
pub fn ollama_stream(r: &Rendered<'_>) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut first_end = 0;
    let mut line = |out: &mut Vec<u8>, v: Value| {
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
        if first_end == 0 {
            first_end = out.len();
        }
    };
    let at = "2025-01-01T00:00:00.000000Z";
    line(
        &mut out,
        json!({"model": r.model, "created_at": at, "message": {"role": "assistant", "content": ""}, "done": false}),
    );
    for p in pieces(r.reasoning, FRAGMENT) {
        line(
            &mut out,
            json!({"model": r.model, "created_at": at, "message": {"role": "assistant", "content": "", "thinking": p}, "done": false}),
        );
    }
    for p in pieces(r.text, FRAGMENT) {
        line(
            &mut out,
            json!({"model": r.model, "created_at": at, "message": {"role": "assistant", "content": p}, "done": false}),
        );
    }
    if !r.calls.is_empty() {
        let calls: Vec<Value> = r
            .calls
            .iter()
            .map(|c| {
                let args: Value =
                    serde_json::from_str(&c.arguments).unwrap_or(Value::Object(Map::new()));
                json!({"function": {"name": c.name, "arguments": args}})
            })
            .collect();
        line(
            &mut out,
            json!({"model": r.model, "created_at": at, "message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": false}),
        );
    }
    let reason = if r.finish_reason == "length" {
        "length"
    } else {
        "stop"
    };
    line(
        &mut out,
        json!({"model": r.model, "created_at": at, "message": {"role": "assistant", "content": ""},
               "done": true, "done_reason": reason, "total_duration": 1_000_000u64,
               "prompt_eval_count": r.usage.input_tokens,
               "eval_count": r.usage.output_tokens + crate::quirks::tokens_of(r.reasoning.len())}),
    );
    (out, first_end)
}

/// An Ollama native chat request as the equivalent Chat Completions request, for validation and
/// rule matching: tool calls get ids (the native API has none) and tool messages answer them in
/// order; arguments must be objects, as Ollama requires.
pub fn ollama_to_openai(body: &Value) -> Result<Value, String> {
    let obj = body
        .as_object()
        .ok_or("request body must be a JSON object")?;
    let messages = obj
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("messages is required")?;
    let mut out = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut n = 0usize;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content").and_then(Value::as_str).unwrap_or("");
        match role {
            "system" | "user" => out.push(json!({"role": role, "content": content})),
            "assistant" => {
                let mut msg = json!({"role": "assistant", "content": content});
                if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                    let mut converted = Vec::new();
                    for c in calls {
                        let args = c.pointer("/function/arguments").unwrap_or(&Value::Null);
                        if !args.is_object() {
                            return Err(format!("json: cannot unmarshal {} into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments (messages[{i}])", if args.is_string() { "string" } else { "value" }));
                        }
                        n += 1;
                        let id = format!("ollama_call_{n}");
                        pending.push(id.clone());
                        converted.push(json!({"id": id, "type": "function", "function": {
                            "name": c.pointer("/function/name").cloned().unwrap_or(Value::Null),
                            "arguments": args.to_string()}}));
                    }
                    if let (false, Some(o)) = (converted.is_empty(), msg.as_object_mut()) {
                        o.insert("tool_calls".into(), Value::Array(converted));
                    }
                }
                out.push(msg);
            }
            "tool" => {
                if pending.is_empty() {
                    return Err(format!("messages[{i}]: a tool message must follow an assistant message with tool calls"));
                }
                let id = pending.remove(0);
                out.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
            }
            other => return Err(format!("messages[{i}]: invalid role {other:?}")),
        }
    }
    let mut converted = json!({
        "model": obj.get("model").cloned().unwrap_or(Value::Null),
        "messages": out,
        "stream": obj.get("stream").and_then(Value::as_bool).unwrap_or(true),
    });
    if let (Some(tools), Some(o)) = (obj.get("tools"), converted.as_object_mut()) {
        o.insert("tools".into(), tools.clone());
    }
    Ok(converted)
}
