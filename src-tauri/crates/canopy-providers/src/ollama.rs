//! Ollama, driven through its native chat API. Its OpenAI-compatible endpoint runs a model with the
//! server's default context length and silently drops the start of a longer prompt (the system
//! prompt first), and it has no parameter to change that. The native `POST /api/chat` takes
//! `options.num_ctx` per request, so the client reads the model's real context length once
//! (`POST /api/show`, `model_info.<arch>.context_length`) and asks for the context the agent needs,
//! capped at that. Streaming there is newline-delimited JSON; tool calls arrive whole, with their
//! arguments as an object and no ids.

use canopy_protocol::{FinishReason, Message, ReasoningBlock, ToolCall};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::ndjson::Lines;
use crate::quirks::OllamaProbe;
use crate::retry::with_retries;
use crate::sse::{self, Failure};
use crate::{
    estimate_tokens, tool_result_text, usage_or_estimate, ModelListing, ModelRequest,
    ModelResponse, ProviderConfig, ProviderError, StreamDelta,
};

/// Models whose context length a listing looks up; more would make "List models" slow.
const MAX_SHOWN: usize = 64;

/// `http://host:11434` for `http://host:11434/v1`.
pub(crate) fn root(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_string()
}

/// `GET /api/version`, without credentials: only an Ollama server answers it with a version.
pub(crate) async fn probe(config: &ProviderConfig, http: &reqwest::Client) -> OllamaProbe {
    let url = format!("{}/api/version", root(&config.base_url));
    let wait = config
        .connect_timeout
        .min(std::time::Duration::from_secs(5));
    let answered = tokio::time::timeout(wait, async {
        let resp = http.get(url).send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        let v: Value = resp.json().await.ok()?;
        v.get("version").and_then(Value::as_str).map(|_| ())
    })
    .await;
    match answered {
        Ok(Some(())) => OllamaProbe::Ollama,
        _ => OllamaProbe::NotOllama,
    }
}

/// The model's context length from `POST /api/show` (`model_info["<arch>.context_length"]`, where
/// `<arch>` is `model_info["general.architecture"]`), remembered per endpoint and model.
pub(crate) async fn context_length(
    config: &ProviderConfig,
    http: &reqwest::Client,
    model: &str,
) -> Option<u64> {
    let endpoint = root(&config.base_url);
    if let Some(known) = config.quirks.context_length(&endpoint, model) {
        return known;
    }
    let shown = tokio::time::timeout(config.idle_timeout, async {
        let resp = http
            .post(format!("{endpoint}/api/show"))
            .json(&json!({"model": model}))
            .send()
            .await
            .ok()?;
        if !resp.status().is_success() {
            return None;
        }
        resp.json::<Value>().await.ok()
    })
    .await
    .ok()
    .flatten();
    let n = shown.as_ref().and_then(context_length_of);
    if shown.is_some() {
        config.quirks.set_context_length(&endpoint, model, n);
    }
    n
}

/// Reads `model_info.<arch>.context_length` from an `/api/show` answer.
pub(crate) fn context_length_of(show: &Value) -> Option<u64> {
    let info = show.get("model_info")?.as_object()?;
    let arch = info.get("general.architecture").and_then(Value::as_str);
    if let Some(n) = arch.and_then(|a| info.get(&format!("{a}.context_length"))?.as_u64()) {
        return Some(n);
    }
    info.iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}

/// Fills in each listed model's context length.
pub(crate) async fn fill_context_lengths(
    config: &ProviderConfig,
    http: &reqwest::Client,
    models: &mut [ModelListing],
) {
    let lookups = models
        .iter()
        .take(MAX_SHOWN)
        .map(|m| context_length(config, http, &m.id));
    let lengths = futures::future::join_all(lookups).await;
    for (m, n) in models.iter_mut().zip(lengths) {
        if m.context_window.is_none() {
            m.context_window = n;
        }
    }
}

/// The native chat request.
pub(crate) fn chat_body(request: &ModelRequest, model: &str, num_ctx: Option<u64>) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        messages.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut msg = Map::new();
                msg.insert("role".into(), "assistant".into());
                msg.insert("content".into(), text.clone().into());
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"type": "function", "function": {
                                "name": c.name, "arguments": arguments_object(&c.arguments)}})
                        })
                        .collect();
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(msg)
            }
            Message::ToolResult {
                name,
                content,
                is_error,
                ..
            } => {
                let content = tool_result_text(content, *is_error);
                json!({"role": "tool", "tool_name": name, "content": content})
            }
        });
    }
    let mut options = Map::new();
    if let Some(n) = num_ctx {
        options.insert("num_ctx".into(), n.into());
    }
    options.insert("num_predict".into(), request.max_tokens.into());
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), true.into());
    body.insert("options".into(), Value::Object(options));
    // The native API has no `tool_choice`: a call that must not use tools offers none (it does not
    // need them defined to read a history holding tool calls).
    if !request.tools.is_empty() && request.allow_tool_calls {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// Streams one call through `/api/chat` with the context the agent needs.
pub(crate) async fn complete(
    config: &ProviderConfig,
    http: &reqwest::Client,
    request: &ModelRequest,
    on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<ModelResponse, ProviderError> {
    let real = context_length(config, http, &config.model).await;
    let wanted = config.context_window;
    let num_ctx = match (wanted, real) {
        (Some(w), Some(r)) => Some(w.min(r)),
        (Some(w), None) => Some(w),
        (None, r) => r,
    };
    let endpoint = root(&config.base_url);
    if let Some(n) = num_ctx {
        // Announced once per endpoint and model, when the context is first set up.
        if config.quirks.note_num_ctx(&endpoint, &config.model, n) {
            let reason = match (wanted, real) {
                (Some(w), Some(r)) if w > r => format!(
                    "the model takes at most {r} tokens (/api/show) but the slot's context window is {w}: \
                     lower the context window, or budgets will count on context the model does not have"
                ),
                (_, Some(r)) => format!(
                    "Ollama's OpenAI-compatible endpoint would run the model with its default context and \
                     drop the start of longer prompts; /api/chat with options.num_ctx (model maximum {r})"
                ),
                (_, None) => "Ollama's OpenAI-compatible endpoint would run the model with its default \
                              context; /api/chat with options.num_ctx (the model's length is not reported)"
                    .to_string(),
            };
            on_delta(StreamDelta::Adapted {
                change: format!("/api/chat with num_ctx {n}"),
                reason,
            });
        }
    }
    let body = serde_json::to_vec(&chat_body(request, &config.model, num_ctx))
        .map_err(|e| ProviderError::Protocol(format!("cannot encode request: {e}")))?;
    let url = format!("{endpoint}/api/chat");
    with_retries(config, on_delta, cancel, || async {
        let rb = http
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        let rb = match &config.api_key {
            Some(key) if !key.is_empty() => rb.bearer_auth(key.expose()),
            _ => rb,
        };
        let response = sse::send(rb, config, cancel).await?;
        let mut lines = Lines::new(response, config);
        let mut acc = Accumulator::default();
        while let Some(line) = lines.next(cancel).await? {
            if acc.feed(&line, on_delta)? {
                break;
            }
        }
        acc.finish(&config.model, body.len())
    })
    .await
}

#[derive(Debug, Default)]
struct Accumulator {
    text: String,
    thinking: String,
    calls: Vec<ToolCall>,
    done_reason: Option<String>,
    prompt_tokens: Option<u64>,
    output_tokens: Option<u64>,
    model: Option<String>,
    done: bool,
}

impl Accumulator {
    fn feed(
        &mut self,
        line: &str,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<bool, Failure> {
        let chunk: Value = serde_json::from_str(line.trim()).map_err(|e| {
            ProviderError::Protocol(format!(
                "line is not JSON ({e}): {}",
                line.chars().take(200).collect::<String>()
            ))
        })?;
        if let Some(err) = chunk.get("error") {
            return Err(crate::error::stream_error(err).into());
        }
        if let Some(m) = chunk.get("model").and_then(Value::as_str) {
            if self.model.is_none() && !m.is_empty() {
                self.model = Some(m.to_string());
            }
        }
        if let Some(msg) = chunk.get("message") {
            if let Some(t) = msg.get("thinking").and_then(Value::as_str) {
                if !t.is_empty() {
                    self.thinking.push_str(t);
                    on_delta(StreamDelta::Reasoning(t.to_string()));
                }
            }
            if let Some(t) = msg.get("content").and_then(Value::as_str) {
                if !t.is_empty() {
                    self.text.push_str(t);
                    on_delta(StreamDelta::Text(t.to_string()));
                }
            }
            for c in msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = c
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if name.is_empty() {
                    return Err(
                        ProviderError::Protocol("tool call has no function name".into()).into(),
                    );
                }
                let arguments = match c.pointer("/function/arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) if !v.is_null() => v.to_string(),
                    _ => "{}".to_string(),
                };
                let id = c
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..16])
                    });
                on_delta(StreamDelta::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                self.calls.push(ToolCall {
                    id,
                    name,
                    arguments,
                });
            }
        }
        if chunk.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            self.done_reason = chunk
                .get("done_reason")
                .and_then(Value::as_str)
                .map(str::to_string);
            self.prompt_tokens = chunk.get("prompt_eval_count").and_then(Value::as_u64);
            self.output_tokens = chunk.get("eval_count").and_then(Value::as_u64);
            return Ok(true);
        }
        Ok(false)
    }

    fn finish(self, requested_model: &str, request_bytes: usize) -> Result<ModelResponse, Failure> {
        if !self.done {
            return Err(ProviderError::Network(
                "stream ended before done (response incomplete)".into(),
            )
            .into());
        }
        let mut tool_calls = self.calls;
        crate::make_ids_unique(&mut tool_calls);
        let finish_reason = match self.done_reason.as_deref() {
            _ if !tool_calls.is_empty() => FinishReason::ToolCalls,
            Some("length") => FinishReason::Length,
            Some("stop") | None => FinishReason::Stop,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        let reasoning_tokens = estimate_tokens(self.thinking.len());
        let usage = usage_or_estimate(
            self.prompt_tokens,
            self.output_tokens,
            reasoning_tokens,
            request_bytes,
            &self.text,
            &tool_calls,
        );
        let reasoning = if self.thinking.is_empty() {
            Vec::new()
        } else {
            vec![ReasoningBlock::Text {
                text: self.thinking,
            }]
        };
        Ok(ModelResponse {
            text: self.text,
            reasoning,
            tool_calls,
            finish_reason,
            usage,
            model: self.model.unwrap_or_else(|| requested_model.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_length_comes_from_the_architecture_key() {
        let show = json!({"model_info": {
            "general.architecture": "qwen2",
            "qwen2.context_length": 32768,
            "qwen2.embedding_length": 3584
        }});
        assert_eq!(context_length_of(&show), Some(32768));
        assert_eq!(context_length_of(&json!({"model_info": {}})), None);
    }

    #[test]
    fn the_root_drops_the_v1_path() {
        assert_eq!(root("http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434");
        assert_eq!(root("http://127.0.0.1:11434/v1/"), "http://127.0.0.1:11434");
        assert_eq!(root("http://127.0.0.1:11434"), "http://127.0.0.1:11434");
    }
}
