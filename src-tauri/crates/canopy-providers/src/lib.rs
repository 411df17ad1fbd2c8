//! Streaming model clients behind one trait. `openai` speaks Chat Completions (any OpenAI-compatible
//! endpoint: OpenAI, Ollama, LM Studio, vLLM, DeepSeek, OpenRouter, …); `anthropic` speaks Messages.
//! Both stream over SSE, accumulate tool calls, report usage, retry transient failures with backoff
//! (honouring `Retry-After`), time out idle streams, and stop at once when cancelled.

use std::time::Duration;

use async_trait::async_trait;
use canopy_protocol::{
    FinishReason, Message, ProviderKind, ReasoningBlock, ReasoningEffort, SecretString, ToolCall,
    ToolSpec, Usage,
};
use tokio_util::sync::CancellationToken;

mod anthropic;
mod call;
mod error;
mod ndjson;
mod ollama;
mod openai;
pub mod quirks;
mod retry;
mod sse;

pub use anthropic::AnthropicClient;
pub use error::ProviderError;
pub use openai::OpenAiClient;
pub use quirks::{Adaptation, Quirks, ReasoningFamily, TokenParam};

/// Everything needed to reach one model.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Base URL: for `openai` it includes the version path (`http://127.0.0.1:11434/v1`); for
    /// `anthropic` it does not (`https://api.anthropic.com`).
    pub base_url: String,
    /// Model id sent in requests.
    pub model: String,
    /// API key; `None` for local endpoints that need none.
    pub api_key: Option<SecretString>,
    /// Retries after the first attempt for 429 / 5xx / connection errors.
    pub max_retries: u32,
    /// TCP connect timeout.
    pub connect_timeout: Duration,
    /// Longest silence allowed between stream chunks (and before the first byte).
    pub idle_timeout: Duration,
    /// Upper bound for backoff between retries when no `Retry-After` is given.
    pub max_backoff: Duration,
    /// Longest server-requested wait (`Retry-After`, `retry-after-ms`) the client sits out; a server
    /// asking for more gets no retry: the call fails at once with "server asks to retry after N s".
    /// The caller's deadline and cancel token still cut any wait short.
    pub max_retry_after: Duration,
    /// OpenAI reasoning models: `reasoning_effort`, sent only to models that take it.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Anthropic extended thinking: its `budget_tokens`; `None` leaves thinking off.
    pub thinking_budget: Option<u32>,
    /// The context the agent needs, tokens (the slot's context window): an Ollama server is asked
    /// to run the model with this much (`num_ctx`), capped at the model's own length.
    pub context_window: Option<u64>,
    /// Probe an OpenAI-compatible endpoint where Ollama may run (loopback, private network, port
    /// 11434) with `GET /api/version` once, and drive an Ollama server through its native chat
    /// API. Off by default; the runtime and the settings commands turn it on.
    pub detect_ollama: bool,
    /// What was learned about endpoints and models; share one across a runtime's clients.
    pub quirks: std::sync::Arc<Quirks>,
}

impl ProviderConfig {
    /// A config with default timeouts and retries.
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        ProviderConfig {
            kind,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            max_retries: 3,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            reasoning_effort: None,
            thinking_budget: None,
            context_window: None,
            detect_ollama: false,
            quirks: std::sync::Arc::new(Quirks::new()),
        }
    }
}

/// One model call.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// System prompt.
    pub system: String,
    /// History.
    pub messages: Vec<Message>,
    /// Tools the model may call. Empty = no `tools` field is sent at all.
    pub tools: Vec<ToolSpec>,
    /// False asks for a final answer without tool calls while keeping `tools` defined (needed when the
    /// history holds tool calls): `tool_choice: "none"` / `{"type": "none"}`.
    pub allow_tool_calls: bool,
    /// Output token cap (`max_tokens`).
    pub max_tokens: u32,
    /// Sampling temperature, if set.
    pub temperature: Option<f32>,
}

/// The aggregated result of one streamed model call.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Concatenated text deltas.
    pub text: String,
    /// Reasoning blocks in stream order (kept so they can be shown and, for Anthropic, sent back).
    pub reasoning: Vec<ReasoningBlock>,
    /// Complete tool calls, in index order, arguments as raw JSON text.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// Reported usage (or an estimate marked `estimated`).
    pub usage: Usage,
    /// Model id the provider reported (falls back to the requested one).
    pub model: String,
}

/// Progress reported while a call streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// New assistant text.
    Text(String),
    /// New reasoning text (thinking, `reasoning_content`).
    Reasoning(String),
    /// The client changed how it talks to this endpoint and model and sent the call again (a
    /// parameter the server rejected), or set up the server for it (an Ollama context length).
    Adapted {
        /// What changed.
        change: String,
        /// Why.
        reason: String,
    },
    /// A tool call started streaming (its arguments follow).
    ToolCallStarted {
        /// Tool-call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// The call failed transiently and will be retried after `delay`. Text and tool calls streamed
    /// before it are void: the retry streams the turn again from the start.
    Retrying {
        /// 1-based retry number.
        attempt: u32,
        /// Wait before the retry.
        delay: Duration,
        /// The error that caused it.
        error: String,
    },
}

/// A model (listed by the endpoint), with what the endpoint says about it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct ModelListing {
    /// Model id.
    pub id: String,
    /// Context window, tokens, where the endpoint reports it (OpenRouter `context_length`, Ollama
    /// `/api/show` `model_info.<arch>.context_length`).
    pub context_window: Option<u64>,
    /// USD per million input tokens, where reported (OpenRouter `pricing.prompt`).
    pub input_price_per_mtok: Option<f64>,
    /// USD per million output tokens, where reported (OpenRouter `pricing.completion`).
    pub output_price_per_mtok: Option<f64>,
}

impl ModelListing {
    /// A listing with only an id.
    pub fn id(id: impl Into<String>) -> Self {
        ModelListing {
            id: id.into(),
            context_window: None,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
        }
    }
}

/// A streaming model client.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Wire protocol.
    fn kind(&self) -> ProviderKind;
    /// The configured model id.
    fn model_id(&self) -> &str;
    /// The configured base URL.
    fn base_url(&self) -> &str;
    /// Streams one call to completion, reporting deltas as they arrive. Retries transient failures
    /// (each announced through `on_delta`). Returns `ProviderError::Cancelled` promptly once `cancel`
    /// fires. A stream that ends before its terminal event is an error, never a partial response.
    async fn complete(
        &self,
        request: &ModelRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ProviderError>;
    /// Lists the models the endpoint offers (`GET {base}/models` or `GET {base}/v1/models`).
    async fn list_models(&self) -> Result<Vec<ModelListing>, ProviderError>;
}

/// Builds the client for a config.
pub fn client_for(
    config: ProviderConfig,
) -> Result<std::sync::Arc<dyn ModelClient>, ProviderError> {
    let base = config.base_url.trim();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(ProviderError::BadRequest {
            status: 0,
            message: format!("base URL {base:?} must start with http:// or https://"),
        });
    }
    if config.model.trim().is_empty() {
        return Err(ProviderError::BadRequest {
            status: 0,
            message: "no model id configured".into(),
        });
    }
    Ok(match config.kind {
        ProviderKind::Openai => std::sync::Arc::new(OpenAiClient::new(config)?),
        ProviderKind::Anthropic => std::sync::Arc::new(AnthropicClient::new(config)?),
    })
}

/// About four bytes per token: the estimate used when a provider reports no usage.
pub(crate) fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// The estimate for a response's text and tool calls (names and arguments), the same for both
/// wire formats so a missing usage report costs the same wherever it happens.
pub(crate) fn estimate_output_tokens(text: &str, tool_calls: &[ToolCall]) -> u64 {
    let bytes = text.len()
        + tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
    estimate_tokens(bytes)
}

/// The usage of a response: as reported when the server sent both counts (reasoning, estimated from
/// its text where the API gives no count of its own, is part of the output), else an estimate of
/// what is missing, marked `estimated`. One rule for every wire format that reports input and output
/// separately (Anthropic, Ollama).
pub(crate) fn usage_or_estimate(
    input: Option<u64>,
    output: Option<u64>,
    reasoning_tokens: u64,
    request_bytes: usize,
    text: &str,
    tool_calls: &[ToolCall],
) -> Usage {
    match (input, output) {
        (Some(input_tokens), Some(output_tokens)) => Usage {
            input_tokens,
            output_tokens,
            reasoning_tokens: reasoning_tokens.min(output_tokens),
            estimated: false,
        },
        (input, output) => Usage {
            input_tokens: input.unwrap_or_else(|| estimate_tokens(request_bytes)),
            output_tokens: output
                .unwrap_or_else(|| estimate_output_tokens(text, tool_calls) + reasoning_tokens),
            reasoning_tokens,
            estimated: true,
        },
    }
}

/// A tool result's text for wire formats with no error flag (Chat Completions, Ollama): a failed
/// call says so in its content, so the model can tell.
pub(crate) fn tool_result_text(content: &str, is_error: bool) -> String {
    if is_error && !content.to_ascii_lowercase().starts_with("error") {
        format!("Error: {content}")
    } else {
        content.to_string()
    }
}

/// Gives every call of one response its own id. Approvals and begin/end trace events are keyed by
/// id, so two calls sharing one (some servers reuse ids) would answer each other's approval. A
/// repeat gets a `_2`, `_3`, … suffix that no other call of the response uses; an empty id gets a
/// fresh one.
pub(crate) fn make_ids_unique(calls: &mut [ToolCall]) {
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    let all: std::collections::HashSet<String> = calls.iter().map(|c| c.id.clone()).collect();
    for (n, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = format!(
                "call_{}_{n}",
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            );
        }
        if taken.contains(&call.id) {
            let base = call.id.clone();
            let mut k = 2u32;
            while taken.contains(&format!("{base}_{k}")) || all.contains(&format!("{base}_{k}")) {
                k += 1;
            }
            call.id = format!("{base}_{k}");
        }
        taken.insert(call.id.clone());
    }
}

/// Reads `{"data": [{"id": …}, …]}`, the model-list shape of both APIs.
pub(crate) async fn parse_model_list(
    response: reqwest::Response,
    config: &ProviderConfig,
) -> Result<Vec<ModelListing>, ProviderError> {
    let body = tokio::time::timeout(config.idle_timeout, response.text())
        .await
        .map_err(|_| ProviderError::IdleTimeout(config.idle_timeout))?
        .map_err(|e| ProviderError::Network(format!("reading the model list failed: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| ProviderError::Protocol(format!("model list is not JSON: {e}")))?;
    let data = value
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or_else(|| ProviderError::Protocol("model list has no `data` array".into()))?;
    // Proxies (LiteLLM with two deployments of one model, say) can list an id twice; keep the first.
    let mut seen = std::collections::HashSet::new();
    Ok(data
        .iter()
        .filter_map(|m| Some((m, m.get("id").and_then(|id| id.as_str())?)))
        .filter(|(_, id)| seen.insert(*id))
        .map(|(m, id)| listing_of(id, m))
        .collect())
}

/// One `data` entry: the id plus OpenRouter's `context_length` (or `top_provider.context_length`)
/// and `pricing` (USD per token, as strings).
fn listing_of(id: &str, m: &serde_json::Value) -> ModelListing {
    let context_window = m
        .get("context_length")
        .or_else(|| m.pointer("/top_provider/context_length"))
        .and_then(serde_json::Value::as_u64)
        .filter(|n| *n > 0);
    let per_mtok = |k: &str| {
        let v = m.get("pricing")?.get(k)?;
        let per_token = match v {
            serde_json::Value::String(s) => s.trim().parse::<f64>().ok()?,
            other => other.as_f64()?,
        };
        // OpenRouter lists `-1` for "varies" (routers); that is no price.
        (per_token.is_finite() && per_token >= 0.0).then(|| (per_token * 1e6 * 1e6).round() / 1e6)
    };
    ModelListing {
        id: id.to_string(),
        context_window,
        input_price_per_mtok: per_mtok("prompt"),
        output_price_per_mtok: per_mtok("completion"),
    }
}
