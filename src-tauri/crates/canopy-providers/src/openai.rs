//! The OpenAI-compatible Chat Completions client (OpenAI, Azure OpenAI, Ollama, LM Studio, vLLM,
//! DeepSeek, OpenRouter, …): history translation, the parameters each endpoint and model family
//! takes (`max_completion_tokens`, no `temperature` for reasoning models, `reasoning_effort`),
//! adapting once to a 400 that names an unsupported parameter, streamed chunk accumulation
//! (tool-call fragments keyed by index, possibly interleaved; the `choices: []` usage chunk;
//! `reasoning_content`; an `error` chunk after a 200), and `GET {base}/models`. An Ollama endpoint
//! is driven through its native chat API instead (see `ollama`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use canopy_protocol::{FinishReason, Message, ProviderKind, ReasoningBlock, ToolCall, Usage};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::call::{self, Accumulate};
use crate::quirks::{self, Adaptation, OllamaProbe, TokenParam};
use crate::sse::{self, Failure};
use crate::{
    estimate_output_tokens, estimate_tokens, tool_result_text, ModelClient, ModelListing,
    ModelRequest, ModelResponse, ProviderConfig, ProviderError, StreamDelta,
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
            // Azure OpenAI takes its resource key in `api-key`; the same key also goes as a bearer
            // token, which its v1 API accepts too. Both reach only this origin.
            Some(key) if !key.is_empty() && quirks::is_azure_host(&self.config.base_url) => {
                match reqwest::header::HeaderValue::from_str(key.expose()) {
                    Ok(mut value) => {
                        value.set_sensitive(true);
                        rb.header("api-key", value).bearer_auth(key.expose())
                    }
                    Err(_) => rb.bearer_auth(key.expose()),
                }
            }
            Some(key) if !key.is_empty() => rb.bearer_auth(key.expose()),
            _ => rb,
        }
    }

    /// The token parameter to send: what the server taught us, else `max_completion_tokens` on
    /// OpenAI's and Azure's own endpoints and `max_tokens` everywhere else.
    fn token_param(&self, adaptation: &Adaptation) -> TokenParam {
        adaptation.token_param.unwrap_or(
            if quirks::is_openai_host(&self.config.base_url)
                || quirks::is_azure_host(&self.config.base_url)
            {
                TokenParam::MaxCompletionTokens
            } else {
                TokenParam::MaxTokens
            },
        )
    }
}

/// The request body for a call, shaped by the token parameter and what was learned.
pub(crate) fn request_body_with(
    config: &ProviderConfig,
    request: &ModelRequest,
    token_param: TokenParam,
    adaptation: &Adaptation,
) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        messages.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            // Reasoning (`reasoning_content`) is never sent back: DeepSeek rejects it, and no
            // OpenAI-compatible server needs it.
            Message::Assistant {
                text, tool_calls, ..
            } => {
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
                let content = tool_result_text(content, *is_error);
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), config.model.clone().into());
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert(token_param.field().into(), request.max_tokens.into());
    let family = quirks::reasoning_family(&config.model);
    // Reasoning models take only the default temperature: sending one is a 400.
    if let Some(t) = request
        .temperature
        .filter(|_| family.is_none() && !adaptation.no_temperature)
    {
        body.insert("temperature".into(), json!(t));
    }
    if let (Some(family), Some(effort), false) = (
        family,
        config.reasoning_effort,
        adaptation.no_reasoning_effort,
    ) {
        body.insert(
            "reasoning_effort".into(),
            quirks::effort_for(family, effort).into(),
        );
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
    reasoning: Option<u64>,
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
    reasoning: String,
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
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(crate::error::stream_error(err).into());
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
                    reasoning: u
                        .pointer("/completion_tokens_details/reasoning_tokens")
                        .and_then(Value::as_u64),
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
            // DeepSeek and vLLM say `reasoning_content`, OpenRouter `reasoning`.
            for key in ["reasoning_content", "reasoning"] {
                if let Some(r) = delta.get(key).and_then(Value::as_str) {
                    if !r.is_empty() {
                        self.reasoning.push_str(r);
                        on_delta(StreamDelta::Reasoning(r.to_string()));
                    }
                }
            }
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
        let estimated_reasoning = estimate_tokens(self.reasoning.len());
        let estimated_output =
            || estimate_output_tokens(&self.text, &tool_calls) + estimated_reasoning;
        let usage = match self.usage {
            Some(ReportedUsage {
                input,
                output: Some(output),
                reasoning,
            }) => Usage {
                input_tokens: input,
                output_tokens: output,
                reasoning_tokens: reasoning.unwrap_or(estimated_reasoning).min(output),
                estimated: false,
            },
            Some(ReportedUsage {
                input,
                output: None,
                ..
            }) => Usage {
                input_tokens: input,
                output_tokens: estimated_output(),
                reasoning_tokens: estimated_reasoning,
                estimated: true,
            },
            None => Usage {
                input_tokens: estimate_tokens(request_bytes),
                output_tokens: estimated_output(),
                reasoning_tokens: estimated_reasoning,
                estimated: true,
            },
        };
        let reasoning = if self.reasoning.is_empty() {
            Vec::new()
        } else {
            vec![ReasoningBlock::Text {
                text: self.reasoning,
            }]
        };
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

impl OpenAiClient {
    /// Whether the endpoint is an Ollama server: probed once per endpoint (`GET /api/version`) and
    /// remembered; only endpoints where Ollama may run are probed.
    async fn is_ollama(&self) -> OllamaProbe {
        if !self.config.detect_ollama {
            return OllamaProbe::NotOllama;
        }
        let endpoint = self.base();
        if let Some(known) = self.config.quirks.ollama(endpoint) {
            return known;
        }
        let probe = if quirks::may_be_ollama(endpoint) {
            crate::ollama::probe(&self.config, &self.http).await
        } else {
            OllamaProbe::NotOllama
        };
        self.config.quirks.set_ollama(endpoint, probe);
        probe
    }
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
        if self.is_ollama().await == OllamaProbe::Ollama {
            return crate::ollama::complete(&self.config, &self.http, request, on_delta, cancel)
                .await;
        }
        let quirks = &self.config.quirks;
        let endpoint = self.base().to_string();
        // Each parameter is adapted to at most once; the bound only guards against a server that
        // keeps rejecting whatever is sent.
        for _ in 0..4 {
            let adaptation = quirks.adaptation(&endpoint, &self.config.model);
            let token_param = self.token_param(&adaptation);
            let body = request_body_with(&self.config, request, token_param, &adaptation);
            let result = call::complete::<Accumulator>(
                &self.config,
                &body,
                || Ok(self.authorize(self.http.post(format!("{}/chat/completions", self.base())))),
                on_delta,
                cancel,
            )
            .await;
            let message = match &result {
                Err(ProviderError::BadRequest {
                    status: 400,
                    message,
                }) => message.clone(),
                _ => return result,
            };
            let Some((next, change)) = quirks::unsupported_param(&message)
                .and_then(|param| adaptation.after_rejection(param, token_param, &body))
            else {
                return result;
            };
            quirks.set_adaptation(&endpoint, &self.config.model, next);
            on_delta(StreamDelta::Adapted {
                change,
                reason: message,
            });
        }
        Err(ProviderError::BadRequest {
            status: 400,
            message: "the server kept rejecting the request's parameters".into(),
        })
    }

    async fn list_models(&self) -> Result<Vec<ModelListing>, ProviderError> {
        let rb = self.authorize(self.http.get(format!("{}/models", self.base())));
        let mut models = call::list_models(rb, &self.config).await?;
        if self.is_ollama().await == OllamaProbe::Ollama {
            crate::ollama::fill_context_lengths(&self.config, &self.http, &mut models).await;
        }
        Ok(models)
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
                reasoning_tokens: 0,
                estimated: false
            }
        );
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn openai_and_azure_get_max_completion_tokens_and_others_max_tokens() {
        let request = ModelRequest {
            system: String::new(),
            messages: vec![Message::user("hi")],
            tools: Vec::new(),
            allow_tool_calls: true,
            max_tokens: 100,
            temperature: Some(0.2),
        };
        for (base, model, field) in [
            (
                "https://api.openai.com/v1",
                "gpt-4.1",
                "max_completion_tokens",
            ),
            (
                "https://res.openai.azure.com/openai/v1",
                "gpt-5",
                "max_completion_tokens",
            ),
            ("http://127.0.0.1:8000/v1", "Qwen/Qwen3-8B", "max_tokens"),
            ("https://openrouter.ai/api/v1", "openai/o3", "max_tokens"),
        ] {
            let config = ProviderConfig::new(ProviderKind::Openai, base, model);
            let client = OpenAiClient::new(config.clone()).unwrap();
            let param = client.token_param(&Adaptation::default());
            let body = request_body_with(&config, &request, param, &Adaptation::default());
            assert_eq!(body[field], 100, "{base} {model}: {body}");
            let reasoning = quirks::reasoning_family(model).is_some();
            assert_eq!(body.get("temperature").is_none(), reasoning, "{model}");
        }
        // What the server taught wins over the host's default.
        let config = ProviderConfig::new(ProviderKind::Openai, "https://api.openai.com/v1", "m");
        let client = OpenAiClient::new(config).unwrap();
        let learned = Adaptation {
            token_param: Some(TokenParam::MaxTokens),
            ..Adaptation::default()
        };
        assert_eq!(client.token_param(&learned), TokenParam::MaxTokens);
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
                reasoning_tokens: 0,
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
