//! Grounding a subagent's validated result in what it was shown: each citation's provenance,
//! staleness and "then" text, the result's trust summary and unsupported mark, and the one
//! corrective notice for citations that are unseen or invalid.

use std::sync::Arc;

use canopy_protocol::{Message, SubagentResult};
use tokio_util::sync::CancellationToken;

use crate::provenance;

use super::session::AgentCtx;

/// Judges `result`'s evidence by this agent's own tool results and marks its support. `false`
/// when `cancel` fired first (the result is then left as it was).
pub(crate) async fn ground(
    ctx: &Arc<AgentCtx>,
    history: &[Message],
    result: &mut SubagentResult,
    tool_calls: u32,
    cancel: &CancellationToken,
) -> bool {
    if !ctx.runtime.settings.track_provenance {
        return true;
    }
    let mut evidence = std::mem::take(&mut result.evidence);
    // Staleness hashes the cited files again, and reading back each seen line walks the tool
    // results: off the async workers, and not at all once `cancel` fired.
    let judged = {
        let ctx = ctx.clone();
        let history = history.to_vec();
        let stop = cancel.clone();
        tokio::task::spawn_blocking(move || {
            // The tracker is held only to look the items up, not while files are hashed.
            let found = ctx
                .seen
                .lock()
                .map(|seen| provenance::lookups(&evidence, &seen));
            if let Ok(found) = found {
                provenance::judge_found(&mut evidence, found, &ctx.project_root, &|| {
                    stop.is_cancelled()
                });
            }
            if !stop.is_cancelled() {
                provenance::fill_seen_text(
                    &mut evidence,
                    &history,
                    &ctx.tools,
                    &ctx.project_root,
                    &ctx.secret_files(),
                );
            }
            evidence
        })
    };
    let evidence = tokio::select! {
        biased;
        _ = cancel.cancelled() => return false,
        r = judged => match r {
            Ok(e) => e,
            Err(_) => return false,
        },
    };
    result.evidence = evidence;
    provenance::mark_support(result, tool_calls);
    true
}

/// The corrective notice for a result whose citations are unseen or invalid, naming each one;
/// `None` when every citation is seen and valid (or at least its file was seen).
pub(crate) fn correction(result: &SubagentResult) -> Option<String> {
    let bad = provenance::offending(&result.evidence);
    if bad.is_empty() {
        return None;
    }
    let mut list: Vec<String> = bad
        .iter()
        .take(provenance::MAX_LISTED)
        .map(|e| provenance::describe(e))
        .collect();
    if bad.len() > provenance::MAX_LISTED {
        list.push(format!("and {} more", bad.len() - provenance::MAX_LISTED));
    }
    Some(format!(
        "these evidence items are not grounded in what your own tool results showed you: {}. Fix or drop each: cite only lines your Read/Grep results showed, exactly as `path:line`; drop a citation you cannot back",
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corrective_notice_names_at_most_twenty_items_then_how_many_more() {
        let dir = tempfile::tempdir().unwrap();
        let refs: Vec<String> = (1..=150).map(|i| format!("\"gone{i}.rs:1\"")).collect();
        let answer = format!(
            r#"{{"status":"completed","summary":"s","findings":["f"],"evidence":[{}]}}"#,
            refs.join(",")
        );
        let mut result = crate::contract::validate(
            crate::profiles::ResultContract::Explore,
            &answer,
            dir.path(),
        )
        .unwrap();
        provenance::judge(
            &mut result.evidence,
            &provenance::Tracker::new(),
            dir.path(),
        );
        let why = correction(&result).unwrap();
        assert!(
            why.contains("[invalid: no such file] gone20.rs:1, and 130 more."),
            "{why}"
        );
        assert!(!why.contains("gone21.rs"), "{why}");
    }
}
