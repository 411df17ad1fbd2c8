//! Checking recorded evidence again, later: when a person opens a citation (live, or from a run in
//! History), the file may have changed since the agent read it. Provenance and the quote are
//! facts of the run and are kept; existence, the current text and staleness are checked anew.

use std::path::Path;

use canopy_protocol::{CheckedEvidence, EvidenceState, Provenance};

use super::judge::Changed;
use crate::contract::check_evidence;

/// `items` checked against the project as it is now. An item without a stamp (never read, or a
/// trace written before provenance) cannot go stale; its existence and text are still refreshed.
pub fn recheck(items: &[CheckedEvidence], project_root: &Path) -> Vec<CheckedEvidence> {
    let mut changed = Changed::default();
    items
        .iter()
        .map(|item| recheck_one(item, project_root, &mut changed))
        .collect()
}

fn recheck_one(
    item: &CheckedEvidence,
    project_root: &Path,
    changed: &mut Changed,
) -> CheckedEvidence {
    let now = check_evidence(&item.raw, project_root);
    let mut out = item.clone();
    // What the agent saw, when only the earlier check knew it: the line it cited was on screen and
    // unchanged then, so that check's text is the "then" of a later change.
    if out.seen_text.is_none()
        && item.provenance == Some(Provenance::Seen)
        && !item.stale
        && item.state == EvidenceState::Valid
    {
        out.seen_text = item.text.clone();
    }
    out.state = now.state;
    out.text = now.text;
    out.stale = match (&item.read_stamp, now.state) {
        (Some(s), EvidenceState::Valid) => changed.since(project_root, &item.path, s),
        _ => false,
    };
    out.trust = out.derive_trust();
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use canopy_protocol::EvidenceTrust;
    use canopy_tools::stamp;

    fn seen(root: &Path, raw: &str, path: &str, line: u32) -> CheckedEvidence {
        let mut e = check_evidence(raw, root);
        assert_eq!(e.state, EvidenceState::Valid);
        e.provenance = Some(Provenance::Seen);
        e.read_stamp = Some(stamp::stamp_file(&root.join(path)).unwrap());
        e.line = line;
        e.trust = e.derive_trust();
        e
    }

    #[test]
    fn an_edit_after_the_read_makes_a_seen_citation_stale_and_keeps_then_and_now() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        let item = seen(&root, "a.rs:2", "a.rs", 2);
        assert_eq!(item.trust, Some(EvidenceTrust::Grounded));

        let same = recheck(std::slice::from_ref(&item), &root);
        assert!(!same[0].stale);
        assert_eq!(same[0].trust, Some(EvidenceTrust::Grounded));

        std::fs::write(root.join("a.rs"), "fn a() {}\nfn renamed() {}\n").unwrap();
        let after = recheck(&[item], &root);
        assert!(after[0].stale);
        assert_eq!(after[0].trust, Some(EvidenceTrust::Stale));
        assert_eq!(after[0].seen_text.as_deref(), Some("fn b() {}"));
        assert_eq!(after[0].text.as_deref(), Some("fn renamed() {}"));
    }

    #[test]
    fn a_deleted_file_is_invalid_and_an_old_trace_item_stays_without_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "x\n").unwrap();
        let item = seen(&root, "a.rs:1", "a.rs", 1);
        let old = check_evidence("a.rs:1", &root);
        std::fs::remove_file(root.join("a.rs")).unwrap();
        let after = recheck(&[item, old], &root);
        assert_eq!(after[0].state, EvidenceState::MissingFile);
        assert_eq!(after[0].trust, Some(EvidenceTrust::Invalid));
        assert_eq!(after[1].state, EvidenceState::MissingFile);
        assert_eq!(after[1].provenance, None);
        assert_eq!(after[1].trust, None, "provenance not recorded stays so");
    }
}
