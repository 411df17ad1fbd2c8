//! The one ReAct loop every agent runs: stream the model, pass each tool call through the gate, run
//! read-only calls of a turn concurrently and mutating ones in order, feed results back, and stop on a
//! final answer or a budget. Budgets are enforced here, by the host, never by the prompt.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use canopy_protocol::{
    AgentKind, BudgetKind, BudgetUsage, Budgets, Decision, DecisionSource, FinishReason, Message,
    ParentLink, PermissionMode, SubagentResult, TerminalReason, ToolCall, ToolKind, ToolSpec,
    ToolStatus, TraceEvent, Usage,
};
use canopy_providers::{ModelRequest, ModelResponse, ProviderError, StreamDelta};
use canopy_tools::{SessionFiles, Tool, ToolContext, ToolError};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::allowance::{self, TurnAllowance};
use crate::contract;
use crate::gate::{ApprovalRequest, Approver, Gate, Precheck};
use crate::profiles::{ResultContract, RuntimeProfile};
use crate::task::TaskTool;
use crate::trace_writer::SessionTrace;
use crate::{compaction, new_id, registry, tool_args, ResolvedModel, Runtime};

/// Everything one agent session needs. Built once per session; shared with its Task tool.
pub(crate) struct AgentCtx {
    pub runtime: Arc<Runtime>,
    pub session_id: String,
    pub agent: AgentKind,
    pub parent: Option<ParentLink>,
    pub description: Option<String>,
    pub profile: RuntimeProfile,
    pub model: ResolvedModel,
    pub trace: Arc<SessionTrace>,
    pub gate: Gate,
    pub tools: Vec<Arc<dyn Tool>>,
    pub tool_specs: Vec<ToolSpec>,
    pub project_root: PathBuf,
    pub files: Arc<SessionFiles>,
    pub profiles: Arc<Vec<RuntimeProfile>>,
    pub task_slots: Arc<Semaphore>,
    pub descendants: Mutex<Usage>,
    /// Tokens set aside for this agent's subagents that are still running (each one's
    /// `max_total_tokens`), so siblings started together cannot together overspend its budget.
    pub(crate) reserved_tokens: Mutex<u64>,
    /// Lower limits than the profile's, set by the parent (its remaining time and tree tokens).
    pub budget_caps: Option<Budgets>,
    /// The current run's deadline and own usage, for the subagents it launches.
    run_limits: Mutex<Option<RunLimits>>,
    cancel_record: Mutex<CancelRecord>,
}

/// What a subagent launched now must respect: when the launching run's wall time ends, and how
/// many tokens that agent has spent on its own calls (its children's come from `descendants`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunLimits {
    pub deadline: Instant,
    pub own_usage: Usage,
}

/// Whether `cancel_requested` was written for the current run. A cancel that arrives while no run
/// is active (announced but not started, or already ended) is held until `run_started` or dropped,
/// so the record always lands inside the run it cancels.
#[derive(Debug, Default)]
struct CancelRecord {
    active: bool,
    recorded: bool,
    pending: Option<String>,
}

pub(crate) struct AgentCtxParts {
    pub runtime: Arc<Runtime>,
    pub session_id: String,
    pub agent: AgentKind,
    pub parent: Option<ParentLink>,
    pub description: Option<String>,
    pub profile: RuntimeProfile,
    pub model: ResolvedModel,
    pub trace: Arc<SessionTrace>,
    pub mode: PermissionMode,
    pub approver: Option<Arc<dyn Approver>>,
    pub project_root: PathBuf,
    pub profiles: Arc<Vec<RuntimeProfile>>,
    pub task_slots: Arc<Semaphore>,
    pub budget_caps: Option<Budgets>,
}

impl AgentCtx {
    pub fn build(p: AgentCtxParts) -> Arc<AgentCtx> {
        Arc::new_cyclic(|weak| {
            let allow: HashSet<&str> = p.profile.tools().iter().map(String::as_str).collect();
            let mut tools: Vec<Arc<dyn Tool>> = p
                .runtime
                .tools
                .iter()
                .filter(|t| allow.contains(t.name()))
                .cloned()
                .collect();
            if allow.contains(registry::TASK) {
                tools.push(Arc::new(TaskTool::new(weak.clone(), p.profiles.clone())));
            }
            let tool_specs = tools.iter().map(|t| t.spec()).collect();
            let gate = Gate::new(
                p.mode,
                p.runtime.settings.policy,
                p.profile.tools().iter().cloned(),
                p.approver,
            );
            AgentCtx {
                runtime: p.runtime,
                session_id: p.session_id,
                agent: p.agent,
                parent: p.parent,
                description: p.description,
                profile: p.profile,
                model: p.model,
                trace: p.trace,
                gate,
                tools,
                tool_specs,
                project_root: p.project_root,
                files: Arc::new(SessionFiles::default()),
                profiles: p.profiles,
                task_slots: p.task_slots,
                descendants: Mutex::new(Usage::default()),
                reserved_tokens: Mutex::new(0),
                budget_caps: p.budget_caps,
                run_limits: Mutex::new(None),
                cancel_record: Mutex::new(CancelRecord::default()),
            }
        })
    }

    /// The profile's budgets, with the context budget capped by the model's window (less the output
    /// reserve), so a request the host allows is one the provider accepts.
    pub fn budgets(&self) -> Budgets {
        let mut b = self.profile.budgets();
        let window = self
            .model
            .context_window
            .saturating_sub(self.model.max_output_tokens as u64);
        if window > 0 {
            b.max_context_tokens = b.max_context_tokens.min(window);
        }
        if let Some(c) = self.budget_caps {
            b.max_steps = b.max_steps.min(c.max_steps);
            b.max_context_tokens = b.max_context_tokens.min(c.max_context_tokens);
            b.max_total_tokens = b.max_total_tokens.min(c.max_total_tokens);
            b.max_wall_time_ms = b.max_wall_time_ms.min(c.max_wall_time_ms);
        }
        b
    }

    /// Publishes the run's deadline and own usage for subagents launched from now on.
    pub fn set_run_limits(&self, st: &LoopState) {
        if let Ok(mut l) = self.run_limits.lock() {
            *l = Some(RunLimits {
                deadline: st.deadline(),
                own_usage: st.usage,
            });
        }
    }

    pub fn run_limits(&self) -> Option<RunLimits> {
        self.run_limits.lock().ok().and_then(|l| *l)
    }

    /// Tokens set aside for subagents still running.
    pub fn reserved_tokens(&self) -> u64 {
        self.reserved_tokens.lock().map(|r| *r).unwrap_or(0)
    }

    /// Usage of finished subagents of the current run.
    pub fn descendant_usage(&self) -> Usage {
        self.descendants.lock().map(|d| *d).unwrap_or_default()
    }

    pub fn emit_session_started(&self) {
        self.trace.emit(TraceEvent::SessionStarted {
            agent: self.agent,
            profile: self.profile.name().to_string(),
            description: self.description.clone(),
            model: self.model.info.clone(),
            budgets: self.budgets(),
            project_root: self.project_root.display().to_string(),
            parent: self.parent.clone(),
            permission_mode: self.gate.mode(),
            tools: self.tools.iter().map(|t| t.name().to_string()).collect(),
            system_prompt: self.profile.system_prompt().to_string(),
            bash_sandbox: Some(self.runtime.settings.sandbox_mode),
        });
    }

    /// Forgets the previous run's cancellation (a new run is about to start).
    pub fn reset_cancel_record(&self) {
        if let Ok(mut c) = self.cancel_record.lock() {
            *c = CancelRecord::default();
        }
    }

    /// Records who cancelled, once per run, inside that run: before `run_started` it is held
    /// and written right after it; after `run_ended` it is dropped.
    pub fn record_cancel(&self, reason: &str) {
        let Ok(mut c) = self.cancel_record.lock() else {
            return;
        };
        if c.recorded {
            return;
        }
        if c.active {
            c.recorded = true;
            self.trace.emit(TraceEvent::CancelRequested {
                reason: reason.to_string(),
            });
        } else {
            c.pending.get_or_insert_with(|| reason.to_string());
        }
    }

    /// Writes `run_started` and any cancel that arrived before it.
    fn start_run(&self, prompt: String) {
        let Ok(mut c) = self.cancel_record.lock() else {
            return;
        };
        self.trace.emit(TraceEvent::RunStarted { prompt });
        c.active = true;
        if let Some(reason) = c.pending.take() {
            c.recorded = true;
            self.trace.emit(TraceEvent::CancelRequested { reason });
        }
    }

    /// Closes the run for cancel records: a cancel arriving after `run_ended` is not written.
    fn end_run(&self) {
        if let Ok(mut c) = self.cancel_record.lock() {
            c.active = false;
            c.recorded = true;
        }
    }

    pub fn add_descendant_usage(&self, usage: &Usage) {
        if let Ok(mut d) = self.descendants.lock() {
            d.add(usage);
        }
    }

    fn find_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// How an agent's run ended.
#[derive(Debug, Clone)]
pub struct AgentOutcome {
    /// Why.
    pub terminal_reason: TerminalReason,
    /// Final answer text.
    pub final_text: Option<String>,
    /// Validated result (subagents).
    pub result: Option<SubagentResult>,
    /// Error message for failures.
    pub error: Option<String>,
    /// Own usage.
    pub usage: Usage,
    /// Usage including descendants.
    pub usage_with_descendants: Usage,
    /// Budget usage at the end.
    pub totals: BudgetUsage,
    /// Tool calls made.
    pub tool_calls: u32,
}

/// Per-run budget accounting.
pub(crate) struct LoopState {
    pub budgets: Budgets,
    pub started: Instant,
    pub steps: u32,
    pub usage: Usage,
    pub context_tokens: u64,
    pub tool_calls: u32,
    warned: HashSet<&'static str>,
    notices: Vec<String>,
    /// Tool-call ids given out in this run, so a server that restarts its numbering every turn
    /// (`call_0` again) cannot make two calls share an id, even after compaction drops the first.
    call_ids: HashSet<String>,
    /// Reported input tokens ÷ estimated input tokens of the last call, to correct estimates.
    calibration: f64,
    wrap_up_ratio: f64,
}

impl LoopState {
    fn new(budgets: Budgets, wrap_up_ratio: f64) -> Self {
        LoopState {
            budgets,
            started: Instant::now(),
            steps: 0,
            usage: Usage::default(),
            context_tokens: 0,
            tool_calls: 0,
            warned: HashSet::new(),
            notices: Vec::new(),
            call_ids: HashSet::new(),
            calibration: 1.0,
            wrap_up_ratio,
        }
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub fn totals(&self) -> BudgetUsage {
        BudgetUsage {
            steps: self.steps,
            context_tokens: self.context_tokens,
            total_tokens: self.usage.total(),
            wall_time_ms: self.elapsed_ms(),
        }
    }

    pub fn deadline(&self) -> Instant {
        self.started + Duration::from_millis(self.budgets.max_wall_time_ms)
    }

    /// A budget that is already used up, checked before each ordinary call.
    fn exhausted(&self, compacts: bool) -> Option<(BudgetKind, u64, u64)> {
        let b = self.budgets;
        if self.steps >= b.max_steps {
            return Some((BudgetKind::Steps, self.steps as u64, b.max_steps as u64));
        }
        if self.usage.total() >= b.max_total_tokens {
            return Some((
                BudgetKind::TotalTokens,
                self.usage.total(),
                b.max_total_tokens,
            ));
        }
        // An agent that compacts handles a full context by compacting, not by stopping.
        if !compacts && self.context_tokens >= b.max_context_tokens {
            return Some((
                BudgetKind::ContextTokens,
                self.context_tokens,
                b.max_context_tokens,
            ));
        }
        if self.elapsed_ms() >= b.max_wall_time_ms {
            return Some((BudgetKind::WallTime, self.elapsed_ms(), b.max_wall_time_ms));
        }
        None
    }

    /// Emits a warning (once per budget) for every budget past the wrap-up threshold.
    fn check_warnings(&mut self, trace: &SessionTrace) {
        let b = self.budgets;
        let checks = [
            (
                "steps",
                BudgetKind::Steps,
                self.steps as u64,
                b.max_steps as u64,
                "model calls",
            ),
            (
                "total",
                BudgetKind::TotalTokens,
                self.usage.total(),
                b.max_total_tokens,
                "total tokens",
            ),
            (
                "context",
                BudgetKind::ContextTokens,
                self.context_tokens,
                b.max_context_tokens,
                "context tokens",
            ),
            (
                "wall",
                BudgetKind::WallTime,
                self.elapsed_ms(),
                b.max_wall_time_ms,
                "milliseconds of wall time",
            ),
        ];
        for (key, kind, used, limit, what) in checks {
            if limit > 0
                && used as f64 >= limit as f64 * self.wrap_up_ratio
                && self.warned.insert(key)
            {
                trace.emit(TraceEvent::BudgetWarning {
                    budget: kind,
                    used,
                    limit,
                });
                self.notices.push(format!(
                    "Host notice: you have used {used} of {limit} {what}. Wrap up now: stop exploring, and give your final answer within the next step or two."
                ));
            }
        }
    }

    fn system_prompt(&self, base: &str, extra: Option<&str>) -> String {
        let mut s = base.to_string();
        for n in self.notices.iter().map(String::as_str).chain(extra) {
            s.push_str("\n\n");
            s.push_str(n);
        }
        s
    }

    pub fn record(&mut self, usage: &Usage) {
        self.usage.add(usage);
    }
}

/// The estimate past which an agent that cannot compact makes room (and, failing that, ends): the
/// budget less what is kept for its answer and the host's notices.
fn continue_limit(budget: u64) -> u64 {
    budget - budget / 10
}

/// Rough token estimate of a request (4 bytes per token), corrected by the last call's reported usage.
pub(crate) fn estimate_tokens(system: &str, history: &[Message], tools: &[ToolSpec]) -> u64 {
    let bytes = system.len()
        + serde_json::to_string(history).map(|s| s.len()).unwrap_or(0)
        + serde_json::to_string(tools).map(|s| s.len()).unwrap_or(0);
    (bytes as u64).div_ceil(4)
}

pub(crate) enum CallError {
    Cancelled,
    Deadline,
    Provider(ProviderError),
}

/// One model call with its begin/end events, usage accounting and wall-time deadline.
pub(crate) async fn call_model(
    ctx: &AgentCtx,
    history: &[Message],
    st: &mut LoopState,
    allow_tools: bool,
    extra_notice: Option<&str>,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<ModelResponse, CallError> {
    st.steps += 1;
    let model_call_id = new_id("m");
    let system = st.system_prompt(ctx.profile.system_prompt(), extra_notice);
    let estimated = estimate_tokens(&system, history, &ctx.tool_specs);
    ctx.trace.emit(TraceEvent::ModelCallBegin {
        model_call_id: model_call_id.clone(),
        step: st.steps,
        messages: history.len() as u32,
        estimated_input_tokens: (estimated as f64 * st.calibration) as u64,
        tools_offered: allow_tools && !ctx.tool_specs.is_empty(),
    });
    let request = ModelRequest {
        system,
        messages: history.to_vec(),
        tools: ctx.tool_specs.clone(),
        allow_tool_calls: allow_tools,
        max_tokens: ctx.model.max_output_tokens,
        temperature: None,
    };
    let trace = ctx.trace.clone();
    let delta_id = model_call_id.clone();
    // Streamed text goes out whole words at a time: an API key has no spaces, so it always reaches
    // the redactor in one piece instead of leaking split across two deltas.
    let held = Arc::new(Mutex::new(String::new()));
    let hold = held.clone();
    let adapted_base = ctx.model.info.base_url.clone();
    let adapted_model = ctx.model.info.model_id.clone();
    let on_delta = move |d: StreamDelta| match d {
        StreamDelta::Text(text) => {
            let ready = hold.lock().ok().and_then(|mut h| {
                h.push_str(&text);
                let cut = h
                    .char_indices()
                    .rev()
                    .find(|(_, c)| c.is_whitespace())
                    .map(|(i, c)| i + c.len_utf8())?;
                Some(h.drain(..cut).collect::<String>())
            });
            if let Some(text) = ready {
                trace.emit(TraceEvent::AssistantDelta {
                    model_call_id: delta_id.clone(),
                    text,
                });
            }
        }
        StreamDelta::Retrying {
            attempt,
            delay,
            error,
        } => {
            // The turn streams again from the start.
            if let Ok(mut h) = hold.lock() {
                h.clear();
            }
            trace.emit(TraceEvent::ModelRetry {
                model_call_id: delta_id.clone(),
                attempt,
                delay_ms: delay.as_millis() as u64,
                error,
            })
        }
        StreamDelta::Adapted { change, reason } => trace.emit(TraceEvent::ProviderAdapted {
            model_call_id: delta_id.clone(),
            base_url: adapted_base.clone(),
            model: adapted_model.clone(),
            change,
            reason,
        }),
        // Reasoning is recorded whole in `model_call_end`; tool calls in their begin events.
        StreamDelta::Reasoning(_) | StreamDelta::ToolCallStarted { .. } => {}
    };
    let started = Instant::now();
    let result = tokio::select! {
        r = ctx.model.client.complete(&request, &on_delta, cancel) => match r {
            Ok(resp) => Ok(resp),
            Err(ProviderError::Cancelled) => Err(CallError::Cancelled),
            Err(e) => Err(CallError::Provider(e)),
        },
        _ = tokio::time::sleep_until(deadline) => Err(CallError::Deadline),
    };
    let latency_ms = started.elapsed().as_millis() as u64;
    let rest = held
        .lock()
        .map(|mut h| std::mem::take(&mut *h))
        .unwrap_or_default();
    if !rest.is_empty() && result.is_ok() {
        ctx.trace.emit(TraceEvent::AssistantDelta {
            model_call_id: model_call_id.clone(),
            text: rest,
        });
    }
    let mut result = result;
    if let Ok(resp) = &mut result {
        // Ids already in the conversation (earlier turns, earlier runs of the session) or given out
        // in this run: the trace, approvals and the UI key a call by its id within the session.
        let mut taken = std::mem::take(&mut st.call_ids);
        taken.extend(history.iter().flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            _ => Vec::new(),
        }));
        unique_call_ids(&mut resp.tool_calls, &mut taken);
        st.call_ids = taken;
    }
    match &result {
        Ok(resp) => {
            st.record(&resp.usage);
            st.context_tokens = resp.usage.input_tokens;
            if estimated > 0 && !resp.usage.estimated && resp.usage.input_tokens > 0 {
                st.calibration =
                    (resp.usage.input_tokens as f64 / estimated as f64).clamp(0.25, 4.0);
            }
            emit_call_end(
                ctx,
                model_call_id,
                st.steps,
                Ok(resp),
                latency_ms,
                st.totals(),
            );
        }
        Err(e) => {
            let error = match e {
                CallError::Cancelled => "cancelled".to_string(),
                CallError::Deadline => "wall-time budget ran out during the call".to_string(),
                CallError::Provider(p) => p.to_string(),
            };
            emit_call_end(
                ctx,
                model_call_id,
                st.steps,
                Err(error),
                latency_ms,
                st.totals(),
            );
        }
    }
    result
}

/// Makes the tool-call ids of one turn unique among themselves and against `seen` (ids used before
/// in the session; the new ones are added): some servers repeat, restart or omit them, while
/// approvals, the trace's begin/end pairs and the results sent back are all keyed by the id. A
/// repeat gets `_2`, `_3`…; a missing id becomes `call_<n>`. A call without a name is named
/// [`tool_args::UNNAMED_TOOL`], and oversized arguments are replaced by a note of their size
/// ([`tool_args::mark_oversized`]); both are answered with an error result.
pub(crate) fn unique_call_ids(calls: &mut [ToolCall], seen: &mut HashSet<String>) {
    for (i, c) in calls.iter_mut().enumerate() {
        if c.name.trim().is_empty() {
            c.name = tool_args::UNNAMED_TOOL.to_string();
        }
        tool_args::mark_oversized(c);
        if c.id.trim().is_empty() {
            c.id = format!("call_{}", i + 1);
        }
        if !seen.insert(c.id.clone()) {
            let base = c.id.clone();
            let mut n = 2;
            while seen.contains(&format!("{base}_{n}")) {
                n += 1;
            }
            c.id = format!("{base}_{n}");
            seen.insert(c.id.clone());
        }
    }
}

/// Records the end of a model call: what it returned, or the error that ended it.
pub(crate) fn emit_call_end(
    ctx: &AgentCtx,
    model_call_id: String,
    step: u32,
    outcome: Result<&ModelResponse, String>,
    latency_ms: u64,
    totals: BudgetUsage,
) {
    let event = match outcome {
        Ok(resp) => TraceEvent::ModelCallEnd {
            model_call_id,
            step,
            text: resp.text.clone(),
            reasoning: resp
                .reasoning
                .iter()
                .map(|r| r.display_text())
                .collect::<Vec<_>>()
                .join("\n\n"),
            tool_calls: resp
                .tool_calls
                .iter()
                .map(|c| ToolCall {
                    arguments: tool_args::cap_text(
                        &c.arguments,
                        ctx.runtime.settings.trace_output_cap,
                    ),
                    ..c.clone()
                })
                .collect(),
            finish_reason: Some(resp.finish_reason.clone()),
            usage: resp.usage,
            model: resp.model.clone(),
            latency_ms,
            error: None,
            totals,
        },
        Err(error) => TraceEvent::ModelCallEnd {
            model_call_id,
            step,
            text: String::new(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish_reason: None,
            usage: Usage::default(),
            model: ctx.model.info.model_id.clone(),
            latency_ms,
            error: Some(error),
            totals,
        },
    };
    ctx.trace.emit(event);
}

fn terminal_for(kind: BudgetKind) -> TerminalReason {
    match kind {
        BudgetKind::Steps => TerminalReason::MaxSteps,
        BudgetKind::TotalTokens => TerminalReason::TokenBudget,
        BudgetKind::ContextTokens => TerminalReason::ContextOverflow,
        BudgetKind::WallTime => TerminalReason::TimeBudget,
    }
}

/// What the loop hands to [`finish`].
struct Ending {
    reason: TerminalReason,
    final_text: Option<String>,
    result: Option<SubagentResult>,
    error: Option<String>,
}

impl Ending {
    fn reason(reason: TerminalReason, error: Option<String>) -> Self {
        Ending {
            reason,
            final_text: None,
            result: None,
            error,
        }
    }
}

fn finish(ctx: &AgentCtx, st: &LoopState, end: Ending) -> AgentOutcome {
    if end.reason == TerminalReason::Cancelled {
        ctx.record_cancel(if ctx.agent == AgentKind::Subagent {
            "parent cancelled"
        } else {
            "cancelled"
        });
    }
    let mut with = st.usage;
    if let Ok(d) = ctx.descendants.lock() {
        with.add(&d);
    }
    let outcome = AgentOutcome {
        terminal_reason: end.reason,
        final_text: end.final_text,
        result: end.result,
        error: end.error,
        usage: st.usage,
        usage_with_descendants: with,
        totals: st.totals(),
        tool_calls: st.tool_calls,
    };
    ctx.trace.emit(TraceEvent::RunEnded {
        terminal_reason: outcome.terminal_reason,
        final_text: outcome.final_text.clone(),
        result: outcome.result.clone(),
        error: outcome.error.clone(),
        usage: outcome.usage,
        usage_with_descendants: outcome.usage_with_descendants,
        totals: outcome.totals,
        tool_calls: outcome.tool_calls,
    });
    ctx.end_run();
    outcome
}

/// Runs one prompt of the main agent (with the optional verification gate) and records its end.
pub(crate) async fn run_main(
    ctx: &Arc<AgentCtx>,
    history: &mut Vec<Message>,
    prompt: String,
    cancel: CancellationToken,
) -> AgentOutcome {
    if let Ok(mut d) = ctx.descendants.lock() {
        *d = Usage::default();
    }
    ctx.start_run(prompt.clone());
    history.push(Message::user(prompt.clone()));
    let mut st = LoopState::new(ctx.budgets(), ctx.runtime.settings.wrap_up_ratio);
    let mut end = run_loop(ctx, history, &mut st, &cancel).await;
    if ctx.runtime.settings.verification_gate && end.reason == TerminalReason::Completed {
        if let Some(answer) = end.final_text.clone() {
            // The verify child is launched like a Task: within what is left of this run's time.
            ctx.set_run_limits(&st);
            match crate::task::verify_answer(ctx, &prompt, &answer, &cancel).await {
                Some(reasons) => {
                    history.push(Message::user(format!(
                        "Host notice: an independent verification of your answer returned FAIL:\n- {}\nAddress these points, then give your final answer again.",
                        reasons.join("\n- ")
                    )));
                    end = run_loop(ctx, history, &mut st, &cancel).await;
                }
                None if cancel.is_cancelled() => {
                    end = Ending::reason(TerminalReason::Cancelled, None)
                }
                None => {}
            }
        }
    }
    finish(ctx, &st, end)
}

/// Runs a subagent's task in a fresh history and records its end.
pub(crate) async fn run_child(
    ctx: &Arc<AgentCtx>,
    prompt: String,
    cancel: CancellationToken,
) -> AgentOutcome {
    ctx.start_run(prompt.clone());
    let mut history = vec![Message::user(prompt)];
    let mut st = LoopState::new(ctx.budgets(), ctx.runtime.settings.wrap_up_ratio);
    let end = run_loop(ctx, &mut history, &mut st, &cancel).await;
    finish(ctx, &st, end)
}

async fn run_loop(
    ctx: &Arc<AgentCtx>,
    history: &mut Vec<Message>,
    st: &mut LoopState,
    cancel: &CancellationToken,
) -> Ending {
    let contract_kind = ctx.profile.contract();
    let mut empty_retried = false;
    let mut rejections = 0u32;
    let mut corrective_pending = false;
    // The corrective call itself may run past a limit (like the final call); anything after it,
    // such as a continuation of a cut corrective answer, is checked as usual.
    let mut skip_budget_check = false;
    let mut continuation = String::new();
    let mut compacted_for_error = false;
    loop {
        if cancel.is_cancelled() {
            return Ending::reason(TerminalReason::Cancelled, None);
        }
        if !std::mem::take(&mut skip_budget_check) {
            if let Some((kind, used, limit)) = st.exhausted(ctx.agent == AgentKind::Main) {
                // A corrective turn made past the step limit already was the one call allowed
                // beyond it: no further call (steps stay at most max_steps + 1).
                if corrective_pending && st.steps > st.budgets.max_steps {
                    ctx.trace.emit(TraceEvent::BudgetExhausted {
                        budget: kind,
                        used,
                        limit,
                    });
                    return Ending {
                        reason: terminal_for(kind),
                        final_text: (!continuation.is_empty()).then(|| continuation.clone()),
                        result: None,
                        error: Some("the corrected answer was incomplete and the budget is used up; the call past the limit was already made".into()),
                    };
                }
                return final_call(ctx, history, st, kind, used, limit, cancel).await;
            }
        }
        st.check_warnings(&ctx.trace);
        let budgets = st.budgets;
        let est = (estimate_tokens(ctx.profile.system_prompt(), history, &ctx.tool_specs) as f64
            * st.calibration) as u64;
        let compacts = ctx.agent == AgentKind::Main;
        let limit = if compacts {
            budgets.max_context_tokens
        } else {
            continue_limit(budgets.max_context_tokens)
        };
        if est > limit {
            if ctx.agent == AgentKind::Main {
                if let Err(e) = compaction::compact(ctx, history, st, cancel).await {
                    if let Some(ending) = cancel_or_time_ending(ctx, history, st, cancel).await {
                        return ending;
                    }
                    return Ending::reason(TerminalReason::ContextOverflow, Some(format!("the conversation no longer fits the context budget and compaction failed: {e}")));
                }
                continue;
            }
            // Room first: old tool outputs are cut down to leave half the budget for more work;
            // only when that cannot make room has the agent used its context, and it ends.
            let system = ctx.profile.system_prompt();
            compaction::elide_old_tool_results(
                history,
                budgets.max_context_tokens / 2,
                st.calibration,
                system,
                &ctx.tool_specs,
            );
            tokio::task::yield_now().await;
            let after =
                (estimate_tokens(system, history, &ctx.tool_specs) as f64 * st.calibration) as u64;
            if after <= continue_limit(budgets.max_context_tokens) {
                continue;
            }
            return final_call(
                ctx,
                history,
                st,
                BudgetKind::ContextTokens,
                after,
                budgets.max_context_tokens,
                cancel,
            )
            .await;
        }
        let notice = corrective_pending.then_some("Host notice: reply now with the corrected final JSON object only; tools are not available for this reply.");
        // Like the final call, a corrective turn may run past the limit: it gets at least the
        // final call's grace, or one made just after the deadline would be abandoned at once.
        let deadline = if corrective_pending {
            st.deadline().max(
                Instant::now() + Duration::from_millis(ctx.runtime.settings.final_call_grace_ms),
            )
        } else {
            st.deadline()
        };
        let resp = match call_model(
            ctx,
            history,
            st,
            !corrective_pending,
            notice,
            deadline,
            cancel,
        )
        .await
        {
            Ok(r) => r,
            Err(CallError::Cancelled) => return Ending::reason(TerminalReason::Cancelled, None),
            Err(CallError::Deadline) if corrective_pending => {
                return Ending::reason(
                    TerminalReason::TimeBudget,
                    Some("the corrective call ran out of time".into()),
                );
            }
            Err(CallError::Deadline) => {
                return final_call(
                    ctx,
                    history,
                    st,
                    BudgetKind::WallTime,
                    st.elapsed_ms(),
                    budgets.max_wall_time_ms,
                    cancel,
                )
                .await;
            }
            Err(CallError::Provider(ProviderError::ContextLengthExceeded { message })) => {
                if ctx.agent == AgentKind::Subagent {
                    // The real window is smaller than the configured one: the findings so far
                    // are kept by a final call on a request with old outputs cut to half the
                    // budget, instead of being thrown away.
                    let half = budgets.max_context_tokens / 2;
                    compaction::elide_old_tool_results(
                        history,
                        half,
                        st.calibration,
                        ctx.profile.system_prompt(),
                        &ctx.tool_specs,
                    );
                    return final_call(
                        ctx,
                        history,
                        st,
                        BudgetKind::ContextTokens,
                        est,
                        budgets.max_context_tokens,
                        cancel,
                    )
                    .await;
                }
                if !compacted_for_error {
                    compacted_for_error = true;
                    if compaction::compact(ctx, history, st, cancel).await.is_ok() {
                        continue;
                    }
                    if let Some(ending) = cancel_or_time_ending(ctx, history, st, cancel).await {
                        return ending;
                    }
                }
                return Ending::reason(
                    TerminalReason::ContextOverflow,
                    Some(format!(
                        "the provider rejected the request as too long: {message}"
                    )),
                );
            }
            Err(CallError::Provider(e)) => {
                return Ending::reason(TerminalReason::ModelError, Some(e.to_string()))
            }
        };
        if resp.text.trim().is_empty() && resp.tool_calls.is_empty() {
            if !empty_retried {
                empty_retried = true;
                continue;
            }
            return Ending::reason(
                TerminalReason::EmptyResponse,
                Some("the model returned an empty response twice in a row".into()),
            );
        }
        empty_retried = false;
        history.push(Message::Assistant {
            text: resp.text.clone(),
            tool_calls: resp.tool_calls.clone(),
            reasoning: resp.reasoning.clone(),
        });
        if !resp.tool_calls.is_empty() && !corrective_pending {
            continuation.clear();
            let deadline = st.deadline();
            ctx.set_run_limits(st);
            let allowance = (ctx.agent != AgentKind::Main).then(|| {
                let est = (estimate_tokens(ctx.profile.system_prompt(), history, &ctx.tool_specs)
                    as f64
                    * st.calibration) as u64;
                TurnAllowance::new(
                    budgets.max_context_tokens,
                    est,
                    st.calibration,
                    allowance::running(&resp.tool_calls),
                )
            });
            let results = run_tools_until(ctx, &resp.tool_calls, allowance, deadline, cancel).await;
            st.tool_calls += resp.tool_calls.len() as u32;
            history.extend(results);
            continue;
        }
        if resp.finish_reason == FinishReason::Length {
            continuation.push_str(&resp.text);
            history.push(Message::user("Host notice: your answer was cut off by the output limit. Continue exactly where it stopped, without repeating anything."));
            continue;
        }
        let text = format!("{continuation}{}", resp.text);
        if contract_kind == ResultContract::Text {
            return Ending {
                reason: TerminalReason::Completed,
                final_text: Some(text),
                result: None,
                error: None,
            };
        }
        match contract::validate_blocking(contract_kind, text.clone(), ctx.project_root.clone())
            .await
        {
            Ok(result) => {
                return Ending {
                    reason: TerminalReason::Completed,
                    final_text: Some(text),
                    result: Some(result),
                    error: None,
                }
            }
            Err(error) => {
                rejections += 1;
                ctx.trace.emit(TraceEvent::ResultRejected {
                    attempt: rejections,
                    error: error.clone(),
                });
                if rejections >= 2 {
                    return Ending {
                        reason: TerminalReason::InvalidResult,
                        final_text: Some(text),
                        result: None,
                        error: Some(format!("the final answer broke the result contract twice; last problem: {error}")),
                    };
                }
                continuation.clear();
                corrective_pending = true;
                skip_budget_check = true;
                history.push(Message::user(format!(
                    "Host notice: your final answer was rejected: {error}. Reply with exactly one JSON object in the required shape and nothing else."
                )));
            }
        }
    }
}

/// After a compaction failed: a cancel, or a wall-time budget spent meanwhile, decides how the run
/// ends (cancelled, or the final call for time) rather than the compaction's own failure.
async fn cancel_or_time_ending(
    ctx: &Arc<AgentCtx>,
    history: &mut Vec<Message>,
    st: &mut LoopState,
    cancel: &CancellationToken,
) -> Option<Ending> {
    if cancel.is_cancelled() {
        return Some(Ending::reason(TerminalReason::Cancelled, None));
    }
    let (used, limit) = (st.elapsed_ms(), st.budgets.max_wall_time_ms);
    if used < limit {
        return None;
    }
    Some(final_call(ctx, history, st, BudgetKind::WallTime, used, limit, cancel).await)
}

/// The one tool-less call an agent gets when a budget runs out, so work done is not thrown away.
async fn final_call(
    ctx: &Arc<AgentCtx>,
    history: &mut Vec<Message>,
    st: &mut LoopState,
    kind: BudgetKind,
    used: u64,
    limit: u64,
    cancel: &CancellationToken,
) -> Ending {
    ctx.trace.emit(TraceEvent::BudgetExhausted {
        budget: kind,
        used,
        limit,
    });
    let reason = terminal_for(kind);
    compaction::elide_old_tool_results(
        history,
        st.budgets.max_context_tokens,
        st.calibration,
        ctx.profile.system_prompt(),
        &ctx.tool_specs,
    );
    let notice = match ctx.profile.contract() {
        ResultContract::Text => "Host notice: a budget of this run is exhausted. Tools are no longer available. Give your final answer now: what you did, what you found, and what is left to do.".to_string(),
        _ => "Host notice: your budget is exhausted. Tools are no longer available. Reply now with your final JSON object, using \"status\": \"partial\" and everything you found so far.".to_string(),
    };
    let deadline = Instant::now() + Duration::from_millis(ctx.runtime.settings.final_call_grace_ms);
    match call_model(ctx, history, st, false, Some(&notice), deadline, cancel).await {
        Ok(resp) => {
            history.push(Message::Assistant {
                text: resp.text.clone(),
                tool_calls: Vec::new(),
                reasoning: resp.reasoning.clone(),
            });
            if ctx.profile.contract() == ResultContract::Text {
                return Ending {
                    reason,
                    final_text: Some(resp.text),
                    result: None,
                    error: None,
                };
            }
            match contract::validate_blocking(
                ctx.profile.contract(),
                resp.text.clone(),
                ctx.project_root.clone(),
            )
            .await
            {
                Ok(mut result) => {
                    result.status = canopy_protocol::ResultStatus::Partial;
                    Ending {
                        reason,
                        final_text: Some(resp.text),
                        result: Some(result),
                        error: None,
                    }
                }
                Err(e) => {
                    ctx.trace.emit(TraceEvent::ResultRejected {
                        attempt: 1,
                        error: e.clone(),
                    });
                    Ending { reason, final_text: Some(resp.text), result: None, error: Some(format!("the answer given after the budget ran out broke the result contract: {e}")) }
                }
            }
        }
        Err(CallError::Cancelled) => Ending::reason(TerminalReason::Cancelled, None),
        Err(CallError::Deadline) => {
            Ending::reason(reason, Some("the final answer call ran out of time".into()))
        }
        Err(CallError::Provider(e)) => {
            Ending::reason(reason, Some(format!("the final answer call failed: {e}")))
        }
    }
}

/// Runs a turn's tool calls; when the wall-time budget runs out meanwhile, the calls are cancelled
/// (their results say so) and the loop's next budget check ends the run.
async fn run_tools_until(
    ctx: &Arc<AgentCtx>,
    calls: &[ToolCall],
    allowance: Option<TurnAllowance>,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Vec<Message> {
    let tools_cancel = cancel.child_token();
    let fut = run_tools(ctx, calls, allowance, &tools_cancel);
    tokio::pin!(fut);
    tokio::select! {
        r = &mut fut => r,
        _ = tokio::time::sleep_until(deadline) => {
            tools_cancel.cancel();
            fut.await
        }
    }
}

/// Task calls run per turn: twice the parallelism, so one turn cannot fan out without bound (each
/// child has its own budget); calls past it get an error result.
fn task_calls_per_turn(ctx: &AgentCtx) -> usize {
    ctx.runtime.settings.parallelism.max(1) * 2
}

fn mutates(ctx: &AgentCtx, call: &ToolCall) -> bool {
    ctx.find_tool(&call.name).is_some_and(|t| !t.read_only())
}

/// Read-only calls in a row run concurrently; a mutating call runs alone, in order.
async fn run_tools(
    ctx: &Arc<AgentCtx>,
    calls: &[ToolCall],
    allowance: Option<TurnAllowance>,
    cancel: &CancellationToken,
) -> Vec<Message> {
    let mut out = Vec::with_capacity(calls.len());
    let max_tasks = task_calls_per_turn(ctx);
    let mut tasks = 0usize;
    let refusals: Vec<Option<String>> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i >= allowance::MAX_CALLS_PER_TURN {
                return Some(allowance::too_many_calls(calls));
            }
            let delegates = ctx
                .find_tool(&c.name)
                .is_some_and(|t| t.kind() == ToolKind::Delegate);
            if !delegates {
                return None;
            }
            tasks += 1;
            (tasks > max_tasks).then(|| format!(
                "Error: too many Task calls in one turn: at most {max_tasks} are run per turn (twice the {} subagents that may run at once); this one was not started. Wait for the results, then delegate again if still needed.",
                max_tasks / 2
            ))
        })
        .collect();
    let mut i = 0;
    while i < calls.len() {
        if mutates(ctx, &calls[i]) {
            out.push(run_one(ctx, &calls[i], refusals[i].clone(), allowance, cancel).await);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < calls.len() && !mutates(ctx, &calls[j]) {
            j += 1;
        }
        let group = futures::future::join_all(
            (i..j).map(|k| run_one(ctx, &calls[k], refusals[k].clone(), allowance, cancel)),
        )
        .await;
        out.extend(group);
        i = j;
    }
    out
}

/// How long a cancelled tool may take to stop by itself before it is abandoned. Tools that watch
/// the token (Bash, Grep, Glob) stop well within it; a tool blocked in the kernel (a Read of a FIFO,
/// a hung network mount) is dropped so a cancel or a deadline is never held up by it.
const TOOL_CANCEL_GRACE: Duration = Duration::from_secs(2);
/// A `Task` call gets longer: its child must end its own tool calls (each with the grace above) and
/// record its end before the parent moves on.
const TASK_CANCEL_GRACE: Duration = Duration::from_secs(6);

/// Runs a tool, but once `cancel` fires gives it only `grace` to finish; after that the call is
/// abandoned as cancelled. Dropping the future is safe: Bash kills its process group on drop, and a
/// blocking read left behind on the blocking pool cannot reach the agent any more.
async fn run_cancellable<F>(
    fut: F,
    cancel: &CancellationToken,
    grace: Duration,
) -> Result<canopy_tools::ToolOutput, ToolError>
where
    F: std::future::Future<Output = Result<canopy_tools::ToolOutput, ToolError>>,
{
    tokio::pin!(fut);
    tokio::select! {
        r = &mut fut => r,
        _ = cancel.cancelled() => match tokio::time::timeout(grace, &mut fut).await {
            Ok(r) => r,
            Err(_) => Err(ToolError::Cancelled),
        },
    }
}

fn cap(text: &str, limit: usize) -> (String, bool) {
    if text.len() <= limit {
        return (text.to_string(), false);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

async fn run_one(
    ctx: &Arc<AgentCtx>,
    call: &ToolCall,
    refused: Option<String>,
    allowance: Option<TurnAllowance>,
    cancel: &CancellationToken,
) -> Message {
    let tool = ctx.find_tool(&call.name).cloned();
    let raw = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    let parsed: Result<Value, _> = serde_json::from_str(raw);
    let trace_cap = ctx.runtime.settings.trace_output_cap;
    ctx.trace.emit(TraceEvent::ToolCallBegin {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        arguments: match &parsed {
            Ok(v) => tool_args::cap_value(v, trace_cap),
            Err(_) => Value::String(tool_args::cap_text(&call.arguments, trace_cap)),
        },
        mutates: tool.as_ref().is_some_and(|t| t.mutates()),
    });
    let started = Mutex::new(Instant::now());
    let done = |status: ToolStatus, content: String| -> Message {
        // Redacted whole before any cut: a key straddling the trace cap would otherwise leave a
        // piece too short for the redactor to recognise.
        let content = ctx.runtime.redact(&content);
        let content = match &allowance {
            Some(a) => allowance::fit(content, a),
            None => content,
        };
        let (output, truncated) = cap(&content, ctx.runtime.settings.trace_output_cap);
        ctx.trace.emit(TraceEvent::ToolCallEnd {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status,
            output,
            output_bytes: content.len() as u64,
            output_cap_bytes: ctx.runtime.settings.trace_output_cap as u64,
            truncated,
            duration_ms: started
                .lock()
                .map(|s| s.elapsed().as_millis() as u64)
                .unwrap_or(0),
            output_elided: false,
        });
        Message::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: status != ToolStatus::Ok,
        }
    };
    if let Some(bytes) = tool_args::oversized(&call.arguments) {
        return done(ToolStatus::Error, tool_args::too_big(bytes));
    }
    if call.name == tool_args::UNNAMED_TOOL && tool.is_none() {
        let names: Vec<&str> = ctx.tools.iter().map(|t| t.name()).collect();
        return done(ToolStatus::Error, tool_args::unnamed(&names));
    }
    let Some(tool) = tool else {
        // A real tool this session does not have (Bash in a read-only subagent) is a permission
        // decision worth recording, not a typo.
        if let Some((kind, read_only)) = registry::kind_of(&ctx.runtime.tools, &call.name) {
            if let Precheck::Decided {
                decision: Decision::Deny,
                source,
                reason,
            } = ctx.gate.precheck(&call.name, kind, read_only)
            {
                ctx.trace.emit(TraceEvent::PermissionDecided {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    decision: Decision::Deny,
                    source,
                    scope: None,
                    reason: reason.clone(),
                });
                return done(ToolStatus::Denied, format!("Permission denied: {reason}."));
            }
        }
        let names: Vec<&str> = ctx.tools.iter().map(|t| t.name()).collect();
        return done(
            ToolStatus::Error,
            format!(
                "Error: unknown tool `{}`. Available tools: {}.",
                call.name,
                names.join(", ")
            ),
        );
    };
    if let Some(why) = refused {
        return done(ToolStatus::Error, why);
    }
    let args = match parsed {
        Ok(Value::Object(m)) => Value::Object(m),
        Ok(other) => return done(ToolStatus::Error, format!("Error: arguments must be a JSON object, got {other}")),
        Err(e) => return done(ToolStatus::Error, format!("Error: arguments are not valid JSON ({e}); send one JSON object matching the tool's schema")),
    };
    let wants_network = tool.wants_network(&args);
    match ctx
        .gate
        .precheck_call(&call.name, tool.kind(), tool.read_only(), wants_network)
    {
        Precheck::Decided {
            decision,
            source,
            reason,
        } => {
            ctx.trace.emit(TraceEvent::PermissionDecided {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                decision,
                source,
                scope: None,
                reason: reason.clone(),
            });
            if decision == Decision::Deny {
                return done(ToolStatus::Denied, format!("Permission denied: {reason}."));
            }
        }
        Precheck::Ask => {
            let summary = tool.summarize(&args);
            ctx.trace.emit(TraceEvent::PermissionRequested {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                summary: summary.clone(),
            });
            let request = ApprovalRequest {
                session_id: ctx.session_id.clone(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                summary,
                arguments: args.clone(),
                network: wants_network,
            };
            let answer = tokio::select! {
                a = ctx.gate.ask(request) => a,
                _ = cancel.cancelled() => {
                    // Every request gets its decision, so a dialog waiting on it can close.
                    ctx.trace.emit(TraceEvent::PermissionDecided {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        decision: Decision::Deny,
                        source: DecisionSource::User,
                        scope: None,
                        reason: "cancelled while waiting".into(),
                    });
                    return done(ToolStatus::Cancelled, "Cancelled while waiting for approval.".into());
                }
            };
            let (decision, source, scope, reason) = answer;
            ctx.trace.emit(TraceEvent::PermissionDecided {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                decision,
                source,
                scope,
                reason: reason.clone(),
            });
            if decision == Decision::Deny {
                return done(ToolStatus::Denied, format!("Permission denied: {reason}. Do not retry the same call; explain or take another approach."));
            }
        }
    }
    // The tool's time starts after the gate: waiting for the person is not tool time.
    if let Ok(mut s) = started.lock() {
        *s = Instant::now();
    }
    let tctx = ToolContext {
        root: ctx.project_root.clone(),
        cancel: cancel.clone(),
        call_id: call.id.clone(),
        session: ctx.files.clone(),
        env_denylist: Arc::new(ctx.runtime.settings.env_denylist.clone()),
        sandbox: ctx.runtime.sandbox.clone(),
        network_allowed: wants_network,
        secrets: match ctx.agent {
            AgentKind::Main => ctx.runtime.withheld.clone(),
            AgentKind::Subagent => ctx.runtime.withheld_for_subagents.clone(),
        },
        output_allowance: allowance.map(|a| a.for_tool()),
    };
    // A call that reaches this point after its batch was cancelled never starts.
    if cancel.is_cancelled() {
        return done(
            ToolStatus::Cancelled,
            "Cancelled before it started (by the person or a budget); there is no result.".into(),
        );
    }
    let grace = if tool.kind() == ToolKind::Delegate {
        TASK_CANCEL_GRACE
    } else {
        TOOL_CANCEL_GRACE
    };
    match run_cancellable(tool.run(args, &tctx), cancel, grace).await {
        Ok(out) => {
            if let Some(items) = out.todos {
                ctx.trace.emit(TraceEvent::TodoUpdated { items });
            }
            done(ToolStatus::Ok, out.content)
        }
        Err(ToolError::Cancelled) => done(
            ToolStatus::Cancelled,
            "Cancelled before it finished (by the person or a budget); there is no result.".into(),
        ),
        Err(e) => done(ToolStatus::Error, format!("Error: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "Read".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn repeated_and_missing_call_ids_become_unique() {
        let mut calls = vec![call("a"), call("a"), call(""), call("a_2"), call("a")];
        unique_call_ids(&mut calls, &mut HashSet::new());
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "a_2", "call_3", "a_2_2", "a_3"]);
    }

    #[test]
    fn a_server_that_restarts_its_ids_every_turn_still_gets_ids_unique_in_the_session() {
        let mut seen = HashSet::new();
        let mut first = vec![call("call_0"), call("")];
        unique_call_ids(&mut first, &mut seen);
        let mut second = vec![call("call_0"), call("")];
        unique_call_ids(&mut second, &mut seen);
        let ids: Vec<&str> = first.iter().chain(&second).map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["call_0", "call_2", "call_0_2", "call_2_2"]);
    }
}
