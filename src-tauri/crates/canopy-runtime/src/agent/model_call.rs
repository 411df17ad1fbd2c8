//! One model call: the request, streaming with its deadline, usage accounting, the begin/end trace
//! events, and the clean-up of the tool calls it returns (unique ids, oversized arguments).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use canopy_protocol::{BudgetUsage, Message, ToolCall, TraceEvent, Usage};
use canopy_providers::{ModelRequest, ModelResponse, ProviderError, StreamDelta};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::{new_id, tool_args};

use super::budget::{estimate_tokens, LoopState};
use super::session::AgentCtx;

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
