//! The loop every agent runs, one [`Phase`] at a time: call the model, dispatch its tool calls, stop
//! on a final answer that meets the profile's contract or when a budget ends the run (with one
//! tool-less final call). Budgets are enforced here, by the host, never by the prompt.

use std::sync::Arc;
use std::time::Duration;

use canopy_protocol::{
    AgentKind, BudgetKind, FinishReason, Message, SubagentResult, TerminalReason, TraceEvent,
};
use canopy_providers::ProviderError;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::allowance::{self, TurnAllowance};
use crate::compaction;
use crate::contract;
use crate::profiles::ResultContract;

use super::budget::{continue_limit, estimate_tokens, terminal_for, LoopState};
use super::dispatch::run_tools_until;
use super::grounding;
use super::model_call::{call_model, CallError};
use super::session::{AgentCtx, AgentOutcome};

/// What the loop hands to [`finish`].
pub(crate) struct Ending {
    pub(crate) reason: TerminalReason,
    pub(crate) final_text: Option<String>,
    pub(crate) result: Option<SubagentResult>,
    pub(crate) error: Option<String>,
}

impl Ending {
    pub(crate) fn reason(reason: TerminalReason, error: Option<String>) -> Self {
        Ending {
            reason,
            final_text: None,
            result: None,
            error,
        }
    }
}

pub(crate) fn finish(ctx: &AgentCtx, st: &LoopState, end: Ending) -> AgentOutcome {
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

/// Where a run is in the loop; what a step does (offer tools, check budgets first, let a call run
/// past a limit) follows from the phase alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The model works: it may call tools, and the budgets are checked before every call.
    Working,
    /// The final answer broke the result contract: the next call is the corrective one, made
    /// without tools and, like the final call, allowed past a limit (its budget check is skipped).
    CorrectionDue,
    /// The corrective call was made; what follows (a retry, a continuation of its cut answer) is
    /// still without tools, and the budgets are checked as usual.
    Correcting,
}

impl Phase {
    /// Whether the loop is getting a corrected final answer (no tools are offered).
    fn correcting(self) -> bool {
        self != Phase::Working
    }
}

/// Runs the loop until the run ends; the phase starts at [`Phase::Working`]. Besides the phase it
/// keeps only one-shot allowances (one retry of an empty answer, one compaction for a provider's
/// "too long", two contract rejections) and the text of an answer cut off by the output limit.
///
/// A result sent back for ungrounded citations is kept: when the corrective turn yields no result
/// (it broke the contract, or ran out of budget), that first, structurally valid result stands,
/// marked by its evidence's trust, and the ending keeps the error that says why.
pub(crate) async fn run_loop(
    ctx: &Arc<AgentCtx>,
    history: &mut Vec<Message>,
    st: &mut LoopState,
    cancel: &CancellationToken,
) -> Ending {
    let mut sent_back = None;
    let end = run_phases(ctx, history, st, cancel, &mut sent_back).await;
    match (
        end.result.is_none() && end.reason != TerminalReason::Cancelled,
        sent_back,
    ) {
        (true, Some((result, text))) => Ending {
            reason: match end.reason {
                TerminalReason::InvalidResult => TerminalReason::Completed,
                other => other,
            },
            final_text: Some(text),
            result: Some(result),
            // Why the corrected answer did not count (a second contract breach, a failed final
            // call) is still worth telling.
            error: end.error,
        },
        _ => end,
    }
}

async fn run_phases(
    ctx: &Arc<AgentCtx>,
    history: &mut Vec<Message>,
    st: &mut LoopState,
    cancel: &CancellationToken,
    sent_back: &mut Option<(SubagentResult, String)>,
) -> Ending {
    let contract_kind = ctx.profile.contract();
    let mut phase = Phase::Working;
    let mut empty_retried = false;
    let mut rejections = 0u32;
    let mut continuation = String::new();
    let mut compacted_for_error = false;
    loop {
        if cancel.is_cancelled() {
            return Ending::reason(TerminalReason::Cancelled, None);
        }
        let check_budgets = phase != Phase::CorrectionDue;
        if phase == Phase::CorrectionDue {
            phase = Phase::Correcting;
        }
        if check_budgets {
            if let Some((kind, used, limit)) = st.exhausted(ctx.agent == AgentKind::Main) {
                // A corrective turn made past the step limit already was the one call allowed
                // beyond it: no further call (steps stay at most max_steps + 1).
                if phase.correcting() && st.steps > st.budgets.max_steps {
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
        let notice = phase.correcting().then_some("Host notice: reply now with the corrected final JSON object only; tools are not available for this reply.");
        // Like the final call, a corrective turn may run past the limit: it gets at least the
        // final call's grace, or one made just after the deadline would be abandoned at once.
        let deadline = if phase.correcting() {
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
            !phase.correcting(),
            notice,
            deadline,
            cancel,
        )
        .await
        {
            Ok(r) => r,
            Err(CallError::Cancelled) => return Ending::reason(TerminalReason::Cancelled, None),
            Err(CallError::Deadline) if phase.correcting() => {
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
        if !resp.tool_calls.is_empty() && !phase.correcting() {
            continuation.clear();
            let deadline = st.deadline();
            ctx.set_run_limits(st);
            // A subagent gets a share of the room its history leaves. The main agent compacts
            // older turns when it fills up, so only what compaction cannot remove (the system
            // prompt and the tool specs) counts against it: one result still never outgrows the
            // context, even on a small local model.
            let allowance = {
                let kept: &[Message] = if ctx.agent == AgentKind::Main {
                    &[]
                } else {
                    history
                };
                let est = (estimate_tokens(ctx.profile.system_prompt(), kept, &ctx.tool_specs)
                    as f64
                    * st.calibration) as u64;
                Some(TurnAllowance::new(
                    budgets.max_context_tokens,
                    est,
                    st.calibration,
                    allowance::running(&resp.tool_calls),
                ))
            };
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
        let checked = contract::validate_cancellable(
            contract_kind,
            text.clone(),
            ctx.project_root.clone(),
            ctx.secret_files(),
            cancel,
        )
        .await;
        let Some(checked) = checked else {
            return Ending::reason(TerminalReason::Cancelled, None);
        };
        match checked {
            Ok(mut result) => {
                if !grounding::ground(ctx, history, &mut result, st.tool_calls, cancel).await {
                    return Ending::reason(TerminalReason::Cancelled, None);
                }
                // The one corrective turn, unless a contract breach already used it: citations
                // the agent was never shown, or that do not exist, go back once to be fixed or
                // dropped. What comes back is accepted as it is, marked by its trust.
                if let (0, Some(why)) = (rejections, grounding::correction(&result)) {
                    rejections += 1;
                    ctx.trace.emit(TraceEvent::ResultRejected {
                        attempt: rejections,
                        error: why.clone(),
                    });
                    *sent_back = Some((result, text));
                    continuation.clear();
                    phase = Phase::CorrectionDue;
                    history.push(Message::user(format!(
                        "Host notice: your final answer was sent back: {why}. Reply with exactly one JSON object in the required shape and nothing else."
                    )));
                    continue;
                }
                return Ending {
                    reason: TerminalReason::Completed,
                    final_text: Some(text),
                    result: Some(result),
                    error: None,
                };
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
                phase = Phase::CorrectionDue;
                history.push(Message::user(format!(
                    "Host notice: your final answer was rejected: {error}. Reply with exactly one JSON object in the required shape and nothing else."
                )));
            }
        }
    }
}

/// After a compaction failed: a cancel, or a wall-time budget spent meanwhile, decides how the run
/// ends (cancelled, or the final call for time) rather than the compaction's own failure.
pub(crate) async fn cancel_or_time_ending(
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
pub(crate) async fn final_call(
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
            let checked = contract::validate_cancellable(
                ctx.profile.contract(),
                resp.text.clone(),
                ctx.project_root.clone(),
                ctx.secret_files(),
                cancel,
            )
            .await;
            let Some(checked) = checked else {
                return Ending::reason(TerminalReason::Cancelled, None);
            };
            match checked {
                Ok(mut result) => {
                    result.status = canopy_protocol::ResultStatus::Partial;
                    if !grounding::ground(ctx, history, &mut result, st.tool_calls, cancel).await {
                        return Ending::reason(TerminalReason::Cancelled, None);
                    }
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
