//! Evidence provenance end to end (#12): what a subagent's own tool results showed it decides
//! whether each citation is seen, file-seen or unseen; a file edited after the read makes a
//! citation stale (at validation, and when the evidence is re-checked from the trace file later,
//! as History does); a wrong quote is a mismatch; a result written after zero tool calls is
//! unsupported and the parent is told; the one corrective turn drops an unseen citation; and the
//! main agent's answer gets the same check. Every assertion reads the trace files on disk.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use canopy_e2e::*;
use canopy_protocol::{
    CheckedEvidence, EvidenceState, EvidenceTrust, Provenance, ProviderKind, SeenFile,
    SubagentResult, TerminalReason, ToolStatus, TraceEvent, TrustSummary, Unsupported,
};
use canopy_runtime::{provenance, trace_reader, ApprovalAnswer};
use canopy_test_support::{call, Script, Turn};
use serde_json::json;

/// The events of one session as its trace file on disk holds them.
fn file_events(scenario: &Scenario, session: &str) -> Vec<TraceEvent> {
    trace_reader::read_session_file(&scenario.traces().join(format!("{session}.jsonl")))
        .expect("read the trace file")
        .records
        .into_iter()
        .map(|r| r.event)
        .collect()
}

/// The result the root's trace file records for its (only) child.
fn completed_result(scenario: &Scenario, ran: &Ran) -> SubagentResult {
    file_events(scenario, &ran.root)
        .into_iter()
        .find_map(|e| match e {
            TraceEvent::SubagentCompleted { result, .. } => Some(result),
            _ => None,
        })
        .expect("subagent_completed in the root trace")
}

fn rejections(scenario: &Scenario, session: &str) -> Vec<String> {
    file_events(scenario, session)
        .into_iter()
        .filter_map(|e| match e {
            TraceEvent::ResultRejected { error, .. } => Some(error),
            _ => None,
        })
        .collect()
}

fn trusts(evidence: &[CheckedEvidence]) -> Vec<(&str, Option<EvidenceTrust>)> {
    evidence.iter().map(|e| (e.raw.as_str(), e.trust)).collect()
}

fn result_json(findings: &[&str], evidence: serde_json::Value) -> String {
    json!({"status": "completed", "summary": "what I found", "findings": findings, "evidence": evidence, "unresolved_questions": []}).to_string()
}

fn one_child(child: canopy_test_support::Rule) -> Script {
    Script::new()
        .rule(main_agent_calls(
            vec![task("Look", "TASK-P: where is login?")],
            "Both searches are done.",
        ))
        .rule(child)
}

#[tokio::test]
async fn a_read_line_is_seen_a_listed_file_is_file_seen_and_a_wrong_quote_is_a_mismatch() {
    let script = one_child(
        explore_rule("TASK-P")
            .turn(Turn::tools(vec![
                call("Read", json!({"path": "src/auth.rs"})),
                call("Grep", json!({"pattern": "session_timeout"})),
            ]))
            .turn(Turn::text(result_json(
                &["login is in src/auth.rs"],
                json!([
                    {"ref": "src/auth.rs:3", "quote": "pub fn login(user: &str, password: &str) -> bool {"},
                    {"ref": "src/auth.rs:8", "quote": "password.len() > 8"},
                    "src/config.rs:2"
                ]),
            ))),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    let child = &ran.children()[0];

    // The child's trace says what each tool result showed it.
    let seen: Vec<_> = file_events(&scenario, child)
        .into_iter()
        .filter_map(|e| match e {
            TraceEvent::ToolCallEnd {
                tool, status, seen, ..
            } => Some((tool, status, seen)),
            _ => None,
        })
        .collect();
    assert_eq!(seen.len(), 2);
    let (tool, status, read) = &seen[0];
    assert_eq!((tool.as_str(), *status), ("Read", ToolStatus::Ok));
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].path, "src/auth.rs");
    assert_eq!(read[0].lines, vec![[1, 9]]);
    let stamp = read[0].stamp.as_ref().expect("a Read stamps the file");
    assert!(stamp.whole);
    assert!(canopy_tools::stamp::unchanged(
        &scenario.project().join("src/auth.rs"),
        stamp
    ));
    let (tool, _, grep) = &seen[1];
    assert_eq!(tool, "Grep");
    assert_eq!(grep.len(), 1, "{grep:?}");
    assert_eq!(grep[0].path, "src/config.rs");
    assert!(
        grep[0].lines.is_empty() && grep[0].stamp.is_none(),
        "only listed"
    );

    let result = completed_result(&scenario, &ran);
    assert_eq!(
        trusts(&result.evidence),
        [
            ("src/auth.rs:3", Some(EvidenceTrust::Grounded)),
            ("src/auth.rs:8", Some(EvidenceTrust::QuoteMismatch)),
            ("src/config.rs:2", Some(EvidenceTrust::FileSeen)),
        ]
    );
    let e = &result.evidence;
    assert_eq!(e[0].provenance, Some(Provenance::Seen));
    assert_eq!(e[0].quote_matches, Some(true));
    assert_eq!(e[0].read_stamp.as_ref(), Some(stamp));
    assert_eq!(
        e[0].seen_text.as_deref(),
        Some("pub fn login(user: &str, password: &str) -> bool {")
    );
    assert_eq!(e[1].provenance, Some(Provenance::Seen));
    assert_eq!(e[1].quote.as_deref(), Some("password.len() > 8"));
    assert_eq!(e[1].quote_matches, Some(false));
    assert_eq!(e[2].provenance, Some(Provenance::FileSeen));
    assert_eq!(e[2].read_stamp, None);
    assert_eq!(result.unsupported, None);
    let trust = result.trust.expect("a trust summary");
    assert_eq!(
        trust.line(),
        "1 of 3 citations seen and valid · 1 file seen, line not · 1 quote mismatch"
    );
    // Nothing was unseen or invalid: no corrective turn.
    assert!(rejections(&scenario, child).is_empty());
    assert_eq!(ran.model_calls(child), 2);
}

#[tokio::test]
async fn the_corrective_turn_sends_an_unseen_citation_back_once_and_it_is_dropped() {
    let script = one_child(
        explore_rule("TASK-P")
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/auth.rs"}),
            )]))
            .turn(Turn::text(result_json(
                &["login is in src/auth.rs", "the README mentions it"],
                json!(["src/auth.rs:3", "README.md:3"]),
            )))
            .turn(Turn::text(result_json(
                &["login is in src/auth.rs"],
                json!(["src/auth.rs:3"]),
            ))),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    let rejected = rejections(&scenario, child);
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert!(
        rejected[0].contains("[unseen] README.md:3"),
        "{}",
        rejected[0]
    );
    assert!(
        !rejected[0].contains("src/auth.rs:3"),
        "only offending items"
    );
    // The corrective request names the item, asks to fix or drop it, and offers no tools.
    let corrective = scenario
        .server
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("TASK-P"))
        .nth(2)
        .expect("the corrective request")
        .body;
    let text = corrective.to_string();
    assert!(text.contains("[unseen] README.md:3"), "{text}");
    assert!(text.contains("Fix or drop each"), "{text}");
    assert_eq!(corrective["tool_choice"], json!("none"));

    let result = completed_result(&scenario, &ran);
    assert_eq!(
        trusts(&result.evidence),
        [("src/auth.rs:3", Some(EvidenceTrust::Grounded))]
    );
    assert_eq!(result.findings, ["login is in src/auth.rs"]);
    assert_eq!(result.unsupported, None);
    assert_eq!(
        result.trust,
        Some(TrustSummary {
            total: 1,
            grounded: 1,
            ..TrustSummary::default()
        })
    );
    assert_eq!(ran.model_calls(child), 3, "one corrective call, no more");
}

#[tokio::test]
async fn a_result_after_zero_tool_calls_is_unsupported_and_the_parent_is_told() {
    let script = one_child(explore_rule("TASK-P").turn(Turn::text(result_json(
        &["login is in src/auth.rs"],
        json!(["src/auth.rs:3"]),
    ))));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    let child = &ran.children()[0];
    // Sent back once; the same answer again is accepted, marked, and is not a failure.
    assert_eq!(rejections(&scenario, child).len(), 1);
    assert_eq!(ran.model_calls(child), 2);
    let result = completed_result(&scenario, &ran);
    assert_eq!(result.unsupported, Some(Unsupported::NoToolCalls));
    assert_eq!(result.evidence[0].state, EvidenceState::Valid);
    assert_eq!(result.evidence[0].provenance, Some(Provenance::Unseen));
    assert_eq!(
        result.trust.map(|t| t.line()),
        Some("0 of 1 citation seen and valid · 1 unseen".to_string())
    );
    // The parent's Task result says so, and the parent model read it.
    let task_output = file_events(&scenario, &ran.root)
        .into_iter()
        .find_map(|e| match e {
            TraceEvent::ToolCallEnd { tool, output, .. } if tool == "Task" => Some(output),
            _ => None,
        })
        .expect("the Task result");
    for needle in [
        "Citations: 0 of 1 citation seen and valid · 1 unseen.",
        "UNSUPPORTED: the subagent wrote this result after zero tool calls",
        "[unseen] src/auth.rs:3",
    ] {
        assert!(task_output.contains(needle), "{needle}: {task_output}");
    }
    let parent_last = scenario.last_request();
    assert!(
        parent_last.contains("UNSUPPORTED: the subagent wrote this result after zero tool calls"),
        "{parent_last}"
    );
    // The main answer cites nothing: no answer_checked.
    assert!(!file_events(&scenario, &ran.root)
        .iter()
        .any(|e| matches!(e, TraceEvent::AnswerChecked { .. })));
}

const CONFIG_EDITED: &str = "pub struct Config {\n    pub session_timeout_ms: u64,\n}\n";
const CONFIG_LINE_2: &str = "    pub session_timeout_secs: u64,";

fn reads_config() -> Script {
    one_child(
        explore_rule("TASK-P")
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/config.rs"}),
            )]))
            // Time for the edit below to land before the answer is validated.
            .turn(
                Turn::text(result_json(
                    &["the timeout is in seconds"],
                    json!(["src/config.rs:2"]),
                ))
                .first_byte_delay_ms(1_500),
            ),
    )
}

#[tokio::test]
async fn a_file_edited_after_the_subagent_read_it_is_stale_at_validation_and_when_reopened() {
    let scenario = Scenario::start(reads_config()).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let config: PathBuf = scenario.project().join("src/config.rs");
    let edited = Arc::new(AtomicBool::new(false));
    let (flag, path) = (edited.clone(), config.clone());
    // Another process edits the file as soon as the child's Read has returned.
    let ran = scenario
        .run_with(&rt, None, "go", move |r, _| {
            if matches!(&r.event, TraceEvent::ToolCallEnd { tool, .. } if tool == "Read")
                && !flag.swap(true, Ordering::SeqCst)
            {
                std::fs::write(&path, CONFIG_EDITED).unwrap();
            }
        })
        .await;
    assert!(edited.load(Ordering::SeqCst));
    let result = completed_result(&scenario, &ran);
    let e = &result.evidence[0];
    assert_eq!(e.provenance, Some(Provenance::Seen));
    assert!(e.stale, "{e:?}");
    assert_eq!(e.trust, Some(EvidenceTrust::Stale));
    assert_eq!(e.seen_text.as_deref(), Some(CONFIG_LINE_2), "then");
    assert_eq!(
        e.text.as_deref(),
        Some("    pub session_timeout_ms: u64,"),
        "now"
    );
    assert_eq!(result.trust.map(|t| t.stale), Some(1));

    // Reopened later from the trace file: still stale while the file differs, and no longer
    // once it holds what the subagent read again.
    let recheck =
        |root: &Path| provenance::recheck(&completed_result(&scenario, &ran).evidence, root);
    let later = recheck(scenario.project());
    assert!(later[0].stale);
    assert_eq!(later[0].trust, Some(EvidenceTrust::Stale));
    std::fs::write(
        &config,
        "pub struct Config {\n    pub session_timeout_secs: u64,\n}\n",
    )
    .unwrap();
    let restored = recheck(scenario.project());
    assert!(!restored[0].stale);
    assert_eq!(restored[0].trust, Some(EvidenceTrust::Grounded));
}

#[tokio::test]
async fn a_citation_grounded_at_the_end_of_the_run_is_stale_when_history_reopens_it_after_an_edit()
{
    let scenario = Scenario::start(reads_config()).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    let recorded = completed_result(&scenario, &ran).evidence;
    assert_eq!(recorded[0].trust, Some(EvidenceTrust::Grounded));
    assert!(!recorded[0].stale);
    assert_eq!(recorded[0].seen_text.as_deref(), Some(CONFIG_LINE_2));

    std::fs::write(scenario.project().join("src/config.rs"), CONFIG_EDITED).unwrap();
    // What History does with last week's run: load the evidence from the trace file, check again.
    let reopened = provenance::recheck(&recorded, scenario.project());
    assert!(reopened[0].stale);
    assert_eq!(reopened[0].trust, Some(EvidenceTrust::Stale));
    assert_eq!(
        reopened[0].provenance,
        Some(Provenance::Seen),
        "a fact of the run"
    );
    assert_eq!(reopened[0].seen_text.as_deref(), Some(CONFIG_LINE_2));
    assert_eq!(
        reopened[0].text.as_deref(),
        Some("    pub session_timeout_ms: u64,")
    );
}

#[tokio::test]
async fn the_main_answers_references_are_checked_against_what_any_agent_of_the_run_saw() {
    let answer = "Login is in `src/auth.rs:3` (the timeout is at src/config.rs:2); src/nope.rs:4 \
                  is gone. Docs: https://example.com/src/auth.rs:9, standup at 10:30.";
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Look", "TASK-P: where is login?")],
            answer,
        ))
        .rule(
            explore_rule("TASK-P")
                .turn(Turn::tools(vec![call(
                    "Read",
                    json!({"path": "src/auth.rs", "offset": 1, "limit": 5}),
                )]))
                .turn(Turn::text(result_json(
                    &["login is in src/auth.rs"],
                    json!(["src/auth.rs:3"]),
                ))),
        );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "where is login?").await;
    assert_eq!(ran.outcome.final_text.as_deref(), Some(answer));
    let events = file_events(&scenario, &ran.root);
    let n = events.len();
    assert!(matches!(events[n - 1], TraceEvent::RunEnded { .. }));
    let TraceEvent::AnswerChecked { references, trust } = &events[n - 2] else {
        panic!("answer_checked just before run_ended: {:?}", events[n - 2]);
    };
    assert_eq!(
        trusts(references),
        [
            ("src/auth.rs:3", Some(EvidenceTrust::Grounded)),
            ("src/config.rs:2", Some(EvidenceTrust::Unseen)),
            ("src/nope.rs:4", Some(EvidenceTrust::Invalid)),
        ],
        "the URL and the time are not references"
    );
    assert_eq!(references[2].state, EvidenceState::MissingFile);
    assert_eq!(
        trust.line(),
        "1 of 3 citations seen and valid · 1 unseen · 1 invalid"
    );
    // Seen by the subagent, not the main agent: the run's union counts it. One answer_checked.
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, TraceEvent::AnswerChecked { .. }))
            .count(),
        1
    );
}

/// A `Read` that ignores the output allowance (as a careless tool might): it prints all of
/// `big.txt` and claims to have shown every line. The host's own cut must narrow that claim.
struct CarelessRead;

#[async_trait::async_trait]
impl canopy_tools::Tool for CarelessRead {
    fn name(&self) -> &str {
        "Read"
    }
    fn spec(&self) -> canopy_protocol::ToolSpec {
        canopy_protocol::ToolSpec {
            name: "Read".into(),
            description: "Read (prints everything, for a test)".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn kind(&self) -> canopy_protocol::ToolKind {
        canopy_protocol::ToolKind::Read
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summarize(&self, _args: &serde_json::Value) -> String {
        "Read big.txt".into()
    }
    // Numbered lines, as the real Read prints them: a cut keeps the lines up to the last one left.
    fn narrow_seen(&self, seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
        canopy_tools::seen::narrow_numbered(seen, kept)
    }
    async fn run(
        &self,
        _args: serde_json::Value,
        ctx: &canopy_tools::ToolContext,
    ) -> Result<canopy_tools::ToolOutput, canopy_tools::ToolError> {
        let path = ctx.root.join("big.txt");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut out = canopy_tools::ToolOutput::text(
            text.lines()
                .enumerate()
                .map(|(i, l)| format!("{:>6}\t{l}\n", i + 1))
                .collect::<String>(),
        );
        out.seen = vec![SeenFile {
            path: "big.txt".into(),
            lines: vec![[1, text.lines().count() as u32]],
            stamp: Some(canopy_tools::stamp::stamp_file(&path).unwrap()),
            edit: None,
        }];
        Ok(out)
    }
}

#[tokio::test]
async fn lines_the_host_cut_from_a_result_do_not_count_as_seen() {
    let script = one_child(
        explore_rule("TASK-P")
            .turn(Turn::tools(vec![call("Read", json!({"path": "big.txt"}))]))
            .turn(Turn::text(result_json(
                &["big.txt has numbered lines"],
                json!(["big.txt:2", "big.txt:4900"]),
            ))),
    );
    let scenario = Scenario::start(script).await;
    let text: String = (1..=5_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(scenario.project().join("big.txt"), text).unwrap();
    let rt = runtime_with_tools(
        &scenario.settings(ProviderKind::Openai, true),
        |_| {},
        vec![Arc::new(CarelessRead)],
    );
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    let seen = file_events(&scenario, child)
        .into_iter()
        .find_map(|e| match e {
            TraceEvent::ToolCallEnd { seen, .. } => Some(seen),
            _ => None,
        })
        .unwrap();
    let last = seen[0].lines[0][1];
    assert_eq!(seen[0].lines, vec![[1, last]]);
    assert!(last > 10 && last < 4_900, "cut to the allowance: {last}");
    // Exactly what the model was sent: line `last` is in its request, the next one is not.
    let sent = scenario
        .server
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("TASK-P"))
        .nth(1)
        .unwrap()
        .body
        .to_string();
    assert!(
        sent.contains(&format!("line {last}\\n")),
        "line {last} was sent"
    );
    assert!(
        !sent.contains(&format!("line {}\\n", last + 1)),
        "line {} was not",
        last + 1
    );
    let result = completed_result(&scenario, &ran);
    assert_eq!(
        trusts(&result.evidence),
        [
            ("big.txt:2", Some(EvidenceTrust::Grounded)),
            ("big.txt:4900", Some(EvidenceTrust::FileSeen)),
        ]
    );
}

/// The main agent's answer after it Read the first five lines of `src/auth.rs` and then put a
/// constant after line 1: `login` (line 3 when read) is now line 5, the constant it wrote line 3,
/// and line 10 (line 8 when read) it never saw.
const EDITED_ANSWER: &str =
    "Added `src/auth.rs:3`; `login` at src/auth.rs:5 is unchanged; the rule is at src/auth.rs:10.";

/// The Edit that puts `MIN_LEN` after the first line of `src/auth.rs`.
fn add_min_len() -> canopy_test_support::ScriptedCall {
    call(
        "Edit",
        json!({
            "path": "src/auth.rs",
            "old_string": "use crate::config::Config;\n",
            "new_string": "use crate::config::Config;\n\npub const MIN_LEN: usize = 12;\n",
        }),
    )
}

fn answer_references(scenario: &Scenario, ran: &Ran) -> Vec<CheckedEvidence> {
    file_events(scenario, &ran.root)
        .into_iter()
        .find_map(|e| match e {
            TraceEvent::AnswerChecked { references, .. } => Some(references),
            _ => None,
        })
        .expect("answer_checked in the root trace")
}

#[tokio::test]
async fn the_main_agents_own_edit_keeps_its_citations_grounded_at_their_new_lines() {
    let script = Script::new().rule(
        main_agent_rule()
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/auth.rs", "offset": 1, "limit": 5}),
            )]))
            .turn(Turn::tools(vec![add_min_len()]))
            .turn(Turn::text(EDITED_ANSWER)),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let approver = ScriptedApprover::new(&[("Edit", ApprovalAnswer::AllowSession)]);
    let ran = scenario
        .run_with(&rt, Some(approver), "add MIN_LEN", |_, _| {})
        .await;
    assert_eq!(ran.outcome.final_text.as_deref(), Some(EDITED_ANSWER));
    let auth = std::fs::read_to_string(scenario.project().join("src/auth.rs")).unwrap();
    assert_eq!(auth.lines().nth(2), Some("pub const MIN_LEN: usize = 12;"));

    let references = answer_references(&scenario, &ran);
    assert_eq!(
        trusts(&references),
        [
            ("src/auth.rs:3", Some(EvidenceTrust::Grounded)),
            ("src/auth.rs:5", Some(EvidenceTrust::Grounded)),
            ("src/auth.rs:10", Some(EvidenceTrust::FileSeen)),
        ],
        "{references:#?}"
    );
    assert_eq!(
        references[1].text.as_deref(),
        Some("pub fn login(user: &str, password: &str) -> bool {"),
        "the line it read as 3, now at 5"
    );
    assert!(
        references.iter().all(|e| !e.stale),
        "its own edit is not a change behind its back"
    );
    // The edit's record in the trace says what it wrote and where the lines went.
    let seen = file_events(&scenario, &ran.root)
        .into_iter()
        .find_map(|e| match e {
            TraceEvent::ToolCallEnd { tool, seen, .. } if tool == "Edit" => Some(seen),
            _ => None,
        })
        .unwrap();
    assert_eq!(seen[0].lines, vec![[1, 3]]);
    let regions = &seen[0].edit.as_ref().unwrap().regions;
    assert_eq!(
        [
            regions[0].old_start,
            regions[0].old_count,
            regions[0].new_start,
            regions[0].new_count
        ],
        [1, 1, 1, 3]
    );
    // Reopened later (History): still grounded while the file is as the agent left it.
    let later = provenance::recheck(&references, scenario.project());
    assert_eq!(later[1].trust, Some(EvidenceTrust::Grounded));
}

#[tokio::test]
async fn lines_read_before_another_process_changed_the_file_do_not_survive_the_agents_edit() {
    // The other process puts a line at the top after the first Read, so the Edit is refused as
    // stale; the agent reads the first two lines again and edits then.
    let script = Script::new().rule(
        main_agent_rule()
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/auth.rs", "offset": 1, "limit": 5}),
            )]))
            .turn(Turn::tools(vec![add_min_len()]))
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/auth.rs", "offset": 1, "limit": 2}),
            )]))
            .turn(Turn::tools(vec![add_min_len()]))
            .turn(Turn::text(
                "Added `src/auth.rs:4`; `login` is at src/auth.rs:6.",
            )),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let approver = ScriptedApprover::new(&[("Edit", ApprovalAnswer::AllowSession)]);
    let auth = scenario.project().join("src/auth.rs");
    let changed = Arc::new(AtomicBool::new(false));
    let (flag, path) = (changed.clone(), auth.clone());
    let ran = scenario
        .run_with(&rt, Some(approver), "add MIN_LEN", move |r, _| {
            if matches!(&r.event, TraceEvent::ToolCallEnd { tool, .. } if tool == "Read")
                && !flag.swap(true, Ordering::SeqCst)
            {
                let text = std::fs::read_to_string(&path).unwrap();
                std::fs::write(&path, format!("// generated\n{text}")).unwrap();
            }
        })
        .await;
    assert!(changed.load(Ordering::SeqCst));
    let edits: Vec<ToolStatus> = file_events(&scenario, &ran.root)
        .into_iter()
        .filter_map(|e| match e {
            TraceEvent::ToolCallEnd { tool, status, .. } if tool == "Edit" => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(edits.len(), 2);
    assert_ne!(
        edits[0],
        ToolStatus::Ok,
        "the first Edit found the file changed"
    );
    assert_eq!(edits[1], ToolStatus::Ok);
    let text = std::fs::read_to_string(&auth).unwrap();
    assert_eq!(text.lines().nth(3), Some("pub const MIN_LEN: usize = 12;"));
    assert_eq!(
        text.lines().nth(5),
        Some("pub fn login(user: &str, password: &str) -> bool {")
    );

    let references = answer_references(&scenario, &ran);
    assert_eq!(
        trusts(&references),
        [
            ("src/auth.rs:4", Some(EvidenceTrust::Grounded)),
            ("src/auth.rs:6", Some(EvidenceTrust::FileSeen)),
        ],
        "the line it read before the other process's change is not vouched for: {references:#?}"
    );
}

const ENV_SECRET: &str = "sk-canopy-e2e-7f3a91c0d2";

#[tokio::test]
async fn a_citation_of_a_secret_file_never_puts_its_text_in_a_trace_or_the_parents_result() {
    let answer = "The token is configured in `.env:1`, see also src/auth.rs:3.";
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Look", "TASK-P: where is the token?")],
            answer,
        ))
        .rule(
            explore_rule("TASK-P")
                .turn(Turn::tools(vec![
                    call("Read", json!({"path": ".env"})),
                    call("Read", json!({"path": "src/auth.rs"})),
                ]))
                .turn(Turn::text(result_json(
                    &["the token is in .env"],
                    json!([
                        "src/auth.rs:3",
                        ".env:1",
                        // A guess the host must not confirm or deny.
                        {"ref": ".env:1", "quote": "API_TOKEN=sk-canopy-e2e-0000000000"},
                        ".env:9"
                    ]),
                ))),
        );
    let scenario = Scenario::start(script).await;
    std::fs::write(
        scenario.project().join(".env"),
        format!("API_TOKEN={ENV_SECRET}\n"),
    )
    .unwrap();
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "where is the token?").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);

    let result = completed_result(&scenario, &ran);
    let e = &result.evidence;
    assert_eq!(e.len(), 4);
    assert_eq!(
        e[0].text.as_deref(),
        Some("pub fn login(user: &str, password: &str) -> bool {")
    );
    // The state is still known; the text and the quote's verdict are not.
    assert_eq!(e[1].state, EvidenceState::Valid);
    assert_eq!(
        (e[1].text.as_deref(), e[1].seen_text.as_deref()),
        (None, None)
    );
    assert_eq!(
        e[2].quote_matches, None,
        "a guessed secret is neither confirmed nor denied"
    );
    assert_eq!(e[3].state, EvidenceState::LineOutOfRange);
    let references = answer_references(&scenario, &ran);
    assert_eq!(references[0].raw, ".env:1");
    assert_eq!(references[0].state, EvidenceState::Valid);
    assert_eq!(references[0].text, None);

    // Nowhere on disk, nor in what the parent model was sent.
    let texts = scenario.trace_file_texts();
    assert!(texts.len() >= 2);
    for text in texts {
        assert!(!text.contains(ENV_SECRET), "the secret is in a trace file");
    }
    for request in scenario.server.requests() {
        assert!(
            !request.body.to_string().contains(ENV_SECRET),
            "the secret was sent to the model"
        );
    }
}

#[tokio::test]
async fn a_corrected_answer_that_breaks_the_contract_leaves_the_first_result_and_its_error() {
    let script = one_child(
        explore_rule("TASK-P")
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/auth.rs"}),
            )]))
            .turn(Turn::text(result_json(
                &["login is in src/auth.rs"],
                json!(["src/auth.rs:3", "README.md:3"]),
            )))
            .turn(Turn::text(
                "Sorry, here is the fix: README.md:3 was a guess.",
            )),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    assert_eq!(rejections(&scenario, child).len(), 2);
    let (reason, result, error) = file_events(&scenario, child)
        .into_iter()
        .find_map(|e| match e {
            TraceEvent::RunEnded {
                terminal_reason,
                result,
                error,
                ..
            } => Some((terminal_reason, result, error)),
            _ => None,
        })
        .expect("the child's run_ended");
    assert_eq!(reason, TerminalReason::Completed, "the first result stands");
    assert_eq!(
        trusts(&result.expect("the first result").evidence),
        [
            ("src/auth.rs:3", Some(EvidenceTrust::Grounded)),
            ("README.md:3", Some(EvidenceTrust::Unseen)),
        ]
    );
    let error = error.expect("the error is kept");
    assert!(
        error.contains("broke the result contract twice") && error.contains("start with `{`"),
        "{error}"
    );
}
