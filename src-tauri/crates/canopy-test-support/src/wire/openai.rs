//! Chat Completions (`POST /v1/chat/completions`): request validation and the SSE stream of a turn.
//! Ollama's native requests are checked through here too, once converted.

use serde_json::{json, Value};

use super::{data_line, pieces, Rendered, RequestView, FRAGMENT};

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
