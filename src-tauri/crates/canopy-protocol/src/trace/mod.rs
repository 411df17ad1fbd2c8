//! Trace events: the typed record of everything an agent session does. Written as JSONL (one file per
//! session) and published live on the runtime's event stream. `docs/trace-format.md` documents every
//! field; keep the two in step.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::message::{FinishReason, ModelSlot, ProviderKind, ToolCall, Usage};
use crate::result::{CheckedEvidence, SeenFile, SubagentResult, TrustSummary};

mod budget;

pub use budget::{BudgetKind, BudgetUsage, Budgets};

/// Version of the trace schema written in every record's `v` field.
pub const TRACE_SCHEMA_VERSION: u32 = 1;

/// One line of a trace file (and one item of the live stream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TraceRecord {
    /// Schema version ([`TRACE_SCHEMA_VERSION`]).
    pub v: u32,
    /// Sequence number within this session's file, from 0, without gaps.
    pub seq: u64,
    /// Wall-clock time of the event, milliseconds since the Unix epoch.
    pub ts_ms: u64,
    /// The session (agent) that emitted the event; also the file name stem.
    pub session_id: String,
    /// The run (one user prompt of the root session, including all subagents it spawned).
    pub run_id: String,
    /// The parent agent's session, `null` for the root.
    pub parent_session_id: Option<String>,
    /// The event itself.
    pub event: TraceEvent,
}

/// Whether a session is the user's main agent or a delegated subagent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// The main agent the person talks to.
    Main,
    /// A subagent launched through the `Task` tool.
    Subagent,
}

/// Permission mode of a session's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    /// Read-only tools allowed; mutating tools and `Task` decided by the policy.
    Main,
    /// Everything that mutates, and `Task`, denied.
    ReadonlySubagent,
}

/// What a tool does, which is all the host needs to know to treat a call: the permission gate,
/// which calls may run together, what a read-only subagent may have and how the UI draws a call all
/// follow from it, never from the tool's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Looks at the project or keeps the agent's own notes (Read, Grep, Glob, TodoWrite).
    Read,
    /// Changes files in the project (Edit, Write).
    Edit,
    /// Runs a command on the machine (Bash).
    Execute,
    /// Hands a job to a subagent (Task).
    Delegate,
    /// Provided by something outside Canopy (an MCP server); asked about like a mutating tool.
    External,
}

/// How Bash commands are confined: the setting, and what a session recorded it ran with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Every Bash call runs in the OS sandbox (bubblewrap on Linux); where it cannot run, Bash is
    /// refused with a message saying how to enable it.
    #[default]
    Required,
    /// Bash runs with the person's full rights, without an OS sandbox (chosen explicitly in Settings).
    Off,
}

/// The model a session actually uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelInfo {
    /// The slot whose configuration is in use (after any fallback).
    pub slot: ModelSlot,
    /// The slot the profile asked for.
    pub requested_slot: ModelSlot,
    /// True when `light` was requested but not configured, so `main` runs instead.
    pub fallback: bool,
    /// Wire protocol.
    pub provider: ProviderKind,
    /// Model id sent to the provider.
    pub model_id: String,
    /// Endpoint base URL.
    pub base_url: String,
}

/// Why an agent's run ended. A closed set: every run ends with exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TerminalReason {
    /// The model gave a final answer (and, for subagents, a valid result).
    Completed,
    /// The step budget ran out.
    MaxSteps,
    /// The total-token budget ran out.
    TokenBudget,
    /// The next request would not fit the context budget even after compaction.
    ContextOverflow,
    /// The wall-time budget ran out.
    TimeBudget,
    /// Cancelled by the person, the parent, or the app closing.
    Cancelled,
    /// The provider failed after retries (auth, network, server, protocol).
    ModelError,
    /// The model returned nothing twice in a row.
    EmptyResponse,
    /// A subagent's final answer failed its result contract twice.
    InvalidResult,
    /// Never written: readers assign it to a run whose trace stops without `run_ended`.
    Interrupted,
}

/// Link from a child session to the exact parent call that created it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ParentLink {
    /// Parent session id.
    pub session_id: String,
    /// Parent run id (also this session's run id).
    pub run_id: String,
    /// The parent's `Task` tool-call id.
    pub tool_call_id: String,
}

/// Outcome of a permission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The call may run.
    Allow,
    /// The call is refused; the model is told why.
    Deny,
}

/// Who or what made a permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// The tool does not mutate and is in the profile's allowlist.
    ReadOnly,
    /// The configured policy said allow or deny.
    Policy,
    /// An earlier "allow for this session" answer.
    SessionRule,
    /// The person answered an approval request.
    User,
    /// The session is a read-only subagent.
    ReadonlyMode,
    /// The tool is not in this profile's allowlist.
    NotAllowed,
    /// Nobody could answer an ask (headless without the matching `--allow`).
    NoApprover,
}

/// How long an approval holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This call only.
    Once,
    /// Every later call of this tool in this session.
    Session,
}

/// Status of a finished tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The tool ran and succeeded.
    Ok,
    /// The tool failed or the arguments were bad; the model saw the error.
    Error,
    /// The permission gate refused the call.
    Denied,
    /// Cancelled while running.
    Cancelled,
}

/// State of one TodoWrite item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TodoItem {
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// Everything a session records. Begin/end pairs share an id (`model_call_id`, `call_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TraceEvent {
    /// First event of every session file: who this agent is and what it may do.
    SessionStarted {
        /// Main agent or subagent.
        agent: AgentKind,
        /// Profile name (`main`, `explore`, `verify`, or a project profile).
        profile: String,
        /// The Task `description` for subagents (the label shown in the tree).
        description: Option<String>,
        /// The model actually used.
        model: ModelInfo,
        /// Budgets in force.
        budgets: Budgets,
        /// Canonical project root.
        project_root: String,
        /// For subagents: the parent session, run and `Task` call.
        parent: Option<ParentLink>,
        /// Permission mode of this session's gate.
        permission_mode: PermissionMode,
        /// Tool names offered to the model.
        tools: Vec<String>,
        /// The system prompt sent with every request.
        system_prompt: String,
        /// How this session's Bash calls are confined; absent in traces written before it was
        /// recorded (those ran without a sandbox).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        bash_sandbox: Option<SandboxMode>,
    },
    /// A run begins: the user prompt (or the subagent's task prompt) enters the history.
    RunStarted {
        /// The prompt text.
        prompt: String,
    },
    /// A model request is sent.
    ModelCallBegin {
        /// Id pairing this with `model_call_end`.
        model_call_id: String,
        /// 1-based step number (model calls so far in this run).
        step: u32,
        /// Messages in the request's history.
        messages: u32,
        /// Host estimate of the request's input tokens.
        estimated_input_tokens: u64,
        /// False for the last tool-less call that asks for a final answer.
        tools_offered: bool,
    },
    /// Streamed assistant text. Published live only; never written to trace files (the full text is in
    /// `model_call_end`).
    AssistantDelta {
        /// The model call this text belongs to.
        model_call_id: String,
        /// The new text.
        text: String,
    },
    /// The provider failed transiently and the call is retried after a delay.
    ModelRetry {
        /// The model call being retried.
        model_call_id: String,
        /// 1-based retry number.
        attempt: u32,
        /// Delay before the retry (honours `Retry-After`).
        delay_ms: u64,
        /// What went wrong.
        error: String,
    },
    /// The provider client changed how it talks to this endpoint and model, for this call and every
    /// later one of the runtime (a parameter the server rejected, a context length it needs).
    ProviderAdapted {
        /// The model call during which it happened.
        model_call_id: String,
        /// Endpoint base URL.
        base_url: String,
        /// Model id.
        model: String,
        /// What changed, e.g. `max_tokens -> max_completion_tokens`.
        change: String,
        /// Why: the server's message, or what was measured.
        reason: String,
    },
    /// A model call finished (successfully or not).
    ModelCallEnd {
        /// Id pairing this with `model_call_begin`.
        model_call_id: String,
        /// Step number.
        step: u32,
        /// Assistant text of the turn.
        text: String,
        /// The turn's reasoning as shown to people (thinking / `reasoning_content`), empty when none.
        #[serde(default)]
        #[ts(as = "Option<String>", optional)]
        reasoning: String,
        /// Tool calls of the turn.
        tool_calls: Vec<ToolCall>,
        /// Why the model stopped; `null` when the call failed.
        finish_reason: Option<FinishReason>,
        /// Usage of this call.
        usage: Usage,
        /// Model id the provider reported.
        model: String,
        /// Latency from request to last byte.
        latency_ms: u64,
        /// Error message when the call failed.
        error: Option<String>,
        /// Budget usage after this call.
        totals: BudgetUsage,
    },
    /// A tool call is about to pass the permission gate.
    ToolCallBegin {
        /// Tool-call id (from the model).
        call_id: String,
        /// Tool name.
        tool: String,
        /// Parsed arguments (a JSON string when they did not parse).
        arguments: serde_json::Value,
        /// Whether the tool mutates (false for unknown tools).
        mutates: bool,
    },
    /// The gate needs an answer from the person; the call waits.
    PermissionRequested {
        /// Tool-call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// One-line summary of what the call would do.
        summary: String,
    },
    /// The gate decided.
    PermissionDecided {
        /// Tool-call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// Allow or deny.
        decision: Decision,
        /// Who decided.
        source: DecisionSource,
        /// For user approvals: once or for the session.
        scope: Option<ApprovalScope>,
        /// Human-readable reason.
        reason: String,
    },
    /// A tool call finished.
    ToolCallEnd {
        /// Tool-call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// Outcome.
        status: ToolStatus,
        /// What the model saw, capped at `output_cap_bytes` for the trace.
        output: String,
        /// Full size of what the model saw, bytes.
        output_bytes: u64,
        /// Cap applied to `output` in the trace, bytes.
        output_cap_bytes: u64,
        /// True when `output` was cut to the cap.
        truncated: bool,
        /// Time the tool ran (excluding approval wait).
        duration_ms: u64,
        /// True only in records a reader returned for replay with `output` left out (fetch it with the app's
        /// `load_tool_output`); never true in trace files.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        output_elided: bool,
        /// What the result showed the agent of which files (Read, Grep, Glob), after it was fitted
        /// to the context: what the citations of this agent are judged against. Absent when it
        /// showed none, and in traces written before provenance was recorded.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(optional, as = "Option<Vec<SeenFile>>")]
        seen: Vec<SeenFile>,
    },
    /// The agent's plan changed (TodoWrite).
    TodoUpdated {
        /// The whole plan.
        items: Vec<TodoItem>,
    },
    /// A budget passed the wrap-up threshold; the agent was told to wrap up.
    BudgetWarning {
        /// Which budget.
        budget: BudgetKind,
        /// Used so far.
        used: u64,
        /// Limit.
        limit: u64,
    },
    /// A budget ran out; the agent gets one tool-less call for its answer.
    BudgetExhausted {
        /// Which budget.
        budget: BudgetKind,
        /// Used so far.
        used: u64,
        /// Limit.
        limit: u64,
    },
    /// Older history was replaced by a model-written summary.
    Compacted {
        /// Messages before.
        messages_before: u32,
        /// Messages after.
        messages_after: u32,
        /// Estimated tokens before.
        tokens_before: u64,
        /// Estimated tokens after.
        tokens_after: u64,
        /// The summary now standing for the older turns.
        summary: String,
    },
    /// A `Task` call asked for a subagent (parent's trace).
    SubagentRequested {
        /// The parent's `Task` tool-call id.
        tool_call_id: String,
        /// The child's session id (its trace file stem).
        child_session_id: String,
        /// Short label.
        description: String,
        /// Profile name.
        profile: String,
        /// Requested model slot.
        model_slot: ModelSlot,
        /// The task prompt.
        prompt: String,
    },
    /// The subagent started running (parent's trace); it may have waited for a parallelism slot.
    SubagentStarted {
        /// The parent's `Task` tool-call id.
        tool_call_id: String,
        /// Child session id.
        child_session_id: String,
        /// Profile name.
        profile: String,
        /// Model actually used.
        model: ModelInfo,
        /// Child budgets.
        budgets: Budgets,
    },
    /// The subagent returned a valid result (parent's trace).
    SubagentCompleted {
        /// The parent's `Task` tool-call id.
        tool_call_id: String,
        /// Child session id.
        child_session_id: String,
        /// The validated result with checked evidence.
        result: SubagentResult,
        /// Tokens used by the child and its descendants.
        usage: Usage,
        /// Tool calls the child made.
        tool_calls: u32,
        /// Child wall time.
        elapsed_ms: u64,
        /// The child's terminal reason (`completed`, or a budget reason for a partial result).
        terminal_reason: TerminalReason,
    },
    /// The subagent ended without a valid result (parent's trace).
    SubagentFailed {
        /// The parent's `Task` tool-call id.
        tool_call_id: String,
        /// Child session id.
        child_session_id: String,
        /// What went wrong.
        error: String,
        /// Usage of the child and its descendants.
        usage: Usage,
        /// Tool calls the child made.
        tool_calls: u32,
        /// Child wall time.
        elapsed_ms: u64,
        /// The child's real terminal reason.
        terminal_reason: TerminalReason,
    },
    /// The subagent was cancelled (parent's trace).
    SubagentCancelled {
        /// The parent's `Task` tool-call id.
        tool_call_id: String,
        /// Child session id.
        child_session_id: String,
        /// Usage of the child and its descendants until cancel.
        usage: Usage,
        /// Tool calls the child made.
        tool_calls: u32,
        /// Child wall time.
        elapsed_ms: u64,
    },
    /// A subagent's final answer broke its result contract; it gets one corrective turn.
    ResultRejected {
        /// 1 for the first rejection, 2 for the one that ends the child.
        attempt: u32,
        /// Exactly what was wrong.
        error: String,
    },
    /// Files in the project changed while a read-only subagent ran.
    ReadonlyViolation {
        /// Project-relative paths that were added, removed or modified.
        changed: Vec<String>,
    },
    /// Cancellation reached this session.
    CancelRequested {
        /// Who cancelled: `user`, `parent`, `window_closed`, …
        reason: String,
    },
    /// The `path:line` references in the main agent's final answer, checked like a subagent's
    /// evidence (on disk, and seen by any agent of this run). Written just before `run_ended`, only
    /// when the answer cites something.
    AnswerChecked {
        /// Each reference, in the order the answer gives them.
        references: Vec<CheckedEvidence>,
        /// The references counted by trust.
        trust: TrustSummary,
    },
    /// The run ended.
    RunEnded {
        /// Why.
        terminal_reason: TerminalReason,
        /// The final assistant text, if any.
        final_text: Option<String>,
        /// For subagents: the validated result, if any.
        result: Option<SubagentResult>,
        /// Error message for failures.
        error: Option<String>,
        /// This session's own usage.
        usage: Usage,
        /// Usage including all descendants.
        usage_with_descendants: Usage,
        /// Budget usage at the end.
        totals: BudgetUsage,
        /// Tool calls made by this session.
        tool_calls: u32,
    },
}

impl TraceEvent {
    /// The `type` tag of this event.
    pub fn kind(&self) -> &'static str {
        match self {
            TraceEvent::SessionStarted { .. } => "session_started",
            TraceEvent::RunStarted { .. } => "run_started",
            TraceEvent::ModelCallBegin { .. } => "model_call_begin",
            TraceEvent::AssistantDelta { .. } => "assistant_delta",
            TraceEvent::ModelRetry { .. } => "model_retry",
            TraceEvent::ModelCallEnd { .. } => "model_call_end",
            TraceEvent::ProviderAdapted { .. } => "provider_adapted",
            TraceEvent::ToolCallBegin { .. } => "tool_call_begin",
            TraceEvent::PermissionRequested { .. } => "permission_requested",
            TraceEvent::PermissionDecided { .. } => "permission_decided",
            TraceEvent::ToolCallEnd { .. } => "tool_call_end",
            TraceEvent::TodoUpdated { .. } => "todo_updated",
            TraceEvent::BudgetWarning { .. } => "budget_warning",
            TraceEvent::BudgetExhausted { .. } => "budget_exhausted",
            TraceEvent::Compacted { .. } => "compacted",
            TraceEvent::SubagentRequested { .. } => "subagent_requested",
            TraceEvent::SubagentStarted { .. } => "subagent_started",
            TraceEvent::SubagentCompleted { .. } => "subagent_completed",
            TraceEvent::SubagentFailed { .. } => "subagent_failed",
            TraceEvent::SubagentCancelled { .. } => "subagent_cancelled",
            TraceEvent::ResultRejected { .. } => "result_rejected",
            TraceEvent::ReadonlyViolation { .. } => "readonly_violation",
            TraceEvent::CancelRequested { .. } => "cancel_requested",
            TraceEvent::AnswerChecked { .. } => "answer_checked",
            TraceEvent::RunEnded { .. } => "run_ended",
        }
    }

    /// Whether the event is written to trace files (live-only events are not).
    pub fn is_persisted(&self) -> bool {
        !matches!(self, TraceEvent::AssistantDelta { .. })
    }
}
