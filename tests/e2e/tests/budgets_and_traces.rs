//! Loop edge cases and traces on disk: compaction inside one long task, the wall-time budget, empty
//! responses, `max_tokens` continuation, and traces that survive truncation and crashes.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use canopy_e2e::*;
use canopy_protocol::{
    BudgetKind, Budgets, ModelSlot, ProviderKind, ResultStatus, TerminalReason, TraceEvent,
};
use canopy_runtime::trace_reader::{self, SessionStatus};
use canopy_test_support::{call, Fault, Rule, Script, Turn};
use serde_json::json;

fn big_files(project: &std::path::Path, n: usize) {
    for i in 1..=n {
        let body: String = (0..120)
            .map(|l| format!("// filler line {l} of big{i}: lorem ipsum dolor sit amet\n"))
            .collect();
        std::fs::write(project.join(format!("big{i}.rs")), body).expect("write");
    }
}

#[tokio::test]
async fn compaction_fires_inside_one_long_task_and_the_run_completes() {
    let script = Script::new()
        .rule(
            Rule::new("summariser")
                .system_contains("You compress")
                .turn(Turn::text(
                    "Read big1..big3: filler only, nothing about login.",
                )),
        )
        .rule(
            Rule::new("after")
                .system_contains("You are Canopy")
                .any_message_contains("[Summary of the earlier conversation")
                .turn(Turn::text("Done after compaction.")),
        )
        .rule(
            main_agent_rule()
                .turn(Turn::tools(vec![call("Read", json!({"path": "big1.rs"}))]))
                .turn(Turn::tools(vec![call("Read", json!({"path": "big2.rs"}))]))
                .turn(Turn::tools(vec![call("Read", json!({"path": "big3.rs"}))]))
                .turn(Turn::tools(vec![call("Read", json!({"path": "big4.rs"}))]))
                .turn(Turn::text("never reached without compaction")),
        );
    let scenario = Scenario::start(script).await;
    big_files(scenario.project(), 4);
    let rt = scenario.runtime(ProviderKind::Openai, false, |rs| {
        rs.profile_overrides.insert(
            "main".into(),
            (
                Budgets {
                    max_steps: 30,
                    max_context_tokens: 6_000,
                    max_total_tokens: 1_000_000,
                    max_wall_time_ms: 60_000,
                },
                ModelSlot::Main,
            ),
        );
    });
    let ran = scenario.run(&rt, "Read the big files one by one").await;
    assert_eq!(
        ran.outcome.terminal_reason,
        TerminalReason::Completed,
        "{:?}",
        ran.outcome.error
    );
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("Done after compaction.")
    );
    let compacted = ran.find(&ran.root, |e| match e {
        TraceEvent::Compacted {
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            summary,
        } => Some((
            *tokens_before,
            *tokens_after,
            *messages_before,
            *messages_after,
            summary.clone(),
        )),
        _ => None,
    });
    let (tb, ta, mb, ma, summary) = compacted.expect("compaction fired");
    assert!(ta < tb && ma < mb, "{tb}->{ta} tokens, {mb}->{ma} messages");
    assert!(summary.contains("filler only"));
    // The request after compaction carried the summary and the person's request verbatim.
    let last = scenario.last_request();
    assert!(last.contains("filler only") && last.contains("Read the big files one by one"));
}

#[tokio::test]
async fn a_child_past_its_wall_time_is_stopped_and_still_answers() {
    let result = json!({"status": "completed", "summary": "slow but here", "findings": [], "evidence": [], "unresolved_questions": []}).to_string();
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Slow", "TASK-W: think long")],
            "ok",
        ))
        .rule(any_explore_rule().turn(Turn::text(result).first_byte_delay_ms(1_500)));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Anthropic, true, |rs| {
        rs.final_call_grace_ms = 10_000;
        rs.profile_overrides
            .insert("explore".into(), explore_budgets(12, 32_000, 500));
    });
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    assert!(ran.events(child).iter().any(|e| matches!(
        e,
        TraceEvent::BudgetExhausted {
            budget: BudgetKind::WallTime,
            ..
        }
    )));
    let done = ran
        .child_completed()
        .map(|(reason, result)| (reason, result.status));
    assert_eq!(
        done,
        Some((TerminalReason::TimeBudget, ResultStatus::Partial))
    );
}

#[tokio::test]
async fn an_empty_response_is_retried_once_and_a_cut_answer_continues() {
    let script = Script::new().rule(
        main_agent_rule()
            .turn(
                Turn::text("The first half, ")
                    .finish_reason("length")
                    .fault(Fault::empty()),
            )
            .turn(Turn::text("and the second half.")),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let ran = scenario.run(&rt, "write a long answer").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("The first half, and the second half.")
    );
    let calls = ran.model_calls(&ran.root);
    assert_eq!(calls, 3, "empty, retried, continued");
}

#[tokio::test]
async fn twice_empty_ends_with_empty_response() {
    let script =
        Script::new().rule(main_agent_rule().turn(Turn::text("x").fault(Fault::empty().times(5))));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Anthropic, false, |_| {});
    let ran = scenario.run(&rt, "hello").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::EmptyResponse);
}

#[tokio::test]
async fn traces_round_trip_survive_truncation_and_show_interrupted_runs() {
    let script = Script::new()
        .rule(
            main_agent_calls(vec![task("Look", "TASK-R: look")], "done"),
        )
        .rule(any_explore_rule().turn(Turn::text(
            json!({"status": "completed", "summary": "s", "findings": [], "evidence": ["README.md:1"], "unresolved_questions": []}).to_string(),
        )));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "first prompt").await;

    // Round trip: what was published live (minus live-only deltas) is exactly what is on disk.
    let records = trace_reader::load_session_tree(scenario.traces(), &ran.root).expect("load");
    let live: Vec<_> = ran
        .records
        .iter()
        .filter(|r| r.event.is_persisted())
        .cloned()
        .collect();
    assert_eq!(records.len(), live.len());
    for r in &live {
        assert!(records.contains(r), "missing on disk: {:?}", r.event.kind());
    }
    // Sequence numbers run without gaps per file.
    for id in [ran.root.clone(), ran.children()[0].clone()] {
        let file = trace_reader::read_session_file(&scenario.traces().join(format!("{id}.jsonl")))
            .expect("file");
        assert!(file
            .records
            .iter()
            .enumerate()
            .all(|(i, r)| r.seq == i as u64));
    }

    // A crash mid-line, even inside a multi-byte character, leaves a readable trace.
    let child_file = scenario
        .traces()
        .join(format!("{}.jsonl", ran.children()[0]));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&child_file)
        .expect("open")
        .write_all(b"{\"v\":1,\"seq\":99,\"note\":\"caf\xc3")
        .expect("write");
    let trees = trace_reader::read_trees(scenario.traces());
    assert_eq!(trees.len(), 1);
    assert_eq!(trees[0].children[0].skipped_lines, 1);
    assert_eq!(trees[0].children[0].status, SessionStatus::Completed);

    // The app's pass-through form is the same records, still without the cut line.
    let json = trace_reader::load_session_tree_json(scenario.traces(), &ran.root).expect("json");
    let parsed: Vec<canopy_protocol::TraceRecord> =
        serde_json::from_str(&json).expect("one valid JSON array");
    assert_eq!(
        parsed,
        trace_reader::load_session_tree(scenario.traces(), &ran.root).expect("load")
    );
    assert_eq!(parsed.len(), live.len());

    // A run that never ended (killed) is listed as interrupted, not running.
    let crashed = ran
        .of(&ran.root)
        .iter()
        .take(2)
        .map(|r| serde_json::to_string(r).expect("json"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(&ran.root, "s-crashed");
    std::fs::write(scenario.traces().join("s-crashed.jsonl"), crashed + "\n").expect("write");
    let list = trace_reader::list_root_sessions(scenario.traces());
    assert_eq!(list.len(), 2);
    let crashed = list
        .iter()
        .find(|s| s.session_id == "s-crashed")
        .expect("listed");
    assert_eq!(crashed.status, SessionStatus::Interrupted);
    assert_eq!(crashed.terminal_reason, Some(TerminalReason::Interrupted));
    let ok = list
        .iter()
        .find(|s| s.session_id == ran.root)
        .expect("listed");
    assert_eq!(
        (ok.status, ok.sessions, ok.title.as_str()),
        (SessionStatus::Completed, 2, "first prompt")
    );

    // Deleting a session removes its whole tree.
    trace_reader::delete_session_tree(scenario.traces(), &ran.root).expect("delete");
    assert_eq!(trace_reader::list_root_sessions(scenario.traces()).len(), 1);
    assert!(!child_file.exists());
}
