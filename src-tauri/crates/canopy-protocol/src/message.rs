//! Provider-neutral conversation types: what the loop keeps as history and what providers translate
//! to and from their wire formats.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One entry of an agent's history. The system prompt is not a message: it travels beside the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Text from the person (or, for a subagent, the task prompt; or a host notice such as a wrap-up).
    User {
        /// The text.
        text: String,
    },
    /// One model turn: optional text plus zero or more tool calls, exactly as the model produced them.
    Assistant {
        /// Visible text (may be empty when the turn only calls tools).
        text: String,
        /// Tool calls in the order the model emitted them.
        tool_calls: Vec<ToolCall>,
        /// Reasoning the model produced before its answer, in order. Shown folded; sent back only
        /// where the API requires it (Anthropic thinking blocks, never DeepSeek `reasoning_content`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<ReasoningBlock>>", optional)]
        reasoning: Vec<ReasoningBlock>,
    },
    /// The answer to one tool call of the preceding assistant turn.
    ToolResult {
        /// Id of the tool call this answers.
        call_id: String,
        /// Name of the tool that was called.
        name: String,
        /// What the model sees: output, or an error message.
        content: String,
        /// True when `content` is an error (bad arguments, denied, failed).
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant turn without reasoning.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
            reasoning: Vec::new(),
        }
    }
}

/// One piece of a model's reasoning, as the API delivered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningBlock {
    /// Plain reasoning text (DeepSeek / OpenAI-compatible `reasoning_content`, Ollama `thinking`):
    /// shown, counted, never sent back.
    Text {
        /// The reasoning text.
        text: String,
    },
    /// An Anthropic `thinking` block: sent back verbatim with its signature on later calls.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the API checks when the block is sent back.
        signature: String,
    },
    /// An Anthropic `redacted_thinking` block: encrypted, sent back verbatim.
    Redacted {
        /// The encrypted payload.
        data: String,
    },
}

impl ReasoningBlock {
    /// The text shown to people (a placeholder for a redacted block).
    pub fn display_text(&self) -> &str {
        match self {
            ReasoningBlock::Text { text } => text,
            ReasoningBlock::Thinking { thinking, .. } => thinking,
            ReasoningBlock::Redacted { .. } => "[redacted thinking]",
        }
    }
}

/// How hard a reasoning model thinks before answering (OpenAI `reasoning_effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// Fewest reasoning tokens (gpt-5 family only; `low` elsewhere).
    Minimal,
    /// Little reasoning.
    Low,
    /// The API's default.
    Medium,
    /// Most reasoning.
    High,
}

impl ReasoningEffort {
    /// The wire value.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

/// A tool call as the model produced it. `arguments` is the raw JSON text, kept verbatim so that it can
/// be sent back to the provider exactly as received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolCall {
    /// Provider-assigned id (OpenAI `call_…`, Anthropic `toolu_…`).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Raw JSON text of the arguments (may be invalid JSON if the model produced that).
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolSpec {
    /// Tool name, e.g. `Read`.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Token usage of one model call (or a sum of calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Usage {
    /// Prompt/input tokens.
    pub input_tokens: u64,
    /// Completion/output tokens (reasoning tokens included, as the APIs bill them).
    pub output_tokens: u64,
    /// The part of `output_tokens` spent on reasoning (OpenAI `completion_tokens_details`, or
    /// estimated from streamed reasoning text); 0 when none or not reported.
    #[serde(default)]
    #[ts(as = "Option<u64>", optional)]
    pub reasoning_tokens: u64,
    /// True when the provider did not report usage and the figures are an estimate (~4 bytes/token).
    #[serde(default)]
    pub estimated: bool,
}

impl Usage {
    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Adds another usage into this one; the sum is estimated if either part is.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.estimated |= other.estimated;
    }
}

/// Why the model stopped producing output in one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// Natural end of the turn.
    Stop,
    /// The turn ends with tool calls to run.
    ToolCalls,
    /// Output was cut by `max_tokens`.
    Length,
    /// The provider filtered the output.
    ContentFilter,
    /// Anything else the provider reported, verbatim.
    Other(String),
}

/// Which configured model slot a session uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ModelSlot {
    /// The main (stronger) model.
    Main,
    /// The light (cheaper) model used by subagents by default.
    Light,
}

impl ModelSlot {
    /// `main` or `light`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ModelSlot::Main => "main",
            ModelSlot::Light => "light",
        }
    }
}

/// Wire protocol of a model endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`{base}/chat/completions`); base URL includes `/v1`.
    Openai,
    /// Anthropic Messages (`{base}/v1/messages`); base URL without `/v1`.
    Anthropic,
}

impl ProviderKind {
    /// `openai` or `anthropic`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// The default base URL of the provider's public API.
    pub fn default_base_url(&self) -> &'static str {
        match self {
            ProviderKind::Openai => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }
}
