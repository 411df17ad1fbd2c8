//! The OpenAI-compatible Chat Completions client (OpenAI, Ollama, LM Studio, vLLM, DeepSeek,
//! OpenRouter, …): history translation, streamed chunk accumulation (tool-call fragments keyed by
//! index, possibly interleaved; the `choices: []` usage chunk), and `GET {base}/models`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use canopy_protocol::{FinishReason, Message, ProviderKind, ToolCall, Usage};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::call::{self, Accumulate};
use crate::sse::{self, Failure};
use crate::{
    estimate_output_tokens, estimate_tokens, ModelClient, ModelListing, ModelRequest,
    ModelResponse, ProviderConfig, ProviderError, StreamDelta,
};

/// Chat Completions client.
#[derive(Debug)]
pub struct OpenAiClient {
    config: ProviderConfig,
    http: reqwest::Client,
}

impl OpenAiClient {
    /// A client for `config` (its `kind` is not checked).
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let http = sse::http_client(&config)?;
        Ok(OpenAiClient { config, http })
    }

    fn base(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    fn authorize(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.config.api_key {
            Some(key) if !key.is_empty() => rb.bearer_auth(key.expose()),
            _ => rb,
        }
    }
}

/// The request body for a call.
pub(crate) fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        messages.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut msg = Map::new();
                msg.insert("role".into(), "assistant".into());
                if tool_calls.is_empty() {
                    msg.insert("content".into(), text.clone().into());
                } else {
                    msg.insert(
                        "content".into(),
                        if text.is_empty() {
                            Value::Null
                        } else {
                            text.clone().into()
                        },
                    );
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            // Sent back exactly as received: the raw argument string.
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(msg)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                // Chat Completions has no error flag; say it in the content so the model can tell.
                let content = if *is_error && !content.to_ascii_lowercase().starts_with("error") {
                    format!("Error: {content}")
                } else {
                    content.clone()
                };
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), config.model.clone().into());
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("max_tokens".into(), request.max_tokens.into());
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if !request.allow_tool_calls {
            body.insert("tool_choice".into(), "none".into());
        }
    }
    Value::Object(body)
}

/// A usage report with a real prompt count; the completion count may still be missing.
#[derive(Debug, Clone, Copy)]
struct ReportedUsage {
    input: u64,
    output: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Folds chunks into a response.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<String>,
    usage: Option<ReportedUsage>,
    /// Where the last fragment went, for servers that leave `index` out.
    last_index: Option<u64>,
    model: Option<String>,
    done: bool,
}

impl Accumulate for Accumulator {
    /// Feeds one SSE `data` payload; true once `[DONE]` arrived.
    fn feed(
        &mut self,
        data: &str,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<bool, Failure> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Protocol(format!("chunk is not JSON ({e}): {}", preview(data)))
        })?;
        if let Some(err) = chunk.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(
                ProviderError::Protocol(format!("error event in stream: {message}")).into(),
            );
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            if self.model.is_none() && !model.is_empty() {
                self.model = Some(model.to_string());
            }
        }
        // Some compatible servers and proxies send `usage: {}`, all zeros, or no `prompt_tokens`
        // (sometimes on every chunk). Only a positive prompt count is a real report; anything else
        // is ignored so the estimate (marked as such) stands in, and a later empty object cannot
        // overwrite an earlier real one.
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            let tokens = |k: &str| u.get(k).and_then(Value::as_u64);
            if let Some(input) = tokens("prompt_tokens").filter(|&n| n > 0) {
                self.usage = Some(ReportedUsage {
                    input,
                    output: tokens("completion_tokens"),
                });
            }
        }
        // The usage chunk has `choices: []`; nothing else to read there.
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(false);
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    self.text.push_str(text);
                    on_delta(StreamDelta::Text(text.to_string()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for frag in calls {
                    let index = match frag.get("index").and_then(Value::as_u64) {
                        Some(index) => index,
                        None => self.index_without_index(frag),
                    };
                    self.last_index = Some(index);
                    let entry = self.calls.entry(index).or_default();
                    let was_named = !entry.name.is_empty();
                    if let Some(id) = frag.get("id").and_then(Value::as_str) {
                        if entry.id.is_empty() {
                            entry.id = id.to_string();
                        }
                    }
                    if let Some(f) = frag.get("function") {
                        if let Some(name) = f.get("name").and_then(Value::as_str) {
                            entry.name.push_str(name);
                        }
                        if let Some(args) = f.get("arguments").and_then(Value::as_str) {
                            entry.arguments.push_str(args);
                        }
                    }
                    if !was_named && !entry.name.is_empty() {
                        on_delta(StreamDelta::ToolCallStarted {
                            id: entry.id.clone(),
                            name: entry.name.clone(),
                        });
                    }
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_string());
        }
        Ok(false)
    }

    /// The response, if the stream really finished.
    fn finish(self, requested_model: &str, request_bytes: usize) -> Result<ModelResponse, Failure> {
        // Servers that never send `[DONE]` still close a finished turn with a finish_reason; without
        // either the turn may be truncated, so it is an early EOF (retried).
        if !self.done && self.finish.is_none() {
            return Err(ProviderError::Network(
                "stream ended before [DONE] (response incomplete)".into(),
            )
            .into());
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, c) in self.calls {
            // An empty name is kept: the runtime answers that call with an error result, rather
            // than the whole turn (and run) being lost to one malformed call.
            tool_calls.push(ToolCall {
                // Ids pair begin/end events and approvals across the whole session, so one the
                // server left out must not repeat from turn to turn (`call_0` every time).
                id: if c.id.is_empty() {
                    format!(
                        "call_{}_{index}",
                        &uuid::Uuid::new_v4().simple().to_string()[..12]
                    )
                } else {
                    c.id
                },
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".into()
                } else {
                    c.arguments
                },
            });
        }
        crate::make_ids_unique(&mut tool_calls);
        let finish_reason = match self.finish.as_deref() {
            Some("stop") => FinishReason::Stop,
            Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
            Some("length") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
            None if tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        let estimated_output = || estimate_output_tokens(&self.text, &tool_calls);
        let usage = match self.usage {
            Some(ReportedUsage {
                input,
                output: Some(output),
            }) => Usage {
                input_tokens: input,
                output_tokens: output,
                estimated: false,
            },
            Some(ReportedUsage {
                input,
                output: None,
            }) => Usage {
                input_tokens: input,
                output_tokens: estimated_output(),
                estimated: true,
            },
            None => Usage {
                input_tokens: estimate_tokens(request_bytes),
                output_tokens: estimated_output(),
                estimated: true,
            },
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls,
            finish_reason,
            usage,
            model: self.model.unwrap_or_else(|| requested_model.to_string()),
        })
    }
}

impl Accumulator {
    /// Where a fragment without `index` belongs. Such servers send calls one after another, so a
    /// fragment continues the last call unless it opens a new one: it carries an id other than the
    /// last call's, or a name when the last call already has one (a reused id).
    fn index_without_index(&self, frag: &Value) -> u64 {
        let next = self.calls.keys().next_back().map_or(0, |k| k + 1);
        let Some(last) = self
            .last_index
            .and_then(|i| self.calls.get(&i).map(|c| (i, c)))
        else {
            return next;
        };
        let (last_index, last_call) = last;
        let id = frag.get("id").and_then(Value::as_str).unwrap_or("");
        let name = frag
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let new_id = !id.is_empty() && !last_call.id.is_empty() && id != last_call.id;
        let renamed = !name.is_empty() && !last_call.name.is_empty();
        if new_id || renamed {
            next
        } else {
            last_index
        }
    }
}

fn preview(data: &str) -> String {
    data.chars().take(200).collect()
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
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
            || Ok(self.authorize(self.http.post(format!("{}/chat/completions", self.base())))),
            on_delta,
            cancel,
        )
        .await
    }

    async fn list_models(&self) -> Result<Vec<ModelListing>, ProviderError> {
        let rb = self.authorize(self.http.get(format!("{}/models", self.base())));
        call::list_models(rb, &self.config).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_chunk_with_empty_choices_and_fragments() {
        let mut acc = Accumulator::default();
        let sink = |_d: StreamDelta| {};
        let chunks = [
            r#"{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"Grep","arguments":""}}]},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pattern\":\"x\\"}}]}}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"y\"}"}}]}}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7}}"#,
        ];
        for c in chunks {
            assert!(!acc.feed(c, &sink).unwrap());
        }
        assert!(acc.feed("[DONE]", &sink).unwrap());
        let r = acc.finish("m", 100).unwrap();
        assert_eq!(r.tool_calls[0].arguments, r#"{"pattern":"x\"y"}"#);
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 11,
                output_tokens: 7,
                estimated: false
            }
        );
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn missing_usage_is_estimated_from_sizes() {
        let mut acc = Accumulator::default();
        acc.feed(
            r#"{"choices":[{"index":0,"delta":{"content":"12345678"}}]}"#,
            &|_| {},
        )
        .unwrap();
        acc.feed(
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            &|_| {},
        )
        .unwrap();
        assert!(acc.feed("[DONE]", &|_| {}).unwrap());
        let r = acc.finish("m", 400).unwrap();
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 100,
                output_tokens: 2,
                estimated: true
            }
        );
    }

    #[test]
    fn unfinished_stream_is_an_error() {
        let mut acc = Accumulator::default();
        acc.feed(
            r#"{"choices":[{"index":0,"delta":{"content":"half"}}]}"#,
            &|_| {},
        )
        .unwrap();
        let err = acc.finish("m", 10).unwrap_err();
        assert!(matches!(err.error, ProviderError::Network(_)));
    }
}
