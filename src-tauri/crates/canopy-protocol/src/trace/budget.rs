//! A session's budgets as traces record them: the limits it runs under, how much of each it has
//! used, and the name of one when it runs out.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Hard limits on one agent session's run, enforced by the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Budgets {
    /// Model calls allowed (one step = one model call).
    pub max_steps: u32,
    /// Input tokens allowed in any single request.
    pub max_context_tokens: u64,
    /// Input + output tokens allowed across the run (own calls only).
    pub max_total_tokens: u64,
    /// Wall time allowed, milliseconds.
    pub max_wall_time_ms: u64,
}

/// How much of each budget has been used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct BudgetUsage {
    /// Model calls made.
    pub steps: u32,
    /// Input tokens of the latest request (the current context size).
    pub context_tokens: u64,
    /// Input + output tokens of all calls so far.
    pub total_tokens: u64,
    /// Milliseconds since the run started.
    pub wall_time_ms: u64,
}

/// Names one of the four budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// `max_steps`.
    Steps,
    /// `max_context_tokens`.
    ContextTokens,
    /// `max_total_tokens`.
    TotalTokens,
    /// `max_wall_time_ms`.
    WallTime,
}
