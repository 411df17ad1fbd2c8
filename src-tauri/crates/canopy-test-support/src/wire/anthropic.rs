//! Anthropic Messages (`POST /v1/messages`): request validation and the SSE stream of a turn.

use serde_json::{json, Value};

use super::{data_line, pieces, Rendered, RequestView, FRAGMENT};

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
