//! The main agent end to end over both wire formats: Grep and Read in parallel, an Edit and a Bash
//! call through approvals, a final answer; plus retries, denial, and secrets kept out of traces.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use canopy_e2e::*;
use canopy_protocol::{
    Decision, DecisionSource, ProviderKind, TerminalReason, ToolStatus, TraceEvent,
};
use canopy_runtime::ApprovalAnswer;
use canopy_test_support::{call, Fault, Script, Turn};
use serde_json::json;

fn main_script(with_fault: bool) -> Script {
    let mut first = Turn::tools(vec![
        call(
            "Grep",
            json!({"pattern": "fn login", "output_mode": "content"}),
        ),
        call("Read", json!({"path": "src/auth.rs"})),
    ])
    .chunk_bytes(5);
    if with_fault {
        first = first.fault(Fault::rate_limited(1));
    }
    Script::new().require_api_key(TEST_KEY).rule(
        main_agent_rule()
            .turn(first)
            .turn(Turn::tools(vec![call(
                "Edit",
                json!({"path": "src/auth.rs", "old_string": "    !password.is_empty()", "new_string": "    password.len() >= 12"}),
            )]))
            .turn(Turn::tools(vec![call("Bash", json!({"command": "grep -n 'len() >= 12' src/auth.rs && echo checked"}))]))
            .turn(Turn::text(format!("Done: passwords now need 12 characters (src/auth.rs:8). Key seen: {TEST_KEY}")).chunk_bytes(3)),
    )
}

async fn edit_and_bash_through_approvals(provider: ProviderKind) {
    let scenario = Scenario::start(main_script(provider == ProviderKind::Anthropic)).await;
    let rt = scenario.runtime(provider, true, |_| {});
    let approver = ScriptedApprover::new(&[
        ("Edit", ApprovalAnswer::AllowOnce),
        ("Bash", ApprovalAnswer::AllowSession),
    ]);
    let ran = scenario
        .run_with(
            &rt,
            Some(approver.clone()),
            "Make passwords need 12 characters",
            |_, _| {},
        )
        .await;

    assert_eq!(
        ran.outcome.terminal_reason,
        TerminalReason::Completed,
        "{:?}",
        ran.outcome.error
    );
    let source = std::fs::read_to_string(scenario.project().join("src/auth.rs")).expect("read");
    assert!(
        source.contains("password.len() >= 12"),
        "the edit reached the file: {source}"
    );

    // Both mutating calls went to the person, in order, and nothing else did.
    let asked: Vec<String> = approver
        .asked
        .lock()
        .expect("lock")
        .iter()
        .map(|r| r.tool.clone())
        .collect();
    assert_eq!(asked, ["Edit", "Bash"]);
    let events = ran.events(&ran.root);
    let decided: Vec<(String, Decision, DecisionSource)> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::PermissionDecided {
                tool,
                decision,
                source,
                ..
            } => Some((tool.clone(), *decision, *source)),
            _ => None,
        })
        .collect();
    assert!(decided.contains(&("Grep".into(), Decision::Allow, DecisionSource::ReadOnly)));
    assert!(decided.contains(&("Edit".into(), Decision::Allow, DecisionSource::User)));
    assert!(decided.contains(&("Bash".into(), Decision::Allow, DecisionSource::User)));

    // Every tool call succeeded, and Bash saw the edited file.
    let ends = ran.tool_ends(&ran.root);
    assert_eq!(ends.len(), 4, "{ends:?}");
    assert!(
        ends.iter().all(|(_, s, _)| *s == ToolStatus::Ok),
        "{ends:?}"
    );
    assert!(
        ends.iter()
            .any(|(t, _, o)| t == "Bash" && o.contains("checked")),
        "{ends:?}"
    );

    // The answer streamed, and the key it echoed never reached the trace (live or on disk).
    assert!(events
        .iter()
        .any(|e| matches!(e, TraceEvent::AssistantDelta { .. })));
    assert!(ran
        .outcome
        .final_text
        .as_deref()
        .is_some_and(|t| t.contains("12 characters")));
    let streamed: String = ran
        .records
        .iter()
        .filter_map(|r| match &r.event {
            TraceEvent::AssistantDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(streamed.contains("12 characters"), "{streamed}");
    assert!(
        !streamed.contains(TEST_KEY),
        "the key leaked across streamed deltas: {streamed}"
    );
    for r in &ran.records {
        assert!(
            !serde_json::to_string(r).expect("json").contains(TEST_KEY),
            "key leaked into a live record"
        );
    }
    for text in scenario.trace_file_texts() {
        assert!(!text.contains(TEST_KEY), "key leaked into a trace file");
        assert!(text.contains("[REDACTED]"));
    }
    if provider == ProviderKind::Anthropic {
        assert!(
            events
                .iter()
                .any(|e| matches!(e, TraceEvent::ModelRetry { delay_ms, .. } if *delay_ms >= 900)),
            "429 was retried after Retry-After"
        );
    }
    // The run ended with totals that add up.
    match events.last() {
        Some(TraceEvent::RunEnded {
            totals, tool_calls, ..
        }) => {
            assert_eq!(totals.steps, 4);
            assert_eq!(*tool_calls, 4);
            assert!(totals.total_tokens > 0);
        }
        other => panic!("last event: {other:?}"),
    }
}

#[tokio::test]
async fn openai_run_with_edit_and_bash_through_approvals() {
    edit_and_bash_through_approvals(ProviderKind::Openai).await;
}

#[tokio::test]
async fn anthropic_run_with_edit_and_bash_through_approvals() {
    edit_and_bash_through_approvals(ProviderKind::Anthropic).await;
}

#[tokio::test]
async fn denied_edit_reaches_the_model_and_the_file_is_untouched() {
    let script = Script::new().rule(
        main_agent_rule()
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/config.rs"}),
            )]))
            .turn(Turn::tools(vec![call(
                "Edit",
                json!({"path": "src/config.rs", "old_string": "u64", "new_string": "u32"}),
            )]))
            .turn(Turn::tools(vec![
                call("Frobnicate", json!({})),
                call("Read", json!({"path": "../outside.txt"})),
            ]))
            .turn(Turn::text("I could not change it.")),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let approver = ScriptedApprover::new(&[("Edit", ApprovalAnswer::Deny)]);
    let ran = scenario
        .run_with(&rt, Some(approver), "Change the timeout type", |_, _| {})
        .await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    assert!(
        std::fs::read_to_string(scenario.project().join("src/config.rs"))
            .expect("read")
            .contains("u64")
    );
    let ends = ran.tool_ends(&ran.root);
    assert_eq!(ends[1].1, ToolStatus::Denied);
    assert!(ends[1].2.contains("denied"), "{:?}", ends[1]);
    assert_eq!(ends[2].1, ToolStatus::Error);
    assert!(
        ends[2].2.contains("unknown tool `Frobnicate`"),
        "{:?}",
        ends[2]
    );
    assert_eq!(ends[3].1, ToolStatus::Error);
    // What the model was told about the denial and the bad tool is in its next request.
    let last = scenario
        .server
        .requests()
        .last()
        .map(|r| r.body.to_string())
        .unwrap_or_default();
    assert!(last.contains("unknown tool"), "the model saw the errors");
}

#[tokio::test]
async fn headless_ask_without_approver_is_denied_not_silently_allowed() {
    let script = Script::new().rule(main_agent_calls(
        vec![call("Bash", json!({"command": "touch created-by-bash"}))],
        "ok",
    ));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let ran = scenario.run(&rt, "run it").await;
    assert!(!scenario.project().join("created-by-bash").exists());
    assert!(ran.events(&ran.root).iter().any(|e| matches!(
        e,
        TraceEvent::PermissionDecided {
            source: DecisionSource::NoApprover,
            decision: Decision::Deny,
            ..
        }
    )));
}

#[tokio::test]
async fn provider_failure_ends_with_model_error_and_a_clear_message() {
    let script = Script::new()
        .rule(main_agent_rule().turn(Turn::text("x").fault(Fault::status(500).times(10))));
    let scenario = Scenario::start(script).await;
    let mut settings = scenario.settings(ProviderKind::Openai, false);
    settings.main.model = "mock-main".into();
    let rt = runtime(&settings, |_| {});
    let ran = scenario.run(&rt, "hello").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::ModelError);
    assert!(
        ran.outcome
            .error
            .as_deref()
            .is_some_and(|e| e.contains("500")),
        "{:?}",
        ran.outcome.error
    );
}

#[tokio::test]
async fn a_cancel_that_arrives_before_the_run_task_starts_is_not_lost() {
    let script = Script::new().rule(
        main_agent_rule().turn(Turn::text("should not be reached").first_byte_delay_ms(5_000)),
    );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let session = rt
        .start_session(scenario.session_options(tx))
        .expect("session");
    // A host announces the run, then starts it on another task; the person clicks Stop in between.
    session.begin_run();
    assert!(rt.cancel(session.session_id(), "user"));
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(3),
        session.run("hello".into()),
    )
    .await
    .expect("ended at once")
    .expect("run");
    assert_eq!(outcome.terminal_reason, TerminalReason::Cancelled);
    assert!(
        scenario.server.requests().is_empty(),
        "no model call was made"
    );
}

#[tokio::test]
async fn a_server_that_reuses_call_ids_across_turns_still_gives_each_call_its_own_id() {
    // Some OpenAI-compatible servers number calls per response: `call_0` in every turn.
    let read = |path: &str| call("Read", json!({ "path": path })).with_id("call_0");
    let script = Script::new().require_api_key(TEST_KEY).rule(
        main_agent_rule()
            .turn(Turn::tools(vec![read("src/auth.rs")]))
            .turn(Turn::tools(vec![read("src/config.rs")]))
            .turn(Turn::text("Read both.")),
    );
    let scenario = Scenario::start(script).await;
    for provider in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let rt = scenario.runtime(provider, false, |_| {});
        let ran = scenario.run(&rt, "Read auth and config").await;
        assert_eq!(
            ran.outcome.terminal_reason,
            TerminalReason::Completed,
            "{provider:?}"
        );
        let begun: Vec<String> = ran
            .events(&ran.root)
            .into_iter()
            .filter_map(|e| match e {
                TraceEvent::ToolCallBegin { call_id, .. } => Some(call_id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(begun, ["call_0", "call_0_2"], "{provider:?}");
        // Each id's result is its own file, as the UI and load_tool_output find it by id.
        let ends = ran.tool_ends(&ran.root);
        assert!(
            ends[0].2.contains("fn login") && ends[1].2.contains("session_timeout_secs"),
            "{ends:?}"
        );
    }
}
