// Generated from the Rust types by the canopy-app test `generated_types_are_current`.
// Do not edit: change the Rust types and run `CANOPY_BLESS=1 cargo test -p canopy-app generated_types`.

// ---- canopy-protocol ----
export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]?: JsonValue } | null;
export type Message = { "role": "user", 
/**
 * The text.
 */
text: string, } | { "role": "assistant", 
/**
 * Visible text (may be empty when the turn only calls tools).
 */
text: string, 
/**
 * Tool calls in the order the model emitted them.
 */
tool_calls: Array<ToolCall>, 
/**
 * Reasoning the model produced before its answer, in order. Shown folded; sent back only
 * where the API requires it (Anthropic thinking blocks, never DeepSeek `reasoning_content`).
 */
reasoning?: Array<ReasoningBlock>, } | { "role": "tool_result", 
/**
 * Id of the tool call this answers.
 */
call_id: string, 
/**
 * Name of the tool that was called.
 */
name: string, 
/**
 * What the model sees: output, or an error message.
 */
content: string, 
/**
 * True when `content` is an error (bad arguments, denied, failed).
 */
is_error: boolean, };
export type ToolCall = { 
/**
 * Provider-assigned id (OpenAI `call_…`, Anthropic `toolu_…`).
 */
id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Raw JSON text of the arguments (may be invalid JSON if the model produced that).
 */
arguments: string, };
export type ToolSpec = { 
/**
 * Tool name, e.g. `Read`.
 */
name: string, 
/**
 * What the tool does, for the model.
 */
description: string, 
/**
 * JSON Schema of the arguments object.
 */
parameters: JsonValue, };
export type ReasoningBlock = { "type": "text", 
/**
 * The reasoning text.
 */
text: string, } | { "type": "thinking", 
/**
 * The thinking text.
 */
thinking: string, 
/**
 * The signature the API checks when the block is sent back.
 */
signature: string, } | { "type": "redacted", 
/**
 * The encrypted payload.
 */
data: string, };
export type ReasoningEffort = "minimal" | "low" | "medium" | "high";
export type Usage = { 
/**
 * Prompt/input tokens.
 */
input_tokens: number, 
/**
 * Completion/output tokens (reasoning tokens included, as the APIs bill them).
 */
output_tokens: number, 
/**
 * The part of `output_tokens` spent on reasoning (OpenAI `completion_tokens_details`, or
 * estimated from streamed reasoning text); 0 when none or not reported.
 */
reasoning_tokens?: number, 
/**
 * True when the provider did not report usage and the figures are an estimate (~4 bytes/token).
 */
estimated: boolean, };
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | { "other": string };
export type ModelSlot = "main" | "light";
export type ProviderKind = "openai" | "anthropic";
export type ResultStatus = "completed" | "partial";
export type Verdict = "PASS" | "FAIL" | "PARTIAL" | "UNVERIFIED";
export type EvidenceState = "valid" | "missing_file" | "line_out_of_range" | "outside_project" | "unparseable";
export type Provenance = "seen" | "file_seen" | "unseen";
export type EvidenceTrust = "grounded" | "file_seen" | "unseen" | "quote_mismatch" | "stale" | "invalid";
export type FileStamp = { 
/**
 * How many leading bytes of the file the hash covers: the whole file, unless a Read of a huge
 * file stopped after the lines it asked for.
 */
bytes: number, 
/**
 * Whether `bytes` was the whole file, so a file that has grown since counts as changed.
 */
whole: boolean, 
/**
 * XXH3-64 of those bytes, 16 lower-case hex digits.
 */
hash: string, };
export type LineEdit = { 
/**
 * First line the region replaced, in the file as the edit found it (1-based).
 */
old_start: number, 
/**
 * Lines it replaced (at least 1).
 */
old_count: number, 
/**
 * First line of what replaced them, in the file as the edit left it (1-based); when
 * `new_count` is 0, the line that now follows the removed ones.
 */
new_start: number, 
/**
 * Lines that replaced them (0 when whole lines were removed).
 */
new_count: number, };
export type SeenEdit = { 
/**
 * The file as the edit found it (the content it was applied to).
 */
base: FileStamp, 
/**
 * The replaced regions, in file order and disjoint (one per replacement; replacements that
 * share a line are joined).
 */
regions: Array<LineEdit>, };
export type SeenFile = { 
/**
 * Project-relative path, `/`-separated.
 */
path: string, 
/**
 * Line ranges shown, 1-based and inclusive; empty when only the file's name was shown (a
 * listing).
 */
lines: Array<[number, number]>, 
/**
 * The file as it was read; absent for a listing that did not read it. After an Edit or a
 * Write, the file as the tool left it.
 */
stamp?: FileStamp, 
/**
 * For an Edit: what it changed, so lines the agent saw before the edit stay seen at their
 * new numbers. Absent for every other tool.
 */
edit?: SeenEdit, };
export type Unsupported = "no_seen_evidence" | "no_tool_calls";
export type TrustSummary = { 
/**
 * Citations checked.
 */
total: number, 
/**
 * Valid, seen, unchanged, quote matching.
 */
grounded: number, 
/**
 * Valid, but only the file was seen.
 */
file_seen: number, 
/**
 * Valid, but the file was never seen.
 */
unseen: number, 
/**
 * Quote differs from the lines on disk.
 */
quote_mismatch: number, 
/**
 * File changed since the agent read it.
 */
stale: number, 
/**
 * Not valid on disk.
 */
invalid: number, };
export type CheckedEvidence = { 
/**
 * The reference exactly as the model wrote it.
 */
raw: string, 
/**
 * Project-relative path (as written, normalised to `/`).
 */
path: string, 
/**
 * First cited line, 1-based (0 when unparseable).
 */
line: number, 
/**
 * Last cited line for a range.
 */
end_line: number | null, 
/**
 * What the check found.
 */
state: EvidenceState, 
/**
 * The text of the first cited line when `state` is `valid` (capped for display).
 */
text: string | null, 
/**
 * The code the result quoted for this reference, if it quoted any.
 */
quote?: string, 
/**
 * Whether `quote` matches the cited line(s) on disk, ignoring whitespace; absent without a
 * quote.
 */
quote_matches?: boolean, 
/**
 * Whether the citing agent's own tool results showed the line; absent in traces written
 * before provenance was recorded.
 */
provenance?: Provenance, 
/**
 * The file as the agent last read it, which staleness is judged against; absent when the
 * agent never read its content.
 */
read_stamp?: FileStamp, 
/**
 * Whether the file had changed on disk since the agent read it, when this check ran.
 */
stale?: boolean, 
/**
 * The first cited line as the agent's tool results showed it (capped like `text`), when known.
 */
seen_text?: string, 
/**
 * The worst the host found about this citation; absent without provenance.
 */
trust?: EvidenceTrust, };
export type SubagentResult = { 
/**
 * Completed or partial.
 */
status: ResultStatus, 
/**
 * Non-empty prose summary; this is what the parent model reads first.
 */
summary: string, 
/**
 * Individual findings.
 */
findings: Array<string>, 
/**
 * Evidence references, checked by the host.
 */
evidence: Array<CheckedEvidence>, 
/**
 * Questions the subagent could not settle.
 */
unresolved_questions: Array<string>, 
/**
 * Verdict, for the `verify` contract only.
 */
verdict: Verdict | null, 
/**
 * Reasons for the verdict, for the `verify` contract only.
 */
reasons: Array<string>, 
/**
 * The citations counted by trust; absent in traces written before provenance was recorded.
 */
trust?: TrustSummary, 
/**
 * Set when the result is not backed by what the agent looked at; the parent model is told.
 */
unsupported?: Unsupported, };
export type TraceRecord = { 
/**
 * Schema version ([`TRACE_SCHEMA_VERSION`]).
 */
v: number, 
/**
 * Sequence number within this session's file, from 0, without gaps.
 */
seq: number, 
/**
 * Wall-clock time of the event, milliseconds since the Unix epoch.
 */
ts_ms: number, 
/**
 * The session (agent) that emitted the event; also the file name stem.
 */
session_id: string, 
/**
 * The run (one user prompt of the root session, including all subagents it spawned).
 */
run_id: string, 
/**
 * The parent agent's session, `null` for the root.
 */
parent_session_id: string | null, 
/**
 * The event itself.
 */
event: TraceEvent, };
export type AgentKind = "main" | "subagent";
export type PermissionMode = "main" | "readonly_subagent";
export type SandboxMode = "required" | "off";
export type ToolKind = "read" | "edit" | "execute" | "delegate" | "external";
export type ModelInfo = { 
/**
 * The slot whose configuration is in use (after any fallback).
 */
slot: ModelSlot, 
/**
 * The slot the profile asked for.
 */
requested_slot: ModelSlot, 
/**
 * True when `light` was requested but not configured, so `main` runs instead.
 */
fallback: boolean, 
/**
 * Wire protocol.
 */
provider: ProviderKind, 
/**
 * Model id sent to the provider.
 */
model_id: string, 
/**
 * Endpoint base URL.
 */
base_url: string, };
export type Budgets = { 
/**
 * Model calls allowed (one step = one model call).
 */
max_steps: number, 
/**
 * Input tokens allowed in any single request.
 */
max_context_tokens: number, 
/**
 * Input + output tokens allowed across the run (own calls only).
 */
max_total_tokens: number, 
/**
 * Wall time allowed, milliseconds.
 */
max_wall_time_ms: number, };
export type BudgetUsage = { 
/**
 * Model calls made.
 */
steps: number, 
/**
 * Input tokens of the latest request (the current context size).
 */
context_tokens: number, 
/**
 * Input + output tokens of all calls so far.
 */
total_tokens: number, 
/**
 * Milliseconds since the run started.
 */
wall_time_ms: number, };
export type BudgetKind = "steps" | "context_tokens" | "total_tokens" | "wall_time";
export type TerminalReason = "completed" | "max_steps" | "token_budget" | "context_overflow" | "time_budget" | "cancelled" | "model_error" | "empty_response" | "invalid_result" | "interrupted";
export type ParentLink = { 
/**
 * Parent session id.
 */
session_id: string, 
/**
 * Parent run id (also this session's run id).
 */
run_id: string, 
/**
 * The parent's `Task` tool-call id.
 */
tool_call_id: string, };
export type Decision = "allow" | "deny";
export type DecisionSource = "read_only" | "policy" | "session_rule" | "user" | "readonly_mode" | "not_allowed" | "no_approver";
export type ApprovalScope = "once" | "session";
export type ToolStatus = "ok" | "error" | "denied" | "cancelled";
export type TodoStatus = "pending" | "in_progress" | "completed";
export type TodoItem = { 
/**
 * What to do.
 */
content: string, 
/**
 * Where it stands.
 */
status: TodoStatus, };
export type TraceEvent = { "type": "session_started", 
/**
 * Main agent or subagent.
 */
agent: AgentKind, 
/**
 * Profile name (`main`, `explore`, `verify`, or a project profile).
 */
profile: string, 
/**
 * The Task `description` for subagents (the label shown in the tree).
 */
description: string | null, 
/**
 * The model actually used.
 */
model: ModelInfo, 
/**
 * Budgets in force.
 */
budgets: Budgets, 
/**
 * Canonical project root.
 */
project_root: string, 
/**
 * For subagents: the parent session, run and `Task` call.
 */
parent: ParentLink | null, 
/**
 * Permission mode of this session's gate.
 */
permission_mode: PermissionMode, 
/**
 * Tool names offered to the model.
 */
tools: Array<string>, 
/**
 * The system prompt sent with every request.
 */
system_prompt: string, 
/**
 * How this session's Bash calls are confined; absent in traces written before it was
 * recorded (those ran without a sandbox).
 */
bash_sandbox?: SandboxMode, } | { "type": "run_started", 
/**
 * The prompt text.
 */
prompt: string, } | { "type": "model_call_begin", 
/**
 * Id pairing this with `model_call_end`.
 */
model_call_id: string, 
/**
 * 1-based step number (model calls so far in this run).
 */
step: number, 
/**
 * Messages in the request's history.
 */
messages: number, 
/**
 * Host estimate of the request's input tokens.
 */
estimated_input_tokens: number, 
/**
 * False for the last tool-less call that asks for a final answer.
 */
tools_offered: boolean, } | { "type": "assistant_delta", 
/**
 * The model call this text belongs to.
 */
model_call_id: string, 
/**
 * The new text.
 */
text: string, } | { "type": "model_retry", 
/**
 * The model call being retried.
 */
model_call_id: string, 
/**
 * 1-based retry number.
 */
attempt: number, 
/**
 * Delay before the retry (honours `Retry-After`).
 */
delay_ms: number, 
/**
 * What went wrong.
 */
error: string, } | { "type": "provider_adapted", 
/**
 * The model call during which it happened.
 */
model_call_id: string, 
/**
 * Endpoint base URL.
 */
base_url: string, 
/**
 * Model id.
 */
model: string, 
/**
 * What changed, e.g. `max_tokens -> max_completion_tokens`.
 */
change: string, 
/**
 * Why: the server's message, or what was measured.
 */
reason: string, } | { "type": "model_call_end", 
/**
 * Id pairing this with `model_call_begin`.
 */
model_call_id: string, 
/**
 * Step number.
 */
step: number, 
/**
 * Assistant text of the turn.
 */
text: string, 
/**
 * The turn's reasoning as shown to people (thinking / `reasoning_content`), empty when none.
 */
reasoning?: string, 
/**
 * Tool calls of the turn.
 */
tool_calls: Array<ToolCall>, 
/**
 * Why the model stopped; `null` when the call failed.
 */
finish_reason: FinishReason | null, 
/**
 * Usage of this call.
 */
usage: Usage, 
/**
 * Model id the provider reported.
 */
model: string, 
/**
 * Latency from request to last byte.
 */
latency_ms: number, 
/**
 * Error message when the call failed.
 */
error: string | null, 
/**
 * Budget usage after this call.
 */
totals: BudgetUsage, } | { "type": "tool_call_begin", 
/**
 * Tool-call id (from the model).
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * Parsed arguments (a JSON string when they did not parse).
 */
arguments: JsonValue, 
/**
 * Whether the tool mutates (false for unknown tools).
 */
mutates: boolean, } | { "type": "permission_requested", 
/**
 * Tool-call id.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * One-line summary of what the call would do.
 */
summary: string, } | { "type": "permission_decided", 
/**
 * Tool-call id.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * Allow or deny.
 */
decision: Decision, 
/**
 * Who decided.
 */
source: DecisionSource, 
/**
 * For user approvals: once or for the session.
 */
scope: ApprovalScope | null, 
/**
 * Human-readable reason.
 */
reason: string, } | { "type": "tool_call_end", 
/**
 * Tool-call id.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * Outcome.
 */
status: ToolStatus, 
/**
 * What the model saw, capped at `output_cap_bytes` for the trace.
 */
output: string, 
/**
 * Full size of what the model saw, bytes.
 */
output_bytes: number, 
/**
 * Cap applied to `output` in the trace, bytes.
 */
output_cap_bytes: number, 
/**
 * True when `output` was cut to the cap.
 */
truncated: boolean, 
/**
 * Time the tool ran (excluding approval wait).
 */
duration_ms: number, 
/**
 * True only in records a reader returned for replay with `output` left out (fetch it with the app's
 * `load_tool_output`); never true in trace files.
 */
output_elided?: boolean, 
/**
 * What the result showed the agent of which files (Read, Grep, Glob), after it was fitted
 * to the context: what the citations of this agent are judged against. Absent when it
 * showed none, and in traces written before provenance was recorded.
 */
seen?: Array<SeenFile>, } | { "type": "todo_updated", 
/**
 * The whole plan.
 */
items: Array<TodoItem>, } | { "type": "budget_warning", 
/**
 * Which budget.
 */
budget: BudgetKind, 
/**
 * Used so far.
 */
used: number, 
/**
 * Limit.
 */
limit: number, } | { "type": "budget_exhausted", 
/**
 * Which budget.
 */
budget: BudgetKind, 
/**
 * Used so far.
 */
used: number, 
/**
 * Limit.
 */
limit: number, } | { "type": "compacted", 
/**
 * Messages before.
 */
messages_before: number, 
/**
 * Messages after.
 */
messages_after: number, 
/**
 * Estimated tokens before.
 */
tokens_before: number, 
/**
 * Estimated tokens after.
 */
tokens_after: number, 
/**
 * The summary now standing for the older turns.
 */
summary: string, } | { "type": "subagent_requested", 
/**
 * The parent's `Task` tool-call id.
 */
tool_call_id: string, 
/**
 * The child's session id (its trace file stem).
 */
child_session_id: string, 
/**
 * Short label.
 */
description: string, 
/**
 * Profile name.
 */
profile: string, 
/**
 * Requested model slot.
 */
model_slot: ModelSlot, 
/**
 * The task prompt.
 */
prompt: string, } | { "type": "subagent_started", 
/**
 * The parent's `Task` tool-call id.
 */
tool_call_id: string, 
/**
 * Child session id.
 */
child_session_id: string, 
/**
 * Profile name.
 */
profile: string, 
/**
 * Model actually used.
 */
model: ModelInfo, 
/**
 * Child budgets.
 */
budgets: Budgets, } | { "type": "subagent_completed", 
/**
 * The parent's `Task` tool-call id.
 */
tool_call_id: string, 
/**
 * Child session id.
 */
child_session_id: string, 
/**
 * The validated result with checked evidence.
 */
result: SubagentResult, 
/**
 * Tokens used by the child and its descendants.
 */
usage: Usage, 
/**
 * Tool calls the child made.
 */
tool_calls: number, 
/**
 * Child wall time.
 */
elapsed_ms: number, 
/**
 * The child's terminal reason (`completed`, or a budget reason for a partial result).
 */
terminal_reason: TerminalReason, } | { "type": "subagent_failed", 
/**
 * The parent's `Task` tool-call id.
 */
tool_call_id: string, 
/**
 * Child session id.
 */
child_session_id: string, 
/**
 * What went wrong.
 */
error: string, 
/**
 * Usage of the child and its descendants.
 */
usage: Usage, 
/**
 * Tool calls the child made.
 */
tool_calls: number, 
/**
 * Child wall time.
 */
elapsed_ms: number, 
/**
 * The child's real terminal reason.
 */
terminal_reason: TerminalReason, } | { "type": "subagent_cancelled", 
/**
 * The parent's `Task` tool-call id.
 */
tool_call_id: string, 
/**
 * Child session id.
 */
child_session_id: string, 
/**
 * Usage of the child and its descendants until cancel.
 */
usage: Usage, 
/**
 * Tool calls the child made.
 */
tool_calls: number, 
/**
 * Child wall time.
 */
elapsed_ms: number, } | { "type": "result_rejected", 
/**
 * 1 for the first rejection, 2 for the one that ends the child.
 */
attempt: number, 
/**
 * Exactly what was wrong.
 */
error: string, } | { "type": "readonly_violation", 
/**
 * Project-relative paths that were added, removed or modified.
 */
changed: Array<string>, } | { "type": "cancel_requested", 
/**
 * Who cancelled: `user`, `parent`, `window_closed`, …
 */
reason: string, } | { "type": "answer_checked", 
/**
 * Each reference, in the order the answer gives them.
 */
references: Array<CheckedEvidence>, 
/**
 * The references counted by trust.
 */
trust: TrustSummary, } | { "type": "run_ended", 
/**
 * Why.
 */
terminal_reason: TerminalReason, 
/**
 * The final assistant text, if any.
 */
final_text: string | null, 
/**
 * For subagents: the validated result, if any.
 */
result: SubagentResult | null, 
/**
 * Error message for failures.
 */
error: string | null, 
/**
 * This session's own usage.
 */
usage: Usage, 
/**
 * Usage including all descendants.
 */
usage_with_descendants: Usage, 
/**
 * Budget usage at the end.
 */
totals: BudgetUsage, 
/**
 * Tool calls made by this session.
 */
tool_calls: number, };

// ---- canopy-config ----
export type Settings = { 
/**
 * Schema version ([`SETTINGS_VERSION`]).
 */
version: number, 
/**
 * The main (stronger) model.
 */
main: ModelSlotConfig, 
/**
 * The light (cheaper) model; when absent, light requests run on `main`.
 */
light: ModelSlotConfig | null, 
/**
 * Budget and model overrides per agent profile, keyed by profile name.
 */
profiles: { [key in string]: ProfileOverrides }, 
/**
 * How many subagents may run at the same time.
 */
parallelism: number, 
/**
 * What happens when an agent wants to edit, write, run a command or start a subagent.
 */
permissions: PermissionPolicy, 
/**
 * When true, the `verify` subagent checks the main agent's final answer before the run counts as
 * completed; a FAIL sends its reasons back to the main agent once.
 */
verification_gate: boolean, 
/**
 * How Bash commands are confined, and which extra environment variables they get.
 */
sandbox: SandboxSettings, 
/**
 * Files withheld from the agents: `.gitignore`-style patterns, `!pattern` for an exception.
 * Subagents always get the defaults and never the exceptions.
 */
withheld_files: Array<string>, };
export type ModelSlotConfig = { 
/**
 * Wire protocol.
 */
provider: ProviderKind, 
/**
 * Endpoint base URL (OpenAI-compatible: including `/v1`; Anthropic: without it).
 */
base_url: string, 
/**
 * Model id sent to the provider.
 */
model: string, 
/**
 * Context window of the model, tokens.
 */
context_window: number, 
/**
 * USD per million input tokens, when known (for cost display).
 */
input_price_per_mtok: number | null, 
/**
 * USD per million output tokens, when known.
 */
output_price_per_mtok: number | null, 
/**
 * `max_tokens` sent with each request.
 */
max_output_tokens: number, 
/**
 * OpenAI reasoning models (o-series, gpt-5 family): the `reasoning_effort` sent with each
 * request; `null` leaves the model's default. Ignored by models that take none.
 */
reasoning_effort: ReasoningEffort | null, 
/**
 * Anthropic extended thinking: the thinking budget in tokens (at least 1024); `null` leaves
 * thinking off. Thinking comes on top of Max output tokens.
 */
thinking_budget_tokens: number | null, };
export type ProfileOverrides = { 
/**
 * Model slot the profile runs on.
 */
model: ModelSlot | null, 
/**
 * Model calls allowed.
 */
max_steps: number | null, 
/**
 * Input tokens allowed in one request.
 */
max_context_tokens: number | null, 
/**
 * Input + output tokens allowed across the run.
 */
max_total_tokens: number | null, 
/**
 * Wall time allowed, milliseconds.
 */
max_wall_time_ms: number | null, };
export type PermissionPolicy = { 
/**
 * Changing an existing file.
 */
edit: PolicyAction, 
/**
 * Creating or overwriting a file.
 */
write: PolicyAction, 
/**
 * Running a shell command.
 */
bash: PolicyAction, 
/**
 * Starting a subagent.
 */
task: PolicyAction, };
export type PolicyAction = "allow" | "ask" | "deny";
export type SandboxSettings = { 
/**
 * `required` (the default): Bash runs in the OS sandbox or is refused. `off`: Bash runs with
 * the person's full rights, marked on every Bash card.
 */
mode: SandboxMode, 
/**
 * Environment variable names passed to commands on top of the built-in allowlist (PATH, HOME,
 * LANG, TERM, …). The model API key variables are never passed.
 */
env_allowlist: Array<string>, };
export type Preset = { 
/**
 * Stable identifier (`openai`, `ollama`, …).
 */
id: string, 
/**
 * Name shown to people.
 */
label: string, 
/**
 * Wire protocol.
 */
provider: ProviderKind, 
/**
 * Base URL; empty for the custom preset, where the person must enter one.
 */
base_url: string, 
/**
 * Whether the endpoint normally requires an API key.
 */
needs_key: boolean, 
/**
 * A model id to prefill; empty when there is no sensible guess.
 */
suggested_model: string, 
/**
 * Context window to prefill, tokens.
 */
context_window: number, };
export type KeyStatus = { 
/**
 * Present, absent or unavailable.
 */
state: KeyState, 
/**
 * Where the present key comes from; `null` otherwise.
 */
source: KeySource | null, 
/**
 * Why the keychain is unavailable; `null` otherwise.
 */
reason: string | null, 
/**
 * The endpoint origin this status is about, as people read it (`api.openai.com`,
 * `127.0.0.1:4000`); see [`KeyOrigin::label`].
 */
origin: string, 
/**
 * Other origins this slot still has a keychain key for (same form as `origin`): the ones the
 * key index lists (any endpoint a key was entered for), or, for keys stored before the index
 * existed, among the candidates the caller knows of; filled only when this origin has no key.
 * Such a key is used again when the slot points back at its origin.
 */
stored_for: Array<string>, };
export type KeyState = "present" | "absent" | "unavailable";
export type KeySource = "keychain" | "env";
export type FieldError = { 
/**
 * Dotted path of the offending field (or the environment variable that set it).
 */
field: string, 
/**
 * What is wrong with it, for people.
 */
message: string, };

// ---- canopy-runtime ----
/** The kind of each tool Canopy knows; any other name is an external tool. */
export const TOOL_KINDS: { readonly [tool in string]?: ToolKind } = {
  "Read": "read",
  "Grep": "read",
  "Glob": "read",
  "TodoWrite": "read",
  "Edit": "edit",
  "Write": "edit",
  "Bash": "execute",
  "Task": "delegate",
};

// ---- canopy-app commands ----
export type ErrorCode = "no_project" | "not_found" | "session_gone" | "not_a_directory" | "outside_project" | "binary_file" | "file_too_large" | "invalid_argument" | "invalid_settings" | "keychain_unavailable" | "keychain_error" | "invalid_key" | "missing_key" | "not_configured" | "provider_error" | "runtime_error" | "busy" | "no_such_approval" | "io" | "platform";
export type CommandError = { 
/**
 * What went wrong, for code.
 */
code: ErrorCode, 
/**
 * What went wrong, for people.
 */
message: string, 
/**
 * The settings fields that failed validation (`invalid_settings` only).
 */
field_errors?: Array<FieldError>, };
export type ProjectInfo = { 
/**
 * Canonical absolute path of the project folder.
 */
root: string, 
/**
 * The folder's name.
 */
name: string, 
/**
 * Subagent profiles available in this project (built-ins, then `.canopy/agents/*.md`).
 */
profiles: Array<ProfileInfo>, 
/**
 * Project profile files that could not be used, and why.
 */
profile_errors: Array<ProfileError>, 
/**
 * Digest of the project's own profile files (`.canopy/agents/*.md`); `null` when it has none.
 * An answer to the trust question is given for exactly this digest.
 */
profiles_digest: string | null, 
/**
 * Whether runs use the project's own profiles.
 */
profiles_trust: ProfilesTrust, };
export type ProfilesTrust = "no_profiles" | "ask" | "trusted" | "declined";
export type RecentProject = { 
/**
 * Canonical absolute path.
 */
root: string, 
/**
 * The folder's name.
 */
name: string, 
/**
 * When it was last opened, ms since the Unix epoch.
 */
last_opened_ms: number, };
export type ProfileInfo = { 
/**
 * Name the main agent passes to `Task`.
 */
name: string, 
/**
 * What it is for.
 */
description: string, 
/**
 * Model slot it runs on (after settings overrides).
 */
model: ModelSlot, 
/**
 * True when it may not change anything.
 */
read_only: boolean, 
/**
 * Tools it may use.
 */
tools: Array<string>, 
/**
 * Its budgets (after settings overrides).
 */
budgets: Budgets, 
/**
 * The project file it came from; `null` for built-ins.
 */
source: string | null, 
/**
 * Its system prompt: what a project profile would send to a model, shown before the person
 * trusts it.
 */
system_prompt: string, };
export type ProfileError = { 
/**
 * The file.
 */
path: string, 
/**
 * Why it was rejected, or what was changed when it was loaded anyway.
 */
reason: string, 
/**
 * `true` for a warning: the profile is in use, changed as `reason` says (e.g. budgets lowered
 * to the ceiling); `false` when the file was rejected.
 */
loaded: boolean, };
export type FileWindow = { 
/**
 * Project-relative path with `/` separators.
 */
path: string, 
/**
 * Lines in the whole file.
 */
total_lines: number, 
/**
 * 1-based number of the first returned line.
 */
start_line: number, 
/**
 * The lines, without line endings.
 */
lines: Array<string>, 
/**
 * Language id for highlighting (`rust`, `typescript`, …), `null` when unknown.
 */
language: string | null, };
export type EditorOpened = { 
/**
 * The editor's name as people know it (`VS Code`); `null` when the desktop's default app opened it.
 */
editor: string | null, 
/**
 * The line the editor was asked to show; `null` when none was passed.
 */
line: number | null, 
/**
 * Why the person's editor was not used (only with the default app), e.g. `$VISUAL is not set`.
 */
note: string | null, };
export type RecheckedEvidence = { 
/**
 * The items in the order given, with `state`, `text`, `stale` and `trust` as they are now.
 */
items: Array<CheckedEvidence>, 
/**
 * The items counted by trust now; `null` when none has provenance (a trace written before it
 * was recorded: the UI says "provenance not recorded").
 */
trust: TrustSummary | null, };
export type ConnectionTest = { 
/**
 * True when the model answered.
 */
ok: boolean, 
/**
 * Time from sending the request to the end of the answer (or the failure), ms.
 */
latency_ms: number, 
/**
 * Model id the endpoint reported.
 */
model: string | null, 
/**
 * Why it failed (bad key, unreachable URL, unknown model), for people.
 */
error: string | null, };
export type ModelListing = { 
/**
 * Model id.
 */
id: string, 
/**
 * Context window, tokens, where the endpoint reports it (OpenRouter `context_length`, Ollama
 * `/api/show` `model_info.<arch>.context_length`).
 */
context_window: number | null, 
/**
 * USD per million input tokens, where reported (OpenRouter `pricing.prompt`).
 */
input_price_per_mtok: number | null, 
/**
 * USD per million output tokens, where reported (OpenRouter `pricing.completion`).
 */
output_price_per_mtok: number | null, };
export type OllamaStatus = { 
/**
 * True when an Ollama server answered.
 */
found: boolean, 
/**
 * Its OpenAI-compatible base URL (to put in settings).
 */
base_url: string, 
/**
 * Models it has pulled.
 */
models: Array<string>, };
export type RunHandle = { 
/**
 * Root session id (for follow-ups, cancel and approvals).
 */
session_id: string, 
/**
 * This run's id (as in the records' `run_id`).
 */
run_id: string, 
/**
 * What the person should be told about the session's start, e.g. temporary files of an
 * interrupted edit that were removed from the project. Empty for follow-ups.
 */
notices: Array<string>, };
export type ApprovalAnswer = "allow_once" | "allow_session" | "deny";
export type SessionSummary = { 
/**
 * Root session id.
 */
session_id: string, 
/**
 * Start time, ms since the Unix epoch.
 */
started_ms: number, 
/**
 * The first prompt, shortened.
 */
title: string, 
/**
 * How it stands.
 */
status: SessionState, 
/**
 * Why the last run ended.
 */
terminal_reason: TerminalReason | null, 
/**
 * Tokens used including subagents.
 */
total_tokens: number, 
/**
 * Sessions in the tree (root + subagents).
 */
sessions: number, 
/**
 * The parent its trace file names, when that link goes round in a circle (a damaged or
 * hand-made trace folder) and was not followed: it is listed as a root so nothing is hidden.
 */
broken_parent: string | null, };
export type SessionState = "running" | "completed" | "failed" | "cancelled" | "interrupted";
