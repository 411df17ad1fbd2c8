//! What the real services reject beyond the wire format, keyed by model id like the services
//! themselves: OpenAI's reasoning models (no `max_tokens`, only the default temperature), models that
//! take no `reasoning_effort`, DeepSeek's reasoner (no `reasoning_content` sent back), and Anthropic
//! extended thinking (thinking blocks with valid signatures kept across tool calls, no temperature,
//! `max_tokens` above the budget). Also the signatures this server hands out, and Ollama's silent
//! prompt truncation.

use serde_json::{json, Value};

/// True for OpenAI reasoning model ids (o1, o3, o4…, the gpt-5 family but its `-chat` variants),
/// with any `vendor/` prefix removed.
pub fn is_openai_reasoning_model(model: &str) -> bool {
    let id = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o = ["o1", "o3", "o4"].iter().any(|p| {
        id.strip_prefix(p)
            .is_some_and(|r| r.is_empty() || r.starts_with('-'))
    });
    o || (id.starts_with("gpt-5") && !id.contains("-chat"))
}

/// True for DeepSeek's reasoning model.
pub fn is_deepseek_reasoner(model: &str) -> bool {
    model.rsplit('/').next().unwrap_or(model) == "deepseek-reasoner"
}

fn openai_error(message: &str, param: &str, code: &str) -> Value {
    json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}})
}

/// OpenAI's 400 body for a parameter a model does not take, exactly as the API words it.
pub fn openai_param_rejection(body: &Value) -> Option<Value> {
    let model = body.get("model").and_then(Value::as_str)?;
    if is_openai_reasoning_model(model) {
        if body.get("max_tokens").is_some() {
            return Some(openai_error(
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            ));
        }
        if let Some(t) = body.get("temperature").filter(|t| t.as_f64() != Some(1.0)) {
            return Some(openai_error(
                &format!("Unsupported value: 'temperature' does not support {t} with this model. Only the default (1) value is supported."),
                "temperature",
                "unsupported_value",
            ));
        }
        if let Some(e) = body.get("reasoning_effort").and_then(Value::as_str) {
            let gpt5 = model
                .rsplit('/')
                .next()
                .unwrap_or(model)
                .starts_with("gpt-5");
            let ok = matches!(e, "low" | "medium" | "high") || (gpt5 && e == "minimal");
            if !ok {
                return Some(openai_error(
                    &format!("Unsupported value: 'reasoning_effort' does not support '{e}' with this model. Supported values are: 'low', 'medium', and 'high'."),
                    "reasoning_effort",
                    "unsupported_value",
                ));
            }
        }
    } else if body.get("reasoning_effort").is_some() {
        return Some(openai_error(
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
            "reasoning_effort",
            "unsupported_parameter",
        ));
    }
    None
}

/// DeepSeek's 400 for a request that sends `reasoning_content` back.
pub fn deepseek_echo_rejection(body: &Value) -> Option<Value> {
    let model = body.get("model").and_then(Value::as_str)?;
    if !is_deepseek_reasoner(model) {
        return None;
    }
    let messages = body.get("messages")?.as_array()?;
    let i = messages
        .iter()
        .position(|m| m.get("reasoning_content").is_some())?;
    Some(json!({"error": {
        "message": format!("The reasoning_content is an intermediate result for display purposes only and will not be included in the context for inference. Please remove the reasoning_content from your input (messages[{i}])."),
        "type": "invalid_request_error", "param": null, "code": "invalid_request_error"
    }}))
}

/// The signature this server gives a thinking text (and checks when it comes back).
pub fn signature_for(thinking: &str) -> String {
    // FNV-1a: stable across runs and platforms, and any change to the text changes it.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in thinking.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("EqMockSig{h:016x}")
}

/// The thinking budget a Messages request enables, or the 400 message for a bad `thinking` setup.
pub fn anthropic_thinking(body: &Value) -> Result<Option<u64>, String> {
    let Some(thinking) = body.get("thinking") else {
        return Ok(None);
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("disabled") => return Ok(None),
        Some("enabled") => {}
        _ => return Err("thinking.type: Input should be 'enabled' or 'disabled'".into()),
    }
    let budget = thinking
        .get("budget_tokens")
        .and_then(Value::as_u64)
        .ok_or("thinking.enabled.budget_tokens: Field required")?;
    if budget < 1024 {
        return Err(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
        );
    }
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(0);
    if max_tokens <= budget {
        return Err(format!(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size (max_tokens: {max_tokens}, budget_tokens: {budget})"
        ));
    }
    if body
        .get("temperature")
        .is_some_and(|t| t.as_f64() != Some(1.0))
    {
        return Err("`temperature` may only be set to 1 when thinking is enabled or in interleaved thinking mode. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility".into());
    }
    if let Some(kind) = body.pointer("/tool_choice/type").and_then(Value::as_str) {
        if kind == "any" || kind == "tool" {
            return Err("Thinking may not be enabled when tool_choice forces tool use.".into());
        }
    }
    Ok(Some(budget))
}

/// With thinking on: the checks the API makes on thinking blocks in the history. Every thinking
/// block must carry the signature it was issued with, and the last assistant turn, when the request
/// continues it with tool results, must start with its thinking (or redacted thinking) block.
pub fn anthropic_thinking_history(body: &Value) -> Result<(), String> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Ok(());
    };
    for (i, m) in messages.iter().enumerate() {
        let Some(blocks) = m.get("content").and_then(Value::as_array) else {
            continue;
        };
        for (j, b) in blocks.iter().enumerate() {
            match b.get("type").and_then(Value::as_str) {
                Some("thinking") => {
                    let text = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                    let Some(sig) = b.get("signature").and_then(Value::as_str) else {
                        return Err(format!(
                            "messages.{i}.content.{j}.thinking.signature: Field required"
                        ));
                    };
                    if sig != signature_for(text) {
                        return Err(format!(
                            "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                        ));
                    }
                }
                Some("redacted_thinking")
                    if b.get("data")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty) =>
                {
                    return Err(format!(
                        "messages.{i}.content.{j}.redacted_thinking.data: Field required"
                    ));
                }
                _ => {}
            }
        }
    }
    // The last user turn answering tool calls continues the assistant turn before it.
    let last_user_has_results = messages.last().is_some_and(|m| {
        m.get("role").and_then(Value::as_str) == Some("user")
            && m.get("content").and_then(Value::as_array).is_some_and(|b| {
                b.iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            })
    });
    if last_user_has_results && messages.len() >= 2 {
        let i = messages.len() - 2;
        let first = messages[i]
            .get("content")
            .and_then(Value::as_array)
            .and_then(|b| b.first())
            .and_then(|b| b.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("text");
        if first != "thinking" && first != "redacted_thinking" {
            return Err(format!(
                "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            ));
        }
    }
    Ok(())
}

/// About four bytes per token, as the prompt's size in a model's context.
pub fn tokens_of(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// What Ollama does with a prompt longer than the context it runs the model with: it keeps the
/// end and silently drops the start — the system prompt first, then the oldest messages — until
/// the rest fits. A request that starts with the answer to a tool call would then be cut mid-turn,
/// so the kept part starts at a user message. Returns how many messages were dropped.
pub fn truncate_messages(body: &mut Value, num_ctx: u64) -> usize {
    let total = tokens_of(body.to_string().len());
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return 0;
    };
    if total <= num_ctx || messages.len() <= 1 {
        return 0;
    }
    let mut excess = total - num_ctx;
    let mut drop = 0;
    while drop < messages.len() - 1 && excess > 0 {
        let size = tokens_of(messages[drop].to_string().len());
        excess = excess.saturating_sub(size);
        drop += 1;
    }
    while drop < messages.len() - 1
        && messages[drop].get("role").and_then(Value::as_str) != Some("user")
    {
        drop += 1;
    }
    messages.drain(..drop);
    drop
}
