//! The script that drives the mock server: which rule answers which request, and what each turn of
//! that rule streams back. Serde types (the binary reads them from JSON) plus terse builders for tests.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::MockError;

/// A whole script: auth, known models, and the rules tried in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// When set, requests without this key (`Authorization: Bearer` or `x-api-key`) get a 401.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_api_key: Option<String>,
    /// Models served by `GET /v1/models`; a request for any other model gets a 404. Empty = any model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// Rules, first match wins.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// What `GET /v1/models` says about a model beyond its id, OpenRouter-style
    /// (`context_length`, `pricing`), keyed by model id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub model_details: BTreeMap<String, ModelDetail>,
    /// Models served the way Ollama serves them, keyed by model id. With any, the server also
    /// answers Ollama's native routes (`/api/version`, `/api/tags`, `/api/show`, `/api/chat`), and
    /// on its OpenAI-compatible path runs these models with `ollama_default_ctx`, silently dropping
    /// the start of a longer prompt.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ollama_models: BTreeMap<String, OllamaModel>,
    /// The context length Ollama runs a model with when nobody sets `num_ctx` (default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ollama_default_ctx: Option<u64>,
}

/// What a model listing reports about one model (OpenRouter's fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDetail {
    /// Context window, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// USD per input token, as the string OpenRouter sends (`"0.000003"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_price: Option<String>,
    /// USD per output token, as a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_price: Option<String>,
}

/// A model as an Ollama server describes it in `/api/show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OllamaModel {
    /// `general.architecture` (`llama`, `qwen2`, …).
    pub architecture: String,
    /// `<architecture>.context_length`: the longest context the model takes.
    pub context_length: u64,
}

impl Script {
    /// An empty script (accepts any model, no key, no rules).
    pub fn new() -> Self {
        Script::default()
    }

    /// Parses a JSON script.
    pub fn from_json(text: &str) -> Result<Self, MockError> {
        serde_json::from_str(text).map_err(|e| MockError::Script(e.to_string()))
    }

    /// Reads and parses a JSON script file.
    pub fn load(path: &std::path::Path) -> Result<Self, MockError> {
        let text = std::fs::read_to_string(path).map_err(|e| MockError::ReadScript {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Script::from_json(&text).map_err(|e| MockError::Script(format!("{}: {e}", path.display())))
    }

    /// Requires this API key.
    pub fn require_api_key(mut self, key: impl Into<String>) -> Self {
        self.require_api_key = Some(key.into());
        self
    }

    /// Sets the known models.
    pub fn models<S: Into<String>>(mut self, models: impl IntoIterator<Item = S>) -> Self {
        self.models = models.into_iter().map(Into::into).collect();
        self
    }

    /// Appends a rule.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Lists `model` with a context length and per-token prices (OpenRouter style).
    pub fn model_detail(
        mut self,
        model: impl Into<String>,
        context_length: u64,
        prompt_price: &str,
        completion_price: &str,
    ) -> Self {
        self.model_details.insert(
            model.into(),
            ModelDetail {
                context_length: Some(context_length),
                prompt_price: Some(prompt_price.into()),
                completion_price: Some(completion_price.into()),
            },
        );
        self
    }

    /// Serves `model` as Ollama does, with this architecture and maximum context length.
    pub fn ollama_model(
        mut self,
        model: impl Into<String>,
        architecture: &str,
        context_length: u64,
    ) -> Self {
        self.ollama_models.insert(
            model.into(),
            OllamaModel {
                architecture: architecture.into(),
                context_length,
            },
        );
        self
    }

    /// The context Ollama runs models with unless told otherwise.
    pub fn ollama_default_ctx(mut self, n: u64) -> Self {
        self.ollama_default_ctx = Some(n);
        self
    }
}

/// One rule: a matcher and the turns it plays.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Name, for error messages and fault counters.
    #[serde(default)]
    pub name: String,
    /// Conditions, all of which must hold.
    #[serde(rename = "match", default)]
    pub matcher: Matcher,
    /// Turn `n` answers a request whose history holds `n` assistant messages; the last repeats.
    pub turns: Vec<Turn>,
}

impl Rule {
    /// A rule that matches everything and has no turns yet.
    pub fn new(name: impl Into<String>) -> Self {
        Rule {
            name: name.into(),
            ..Rule::default()
        }
    }

    /// Appends a turn.
    pub fn turn(mut self, turn: Turn) -> Self {
        self.turns.push(turn);
        self
    }

    /// Requires the system prompt to contain `s`.
    pub fn system_contains(mut self, s: impl Into<String>) -> Self {
        self.matcher.system_contains = Some(s.into());
        self
    }

    /// Requires the first user message to contain `s`.
    pub fn first_user_contains(mut self, s: impl Into<String>) -> Self {
        self.matcher.first_user_contains = Some(s.into());
        self
    }

    /// Requires the last user message to contain `s`.
    pub fn last_user_contains(mut self, s: impl Into<String>) -> Self {
        self.matcher.last_user_contains = Some(s.into());
        self
    }

    /// Requires some message (text, tool call arguments or tool result) to contain `s`.
    pub fn any_message_contains(mut self, s: impl Into<String>) -> Self {
        self.matcher.any_message_contains = Some(s.into());
        self
    }

    /// Requires this model id.
    pub fn model(mut self, s: impl Into<String>) -> Self {
        self.matcher.model = Some(s.into());
        self
    }

    /// Requires this wire protocol (`openai` or `anthropic`).
    pub fn provider(mut self, s: impl Into<String>) -> Self {
        self.matcher.provider = Some(s.into());
        self
    }
}

/// Conditions on a request; unset ones always hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// Substring of the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_contains: Option<String>,
    /// Substring of the first user message's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_user_contains: Option<String>,
    /// Substring of the last user message's text (turns holding only tool results do not count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_contains: Option<String>,
    /// Substring of any message: text, tool call arguments or tool result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_message_contains: Option<String>,
    /// Exact model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `openai` or `anthropic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// Token usage a turn reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// One scripted model reply and how it is delivered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Assistant text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedCall>,
    /// Reported usage; default: request bytes/4 and output bytes/4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ScriptUsage>,
    /// `stop`, `tool_calls`, `length`, … (OpenAI words; mapped for Anthropic). Default: `tool_calls`
    /// when there are tool calls, else `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Split the response body into writes of this many bytes (mid-JSON, mid-UTF-8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<usize>,
    /// Pause between writes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Pause before the first byte.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_byte_delay_ms: u64,
    /// OpenAI: interleave the argument fragments of parallel tool calls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleave_tool_calls: bool,
    /// A failure served instead of (or in the middle of) this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// OpenAI: this exact `usage` object on the final usage chunk instead of the real counts (for
    /// servers that send `{}`, zeros, or no `prompt_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openai_usage: Option<Value>,
    /// OpenAI: leave `index` out of tool-call fragments, as some compatible servers do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_tool_call_index: bool,
    /// Reasoning streamed before the answer: `reasoning_content` deltas (OpenAI-compatible, as
    /// DeepSeek sends them, counted in `completion_tokens_details.reasoning_tokens`), a signed
    /// `thinking` block (Anthropic, only when the request enables thinking), or `thinking`
    /// (Ollama's native chat).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// Anthropic: a `redacted_thinking` block with this data (only when thinking is enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted_thinking: Option<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Turn {
    /// A turn that answers with text.
    pub fn text(text: impl Into<String>) -> Self {
        Turn {
            text: text.into(),
            ..Turn::default()
        }
    }

    /// A turn that calls tools.
    pub fn tools(calls: Vec<ScriptedCall>) -> Self {
        Turn {
            tool_calls: calls,
            ..Turn::default()
        }
    }

    /// Adds text to a tool-calling turn.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    /// Reports this usage.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(ScriptUsage {
            input_tokens,
            output_tokens,
        });
        self
    }

    /// Sets the finish reason.
    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// Writes the body in pieces of `n` bytes.
    pub fn chunk_bytes(mut self, n: usize) -> Self {
        self.chunk_bytes = Some(n);
        self
    }

    /// Pauses `ms` between writes.
    pub fn delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    /// Pauses `ms` before the first byte.
    pub fn first_byte_delay_ms(mut self, ms: u64) -> Self {
        self.first_byte_delay_ms = ms;
        self
    }

    /// Interleaves parallel tool-call fragments (OpenAI).
    pub fn interleaved(mut self) -> Self {
        self.interleave_tool_calls = true;
        self
    }

    /// Serves `fault` first.
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Sends `usage` verbatim as the OpenAI usage object.
    pub fn openai_usage(mut self, usage: Value) -> Self {
        self.openai_usage = Some(usage);
        self
    }

    /// Leaves `index` out of OpenAI tool-call fragments.
    pub fn without_tool_call_index(mut self) -> Self {
        self.omit_tool_call_index = true;
        self
    }

    /// Streams `text` as reasoning before the answer.
    pub fn reasoning(mut self, text: impl Into<String>) -> Self {
        self.reasoning = text.into();
        self
    }

    /// Adds an Anthropic `redacted_thinking` block.
    pub fn redacted_thinking(mut self, data: impl Into<String>) -> Self {
        self.redacted_thinking = Some(data.into());
        self
    }
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Id; default: a unique `call_…`/`toolu_…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments: a JSON value sent as its compact text, or a string sent verbatim (may be invalid JSON).
    pub arguments: Value,
}

impl ScriptedCall {
    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The argument text as it goes on the wire.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }
}

/// A tool call with JSON arguments.
pub fn call(name: impl Into<String>, arguments: Value) -> ScriptedCall {
    ScriptedCall {
        id: None,
        name: name.into(),
        arguments,
    }
}

/// A tool call whose argument text is sent verbatim (e.g. invalid JSON).
pub fn call_raw(name: impl Into<String>, raw_arguments: impl Into<String>) -> ScriptedCall {
    ScriptedCall {
        id: None,
        name: name.into(),
        arguments: Value::String(raw_arguments.into()),
    }
}

/// A failure. Applies to the first `times` requests (default 1) that reach its rule and turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// Answer with this HTTP status (429, 500, 529, …) and a provider-shaped error body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `Retry-After` header, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u64>,
    /// `Retry-After` header sent verbatim (e.g. an HTTP-date); wins over `retry_after_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// `retry-after-ms` header (OpenAI), milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Close the connection after this many body bytes, without the terminal event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_bytes: Option<usize>,
    /// Send the first event, then go silent this long before going on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_ms: Option<u64>,
    /// A properly finished stream with no text and no tool calls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
    /// 400 with the provider's context-length-exceeded error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context_length: bool,
    /// How many requests get the fault (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// OpenAI-compatible: after a 200 and the first chunk, an `error` chunk as OpenRouter sends it
    /// (`{"error": {"code": …, "message": …}}`, `finish_reason: "error"`), then the stream ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_error: Option<StreamError>,
}

/// An error delivered inside a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamError {
    /// The numeric code (an HTTP status: 502, 429, 400…).
    pub code: u16,
    /// The message.
    pub message: String,
}

impl Fault {
    /// An HTTP error status.
    pub fn status(status: u16) -> Self {
        Fault {
            status: Some(status),
            ..Fault::default()
        }
    }

    /// 429 with `Retry-After: secs`.
    pub fn rate_limited(retry_after_s: u64) -> Self {
        Fault {
            status: Some(429),
            retry_after_s: Some(retry_after_s),
            ..Fault::default()
        }
    }

    /// 429 with `Retry-After: value` verbatim (an HTTP-date, or anything else to test parsing).
    pub fn rate_limited_header(value: impl Into<String>) -> Self {
        Fault {
            status: Some(429),
            retry_after: Some(value.into()),
            ..Fault::default()
        }
    }

    /// 429 with `retry-after-ms: ms` and no `Retry-After`.
    pub fn rate_limited_ms(ms: u64) -> Self {
        Fault {
            status: Some(429),
            retry_after_ms: Some(ms),
            ..Fault::default()
        }
    }

    /// Connection closed after `bytes` body bytes.
    pub fn cut_after_bytes(bytes: usize) -> Self {
        Fault {
            cut_after_bytes: Some(bytes),
            ..Fault::default()
        }
    }

    /// Silence of `ms` after the first event.
    pub fn stall_ms(ms: u64) -> Self {
        Fault {
            stall_ms: Some(ms),
            ..Fault::default()
        }
    }

    /// A finished but empty reply.
    pub fn empty() -> Self {
        Fault {
            empty: true,
            ..Fault::default()
        }
    }

    /// A context-length-exceeded 400.
    pub fn context_length() -> Self {
        Fault {
            context_length: true,
            ..Fault::default()
        }
    }

    /// An OpenRouter-style error chunk after a 200.
    pub fn stream_error(code: u16, message: impl Into<String>) -> Self {
        Fault {
            stream_error: Some(StreamError {
                code,
                message: message.into(),
            }),
            ..Fault::default()
        }
    }

    /// Applies the fault to the first `n` requests.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }
}
