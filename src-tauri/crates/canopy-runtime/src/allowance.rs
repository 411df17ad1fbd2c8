//! Output allowances: how much tool output an agent that cannot compact (a subagent) can still take.
//! The host knows the context budget in force and its calibrated estimate of the history, so before
//! a turn's tool calls run it gives them a share of the room left; the calls of one turn share it
//! evenly. Tools fit their output to it (Read says where to read on, Grep and Glob how much they
//! left out), and [`fit`] holds every result to it in case a tool does not. One big file thus costs
//! a slice of the context, never the agent. Agents that compact (the main agent) get no allowance:
//! their tools keep their own caps and compaction makes room.
//!
//! It also caps the tool calls run per turn: a model that asks for thousands at once gets the
//! excess back as error results instead of a turn that takes minutes and fills the context.

use canopy_protocol::ToolCall;

/// Tool calls run per turn; the rest get an error result and are not run.
pub(crate) const MAX_CALLS_PER_TURN: usize = 64;
/// Share of the room left that one turn's tool calls may fill together: the agent keeps room for
/// later turns and its answer.
const TURN_SHARE: f64 = 0.5;
/// Share of the context budget never handed out: host notices, the next assistant turn, the answer.
const RESERVE_SHARE: f64 = 0.1;
/// What one tool result costs in the estimate besides its text (call id, tool name, JSON fields).
const RESULT_OVERHEAD_BYTES: usize = 120;
/// The estimate's bytes per token (see `estimate_tokens`).
const BYTES_PER_TOKEN: f64 = 4.0;
/// Tool output is counted raw by the tools, but JSON-escaped in the request (a tab or newline per
/// line of a Read, quotes in code): the allowance given to a tool leaves this much for escaping.
const ESCAPE_MARGIN: f64 = 0.8;

/// The allowance of one turn's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TurnAllowance {
    /// Bytes each call's result may take, measured as it is sent (JSON-escaped).
    pub per_call_bytes: usize,
}

impl TurnAllowance {
    /// The turn's share of the room left in `budget` tokens, when the history is estimated at
    /// `estimate` tokens (already calibrated) and `calibration` is reported ÷ estimated tokens,
    /// split between the `calls` that will run.
    pub fn new(budget: u64, estimate: u64, calibration: f64, calls: usize) -> Self {
        let reserve = (budget as f64 * RESERVE_SHARE) as u64;
        let room = budget.saturating_sub(reserve).saturating_sub(estimate);
        let turn_tokens = room as f64 * TURN_SHARE;
        let per_call_tokens = turn_tokens / calls.max(1) as f64;
        let bytes = per_call_tokens * BYTES_PER_TOKEN / calibration.max(0.25);
        TurnAllowance {
            per_call_bytes: (bytes as usize).saturating_sub(RESULT_OVERHEAD_BYTES),
        }
    }

    /// The raw output size to ask of a tool, leaving room for escaping.
    pub fn for_tool(&self) -> usize {
        (self.per_call_bytes as f64 * ESCAPE_MARGIN) as usize
    }
}

/// Bytes `text` takes once JSON-escaped, as the estimate and the provider see it.
fn sent_len(text: &str) -> usize {
    serde_json::to_string(text).map_or(text.len(), |s| s.len())
}

/// Holds a result to the allowance: a result over it keeps its first lines that fit and says
/// how much was cut. Tools that honour the allowance never reach this; it guards the others.
/// The flag says whether it cut.
pub(crate) fn fit(content: String, allowance: &TurnAllowance) -> (String, bool) {
    let limit = allowance.per_call_bytes.max(canopy_tools::MIN_OUTPUT_BYTES);
    let sent = sent_len(&content);
    if sent <= limit {
        return (content, false);
    }
    // Scale the raw cut by how much escaping inflates this text, and keep room for the marker.
    let ratio = content.len() as f64 / sent as f64;
    let raw = ((limit.saturating_sub(320)) as f64 * ratio) as usize;
    let mut out = canopy_tools::truncate::cap_text(&content, usize::MAX, raw);
    out.push_str(" (cut by the host to this call's share of the room left in your context; ask for less: a narrower pattern, or `offset`/`limit`)");
    (out, true)
}

/// The error result of a call past [`MAX_CALLS_PER_TURN`].
pub(crate) fn too_many_calls(calls: &[ToolCall]) -> String {
    format!(
        "Error: too many tool calls in one turn ({}): at most {MAX_CALLS_PER_TURN} are run per turn; this one was not run. Make fewer, more targeted calls.",
        calls.len()
    )
}

/// How many calls of a turn will run.
pub(crate) fn running(calls: &[ToolCall]) -> usize {
    calls.len().min(MAX_CALLS_PER_TURN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_gets_a_share_of_the_room_left_split_between_its_calls() {
        // 16k budget, 1.6k reserved, 4.4k used: 10k left, half of it for the turn.
        let one = TurnAllowance::new(16_000, 4_400, 1.0, 1);
        assert_eq!(one.per_call_bytes, 5_000 * 4 - RESULT_OVERHEAD_BYTES);
        let four = TurnAllowance::new(16_000, 4_400, 1.0, 4);
        assert_eq!(four.per_call_bytes, 1_250 * 4 - RESULT_OVERHEAD_BYTES);
        // A provider that counts twice the estimate halves the bytes.
        let doubled = TurnAllowance::new(16_000, 4_400, 2.0, 1);
        assert_eq!(doubled.per_call_bytes, 2_500 * 4 - RESULT_OVERHEAD_BYTES);
        // Nothing left: nothing handed out (tools still get their minimum to say how to read on).
        assert_eq!(TurnAllowance::new(16_000, 15_000, 1.0, 1).per_call_bytes, 0);
    }

    #[test]
    fn fit_cuts_a_result_over_the_allowance_counting_escapes() {
        let allowance = TurnAllowance {
            per_call_bytes: 2_000,
        };
        // Tabs and newlines double when escaped: 1,600 raw bytes are 2,400 sent.
        let text: String = (0..400).map(|i| format!("\t{:02}\n", i % 100)).collect();
        assert!(sent_len(&text) > 2_000 && text.len() < 2_000);
        let (out, cut) = fit(text.clone(), &allowance);
        assert!(cut);
        assert!(sent_len(&out) <= 2_000, "{}", sent_len(&out));
        assert!(out.contains("[truncated: "), "{out}");
        assert!(out.contains("cut by the host"), "{out}");
        let small = "fits".to_string();
        assert_eq!(fit(small.clone(), &allowance), (small, false));
    }
}
