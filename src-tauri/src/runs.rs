//! Live runs: the sessions started from the UI and their pending approvals.

/// Live sessions and pending approvals.
#[derive(Default)]
pub struct Runs {}
