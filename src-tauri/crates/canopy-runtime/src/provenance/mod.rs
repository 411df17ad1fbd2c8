//! Evidence provenance: what each agent's own tool results showed it, and the checks that judge a
//! citation by it — seen or not, still true on disk or stale, quoted faithfully or not.

mod answer;
mod judge;
mod quote;
mod recheck;
mod tracker;

pub use answer::{check_answer, references, AnswerCheck};
pub use judge::{
    describe, fill_seen_text, judge, judge_found, lookups, mark_support, offending, MAX_LISTED,
};
pub use quote::quote_matches;
pub use recheck::recheck;
pub use tracker::{FileSeen, Tracker, MAX_FILES, MAX_RANGES_PER_FILE};
