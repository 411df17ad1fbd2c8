//! Budgets and their accounting for one run: steps, tokens, wall time, the wrap-up notices, the
//! token estimate of a request, and which terminal reason each exhausted budget ends a run with.

use std::collections::HashSet;
use std::time::Duration;

use canopy_protocol::{
    BudgetKind, BudgetUsage, Budgets, Message, TerminalReason, ToolSpec, TraceEvent, Usage,
};
use tokio::time::Instant;

use crate::trace_writer::SessionTrace;

/// Per-run budget accounting.
pub(crate) struct LoopState {
    pub budgets: Budgets,
    pub started: Instant,
    pub steps: u32,
    pub usage: Usage,
    pub context_tokens: u64,
    pub tool_calls: u32,
    pub(crate) warned: HashSet<&'static str>,
    pub(crate) notices: Vec<String>,
    /// Tool-call ids given out in this run, so a server that restarts its numbering every turn
    /// (`call_0` again) cannot make two calls share an id, even after compaction drops the first.
    pub(crate) call_ids: HashSet<String>,
    /// Reported input tokens ÷ estimated input tokens of the last call, to correct estimates.
    pub(crate) calibration: f64,
    pub(crate) wrap_up_ratio: f64,
}

impl LoopState {
    pub(crate) fn new(budgets: Budgets, wrap_up_ratio: f64) -> Self {
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
    pub(crate) fn exhausted(&self, compacts: bool) -> Option<(BudgetKind, u64, u64)> {
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
    pub(crate) fn check_warnings(&mut self, trace: &SessionTrace) {
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

    pub(crate) fn system_prompt(&self, base: &str, extra: Option<&str>) -> String {
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
pub(crate) fn continue_limit(budget: u64) -> u64 {
    budget - budget / 10
}

/// Rough token estimate of a request (4 bytes per token), corrected by the last call's reported usage.
pub(crate) fn estimate_tokens(system: &str, history: &[Message], tools: &[ToolSpec]) -> u64 {
    let bytes = system.len()
        + serde_json::to_string(history).map(|s| s.len()).unwrap_or(0)
        + serde_json::to_string(tools).map(|s| s.len()).unwrap_or(0);
    (bytes as u64).div_ceil(4)
}

pub(crate) fn terminal_for(kind: BudgetKind) -> TerminalReason {
    match kind {
        BudgetKind::Steps => TerminalReason::MaxSteps,
        BudgetKind::TotalTokens => TerminalReason::TokenBudget,
        BudgetKind::ContextTokens => TerminalReason::ContextOverflow,
        BudgetKind::WallTime => TerminalReason::TimeBudget,
    }
}
