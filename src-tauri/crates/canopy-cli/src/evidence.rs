//! What `trace show` says of evidence: each subagent result's trust line ("5 of 6 citations seen and
//! valid · 1 unseen") and why it is unsupported, the main answer's reference check, and "provenance
//! not recorded" for results written before provenance was. As recorded: the app re-checks against
//! the disk when a person opens evidence; a terminal listing of a trace reports what the run found.

use std::collections::HashMap;
use std::path::Path;

use canopy_protocol::{
    CheckedEvidence, EvidenceTrust, SubagentResult, TraceEvent, TrustSummary, Unsupported,
};
use canopy_runtime::trace_reader::{read_session_file, SessionNode};

/// Lines about one session's evidence, by session id.
pub type Notes = HashMap<String, Vec<String>>;

/// Citations listed one per line under a summary; more are counted, not listed.
const MAX_LISTED: usize = 20;

/// The notes of every session of `root`'s tree, read from their files in `dir` (each once).
pub fn notes(dir: &Path, root: &SessionNode) -> Notes {
    let mut results: HashMap<String, SubagentResult> = HashMap::new();
    let mut own: HashMap<String, SubagentResult> = HashMap::new();
    let mut answers: HashMap<String, Vec<(Vec<CheckedEvidence>, TrustSummary)>> = HashMap::new();
    // Without recursion: a chain of sessions can be thousands deep.
    let mut stack = vec![root];
    let mut ids = Vec::new();
    while let Some(n) = stack.pop() {
        ids.push(n.session_id.clone());
        stack.extend(n.children.iter());
        let Ok(file) = read_session_file(&dir.join(format!("{}.jsonl", n.session_id))) else {
            continue;
        };
        for r in file.records {
            match r.event {
                // The parent's record is the one marked unsupported; the child's own end may not be.
                TraceEvent::SubagentCompleted {
                    child_session_id,
                    result,
                    ..
                } => {
                    results.insert(child_session_id, result);
                }
                TraceEvent::RunEnded {
                    result: Some(result),
                    ..
                } => {
                    own.insert(r.session_id, result);
                }
                TraceEvent::AnswerChecked { references, trust } => answers
                    .entry(r.session_id)
                    .or_default()
                    .push((references, trust)),
                _ => {}
            }
        }
    }
    let mut out = Notes::new();
    for id in ids {
        let mut lines = Vec::new();
        if let Some(result) = results.get(&id).or_else(|| own.get(&id)) {
            result_lines(result, &mut lines);
        }
        for (references, trust) in answers.get(&id).into_iter().flatten() {
            lines.push(format!("answer references: {}", trust.line()));
            list(references, &mut lines);
        }
        if !lines.is_empty() {
            out.insert(id, lines);
        }
    }
    out
}

fn result_lines(result: &SubagentResult, lines: &mut Vec<String>) {
    match (&result.trust, result.evidence.is_empty()) {
        (Some(trust), _) => lines.push(format!("evidence: {}", trust.line())),
        (None, false) => lines.push("evidence: provenance not recorded".to_string()),
        (None, true) => {}
    }
    if let Some(why) = result.unsupported {
        lines.push(format!(
            "unsupported: {}",
            match why {
                Unsupported::NoSeenEvidence =>
                    "no seen evidence — findings, but no citation both valid and seen by the subagent",
                Unsupported::NoToolCalls => "no tool calls — written after zero tool calls",
            }
        ));
    }
    list(&result.evidence, lines);
}

/// The citations that do not hold, one per line: the grounded ones are in the count.
fn list(items: &[CheckedEvidence], lines: &mut Vec<String>) {
    let bad: Vec<&CheckedEvidence> = items
        .iter()
        .filter(|e| e.trust.is_some_and(|t| t != EvidenceTrust::Grounded))
        .collect();
    for e in bad.iter().take(MAX_LISTED) {
        let Some(t) = e.trust else { continue };
        let word = match t {
            EvidenceTrust::Grounded => "seen",
            EvidenceTrust::FileSeen => "file seen, line not",
            EvidenceTrust::Unseen => "unseen: never opened",
            EvidenceTrust::QuoteMismatch => "quote differs from the file",
            EvidenceTrust::Stale => "stale: changed since it was read",
            EvidenceTrust::Invalid => "invalid",
        };
        let state = if t == EvidenceTrust::Invalid {
            format!(
                " ({})",
                serde_json::to_string(&e.state)
                    .unwrap_or_default()
                    .trim_matches('"')
            )
        } else {
            String::new()
        };
        lines.push(format!("  {} — {word}{state}", e.raw));
    }
    if bad.len() > MAX_LISTED {
        lines.push(format!("  … and {} more", bad.len() - MAX_LISTED));
    }
}
