//! Keeps a long conversation inside its context budget. The main agent compacts: older turns are
//! replaced by a model-written summary while recent turns stay verbatim. Before a last tool-less
//! call, old tool outputs are elided so the request fits.

use canopy_protocol::{Message, ToolSpec, TraceEvent};
use canopy_providers::ModelRequest;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent::{emit_call_end, estimate_tokens, AgentCtx, LoopState};
use crate::new_id;

/// Recent history kept verbatim aims at this share of the context budget.
const KEEP_SHARE: f64 = 0.35;
/// Per-message cap when older turns are flattened for the summariser.
const FLATTEN_CAP: usize = 2_000;

const SUMMARY_PROMPT: &str = "You compress a coding agent's conversation so it can continue the task with less context. \
Write a faithful summary of the transcript you are given: the person's requests, decisions made, files read or changed \
(with paths and line numbers), commands run and their outcomes, open problems and the next steps. Be specific and terse. \
Do not add anything that is not in the transcript.";

fn flatten(messages: &[Message]) -> String {
    let clip = |s: &str| -> String {
        if s.len() <= FLATTEN_CAP {
            s.to_string()
        } else {
            let mut end = FLATTEN_CAP;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}… [{} more bytes]", &s[..end], s.len() - end)
        }
    };
    let mut out = String::new();
    for m in messages {
        match m {
            Message::User { text } => out.push_str(&format!("USER: {}\n\n", clip(text))),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.is_empty() {
                    out.push_str(&format!("ASSISTANT: {}\n", clip(text)));
                }
                for c in tool_calls {
                    out.push_str(&format!(
                        "ASSISTANT CALLS {}({})\n",
                        c.name,
                        clip(&c.arguments)
                    ));
                }
                out.push('\n');
            }
            Message::ToolResult {
                name,
                content,
                is_error,
                ..
            } => out.push_str(&format!(
                "{} RESULT{}: {}\n\n",
                name,
                if *is_error { " (error)" } else { "" },
                clip(content)
            )),
        }
    }
    out
}

/// Where the verbatim tail starts: the earliest turn boundary (a user message, or an assistant turn)
/// whose tail fits the keep share. Never splits a tool call from its results.
fn keep_from(history: &[Message], budget: u64, system: &str, tools: &[ToolSpec]) -> Option<usize> {
    let target = (budget as f64 * KEEP_SHARE) as u64;
    let mut best = None;
    for i in (1..history.len()).rev() {
        if matches!(history[i], Message::ToolResult { .. }) {
            continue;
        }
        if estimate_tokens(system, &history[i..], tools) > target {
            break;
        }
        best = Some(i);
    }
    best.or_else(|| {
        (1..history.len())
            .rev()
            .find(|&i| !matches!(history[i], Message::ToolResult { .. }))
    })
}

/// Replaces older turns with a summary. Errors say why it could not (nothing to compact, the
/// summariser failed).
pub(crate) async fn compact(
    ctx: &AgentCtx,
    history: &mut Vec<Message>,
    st: &mut LoopState,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let budget = st.budgets.max_context_tokens;
    let system = ctx.profile.system_prompt();
    let before_tokens = estimate_tokens(system, history, &ctx.tool_specs);
    let cut = keep_from(history, budget, system, &ctx.tool_specs)
        .ok_or("the history has no older turns to summarise")?;
    let model_call_id = new_id("m");
    ctx.trace.emit(TraceEvent::ModelCallBegin {
        model_call_id: model_call_id.clone(),
        step: st.steps,
        messages: 1,
        estimated_input_tokens: estimate_tokens(SUMMARY_PROMPT, &history[..cut], &[]),
        tools_offered: false,
    });
    // Flattening to text keeps the request valid for providers that require `tools` whenever the
    // history holds tool calls.
    let request = ModelRequest {
        system: SUMMARY_PROMPT.into(),
        messages: vec![Message::user(flatten(&history[..cut]))],
        tools: Vec::new(),
        allow_tool_calls: false,
        max_tokens: ctx.model.max_output_tokens.min(4_096),
        temperature: None,
    };
    let started = Instant::now();
    // The summariser is a model call like any other: the wall-time budget bounds it too.
    let result = tokio::select! {
        r = ctx.model.client.complete(&request, &|_| {}, cancel) => r,
        _ = tokio::time::sleep_until(st.deadline()) => Err(canopy_providers::ProviderError::Network(
            "the wall-time budget ran out while compacting".into(),
        )),
    };
    let latency_ms = started.elapsed().as_millis() as u64;
    let resp = match result {
        Ok(r) => r,
        Err(e) => {
            emit_call_end(
                ctx,
                model_call_id,
                st.steps,
                Err(e.to_string()),
                latency_ms,
                st.totals(),
            );
            return Err(e.to_string());
        }
    };
    st.record(&resp.usage);
    emit_call_end(
        ctx,
        model_call_id,
        st.steps,
        Ok(&resp),
        latency_ms,
        st.totals(),
    );
    let summary = resp.text.trim().to_string();
    if summary.is_empty() {
        return Err("the summariser returned nothing".into());
    }
    let messages_before = history.len() as u32;
    // The person's words are kept verbatim: a summary may lose the exact request.
    let latest_request = history[..cut].iter().rev().find_map(|m| match m {
        Message::User { text }
            if !text.starts_with("Host notice") && !text.starts_with("[Summary of the earlier") =>
        {
            Some(text.clone())
        }
        _ => None,
    });
    let tail: Vec<Message> = history.drain(cut..).collect();
    history.clear();
    let mut head = format!("[Summary of the earlier conversation, written when it was compacted]\n{summary}\n[End of summary]");
    if let Some(request) = latest_request {
        head.push_str(&format!(
            "\n\nThe person's latest request, verbatim:\n{request}"
        ));
    }
    let mut tail = tail.into_iter().peekable();
    if let Some(Message::User { text }) = tail.peek() {
        head.push_str("\n\n");
        head.push_str(text);
        tail.next();
    }
    history.push(Message::user(head));
    history.extend(tail);
    let after_tokens = estimate_tokens(system, history, &ctx.tool_specs);
    ctx.trace.emit(TraceEvent::Compacted {
        messages_before,
        messages_after: history.len() as u32,
        tokens_before: before_tokens,
        tokens_after: after_tokens,
        summary,
    });
    if after_tokens >= before_tokens {
        return Err("compaction did not make the conversation smaller".into());
    }
    Ok(())
}

/// Shortens old tool results (oldest first) until the history fits `budget`, keeping the newest
/// result intact where possible. `calibration` is the loop's reported ÷ estimated ratio, so the
/// fit is judged in the provider's tokens, not the raw bytes/4 estimate.
pub(crate) fn elide_old_tool_results(
    history: &mut [Message],
    budget: u64,
    calibration: f64,
    system: &str,
    tools: &[ToolSpec],
) {
    let n = history.len();
    let fits =
        |h: &[Message]| (estimate_tokens(system, h, tools) as f64 * calibration) as u64 <= budget;
    for i in 0..n {
        if fits(history) {
            return;
        }
        if let Message::ToolResult { content, .. } = &mut history[i] {
            if content.len() > 200 {
                let mut end = 160;
                while !content.is_char_boundary(end) {
                    end -= 1;
                }
                *content = format!(
                    "{}… [elided by the host to fit the context budget: {} bytes]",
                    &content[..end],
                    content.len()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history_with_outputs(n: usize, bytes: usize) -> Vec<Message> {
        let mut h = vec![Message::user("read them all")];
        for i in 0..n {
            h.push(Message::ToolResult {
                call_id: format!("c{i}"),
                name: "Read".into(),
                content: "x".repeat(bytes),
                is_error: false,
            });
        }
        h
    }

    #[test]
    fn elision_judges_the_fit_with_the_calibrated_estimate() {
        let h = history_with_outputs(4, 4_000);
        let raw = estimate_tokens("sys", &h, &[]);
        // The raw estimate fits; with the provider counting twice as many tokens it does not.
        let budget = raw + 10;
        let mut uncalibrated = h.clone();
        elide_old_tool_results(&mut uncalibrated, budget, 1.0, "sys", &[]);
        assert_eq!(uncalibrated, h, "fits as it is");
        let mut calibrated = h.clone();
        elide_old_tool_results(&mut calibrated, budget, 2.0, "sys", &[]);
        let after = (estimate_tokens("sys", &calibrated, &[]) as f64 * 2.0) as u64;
        assert!(after <= budget, "{after} > {budget}");
        assert!(
            matches!(&calibrated[1], Message::ToolResult { content, .. } if content.contains("elided by the host"))
        );
    }
}
