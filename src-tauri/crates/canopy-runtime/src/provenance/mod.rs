//! Evidence provenance: what each agent's own tool results showed it, and the checks that judge a
//! citation by it — seen or not, still true on disk or stale, quoted faithfully or not.

mod recheck;

pub use recheck::recheck;
