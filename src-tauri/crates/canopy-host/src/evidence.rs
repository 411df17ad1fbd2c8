//! Evidence opened again later: a person looks at a subagent's citations (or the main answer's
//! references) live or from History, and the files may have changed since the agent read them. The
//! recorded items are checked against the project as it is now
//! ([`canopy_runtime::provenance::recheck`]: existence, current text, staleness from the read
//! stamp) and counted again; provenance and quotes are facts of the run and stay as recorded. The
//! trace is never written: the host answers, the UI shows the fresh state beside it.

use std::path::{Path, PathBuf};

use canopy_protocol::{CheckedEvidence, TrustSummary};
use canopy_runtime::provenance;
use serde::Serialize;
use ts_rs::TS;

use crate::error::{HostError, HostResult};

/// Most items one call re-checks: a result cites a handful, an answer a few dozen; anything far
/// beyond is not evidence a person opened.
pub const MAX_RECHECK_ITEMS: usize = 2000;

/// Recorded evidence checked against the disk now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct RecheckedEvidence {
    /// The items in the order given, with `state`, `text`, `stale` and `trust` as they are now.
    pub items: Vec<CheckedEvidence>,
    /// The items counted by trust now; `null` when none has provenance (a trace written before it
    /// was recorded: the UI says "provenance not recorded").
    pub trust: Option<TrustSummary>,
}

/// Re-checks `items` against the project at `root` (the open project), off the async threads:
/// hashing a cited file to tell whether it changed reads all of it.
pub async fn recheck(root: &Path, items: Vec<CheckedEvidence>) -> HostResult<RecheckedEvidence> {
    if items.len() > MAX_RECHECK_ITEMS {
        return Err(HostError::InvalidArgument(format!(
            "{} evidence items; at most {MAX_RECHECK_ITEMS} are re-checked at once",
            items.len()
        )));
    }
    let root: PathBuf = root.to_path_buf();
    tokio::task::spawn_blocking(move || recheck_now(&root, &items))
        .await
        .map_err(|e| HostError::Blocking(format!("re-checking evidence stopped: {e}")))
}

/// [`recheck`] on the calling thread.
pub fn recheck_now(root: &Path, items: &[CheckedEvidence]) -> RecheckedEvidence {
    let items = provenance::recheck(items, root);
    let trust = TrustSummary::of(&items);
    RecheckedEvidence { items, trust }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use canopy_protocol::{EvidenceState, EvidenceTrust, Provenance};

    /// A citation as the runtime records it for a line the agent was shown: valid, seen, stamped
    /// with the file as read.
    fn recorded(root: &Path, raw: &str, path: &str, line: u32, text: &str) -> CheckedEvidence {
        let stamp = canopy_tools::stamp::stamp_file(&root.join(path)).unwrap();
        serde_json::from_value(serde_json::json!({
            "raw": raw, "path": path, "line": line, "end_line": null,
            "state": "valid", "text": text, "provenance": "seen",
            "read_stamp": stamp, "trust": "grounded",
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_file_edited_after_the_agent_read_it_comes_back_stale_with_then_and_now() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/auth.rs"),
            "use std::io;\nfn check_token() {}\n",
        )
        .unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        let items = vec![
            recorded(
                &root,
                "src/auth.rs:2",
                "src/auth.rs",
                2,
                "fn check_token() {}",
            ),
            recorded(&root, "src/main.rs:1", "src/main.rs", 1, "fn main() {}"),
        ];

        let before = recheck(&root, items.clone()).await.unwrap();
        assert_eq!(before.items[0].trust, Some(EvidenceTrust::Grounded));
        assert_eq!(
            before.trust.unwrap().line(),
            "2 of 2 citations seen and valid"
        );

        // Another process edits the file the agent read.
        std::fs::write(
            root.join("src/auth.rs"),
            "use std::io;\nfn verify_token() {}\n",
        )
        .unwrap();
        let after = recheck(&root, items.clone()).await.unwrap();
        let auth = &after.items[0];
        assert!(auth.stale);
        assert_eq!(auth.trust, Some(EvidenceTrust::Stale));
        assert_eq!(
            auth.provenance,
            Some(Provenance::Seen),
            "provenance is a fact of the run"
        );
        assert_eq!(auth.seen_text.as_deref(), Some("fn check_token() {}"));
        assert_eq!(auth.text.as_deref(), Some("fn verify_token() {}"));
        assert_eq!(after.items[1].trust, Some(EvidenceTrust::Grounded));
        assert_eq!(
            after.trust.unwrap().line(),
            "1 of 2 citations seen and valid · 1 stale"
        );

        // Deleted: no longer valid at all.
        std::fs::remove_file(root.join("src/main.rs")).unwrap();
        let gone = recheck(&root, items).await.unwrap();
        assert_eq!(gone.items[1].state, EvidenceState::MissingFile);
        assert_eq!(gone.items[1].trust, Some(EvidenceTrust::Invalid));
    }

    #[tokio::test]
    async fn an_old_trace_item_is_refreshed_but_stays_without_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "one\ntwo\n").unwrap();
        let old: CheckedEvidence = serde_json::from_value(serde_json::json!({
            "raw": "a.rs:2", "path": "a.rs", "line": 2, "end_line": null,
            "state": "valid", "text": "two",
        }))
        .unwrap();
        std::fs::write(root.join("a.rs"), "one\n").unwrap();
        let out = recheck(&root, vec![old]).await.unwrap();
        assert_eq!(out.items[0].state, EvidenceState::LineOutOfRange);
        assert_eq!(out.items[0].trust, None);
        assert_eq!(out.trust, None, "the UI says provenance not recorded");
    }

    #[tokio::test]
    async fn a_path_outside_the_project_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s\n").unwrap();
        let root = root.canonicalize().unwrap();
        let mut item = recorded(&root.join(".."), "../secret.txt:1", "secret.txt", 1, "s");
        item.path = "../secret.txt".into();
        let out = recheck(&root, vec![item]).await.unwrap();
        assert_eq!(out.items[0].state, EvidenceState::OutsideProject);
        assert_eq!(out.items[0].text, None);
        assert!(!out.items[0].stale);
        assert_eq!(out.items[0].trust, Some(EvidenceTrust::Invalid));
    }

    #[tokio::test]
    async fn too_many_items_are_refused_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let item: CheckedEvidence = serde_json::from_value(serde_json::json!({
            "raw": "a.rs:1", "path": "a.rs", "line": 1, "end_line": null,
            "state": "valid", "text": "x",
        }))
        .unwrap();
        let err = recheck(dir.path(), vec![item; MAX_RECHECK_ITEMS + 1])
            .await
            .unwrap_err();
        assert!(matches!(err, HostError::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("at most 2000"), "{err}");
    }
}
