//! Judging checked evidence by what the citing agent was shown: provenance from its tracker,
//! staleness against the stamp it read, the line as its tool results showed it (from its own
//! history, read by the tool that wrote each result), trust, and whether a result as a whole is
//! supported.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use canopy_protocol::{
    CheckedEvidence, EvidenceState, EvidenceTrust, FileStamp, Message, Provenance, SubagentResult,
    TrustSummary, Unsupported,
};
use canopy_tools::paths::{self, Access};
use canopy_tools::secrets::SecretFiles;
use canopy_tools::{stamp, Tool};

use super::{FileSeen, Tracker};
use crate::contract::cap_display;

/// Whether cited files changed since they were stamped. Hashing a file again is the costly part,
/// so each file is hashed once per stamp however many citations point into it (a model can cite
/// one big file thousands of times).
#[derive(Default)]
pub(crate) struct Changed {
    known: HashMap<(String, String), bool>,
}

impl Changed {
    /// Whether `path` (project-relative) no longer holds what `stamp` recorded; a file that
    /// cannot be resolved or read has changed.
    pub(crate) fn since(&mut self, project_root: &Path, path: &str, stamp: &FileStamp) -> bool {
        *self
            .known
            .entry((path.to_string(), stamp.hash.clone()))
            .or_insert_with(|| {
                paths::resolve(project_root, path, Access::Read)
                    .map(|r| !stamp::unchanged(&r.abs, stamp))
                    .unwrap_or(true)
            })
    }
}

/// Sets `provenance`, `read_stamp`, `stale` and `trust` of each item from `seen` (what the agent,
/// or for the main answer any agent of the run, was shown) and the project as it is now.
pub fn judge(evidence: &mut [CheckedEvidence], seen: &Tracker, project_root: &Path) {
    let found = lookups(evidence, seen);
    judge_found(evidence, found, project_root, &|| false);
}

/// What `seen` knows of each item's file, in order: all a judgement needs of the tracker, so a
/// shared tracker is locked only for this and not while files are read.
pub fn lookups(evidence: &[CheckedEvidence], seen: &Tracker) -> Vec<Option<FileSeen>> {
    evidence
        .iter()
        .map(|item| {
            if item.state == EvidenceState::Unparseable {
                None
            } else {
                seen.lookup(&item.path, item.line, item.end_line)
            }
        })
        .collect()
}

/// [`judge`] from [`lookups`] taken earlier; `false` when `stop` fired between items (the items
/// from there on are left unjudged).
pub fn judge_found(
    evidence: &mut [CheckedEvidence],
    found: Vec<Option<FileSeen>>,
    project_root: &Path,
    stop: &dyn Fn() -> bool,
) -> bool {
    let mut changed = Changed::default();
    for (item, found) in evidence.iter_mut().zip(found) {
        if stop() {
            return false;
        }
        item.provenance = Some(found.as_ref().map_or(Provenance::Unseen, |f| f.provenance));
        item.read_stamp = found.and_then(|f| f.stamp);
        item.stale = match (&item.read_stamp, item.state) {
            (Some(s), EvidenceState::Valid) => changed.since(project_root, &item.path, s),
            _ => false,
        };
        item.trust = item.derive_trust();
    }
    true
}

/// Fills `seen_text` of each item whose first cited line is in one of the agent's own tool
/// results still in `history` (the latest showing wins), as the tool that showed it reads its own
/// output ([`Tool::shown_line`]); `tools` are the agent's, looked up by the name each call used. A
/// result cut down to make room no longer holds its lines, and then the text stays unknown. A
/// file `secrets` withholds gets no text, whatever a result showed.
pub fn fill_seen_text(
    evidence: &mut [CheckedEvidence],
    history: &[Message],
    tools: &[Arc<dyn Tool>],
    project_root: &Path,
    secrets: &SecretFiles,
) {
    if evidence
        .iter()
        .all(|e| e.provenance != Some(Provenance::Seen))
    {
        return;
    }
    // Each call's arguments by id, for the tool to know which file its output was of.
    let mut calls: HashMap<&str, serde_json::Value> = HashMap::new();
    for m in history {
        if let Message::Assistant { tool_calls, .. } = m {
            for c in tool_calls {
                let args = serde_json::from_str(&c.arguments).unwrap_or(serde_json::Value::Null);
                calls.insert(c.id.as_str(), args);
            }
        }
    }
    let wanted = |e: &CheckedEvidence| {
        e.provenance == Some(Provenance::Seen) && secrets.withheld(Path::new(&e.path)).is_none()
    };
    // Each cited line is looked for once however many items cite it, in one pass over the results
    // from the latest, and a line stops being looked for at its latest showing.
    let mut keys = std::collections::HashSet::new();
    let mut pending: Vec<(String, u32)> = evidence
        .iter()
        .filter(|e| wanted(e))
        .map(|e| (e.path.clone(), e.line))
        .filter(|k| keys.insert(k.clone()))
        .collect();
    let mut found: HashMap<(String, u32), String> = HashMap::new();
    for m in history.iter().rev() {
        if pending.is_empty() {
            break;
        }
        let Message::ToolResult {
            call_id,
            name,
            content,
            is_error: false,
        } = m
        else {
            continue;
        };
        let Some(tool) = tools.iter().find(|t| t.name() == name.as_str()) else {
            continue;
        };
        let args = calls
            .get(call_id.as_str())
            .unwrap_or(&serde_json::Value::Null);
        pending.retain(|(path, line)| {
            match tool.shown_line(project_root, args, content, path, *line) {
                Some(text) => {
                    found.insert((path.clone(), *line), cap_display(&text));
                    false
                }
                None => true,
            }
        });
    }
    for item in evidence.iter_mut().filter(|e| wanted(e)) {
        item.seen_text = found.get(&(item.path.clone(), item.line)).cloned();
    }
}

/// Sets the result's trust summary and its `unsupported` mark: written after zero tool calls, or
/// findings without a single citation that is both valid and seen.
pub fn mark_support(result: &mut SubagentResult, tool_calls: u32) {
    result.trust = TrustSummary::of(&result.evidence);
    let grounded_somewhere = result
        .evidence
        .iter()
        .any(|e| e.state == EvidenceState::Valid && e.provenance == Some(Provenance::Seen));
    result.unsupported = if tool_calls == 0 {
        Some(Unsupported::NoToolCalls)
    } else if !result.findings.is_empty() && !grounded_somewhere {
        Some(Unsupported::NoSeenEvidence)
    } else {
        None
    };
}

/// The items a corrective turn names: unseen by the agent, or not valid on disk.
pub fn offending(evidence: &[CheckedEvidence]) -> Vec<&CheckedEvidence> {
    evidence
        .iter()
        // By provenance and state, not by the trust word: a wrong quote or a stale file ranks
        // above `unseen`, and must not hide a citation of a file the agent never opened.
        .filter(|e| {
            e.provenance.is_some()
                && (e.provenance == Some(Provenance::Unseen) || e.state != EvidenceState::Valid)
        })
        .collect()
}

/// Most citations one notice to a model names (the corrective turn's, a `Task` result's); the
/// rest are counted, so a result citing hundreds of missing lines does not make a notice as long.
pub const MAX_LISTED: usize = 20;

/// One line per item for people and models: `[unseen] src/x.rs:12`, with why when invalid.
pub fn describe(item: &CheckedEvidence) -> String {
    let word = match item.trust {
        Some(EvidenceTrust::Invalid) => match item.state {
            EvidenceState::MissingFile => "invalid: no such file",
            EvidenceState::LineOutOfRange => "invalid: line out of range",
            EvidenceState::OutsideProject => "invalid: outside the project",
            EvidenceState::Unparseable => "invalid: not path:line",
            EvidenceState::Valid => "invalid",
        },
        Some(EvidenceTrust::Unseen) => "unseen",
        Some(EvidenceTrust::FileSeen) => "file seen, line not",
        Some(EvidenceTrust::QuoteMismatch) => "quote mismatch",
        Some(EvidenceTrust::Stale) => "stale",
        Some(EvidenceTrust::Grounded) => "seen",
        None => "provenance not recorded",
    };
    format!("[{word}] {}", item.raw.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_protocol::{SeenFile, ToolCall};

    use crate::contract::check_evidence;

    fn project() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "fn a() {}\nfn b() {}\nfn c() {}\n").unwrap();
        std::fs::write(root.join("b.rs"), "one\ntwo\n").unwrap();
        (dir, root)
    }

    #[test]
    fn each_item_gets_its_provenance_stamp_staleness_and_trust() {
        let (_dir, root) = project();
        let mut seen = Tracker::new();
        seen.record(&[
            SeenFile {
                path: "a.rs".into(),
                lines: vec![[1, 2]],
                stamp: Some(stamp::stamp_file(&root.join("a.rs")).unwrap()),
                edit: None,
            },
            SeenFile {
                path: "b.rs".into(),
                lines: vec![],
                stamp: None,
                edit: None,
            },
        ]);
        let mut items: Vec<CheckedEvidence> =
            ["a.rs:2", "a.rs:2-3", "b.rs:1", "c.rs:1", "a.rs:9", "a.rs"]
                .iter()
                .map(|r| check_evidence(r, &root))
                .collect();
        judge(&mut items, &seen, &root);
        let trust: Vec<_> = items.iter().map(|e| e.trust.unwrap()).collect();
        assert_eq!(
            trust,
            [
                EvidenceTrust::Grounded,
                EvidenceTrust::FileSeen,
                EvidenceTrust::FileSeen,
                EvidenceTrust::Invalid,
                EvidenceTrust::Invalid,
                EvidenceTrust::Invalid,
            ]
        );
        assert_eq!(items[3].provenance, Some(Provenance::Unseen));
        assert!(items[0].read_stamp.is_some());
        assert!(items[2].read_stamp.is_none(), "a listing read no content");
        std::fs::write(root.join("a.rs"), "fn a() {}\nfn B() {}\nfn c() {}\n").unwrap();
        let mut again = vec![check_evidence("a.rs:2", &root)];
        judge(&mut again, &seen, &root);
        assert!(again[0].stale);
        assert_eq!(again[0].trust, Some(EvidenceTrust::Stale));
    }

    #[test]
    fn an_unseen_citation_with_a_wrong_quote_is_still_sent_back() {
        let (_dir, root) = project();
        let mut items = vec![check_evidence("a.rs:1", &root)];
        items[0].quote = Some("fn invented() {}".into());
        items[0].quote_matches = Some(false);
        judge(&mut items, &Tracker::new(), &root);
        assert_eq!(items[0].trust, Some(EvidenceTrust::QuoteMismatch));
        assert_eq!(items[0].provenance, Some(Provenance::Unseen));
        assert_eq!(offending(&items).len(), 1, "made up twice is still made up");
    }

    #[test]
    fn many_citations_of_files_judged_once_each_still_get_their_own_staleness() {
        let (_dir, root) = project();
        let mut seen = Tracker::new();
        for f in ["a.rs", "b.rs"] {
            seen.record(&[SeenFile {
                path: f.into(),
                lines: vec![[1, 2]],
                stamp: Some(stamp::stamp_file(&root.join(f)).unwrap()),
                edit: None,
            }]);
        }
        std::fs::write(root.join("b.rs"), "one\nTWO\n").unwrap();
        let refs: Vec<String> = (0..500)
            .map(|i| format!("{}:{}", ["a.rs", "b.rs"][i % 2], 1 + i % 2))
            .collect();
        let mut items: Vec<CheckedEvidence> =
            refs.iter().map(|r| check_evidence(r, &root)).collect();
        judge(&mut items, &seen, &root);
        for item in &items {
            assert_eq!(item.stale, item.path == "b.rs", "{}", item.raw);
        }
    }

    #[test]
    fn seen_text_comes_from_the_agents_own_read_and_grep_results() {
        let (_dir, root) = project();
        let history = vec![
            Message::user("look at a.rs:3, it says fn zzz"),
            Message::assistant(
                "",
                vec![
                    ToolCall {
                        id: "c1".into(),
                        name: "Read".into(),
                        arguments: r#"{"path":"./a.rs"}"#.into(),
                    },
                    ToolCall {
                        id: "c2".into(),
                        name: "Grep".into(),
                        arguments: r#"{"pattern":"two","output_mode":"content"}"#.into(),
                    },
                ],
            ),
            Message::ToolResult {
                call_id: "c1".into(),
                name: "Read".into(),
                content: "     1\tfn a() {}\n     2\tfn b() {}\n".into(),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "c2".into(),
                name: "Grep".into(),
                content: "b.rs:2:two\n".into(),
                is_error: false,
            },
        ];
        let mut items: Vec<CheckedEvidence> = ["a.rs:2", "b.rs:2", "a.rs:3"]
            .iter()
            .map(|r| {
                let mut e = check_evidence(r, &root);
                e.provenance = Some(Provenance::Seen);
                e
            })
            .collect();
        fill_seen_text(
            &mut items,
            &history,
            &canopy_tools::builtin_tools(),
            &root,
            &SecretFiles::default(),
        );
        assert_eq!(items[0].seen_text.as_deref(), Some("fn b() {}"));
        assert_eq!(items[1].seen_text.as_deref(), Some("two"));
        assert_eq!(
            items[2].seen_text, None,
            "the task prompt is not a tool result"
        );
    }

    /// Grep that counts how often the host asks it for a line.
    struct CountingGrep(std::sync::atomic::AtomicUsize);

    #[async_trait::async_trait]
    impl Tool for CountingGrep {
        fn name(&self) -> &str {
            "Grep"
        }
        fn spec(&self) -> canopy_protocol::ToolSpec {
            canopy_tools::GrepTool.spec()
        }
        fn kind(&self) -> canopy_protocol::ToolKind {
            canopy_protocol::ToolKind::Read
        }
        fn read_only(&self) -> bool {
            true
        }
        fn summarize(&self, _args: &serde_json::Value) -> String {
            String::new()
        }
        fn shown_line(
            &self,
            root: &Path,
            args: &serde_json::Value,
            output: &str,
            path: &str,
            line: u32,
        ) -> Option<String> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            canopy_tools::GrepTool.shown_line(root, args, output, path, line)
        }
        async fn run(
            &self,
            _args: serde_json::Value,
            _ctx: &canopy_tools::ToolContext,
        ) -> Result<canopy_tools::ToolOutput, canopy_tools::ToolError> {
            Err(canopy_tools::ToolError::Failed(
                "not run in this test".into(),
            ))
        }
    }

    #[test]
    fn each_cited_line_is_looked_for_once_per_result_until_its_latest_showing() {
        let (_dir, root) = project();
        let mut history = Vec::new();
        for i in 0..100 {
            let id = format!("c{i}");
            history.push(Message::assistant(
                "",
                vec![ToolCall {
                    id: id.clone(),
                    name: "Grep".into(),
                    arguments: r#"{"pattern":"fn","output_mode":"content"}"#.into(),
                }],
            ));
            history.push(Message::ToolResult {
                call_id: id,
                name: "Grep".into(),
                content: format!("a.rs:1:fn a() {{}} #{i}\na.rs:2:fn b() {{}}\n"),
                is_error: false,
            });
        }
        // 200 citations of two lines, and one of a line no result shows.
        let mut items: Vec<CheckedEvidence> = (0..201)
            .map(|i| {
                let r = match i {
                    200 => "a.rs:3".to_string(),
                    _ => format!("a.rs:{}", 1 + i % 2),
                };
                let mut e = check_evidence(&r, &root);
                e.provenance = Some(Provenance::Seen);
                e
            })
            .collect();
        let grep = Arc::new(CountingGrep(Default::default()));
        let tools: Vec<Arc<dyn Tool>> = vec![grep.clone()];
        fill_seen_text(&mut items, &history, &tools, &root, &SecretFiles::default());
        assert_eq!(
            items[0].seen_text.as_deref(),
            Some("fn a() {} #99"),
            "the latest showing"
        );
        assert_eq!(items[199].seen_text.as_deref(), Some("fn b() {}"));
        assert_eq!(items[200].seen_text, None);
        // The two shown lines once (the last result), the unshown one in every result.
        let asked = grep.0.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(asked, 2 + 100, "{asked} look-ups");
    }

    #[test]
    fn a_result_is_unsupported_after_zero_tool_calls_or_without_seen_valid_evidence() {
        let (_dir, root) = project();
        let mut result = crate::contract::validate(
            crate::profiles::ResultContract::Explore,
            r#"{"status":"completed","summary":"s","findings":["f"],"evidence":["a.rs:1"]}"#,
            &root,
        )
        .unwrap();
        judge(&mut result.evidence, &Tracker::new(), &root);
        mark_support(&mut result, 0);
        assert_eq!(result.unsupported, Some(Unsupported::NoToolCalls));
        mark_support(&mut result, 3);
        assert_eq!(result.unsupported, Some(Unsupported::NoSeenEvidence));
        assert_eq!(result.trust.unwrap().unseen, 1);
        assert_eq!(offending(&result.evidence).len(), 1);
        assert_eq!(describe(&result.evidence[0]), "[unseen] a.rs:1");
        result.findings.clear();
        mark_support(&mut result, 3);
        assert_eq!(result.unsupported, None, "nothing claimed, nothing to back");
    }
}
