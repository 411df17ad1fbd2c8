//! Keeps a long conversation inside its context budget. The main agent compacts: older turns are
//! replaced by a model-written summary while recent turns stay verbatim. Before a last tool-less
//! call, old tool outputs are elided so the request fits.

use canopy_protocol::{Message, ToolSpec, TraceEvent};
use canopy_providers::ModelRequest;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent::budget::{estimate_tokens, LoopState};
use crate::agent::model_call::emit_call_end;
use crate::agent::session::AgentCtx;
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

/// The note that replaces the bulk of an elided tool result.
pub(crate) const ELIDED_MARK: &str = "[elided by the host to fit the context budget";

/// Bytes `value` takes serialised, as [`estimate_tokens`] counts them.
fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// Shortens old tool results (oldest first) until the history fits `budget`, keeping the newest
/// result intact where possible, and returns how many it shortened. `calibration` is the loop's
/// reported ÷ estimated ratio, so the fit is judged in the provider's tokens, not the raw bytes/4
/// estimate. Linear in the size of the history: each message is serialised once, and again only
/// when it is shortened (a turn of thousands of tool results once took minutes here).
pub(crate) fn elide_old_tool_results(
    history: &mut [Message],
    budget: u64,
    calibration: f64,
    system: &str,
    tools: &[ToolSpec],
) -> usize {
    let fixed = system.len() + json_len(tools);
    let mut sizes: Vec<usize> = history.iter().map(json_len).collect();
    // `[a,b,c]`: the brackets and the commas between messages, as `estimate_tokens` serialises it.
    let mut total = 2 + sizes.iter().sum::<usize>() + sizes.len().saturating_sub(1);
    let fits =
        |total: usize| ((fixed + total) as u64).div_ceil(4) as f64 * calibration <= budget as f64;
    let mut elided = 0;
    for (i, message) in history.iter_mut().enumerate() {
        if fits(total) {
            break;
        }
        if let Message::ToolResult { content, .. } = message {
            if content.len() > 200 {
                let mut end = 160;
                while !content.is_char_boundary(end) {
                    end -= 1;
                }
                *content = format!(
                    "{}… {ELIDED_MARK}: {} bytes]",
                    &content[..end],
                    content.len()
                );
                let size = json_len(&*message);
                total = total - sizes[i] + size;
                sizes[i] = size;
                elided += 1;
            }
        }
    }
    elided
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

    #[test]
    fn elision_counts_like_the_estimate_and_stops_as_soon_as_it_fits() {
        let h = history_with_outputs(10, 4_000);
        let system = "sys";
        let full = estimate_tokens(system, &h, &[]);
        // Room for about half of the outputs: the oldest go, the newest stay whole.
        let budget = full / 2;
        let mut cut = h.clone();
        let n = elide_old_tool_results(&mut cut, budget, 1.0, system, &[]);
        let after = estimate_tokens(system, &cut, &[]);
        assert!(after <= budget, "{after} > {budget}");
        assert!((5..=6).contains(&n), "{n} elided");
        let elided_one = |m: &Message| matches!(m, Message::ToolResult { content, .. } if content.contains(ELIDED_MARK));
        assert!(cut[1..=n].iter().all(elided_one));
        assert!(!cut[n + 1..].iter().any(elided_one));
        // One output fewer elided would not have fitted: it stopped at the first fit.
        let mut fewer = h.clone();
        fewer[1..n].clone_from_slice(&cut[1..n]);
        assert!(estimate_tokens(system, &fewer, &[]) > budget);
        // A history that fits is left alone.
        let mut untouched = h.clone();
        assert_eq!(
            elide_old_tool_results(&mut untouched, u64::MAX, 1.0, system, &[]),
            0
        );
        assert_eq!(untouched, h);
    }

    #[test]
    fn elision_of_thousands_of_results_is_linear() {
        // A turn of 4,000 tool results: the quadratic version re-serialised the whole 4 MB history
        // once per message (16 GB of JSON: minutes); linear it is 4 MB once, well under a second
        // even in a debug build. The bound leaves room for a loaded machine.
        let h = history_with_outputs(4_000, 1_000);
        let mut cut = h.clone();
        let started = std::time::Instant::now();
        elide_old_tool_results(&mut cut, 20_000, 1.0, "sys", &[]);
        let took = started.elapsed();
        assert!(
            estimate_tokens("sys", &cut, &[]) > 20_000,
            "4,000 short results cannot fit"
        );
        assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
    }
}
