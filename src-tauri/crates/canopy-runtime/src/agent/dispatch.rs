//! Tool dispatch for one turn: each call through the gate, read-only calls of a turn concurrently
//! and any other call alone, cancellation with a grace, and the results fed back as messages.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use canopy_protocol::{
    Decision, DecisionSource, Message, SeenFile, ToolCall, ToolKind, ToolStatus, TraceEvent,
};
use canopy_tools::{ToolContext, ToolError};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::allowance::{self, TurnAllowance};
use crate::gate::{ApprovalRequest, Precheck};
use crate::{registry, tool_args};

use super::session::AgentCtx;

/// Runs a turn's tool calls; when the wall-time budget runs out meanwhile, the calls are cancelled
/// (their results say so) and the loop's next budget check ends the run.
pub(crate) async fn run_tools_until(
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
pub(crate) fn task_calls_per_turn(ctx: &AgentCtx) -> usize {
    ctx.runtime.settings.parallelism.max(1) * 2
}

pub(crate) fn mutates(ctx: &AgentCtx, call: &ToolCall) -> bool {
    ctx.find_tool(&call.name).is_some_and(|t| !t.read_only())
}

/// Read-only calls in a row run concurrently; a mutating call runs alone, in order.
pub(crate) async fn run_tools(
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
/// a hung network mount) is dropped so a cancel or a deadline is never held up by it. Short enough
/// that a run still ends within 2 s of a cancel.
pub(crate) const TOOL_CANCEL_GRACE: Duration = Duration::from_millis(1_200);
/// A `Task` call gets a little longer, so a child that abandons its own stuck tool (after the grace
/// above) still hands its end to the parent, which records `subagent_cancelled`; past it the parent
/// stops waiting (still within 2 s of the cancel). The child runs on its own task, so it still
/// records its own end after that.
pub(crate) const TASK_CANCEL_GRACE: Duration = Duration::from_millis(1_700);

/// Runs a tool, but once `cancel` fires gives it only `grace` to finish; after that the call is
/// abandoned as cancelled. Dropping the future is safe: Bash kills its process group on drop, and a
/// blocking read left behind on the blocking pool cannot reach the agent any more.
pub(crate) async fn run_cancellable<F>(
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

pub(crate) fn cap(text: &str, limit: usize) -> (String, bool) {
    if text.len() <= limit {
        return (text.to_string(), false);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

pub(crate) async fn run_one(
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
    // The tool that made the output: only it can say what a cut left of what it showed.
    let shower = tool.clone();
    let done_seen = |status: ToolStatus, content: String, seen: Vec<SeenFile>| -> Message {
        // Redacted whole before any cut: a key straddling the trace cap would otherwise leave a
        // piece too short for the redactor to recognise.
        let content = ctx.runtime.redact(&content);
        let (content, cut) = match &allowance {
            Some(a) => allowance::fit(content, a),
            None => (content, false),
        };
        // Only what the agent was finally shown counts as seen.
        let seen = if cut {
            match &shower {
                Some(t) => t.narrow_seen(seen, &content),
                None => Vec::new(),
            }
        } else {
            seen
        };
        if !seen.is_empty() {
            if let Ok(mut t) = ctx.seen.lock() {
                t.record(&seen);
            }
            // A straggler from a run that was stopped must not speak for the next run, which
            // starts from a cleared record.
            if !cancel.is_cancelled() {
                if let Ok(mut t) = ctx.run_seen.lock() {
                    t.record(&seen);
                }
            }
        }
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
            seen,
        });
        Message::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: status != ToolStatus::Ok,
        }
    };
    let done = |status: ToolStatus, content: String| done_seen(status, content, Vec::new());
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
        secrets: ctx.secret_files(),
        output_allowance: allowance.map(|a| a.for_tool()),
        record_seen: ctx.runtime.settings.track_provenance,
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
            done_seen(ToolStatus::Ok, out.content, out.seen)
        }
        Err(ToolError::Cancelled) => done(
            ToolStatus::Cancelled,
            "Cancelled before it finished (by the person or a budget); there is no result.".into(),
        ),
        Err(e) => done(ToolStatus::Error, format!("Error: {e}")),
    }
}
