//! Ollama's native chat (`POST /api/chat`): newline-delimited JSON streams, and its requests as
//! the equivalent Chat Completions request.

use serde_json::{json, Map, Value};

use super::{pieces, Rendered, FRAGMENT};

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
