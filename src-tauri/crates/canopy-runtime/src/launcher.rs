//! The subagent launcher: a child gets a fresh history, only its profile's tools, a read-only gate,
//! its own budgets (within what its parent's run has left) and trace file (linked to the parent's
//! call), and runs the same loop; the host checks that it changed nothing. Used by the `Task` tool
//! and by the main agent's verification gate.

use std::sync::Arc;

use canopy_protocol::{
    AgentKind, Budgets, ModelSlot, ParentLink, PermissionMode, SubagentResult, TerminalReason,
    TraceEvent, Usage, Verdict,
};
use canopy_tools::ToolError;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent::run_loop::run_child;
use crate::agent::session::{AgentCtx, AgentCtxParts, AgentOutcome, RunLimits};
use crate::new_id;
use crate::profiles::{ResultContract, RuntimeProfile};
use crate::readonly_check::Snapshot;
use crate::trace_writer::SessionTrace;

pub(crate) enum Launched {
    Done {
        outcome: Box<AgentOutcome>,
        child_session_id: String,
        model_id: String,
        fallback: bool,
        elapsed_ms: u64,
        /// Files the host found changed while the read-only child ran.
        violation: Option<Vec<String>>,
    },
    NotStarted(ToolError),
}

/// Runs one subagent under `parent`, recording the whole life cycle on the parent's trace.
pub(crate) async fn launch(
    parent: &Arc<AgentCtx>,
    tool_call_id: &str,
    description: &str,
    profile: RuntimeProfile,
    model: Option<ModelSlot>,
    prompt: String,
    cancel: &CancellationToken,
) -> Launched {
    let slot = model.unwrap_or(profile.model());
    let child_session_id = new_id("s");
    let run_id = parent.trace.run_id();
    parent.trace.emit(TraceEvent::SubagentRequested {
        tool_call_id: tool_call_id.to_string(),
        child_session_id: child_session_id.clone(),
        description: description.to_string(),
        profile: profile.name().to_string(),
        model_slot: slot,
        prompt: prompt.clone(),
    });
    let requested = Instant::now();
    // The child is cancellable by its id from the moment the UI shows it, also while it waits
    // for a slot.
    let token = cancel.child_token();
    parent
        .runtime
        .register_pending(&child_session_id, token.clone());
    let not_started = |error: String, reason: TerminalReason, err: ToolError| {
        parent.runtime.unregister(&child_session_id);
        parent.trace.emit(TraceEvent::SubagentFailed {
            tool_call_id: tool_call_id.to_string(),
            child_session_id: child_session_id.clone(),
            error,
            usage: Usage::default(),
            tool_calls: 0,
            elapsed_ms: requested.elapsed().as_millis() as u64,
            terminal_reason: reason,
        });
        Launched::NotStarted(err)
    };
    let never_started = || {
        parent.runtime.unregister(&child_session_id);
        parent.trace.emit(TraceEvent::SubagentCancelled {
            tool_call_id: tool_call_id.to_string(),
            child_session_id: child_session_id.clone(),
            usage: Usage::default(),
            tool_calls: 0,
            elapsed_ms: 0,
        });
        Launched::NotStarted(ToolError::Cancelled)
    };
    let permit = tokio::select! {
        biased;
        _ = token.cancelled() => return never_started(),
        p = parent.task_slots.clone().acquire_owned() => match p {
            Ok(p) => p,
            Err(_) => return not_started("the subagent pool is closed".into(), TerminalReason::Cancelled, ToolError::Cancelled),
        },
    };
    if token.is_cancelled() {
        return never_started();
    }
    // Siblings may have used up the parent's tree tokens or time while this one waited.
    if let Some((why, reason)) = start_refusal(parent) {
        return not_started(why.clone(), reason, ToolError::Refused(why));
    }
    let (budget_caps, reservation) = match child_caps(parent, &profile) {
        Some((caps, r)) => (Some(caps), Some(r)),
        None => (None, None),
    };
    let model = match parent.runtime.models.resolve(slot) {
        Ok(m) => m,
        Err(e) => {
            return not_started(
                e.to_string(),
                TerminalReason::ModelError,
                ToolError::Failed(e.to_string()),
            )
        }
    };
    let trace = match SessionTrace::create(
        parent.trace.bus().clone(),
        child_session_id.clone(),
        Some(parent.session_id.clone()),
        run_id.clone(),
    ) {
        Ok(t) => t,
        Err(e) => {
            return not_started(
                e.to_string(),
                TerminalReason::ModelError,
                ToolError::Failed(e.to_string()),
            )
        }
    };
    let model_info = model.info.clone();
    let child = AgentCtx::build(AgentCtxParts {
        runtime: parent.runtime.clone(),
        session_id: child_session_id.clone(),
        agent: AgentKind::Subagent,
        parent: Some(ParentLink {
            session_id: parent.session_id.clone(),
            run_id,
            tool_call_id: tool_call_id.to_string(),
        }),
        description: Some(description.to_string()),
        profile: profile.clone(),
        model,
        trace,
        mode: PermissionMode::ReadonlySubagent,
        approver: None,
        project_root: parent.project_root.clone(),
        profiles: parent.profiles.clone(),
        task_slots: parent.task_slots.clone(),
        budget_caps,
        run_seen: Some(parent.run_seen.clone()),
    });
    child.emit_session_started();
    parent.trace.emit(TraceEvent::SubagentStarted {
        tool_call_id: tool_call_id.to_string(),
        child_session_id: child_session_id.clone(),
        profile: profile.name().to_string(),
        model: model_info.clone(),
        budgets: child.budgets(),
    });
    parent.runtime.register(&child, token.clone());
    // Both walks stop on the parent's cancel only: a child cancelled on its own (the person
    // stopped one subagent) is still checked, since its parent carries on with what it did.
    let before = snapshot(parent, cancel).await;
    let started = Instant::now();
    // The child runs on its own task: a parent whose Task call is abandoned after its cancel
    // grace (a child tool stuck in the kernel) stops waiting, while the child still records its
    // own end; `MainSession::run` waits a bounded time for such children before it returns.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (run_ctx, run_token, run_rt, run_session) = (
        child.clone(),
        token.clone(),
        parent.runtime.clone(),
        child_session_id.clone(),
    );
    parent.runtime.keep_detached(
        parent.trace.run_id(),
        tokio::spawn(async move {
            let outcome = run_child(&run_ctx, prompt, run_token).await;
            run_rt.unregister(&run_session);
            let _ = tx.send(outcome);
        }),
    );
    let Ok(outcome) = rx.await else {
        return not_started(
            "the subagent stopped without an outcome".into(),
            TerminalReason::ModelError,
            ToolError::Failed("the subagent stopped without an outcome".into()),
        );
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    drop(permit);
    // When the whole tree is cancelled the walk is not waited for: it can take a second on a big
    // tree, and a cancel (or the parent's deadline) must not.
    let mut violation = None;
    if let Some(before) = before {
        if let Some(after) = snapshot(parent, cancel).await {
            let changed = before.changes(&after);
            if !changed.is_empty() {
                child.trace.emit(TraceEvent::ReadonlyViolation {
                    changed: changed.clone(),
                });
                parent.trace.emit(TraceEvent::ReadonlyViolation {
                    changed: changed.clone(),
                });
                violation = Some(changed);
            }
        }
    }
    parent.add_descendant_usage(&outcome.usage_with_descendants);
    drop(reservation);
    let base = (tool_call_id.to_string(), child_session_id.clone());
    match (&outcome.result, outcome.terminal_reason) {
        (_, TerminalReason::Cancelled) => parent.trace.emit(TraceEvent::SubagentCancelled {
            tool_call_id: base.0,
            child_session_id: base.1,
            usage: outcome.usage_with_descendants,
            tool_calls: outcome.tool_calls,
            elapsed_ms,
        }),
        (Some(result), reason) => parent.trace.emit(TraceEvent::SubagentCompleted {
            tool_call_id: base.0,
            child_session_id: base.1,
            result: result.clone(),
            usage: outcome.usage_with_descendants,
            tool_calls: outcome.tool_calls,
            elapsed_ms,
            terminal_reason: reason,
        }),
        (None, reason) => parent.trace.emit(TraceEvent::SubagentFailed {
            tool_call_id: base.0,
            child_session_id: base.1,
            error: outcome.error.clone().unwrap_or_else(|| "no result".into()),
            usage: outcome.usage_with_descendants,
            tool_calls: outcome.tool_calls,
            elapsed_ms,
            terminal_reason: reason,
        }),
    }
    Launched::Done {
        outcome: Box::new(outcome),
        child_session_id,
        model_id: model_info.model_id,
        fallback: model_info.fallback,
        elapsed_ms,
        violation,
    }
}

/// Walks the project for the read-only check; `None` when `cancel` fires first (the walk stops).
async fn snapshot(parent: &AgentCtx, cancel: &CancellationToken) -> Option<Snapshot> {
    let root = parent.project_root.clone();
    let traces = parent.trace.bus().trace_dir().to_path_buf();
    let stop = cancel.clone();
    let walk = tokio::task::spawn_blocking(move || {
        Snapshot::take_cancellable(&root, Some(&traces), &|| stop.is_cancelled())
    });
    tokio::select! {
        r = walk => r.ok().flatten(),
        _ = cancel.cancelled() => None,
    }
}

/// Time a child keeps back, beyond the final call's grace, to hand its result to the parent before
/// the parent's own deadline (the after-snapshot, the evidence check, the Task result).
const HANDOVER_MS: u64 = 2_000;
/// Less wall time than this is not worth starting a subagent for.
const MIN_CHILD_WALL_MS: u64 = 1_000;

/// The wall time a child may take so that it ends, final call included, before its parent's
/// deadline: the parent's time left minus the final call's grace and the hand-over time.
fn wall_time_left_for_child(parent: &AgentCtx, deadline: Instant) -> (u64, u64) {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .as_millis() as u64;
    let margin = parent.runtime.settings.final_call_grace_ms + HANDOVER_MS;
    (left, left.saturating_sub(margin))
}

/// Why a subagent may not start now, from the launching run's limits: the parent's tokens and its
/// finished children's have reached its `max_total_tokens`, or too little of its wall time is left
/// for a child to finish before it. `None` when it may start.
pub(crate) fn start_refusal(parent: &AgentCtx) -> Option<(String, TerminalReason)> {
    let limits = parent.run_limits()?;
    let budgets = parent.budgets();
    let spent = tree_tokens(parent, &limits);
    let reserved = parent.reserved_tokens();
    if spent + reserved >= budgets.max_total_tokens {
        return Some((
            format!(
                "no subagent was started: this agent's token budget for itself and its subagents is used up ({spent} of {} tokens spent, {reserved} set aside for subagents still running). Give your answer with what you have, or wait for the running subagents.",
                budgets.max_total_tokens
            ),
            TerminalReason::TokenBudget,
        ));
    }
    let (left, for_child) = wall_time_left_for_child(parent, limits.deadline);
    if for_child < MIN_CHILD_WALL_MS {
        let margin = parent.runtime.settings.final_call_grace_ms + HANDOVER_MS;
        return Some((
            format!(
                "no subagent was started: only {:.1} s of this agent's wall time are left, and a subagent needs at least {:.1} s (its own time plus {:.1} s to hand in its answer before this agent's deadline). Give your answer with what you have.",
                left as f64 / 1000.0,
                (MIN_CHILD_WALL_MS + margin) as f64 / 1000.0,
                margin as f64 / 1000.0
            ),
            TerminalReason::TimeBudget,
        ));
    }
    None
}

/// Tokens the launching run has spent: its own calls plus its finished subagents' (with theirs).
fn tree_tokens(parent: &AgentCtx, limits: &RunLimits) -> u64 {
    let mut tree = limits.own_usage;
    tree.add(&parent.descendant_usage());
    tree.total()
}

/// Tokens set aside for a running child; given back when it is dropped, whatever way the launch
/// ends (the child's real usage is then in the parent's `descendants`).
struct Reservation {
    parent: Arc<AgentCtx>,
    tokens: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Ok(mut r) = self.parent.reserved_tokens.lock() {
            *r = r.saturating_sub(self.tokens);
        }
    }
}

/// Caps on a child's budgets from its parent's run: its wall time ends before the parent's
/// deadline (with room for its final call), and its tokens fit what is left of the parent's tree
/// budget after what running siblings have set aside. The child's token budget (the smaller of
/// its profile's and that) is set aside until it ends. `None` when the parent publishes no limits.
fn child_caps(parent: &Arc<AgentCtx>, profile: &RuntimeProfile) -> Option<(Budgets, Reservation)> {
    let limits = parent.run_limits()?;
    let spent = tree_tokens(parent, &limits);
    let (_, for_child) = wall_time_left_for_child(parent, limits.deadline);
    let mut reserved = parent.reserved_tokens.lock().ok()?;
    let free = parent
        .budgets()
        .max_total_tokens
        .saturating_sub(spent)
        .saturating_sub(*reserved)
        .max(1);
    let tokens = free.min(profile.budgets().max_total_tokens);
    *reserved += tokens;
    drop(reserved);
    Some((
        Budgets {
            max_steps: u32::MAX,
            max_context_tokens: u64::MAX,
            max_total_tokens: tokens,
            max_wall_time_ms: for_child.max(1),
        },
        Reservation {
            parent: parent.clone(),
            tokens,
        },
    ))
}

/// The verification gate: runs the `verify` profile on the main agent's answer. Returns the reasons
/// when the verdict is FAIL, `None` otherwise (including when verification could not run).
pub(crate) async fn verify_answer(
    parent: &Arc<AgentCtx>,
    request: &str,
    answer: &str,
    cancel: &CancellationToken,
) -> Option<Vec<String>> {
    let profile = parent
        .profiles
        .iter()
        .find(|p| p.name() == "verify" && p.contract() == ResultContract::Verify)
        .cloned()?;
    let prompt = format!(
        "Check this answer against the project files.\n\nThe person asked:\n{request}\n\nThe agent answered:\n{answer}\n\nVerify every concrete claim you can (files, lines, behaviour). Return your verdict."
    );
    let call_id = new_id("verify");
    match launch(
        parent,
        &call_id,
        "Verify the final answer",
        profile,
        None,
        prompt,
        cancel,
    )
    .await
    {
        Launched::Done { outcome, .. } => match outcome.result {
            Some(SubagentResult {
                verdict: Some(Verdict::Fail),
                reasons,
                ..
            }) => Some(reasons),
            _ => None,
        },
        Launched::NotStarted(_) => None,
    }
}
