//! The Anthropic Messages client: history translation (merged user turns of `tool_result` blocks,
//! `tool_use` input as an object, no empty text blocks), the event stream (`message_start` →
//! content blocks → `message_delta` → `message_stop`, `ping` and `error` anywhere), and
//! `GET {base}/v1/models`. With extended thinking on for the slot, `thinking` and
//! `redacted_thinking` blocks (with their `signature_delta`) are kept and sent back verbatim at the
//! start of their assistant turn, as the API requires across tool calls.

use std::collections::BTreeMap;

use async_trait::async_trait;
use canopy_protocol::{FinishReason, Message, ProviderKind, ReasoningBlock, ToolCall};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::call::{self, Accumulate};
use crate::sse::{self, Failure};
use crate::{
    estimate_tokens, usage_or_estimate, ModelClient, ModelListing, ModelRequest, ModelResponse,
    ProviderConfig, ProviderError, StreamDelta,
};

/// The smallest `budget_tokens` the API accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The API version this client speaks.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Messages API client.
#[derive(Debug)]
pub struct AnthropicClient {
    config: ProviderConfig,
    http: reqwest::Client,
}

impl AnthropicClient {
    /// A client for `config` (its `kind` is not checked).
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let http = sse::http_client(&config)?;
        Ok(AnthropicClient { config, http })
    }

    fn base(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    fn authorize(
        &self,
        rb: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, ProviderError> {
        let rb = rb.header("anthropic-version", ANTHROPIC_VERSION);
        match &self.config.api_key {
            Some(key) if !key.is_empty() => {
                let mut value =
                    reqwest::header::HeaderValue::from_str(key.expose()).map_err(|_| {
                        ProviderError::Auth {
                            status: 0,
                            message:
                                "the API key contains characters that cannot go in an HTTP header"
                                    .into(),
                        }
                    })?;
                value.set_sensitive(true);
                Ok(rb.header("x-api-key", value))
            }
            _ => Ok(rb),
        }
    }
}

/// Arguments as the object Anthropic requires; text that is not a JSON object (the model produced
/// bad arguments, already answered by an error result) is replayed as an empty object.
fn input_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// History as Messages turns: consecutive same-role entries merge into one turn (roles alternate),
/// tool results become `tool_result` blocks of one user turn, and empty text is dropped.
pub(crate) fn translate_messages(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m {
            Message::User { text } => (
                "user",
                // The API rejects whitespace-only text blocks, not just empty ones.
                if text.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "text", "text": text})]
                },
            ),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                // Thinking blocks go first, verbatim with their signatures: with thinking on, the
                // API rejects a tool-use turn that lost them. Plain reasoning text from another
                // API has no signature and cannot be sent.
                let mut blocks: Vec<Value> = reasoning
                    .iter()
                    .filter_map(|r| match r {
                        ReasoningBlock::Thinking {
                            thinking,
                            signature,
                        } => Some(json!({"type": "thinking", "thinking": thinking,
                                         "signature": signature})),
                        ReasoningBlock::Redacted { data } => {
                            Some(json!({"type": "redacted_thinking", "data": data}))
                        }
                        ReasoningBlock::Text { .. } => None,
                    })
                    .collect();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name,
                                       "input": input_object(&c.arguments)}));
                }
                ("assistant", blocks)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut block = Map::new();
                block.insert("type".into(), "tool_result".into());
                block.insert("tool_use_id".into(), call_id.clone().into());
                if !content.is_empty() {
                    block.insert("content".into(), content.clone().into());
                }
                if *is_error {
                    block.insert("is_error".into(), true.into());
                }
                ("user", vec![Value::Object(block)])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect()
}

/// The request body for a call.
pub(crate) fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), config.model.clone().into());
    // With thinking on, `max_tokens` covers thinking and answer and must exceed the thinking
    // budget, so the answer keeps the slot's whole output cap on top of it.
    let thinking = config.thinking_budget.map(|b| b.max(MIN_THINKING_BUDGET));
    let max_tokens = match thinking {
        Some(budget) => request.max_tokens.max(1).saturating_add(budget),
        None => request.max_tokens.max(1),
    };
    body.insert("max_tokens".into(), max_tokens.into());
    if let Some(budget) = thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("stream".into(), true.into());
    if !request.system.is_empty() {
        body.insert("system".into(), request.system.clone().into());
    }
    body.insert(
        "messages".into(),
        Value::Array(translate_messages(&request.messages)),
    );
    // Thinking accepts only the default temperature.
    if let Some(t) = request.temperature.filter(|_| thinking.is_none()) {
        body.insert("temperature".into(), json!(t));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if !request.allow_tool_calls {
            body.insert("tool_choice".into(), json!({"type": "none"}));
        }
    }
    Value::Object(body)
}

#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted {
        data: String,
    },
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// Folds events into a response.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    text: String,
    blocks: BTreeMap<u64, Block>,
    stop_reason: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    model: Option<String>,
    done: bool,
}

impl Accumulate for Accumulator {
    /// Feeds one SSE `data` payload; true once `message_stop` arrived.
    fn feed(
        &mut self,
        data: &str,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<bool, Failure> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        let event: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Protocol(format!(
                "event is not JSON ({e}): {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                let message = event.get("message");
                if let Some(m) = message.and_then(|m| m.get("model")).and_then(Value::as_str) {
                    self.model = Some(m.to_string());
                }
                if let Some(u) = message.and_then(|m| m.get("usage")) {
                    self.read_usage(u);
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
                let b = match kind {
                    "text" => {
                        if let Some(t) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            self.push_text(t, on_delta);
                        }
                        Block::Text
                    }
                    "tool_use" => {
                        let id = block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let name = block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        on_delta(StreamDelta::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Block::Tool {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    "thinking" => {
                        let thinking = block
                            .get("thinking")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        if !thinking.is_empty() {
                            on_delta(StreamDelta::Reasoning(thinking.clone()));
                        }
                        Block::Thinking {
                            thinking,
                            signature: block
                                .get("signature")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        }
                    }
                    "redacted_thinking" => Block::Redacted {
                        data: block
                            .get("data")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, b);
            }
            "content_block_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_delta" => {
                        let t = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        self.push_text(t, on_delta);
                    }
                    "input_json_delta" => {
                        let piece = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        match self.blocks.get_mut(&index) {
                            Some(Block::Tool { json, .. }) => json.push_str(piece),
                            _ => {
                                return Err(ProviderError::Protocol(format!(
                                "input_json_delta for block {index}, which is not a tool_use block"
                            ))
                                .into())
                            }
                        }
                    }
                    "thinking_delta" => {
                        let t = delta.get("thinking").and_then(Value::as_str).unwrap_or("");
                        if let Some(Block::Thinking { thinking, .. }) = self.blocks.get_mut(&index)
                        {
                            thinking.push_str(t);
                        }
                        if !t.is_empty() {
                            on_delta(StreamDelta::Reasoning(t.to_string()));
                        }
                    }
                    "signature_delta" => {
                        let sig = delta.get("signature").and_then(Value::as_str).unwrap_or("");
                        match self.blocks.get_mut(&index) {
                            Some(Block::Thinking { signature, .. }) => signature.push_str(sig),
                            _ => {
                                return Err(ProviderError::Protocol(format!(
                                "signature_delta for block {index}, which is not a thinking block"
                            ))
                                .into())
                            }
                        }
                    }
                    // Citations and future delta types: not part of the visible turn.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = event.get("usage") {
                    self.read_usage(u);
                }
            }
            "message_stop" => {
                self.done = true;
                return Ok(true);
            }
            "error" => {
                let kind = event
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string();
                let error = match kind {
                    "overloaded_error" => ProviderError::Server {
                        status: 529,
                        message,
                    },
                    "api_error" => ProviderError::Server {
                        status: 500,
                        message,
                    },
                    "rate_limit_error" => ProviderError::RateLimited {
                        retry_after: None,
                        message,
                    },
                    _ => ProviderError::Protocol(format!(
                        "error event in stream ({kind}): {message}"
                    )),
                };
                return Err(error.into());
            }
            // `ping`, `content_block_stop` and future event types carry nothing to keep.
            _ => {}
        }
        Ok(false)
    }

    /// The response, if `message_stop` arrived.
    fn finish(self, requested_model: &str, request_bytes: usize) -> Result<ModelResponse, Failure> {
        if !self.done {
            return Err(ProviderError::Network(
                "stream ended before message_stop (response incomplete)".into(),
            )
            .into());
        }
        let mut reasoning = Vec::new();
        let mut tool_calls: Vec<ToolCall> = self
            .blocks
            .into_values()
            .filter_map(|b| match b {
                Block::Thinking {
                    thinking,
                    signature,
                } => {
                    reasoning.push(ReasoningBlock::Thinking {
                        thinking,
                        signature,
                    });
                    None
                }
                Block::Redacted { data } => {
                    reasoning.push(ReasoningBlock::Redacted { data });
                    None
                }
                Block::Tool { id, name, json } => Some(ToolCall {
                    id,
                    name,
                    arguments: if json.trim().is_empty() {
                        "{}".into()
                    } else {
                        json
                    },
                }),
                _ => None,
            })
            .collect();
        crate::make_ids_unique(&mut tool_calls);
        let finish_reason = match self.stop_reason.as_deref() {
            Some("end_turn") | Some("stop_sequence") => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
            None if tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        // The API bills thinking as output and reports no separate count: estimate its share from
        // the thinking text (redacted blocks are encrypted and cannot be sized).
        let reasoning_tokens: u64 = reasoning
            .iter()
            .map(|r| match r {
                ReasoningBlock::Thinking { thinking, .. } => estimate_tokens(thinking.len()),
                _ => 0,
            })
            .sum();
        let usage = usage_or_estimate(
            self.input_tokens,
            self.output_tokens,
            reasoning_tokens,
            request_bytes,
            &self.text,
            &tool_calls,
        );
        Ok(ModelResponse {
            reasoning,
            text: self.text,
            tool_calls,
            finish_reason,
            usage,
            model: self.model.unwrap_or_else(|| requested_model.to_string()),
        })
    }
}

impl Accumulator {
    fn push_text(&mut self, t: &str, on_delta: &(dyn Fn(StreamDelta) + Send + Sync)) {
        if !t.is_empty() {
            self.text.push_str(t);
            on_delta(StreamDelta::Text(t.to_string()));
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(input) = get("input_tokens") {
            // Cached prompt tokens are reported apart from `input_tokens` but are still input.
            let cached = get("cache_creation_input_tokens").unwrap_or(0)
                + get("cache_read_input_tokens").unwrap_or(0);
            self.input_tokens = Some(input + cached);
        }
        if let Some(output) = get("output_tokens") {
            self.output_tokens = Some(output);
        }
    }
}

#[async_trait]
impl ModelClient for AnthropicClient {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model_id(&self) -> &str {
        &self.config.model
    }

    fn base_url(&self) -> &str {
        &self.config.base_url
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ProviderError> {
        call::complete::<Accumulator>(
            &self.config,
            &request_body(&self.config, request),
            || self.authorize(self.http.post(format!("{}/v1/messages", self.base()))),
            on_delta,
            cancel,
        )
        .await
    }

    async fn list_models(&self) -> Result<Vec<ModelListing>, ProviderError> {
        let rb = self.authorize(self.http.get(format!("{}/v1/models", self.base())))?;
        call::list_models(rb, &self.config).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_merge_into_one_user_turn_and_empty_text_drops() {
        let history = vec![
            Message::user("find auth"),
            Message::Assistant {
                text: String::new(),
                reasoning: Vec::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "t1".into(),
                        name: "Grep".into(),
                        arguments: r#"{"pattern":"auth"}"#.into(),
                    },
                    ToolCall {
                        id: "t2".into(),
                        name: "Read".into(),
                        arguments: "{bad".into(),
                    },
                ],
            },
            Message::ToolResult {
                call_id: "t1".into(),
                name: "Grep".into(),
                content: "a.rs".into(),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "t2".into(),
                name: "Read".into(),
                content: "bad args".into(),
                is_error: true,
            },
            Message::user("wrap up"),
        ];
        let turns = translate_messages(&history);
        assert_eq!(turns.len(), 3);
        assert_eq!(
            turns[1]["content"].as_array().unwrap().len(),
            2,
            "no empty text block"
        );
        assert_eq!(turns[1]["content"][0]["input"], json!({"pattern": "auth"}));
        assert_eq!(turns[1]["content"][1]["input"], json!({}));
        let user = turns[2]["content"].as_array().unwrap();
        assert_eq!(user.len(), 3);
        assert_eq!(user[0]["tool_use_id"], "t1");
        assert_eq!(user[1]["is_error"], true);
        assert_eq!(user[2]["text"], "wrap up");
    }
}
