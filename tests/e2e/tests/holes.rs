//! The runtime's budget and cancel guarantees where a misbehaving tool, a wide fan-out or a deadline
//! tries to break them: a blocked tool never holds up a cancel or the wall-time deadline, Task
//! respects the parent's tree budget and time, a queued child can be cancelled, and keys never
//! reach the host through the outcome or a truncated tool output.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use canopy_e2e::*;
use canopy_protocol::{
    Decision, DecisionSource, ProviderKind, ResultStatus, TerminalReason, ToolStatus, TraceEvent,
};
use canopy_test_support::{call, Rule, Script, Turn};
use serde_json::json;

/// A `Read` that hangs like a read of a FIFO nobody writes to: it ignores its cancel token.
fn blocked_read() -> Arc<ScriptedTool> {
    ScriptedTool::new("Read", Duration::from_secs(40), |_| "finally".into())
}

fn blocked_read_script() -> Script {
    Script::new().rule(main_agent_calls(
        vec![call("Read", json!({"path": "p"}))],
        "Here is what I have.",
    ))
}

fn tool_end_status(ran: &Ran, tool: &str) -> Option<ToolStatus> {
    let mut ends = ran.tool_ends(&ran.root).into_iter();
    ends.find(|(t, ..)| t == tool).map(|(_, status, _)| status)
}

#[tokio::test]
async fn a_cancel_stops_a_run_whose_tool_is_blocked() {
    let scenario = Scenario::start(blocked_read_script()).await;
    let rt = runtime_with_tools(
        &scenario.settings(ProviderKind::Openai, false),
        |_| {},
        vec![blocked_read()],
    );
    let started = Instant::now();
    let ran = scenario
        .run_with(&rt, None, "read p", |r, rt| {
            if matches!(&r.event, TraceEvent::ToolCallBegin { tool, .. } if tool == "Read") {
                assert!(rt.cancel(&r.session_id, "user (Ctrl-C)"));
            }
        })
        .await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the cancel waited {:?} for the blocked tool",
        started.elapsed()
    );
    assert_eq!(tool_end_status(&ran, "Read"), Some(ToolStatus::Cancelled));
    // The tool's grace is short enough that the run still ends within 2 s of the cancel.
    assert_cancelled_within_2s(&ran, &ran.root);
}

#[tokio::test]
async fn the_wall_time_deadline_stops_a_blocked_tool_and_the_agent_still_answers() {
    let scenario = Scenario::start(blocked_read_script()).await;
    let rt = runtime_with_tools(
        &scenario.settings(ProviderKind::Openai, false),
        |rs| {
            rs.final_call_grace_ms = 10_000;
            rs.profile_overrides
                .insert("main".into(), main_budgets(60, 2_000_000, 1_500));
        },
        vec![blocked_read()],
    );
    let started = Instant::now();
    let ran = scenario.run(&rt, "read p").await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the deadline waited {:?} for the blocked tool",
        started.elapsed()
    );
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::TimeBudget);
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("Here is what I have.")
    );
    assert_eq!(tool_end_status(&ran, "Read"), Some(ToolStatus::Cancelled));
}

fn task_errors(ran: &Ran) -> Vec<String> {
    let ends = ran.tool_ends(&ran.root).into_iter();
    ends.filter(|(tool, status, _)| tool == "Task" && *status == ToolStatus::Error)
        .map(|(_, _, output)| output)
        .collect()
}

#[tokio::test]
async fn task_calls_past_twice_the_parallelism_in_one_turn_are_refused() {
    let script = Script::new()
        .rule(main_agent_calls(
            vec![
                task("One", "TASK-1"),
                task("Two", "TASK-2"),
                task("Three", "TASK-3"),
            ],
            "done",
        ))
        .rule(any_explore_rule().turn(Turn::text(explore_result("ok", &["README.md:1"]))));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.parallelism = 1;
    });
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    assert_eq!(
        ran.children().len(),
        2,
        "only two of the three were started"
    );
    let errors = task_errors(&ran);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("too many Task calls in one turn: at most 2"),
        "{}",
        errors[0]
    );
}

#[tokio::test]
async fn no_child_starts_once_the_parents_tree_tokens_are_used_up() {
    let script = Script::new()
        .rule(
            main_agent_rule()
                .turn(Turn::tools(vec![task("First", "TASK-FIRST")]).usage(300, 20))
                .turn(Turn::tools(vec![task("Second", "TASK-SECOND")]).usage(400, 20))
                .turn(Turn::text("done with what I have").usage(500, 20)),
        )
        // The children cite nothing: a citation they never read would be sent back once (#12),
        // and that corrective call's tokens are not what this test counts.
        .rule(
            explore_rule("TASK-FIRST")
                .turn(Turn::text(explore_result("big", &[])).usage(9_000, 500)),
        )
        .rule(explore_rule("TASK-SECOND").turn(Turn::text(explore_result("never", &[]))));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.profile_overrides
            .insert("main".into(), main_budgets(60, 10_000, 300_000));
    });
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    let children = ran.children();
    assert_eq!(
        children.len(),
        1,
        "the second child was never requested: {:?}",
        task_errors(&ran)
    );
    // The first child could only spend what was left of the parent's 10,000 tokens.
    let child_total = ran
        .session_budgets(&children[0])
        .map(|b| b.max_total_tokens);
    assert_eq!(child_total, Some(10_000 - 320));
    let errors = task_errors(&ran);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains(
            "token budget for itself and its subagents is used up (10240 of 10000 tokens spent, 0 set aside for subagents still running)"
        ),
        "{}",
        errors[0]
    );
}

#[tokio::test]
async fn siblings_started_together_share_what_is_left_of_the_parents_tokens() {
    // Three explore children of 128,000 tokens each in one turn, under a parent allowed 150,000 in all.
    let script =
        Script::new()
            .rule(
                main_agent_rule()
                    .turn(
                        Turn::tools(vec![
                            task("One", "TASK-ONE"),
                            task("Two", "TASK-TWO"),
                            task("Three", "TASK-THREE"),
                        ])
                        .usage(1_000, 100),
                    )
                    .turn(Turn::text("done").usage(1_500, 50)),
            )
            .rule(explore_rule("TASK-ONE").turn(
                Turn::text(explore_result("one", &["README.md:1"])).first_byte_delay_ms(1_500),
            ))
            .rule(explore_rule("TASK-TWO").turn(
                Turn::text(explore_result("two", &["README.md:1"])).first_byte_delay_ms(1_500),
            ))
            .rule(explore_rule("TASK-THREE").turn(
                Turn::text(explore_result("three", &["README.md:1"])).first_byte_delay_ms(1_500),
            ));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.profile_overrides
            .insert("main".into(), main_budgets(60, 150_000, 300_000));
    });
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    let budgets: Vec<u64> = ran
        .children()
        .iter()
        .filter_map(|c| ran.session_budgets(c).map(|b| b.max_total_tokens))
        .collect();
    let left = 150_000 - 1_100;
    assert!(
        budgets.iter().sum::<u64>() <= left,
        "the children's token budgets {budgets:?} add up to more than the {left} the parent had left"
    );
    // The first two get the explore profile's 128,000 and what remains; the third waits for nothing
    // and is not started, since nothing is left.
    let mut sorted = budgets.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [left - 128_000, 128_000], "{budgets:?}");
    let errors = task_errors(&ran);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains(&format!(
            "({} of 150000 tokens spent, {left} set aside for subagents still running)",
            1_100
        )),
        "{}",
        errors[0]
    );
}

#[tokio::test]
async fn at_the_parents_deadline_a_child_hands_in_a_partial_result_instead_of_being_killed() {
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Slow reader", "TASK-SLOW")],
            "done",
        ))
        // The child's final call (its budget ran out) answers at once; its ordinary call never does.
        .rule(budget_exhausted_rule().turn(Turn::text(explore_result(
            "what I read so far",
            &["README.md:1"],
        ))))
        .rule(explore_rule("TASK-SLOW").turn(
            Turn::text(explore_result("too late", &["README.md:1"])).first_byte_delay_ms(20_000),
        ));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.final_call_grace_ms = 2_000;
        rs.profile_overrides
            .insert("main".into(), main_budgets(60, 2_000_000, 6_000));
    });
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    // 6 s for the parent, minus the child's 2 s final-call grace and 2 s to hand over.
    let wall = ran
        .session_budgets(child)
        .map(|b| b.max_wall_time_ms)
        .expect("child started");
    assert!((1_000..=2_000).contains(&wall), "child wall time {wall} ms");
    let done = ran
        .child_completed()
        .map(|(reason, result)| (reason, result.status, result.summary));
    assert_eq!(
        done,
        Some((
            TerminalReason::TimeBudget,
            ResultStatus::Partial,
            "what I read so far".to_string()
        ))
    );
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    assert_eq!(ran.outcome.final_text.as_deref(), Some("done"));
}

#[tokio::test]
async fn a_child_waiting_for_a_slot_can_be_cancelled_on_its_own() {
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Running", "TASK-RUN"), task("Queued", "TASK-QUEUED")],
            "done",
        ))
        // No citations: one the child never read would cost a corrective call (#12), and
        // this test counts the calls.
        .rule(
            explore_rule("TASK-RUN")
                .turn(Turn::text(explore_result("ran", &[])).first_byte_delay_ms(1_000)),
        )
        .rule(explore_rule("TASK-QUEUED").turn(Turn::text(explore_result("should not run", &[]))));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.parallelism = 1;
    });
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    let ran = scenario
        .run_with(&rt, None, "go", move |r, rt| {
            if let TraceEvent::SubagentRequested {
                child_session_id,
                description,
                ..
            } = &r.event
            {
                if description == "Queued" {
                    flag.store(rt.cancel(child_session_id, "user"), Ordering::SeqCst);
                }
            }
        })
        .await;
    assert!(
        cancelled.load(Ordering::SeqCst),
        "Runtime::cancel found the queued child"
    );
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    let queued = ran.children()[1].clone();
    let root = ran.events(&ran.root);
    assert!(!root.iter().any(|e| matches!(e, TraceEvent::SubagentStarted { child_session_id, .. } if *child_session_id == queued)), "it never started");
    assert!(root.iter().any(|e| matches!(e, TraceEvent::SubagentCancelled { child_session_id, .. } if *child_session_id == queued)));
    assert!(
        root.iter()
            .any(|e| matches!(e, TraceEvent::SubagentCompleted { .. })),
        "its sibling finished"
    );
    assert!(
        ran.events(&queued).is_empty(),
        "no trace of its own: it never ran"
    );
    assert_eq!(
        scenario.server.requests().len(),
        3,
        "two main calls and the running child's one"
    );
}

#[tokio::test]
async fn the_verification_gate_is_skipped_when_the_main_agents_time_is_nearly_up() {
    let script = Script::new()
        .rule(
            main_agent_rule()
                .turn(Turn::text("login takes one argument.")),
        )
        .rule(verify_rule().turn(Turn::text(
            json!({"verdict": "FAIL", "reasons": ["wrong"], "summary": "checked", "findings": [], "evidence": [], "unresolved_questions": []}).to_string(),
        )));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.verification_gate = true;
        rs.final_call_grace_ms = 2_000;
        rs.profile_overrides
            .insert("main".into(), main_budgets(60, 2_000_000, 3_000));
    });
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("login takes one argument.")
    );
    let (reason, error) = ran
        .child_failed()
        .expect("the skipped verification is recorded");
    assert_eq!(reason, TerminalReason::TimeBudget);
    assert!(
        error.contains("of this agent's wall time are left"),
        "{error}"
    );
    assert!(!scenario
        .server
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("verify subagent")));
}

/// A `Glob` whose output puts the test key right across the trace's 16 KiB cap.
fn leaky_glob() -> Arc<ScriptedTool> {
    ScriptedTool::new("Glob", Duration::ZERO, |_| {
        format!("{} {TEST_KEY} tail", "x".repeat(16 * 1024 - 12))
    })
}

#[tokio::test]
async fn a_key_across_the_trace_cap_is_redacted_whole() {
    let script = Script::new().rule(main_agent_calls(
        vec![call("Glob", json!({"pattern": "*"}))],
        "done",
    ));
    let scenario = Scenario::start(script).await;
    let rt = runtime_with_tools(
        &scenario.settings(ProviderKind::Openai, false),
        |_| {},
        vec![leaky_glob()],
    );
    let ran = scenario.run(&rt, "go").await;
    let (_, _, output) = ran
        .tool_ends(&ran.root)
        .into_iter()
        .next()
        .expect("tool ran");
    // Any piece of the key longer than a few characters would be a leak.
    let piece = &TEST_KEY[..8];
    assert!(
        !output.contains(piece),
        "a piece of the key is in the trace"
    );
    for text in scenario.trace_file_texts() {
        assert!(
            !text.contains(piece),
            "a piece of the key is in a trace file"
        );
    }
    let last = scenario.last_request();
    assert!(
        !last.contains(TEST_KEY) && last.contains("[REDACTED] tail"),
        "the model got the output redacted"
    );
}

#[tokio::test]
async fn duplicate_tool_call_ids_in_one_turn_are_made_unique() {
    let script = Script::new().rule(main_agent_calls(
        vec![
            call("Read", json!({"path": "README.md"})).with_id("dup"),
            call("Read", json!({"path": "src/config.rs"})).with_id("dup"),
        ],
        "done",
    ));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    let ids = |begin: bool| -> Vec<String> {
        ran.events(&ran.root)
            .iter()
            .filter_map(|e| match e {
                TraceEvent::ToolCallBegin { call_id, .. } if begin => Some(call_id.clone()),
                TraceEvent::ToolCallEnd { call_id, .. } if !begin => Some(call_id.clone()),
                _ => None,
            })
            .collect()
    };
    let mut begins = ids(true);
    let mut ends = ids(false);
    begins.sort();
    ends.sort();
    assert_eq!(begins, ["dup", "dup_2"]);
    assert_eq!(ends, begins, "each begin has its own end");
    let last = scenario.last_request();
    assert!(last.contains("session_timeout_secs") && last.contains("A tiny project"));
}

/// An approver that never answers, like a person who walked away from the dialog.
struct NeverAnswers;

#[async_trait::async_trait]
impl canopy_runtime::Approver for NeverAnswers {
    async fn approve(
        &self,
        _request: canopy_runtime::ApprovalRequest,
    ) -> canopy_runtime::ApprovalAnswer {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_cancelled_approval_wait_records_its_decision_before_the_calls_end() {
    let script = Script::new().rule(main_agent_calls(
        vec![call("Bash", json!({"command": "ls"}))],
        "done",
    ));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let ran = scenario
        .run_with(&rt, Some(Arc::new(NeverAnswers)), "go", |r, rt| {
            if matches!(r.event, TraceEvent::PermissionRequested { .. }) {
                rt.cancel(&r.session_id, "user");
            }
        })
        .await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Cancelled);
    let events = ran.events(&ran.root);
    let decided = events.iter().position(|e| {
        matches!(e, TraceEvent::PermissionDecided { decision: Decision::Deny, source: DecisionSource::User, reason, .. } if reason == "cancelled while waiting")
    });
    let ended = events.iter().position(|e| {
        matches!(
            e,
            TraceEvent::ToolCallEnd {
                status: ToolStatus::Cancelled,
                ..
            }
        )
    });
    assert!(
        matches!((decided, ended), (Some(d), Some(e)) if d < e),
        "{decided:?} {ended:?}"
    );
}

#[tokio::test]
async fn a_cancel_before_the_run_starts_is_recorded_in_that_run() {
    let script = Script::new().rule(main_agent_rule().turn(Turn::text("not reached")));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let session = rt
        .start_session(scenario.session_options(tx))
        .expect("session");
    session.begin_run();
    assert!(rt.cancel(session.session_id(), "user"));
    let outcome = session.run("hello".into()).await.expect("run");
    assert_eq!(outcome.terminal_reason, TerminalReason::Cancelled);
    drop(session);
    let mut events = Vec::new();
    while let Some(r) = rx.recv().await {
        events.push(r);
    }
    let cancels: Vec<_> = events
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.event, TraceEvent::CancelRequested { .. }))
        .collect();
    assert_eq!(cancels.len(), 1, "exactly one cancel_requested");
    let (at, record) = cancels[0];
    assert_eq!(record.run_id, outcome.run_id, "in the run it cancelled");
    let started = events
        .iter()
        .position(|r| matches!(r.event, TraceEvent::RunStarted { .. }))
        .expect("run_started");
    assert!(started < at, "written inside the run, after run_started");
}

#[tokio::test]
async fn a_cut_corrective_answer_past_the_step_limit_gets_no_further_call() {
    let script = Script::new()
        .rule(main_agent_calls(vec![task("Cut", "TASK-CUT")], "done"))
        .rule(
            explore_rule("TASK-CUT")
                .turn(Turn::text("not json"))
                .turn(Turn::text("{").finish_reason("length"))
                .turn(Turn::text(explore_result("late", &["README.md:1"]))),
        );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.profile_overrides
            .insert("explore".into(), explore_budgets(1, 32_000, 60_000));
    });
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    let steps: Vec<u32> = ran
        .events(child)
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ModelCallBegin { step, .. } => Some(*step),
            _ => None,
        })
        .collect();
    assert_eq!(steps, [1, 2], "max_steps 1: at most one call past it");
    let failed = ran.child_failed().map(|(reason, _)| reason);
    assert_eq!(failed, Some(TerminalReason::MaxSteps));
}

#[tokio::test]
async fn a_corrective_turn_just_before_the_deadline_gets_the_final_call_grace() {
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Late fix", "TASK-LATE")],
            "done",
        ))
        .rule(
            explore_rule("TASK-LATE")
                .turn(Turn::text("not json").first_byte_delay_ms(2_000))
                .turn(
                    Turn::text(explore_result("fixed", &["README.md:1"]))
                        .first_byte_delay_ms(2_000),
                ),
        );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| {
        rs.final_call_grace_ms = 10_000;
        rs.profile_overrides
            .insert("explore".into(), explore_budgets(12, 32_000, 3_000));
    });
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    let calls = ran.model_calls(child);
    assert_eq!(calls, 2, "the corrective call was not abandoned");
    let done = ran.child_completed().map(|(_, result)| result.summary);
    assert_eq!(done.as_deref(), Some("fixed"));
}

#[tokio::test]
async fn a_child_the_provider_finds_too_long_still_hands_in_its_findings() {
    let script = Script::new()
        .rule(main_agent_calls(vec![task("Wide", "TASK-WIDE")], "done"))
        .rule(budget_exhausted_rule().turn(Turn::text(explore_result(
            "partial findings",
            &["README.md:1"],
        ))))
        .rule(
            explore_rule("TASK-WIDE")
                .turn(Turn::text("x").fault(canopy_test_support::Fault::context_length())),
        );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    let done = ran
        .child_completed()
        .map(|(reason, result)| (reason, result.status, result.summary));
    assert_eq!(
        done,
        Some((
            TerminalReason::ContextOverflow,
            ResultStatus::Partial,
            "partial findings".to_string()
        ))
    );
}

#[tokio::test]
async fn a_cancel_during_the_compaction_after_context_length_exceeded_ends_cancelled() {
    let script = Script::new()
        .rule(
            Rule::new("summariser")
                .system_contains("You compress a coding agent's conversation")
                .turn(Turn::text("summary").first_byte_delay_ms(20_000)),
        )
        .rule(
            main_agent_rule()
                .turn(Turn::tools(vec![call(
                    "Read",
                    json!({"path": "README.md"}),
                )]))
                .turn(Turn::text("x").fault(canopy_test_support::Fault::context_length())),
        );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, false, |_| {});
    let ran = scenario
        .run_with(&rt, None, "go", |r, rt| {
            if matches!(
                r.event,
                TraceEvent::ModelCallBegin {
                    messages: 1,
                    step: 2,
                    ..
                }
            ) {
                rt.cancel(&r.session_id, "user");
            }
        })
        .await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Cancelled);
    assert_cancelled_within_2s(&ran, &ran.root);
}
