//! One prompt of the main agent: the loop, then, when the verification gate is on, an independent
//! verify subagent whose FAIL sends the agent back to work once. It sits above both the loop and the
//! subagent launcher, so neither needs the other's caller.

use std::sync::Arc;

use canopy_protocol::{Message, TerminalReason, TraceEvent, Usage};
use tokio_util::sync::CancellationToken;

use crate::provenance;

use super::budget::LoopState;
use super::run_loop::{finish, run_loop, Ending};
use super::session::{AgentCtx, AgentOutcome};

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
    // "Seen by an agent of this run": what earlier runs showed does not count.
    for tracker in [&ctx.seen, &*ctx.run_seen] {
        if let Ok(mut t) = tracker.lock() {
            t.clear();
        }
    }
    ctx.start_run(prompt.clone());
    history.push(Message::user(prompt.clone()));
    let mut st = LoopState::new(ctx.budgets(), ctx.runtime.settings.wrap_up_ratio);
    let mut end = run_loop(ctx, history, &mut st, &cancel).await;
    if ctx.runtime.settings.verification_gate && end.reason == TerminalReason::Completed {
        if let Some(answer) = end.final_text.clone() {
            // The verify child is launched like a Task: within what is left of this run's time.
            ctx.set_run_limits(&st);
            match crate::launcher::verify_answer(ctx, &prompt, &answer, &cancel).await {
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
    if end.reason != TerminalReason::Cancelled {
        if let Some(text) = &end.final_text {
            if !check_answer(ctx, text, &cancel).await {
                end = Ending::reason(TerminalReason::Cancelled, None);
            }
        }
    }
    finish(ctx, &st, end)
}

/// Records `answer_checked` for the references in the main agent's answer (none: nothing is
/// written), judged against what any agent of this run was shown. The check reads up to 200 cited
/// files: off the async workers, watching `cancel`, and holding the run's tracker only to look the
/// references up. `false` when `cancel` fired first (nothing is written).
async fn check_answer(ctx: &Arc<AgentCtx>, text: &str, cancel: &CancellationToken) -> bool {
    if !ctx.runtime.settings.track_provenance {
        return true;
    }
    let (ctx2, text) = (ctx.clone(), text.to_string());
    let (secrets, stop) = (ctx.secret_files(), cancel.clone());
    let check = tokio::task::spawn_blocking(move || {
        provenance::check_answer(&text, &ctx2.run_seen, &ctx2.project_root, &secrets, &|| {
            stop.is_cancelled()
        })
    });
    let checked = tokio::select! {
        biased;
        _ = cancel.cancelled() => return false,
        r = check => r,
    };
    if let Ok(provenance::AnswerCheck::Checked(references, trust)) = checked {
        ctx.trace
            .emit(TraceEvent::AnswerChecked { references, trust });
    }
    !cancel.is_cancelled()
}
