//! Tool output fitted to a subagent's context budget, end to end: an explore child with the built-in
//! budgets reads a file four times its context budget, or greps 100,000 matching lines, and still
//! completes with checked evidence, while every request it sent stayed under its budget as the
//! model server counted it. Also the runaway turn of thousands of tool calls (hardening D1).

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use canopy_e2e::*;
use canopy_protocol::{EvidenceState, ProviderKind, TerminalReason, ToolStatus, TraceEvent};
use canopy_test_support::{call, Script, Turn};
use serde_json::json;

/// The explore profile's built-in context budget.
const EXPLORE_CONTEXT: u64 = 16_000;

/// Tokens the scripted server counts for each request of the explore children (request bytes / 4,
/// the same count it reports as usage).
fn explore_request_tokens(scenario: &Scenario) -> Vec<u64> {
    scenario
        .server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .filter(|body| body.contains("explore subagent"))
        .map(|body| body.len() as u64 / 4)
        .collect()
}

/// The text of the `n`th tool result the explore child sent back to the model, as the server got it.
fn tool_result_sent(scenario: &Scenario, n: usize) -> String {
    let last = scenario
        .server
        .requests()
        .into_iter()
        .rfind(|r| r.body.to_string().contains("explore subagent"))
        .expect("the child made requests");
    let results: Vec<String> = last.body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| match m["role"].as_str() {
            // OpenAI: one message per result.
            Some("tool") => vec![m["content"].as_str().unwrap_or_default().to_string()],
            // Anthropic: results are blocks of a user message.
            Some("user") => m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| match &b["content"] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p["text"].as_str())
                        .collect(),
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    results[n].clone()
}

/// A generated source file of about `bytes` bytes, numbered so a line can be cited.
fn generated_file(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 100);
    let mut i = 1;
    while out.len() < bytes {
        out.push_str(&format!(
            "pub fn generated_{i}(x: u64) -> u64 {{ x.wrapping_mul({i}).rotate_left(7) ^ 0x9e37_79b9 }}\n"
        ));
        i += 1;
    }
    out
}

#[tokio::test]
async fn an_explore_child_reads_a_file_four_times_its_context_and_still_completes() {
    let big = generated_file(EXPLORE_CONTEXT as usize * 4 * 4);
    let total_lines = big.lines().count();
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Big file", "TASK-BIG: what is in gen.rs?")],
            "done",
        ))
        .rule(
            explore_rule("TASK-BIG")
                .turn(Turn::tools(vec![call("Read", json!({"path": "gen.rs"}))]))
                .turn(Turn::tools(vec![call(
                    "Read",
                    json!({"path": "src/auth.rs"}),
                )]))
                .turn(Turn::text(explore_result(
                    "gen.rs holds generated mixing functions; login is in src/auth.rs",
                    &["gen.rs:10", "src/auth.rs:3"],
                ))),
        );
    let scenario = Scenario::start(script).await;
    std::fs::write(scenario.project().join("gen.rs"), &big).unwrap();
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "Look at gen.rs").await;

    let child = &ran.children()[0];
    let budgets = ran.session_budgets(child).expect("child started");
    assert_eq!(
        budgets.max_context_tokens, EXPLORE_CONTEXT,
        "built-in budgets"
    );
    let (reason, result) = ran.child_completed().expect("the child handed in a result");
    assert_eq!(reason, TerminalReason::Completed);
    let states: Vec<EvidenceState> = result.evidence.iter().map(|e| e.state).collect();
    assert_eq!(states, [EvidenceState::Valid, EvidenceState::Valid]);

    // The Read showed the start of the file, its size in lines and exactly where to read on (as
    // the model got it: the trace keeps only the start of long outputs).
    let reads = ran.tool_ends(child);
    assert_eq!(reads[0].0, "Read");
    assert_eq!(reads[0].1, ToolStatus::Ok);
    assert!(reads[0].2.contains("pub fn generated_1("));
    assert_eq!(reads[1].1, ToolStatus::Ok);
    assert!(reads[1].2.contains("fn login"));
    let output = tool_result_sent(&scenario, 0);
    assert!(
        output.contains(&format!("has {total_lines} lines in all")),
        "{}",
        &output[output.len().saturating_sub(400)..]
    );
    let read_on = output
        .split("Read on with offset=")
        .nth(1)
        .expect("says where to read on");
    let shown = output
        .lines()
        .filter(|l| l.contains("pub fn generated_"))
        .count();
    assert!(
        read_on.starts_with(&format!("{} limit={shown}", shown + 1)),
        "{read_on:.80}"
    );
    assert!(output.len() < big.len() / 4, "{} bytes shown", output.len());

    // On the server's side: three requests, each under the child's context budget.
    let tokens = explore_request_tokens(&scenario);
    assert_eq!(tokens.len(), 3, "{tokens:?}");
    assert!(
        tokens.iter().all(|&t| t <= EXPLORE_CONTEXT),
        "requests over the {EXPLORE_CONTEXT}-token budget: {tokens:?}"
    );
}

#[tokio::test]
async fn an_explore_child_greps_100k_matching_lines_and_still_completes() {
    let lines: String = (1..=100_000)
        .map(|i| format!("log entry {i}: request handled in {} ms\n", i % 997))
        .collect();
    let script = Script::new()
        .rule(main_agent_calls(
            vec![task("Huge grep", "TASK-GREP: how are requests logged?")],
            "done",
        ))
        .rule(
            explore_rule("TASK-GREP")
                .turn(Turn::tools(vec![call(
                    "Grep",
                    json!({"pattern": "request handled", "output_mode": "content", "max_results": 100000}),
                )]))
                .turn(Turn::tools(vec![call("Read", json!({"path": "README.md"}))]))
                .turn(Turn::text(explore_result(
                    "every request is logged with its duration",
                    &["logs/app.log:1", "README.md:1"],
                ))),
        );
    let scenario = Scenario::start(script).await;
    std::fs::create_dir_all(scenario.project().join("logs")).unwrap();
    std::fs::write(scenario.project().join("logs/app.log"), &lines).unwrap();
    let rt = scenario.runtime(ProviderKind::Anthropic, true, |_| {});
    let ran = scenario.run(&rt, "How are requests logged?").await;

    let child = &ran.children()[0];
    let (reason, result) = ran.child_completed().expect("the child handed in a result");
    assert_eq!(reason, TerminalReason::Completed);
    let states: Vec<EvidenceState> = result.evidence.iter().map(|e| e.state).collect();
    assert_eq!(states, [EvidenceState::Valid, EvidenceState::Valid]);

    // The listing was cut and said how many lines it left out.
    let ends = ran.tool_ends(child);
    assert_eq!(ends[0].0, "Grep");
    assert_eq!(ends[0].1, ToolStatus::Ok);
    let output = tool_result_sent(&scenario, 0);
    assert!(
        output.contains("log entry 1: request handled"),
        "{output:.300}"
    );
    let shown = output
        .lines()
        .filter(|l| l.contains("request handled"))
        .count();
    assert!(
        output.contains(&format!("[truncated: {} more lines", 100_000 - shown)),
        "{}",
        &output[output.len().saturating_sub(300)..]
    );

    let tokens = explore_request_tokens(&scenario);
    assert_eq!(tokens.len(), 3, "{tokens:?}");
    assert!(
        tokens.iter().all(|&t| t <= EXPLORE_CONTEXT),
        "requests over the {EXPLORE_CONTEXT}-token budget: {tokens:?}"
    );
}

#[tokio::test]
async fn parallel_reads_of_one_turn_share_the_allowance() {
    let big = generated_file(40_000);
    let script = Script::new()
        .rule(main_agent_calls(vec![task("Four", "TASK-FOUR")], "done"))
        .rule(
            explore_rule("TASK-FOUR")
                .turn(Turn::tools(
                    (1..=4)
                        .map(|i| call("Read", json!({"path": format!("g{i}.rs")})))
                        .collect(),
                ))
                .turn(Turn::text(explore_result("four files", &["g1.rs:1"]))),
        );
    let scenario = Scenario::start(script).await;
    for i in 1..=4 {
        std::fs::write(scenario.project().join(format!("g{i}.rs")), &big).unwrap();
    }
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    assert_eq!(
        ran.child_completed().map(|(r, _)| r),
        Some(TerminalReason::Completed)
    );
    let child = &ran.children()[0];
    assert_eq!(ran.tool_ends(child).len(), 4);
    let outputs: Vec<String> = (0..4).map(|i| tool_result_sent(&scenario, i)).collect();
    // Each file alone (40 KB, 10k tokens) would fit a single call's share; four at once do not.
    for out in &outputs {
        assert!(out.contains("Read on with offset="), "{out:.200}");
    }
    let together: usize = outputs.iter().map(String::len).sum();
    assert!(together < 40_000, "{together} bytes in one turn");
    let tokens = explore_request_tokens(&scenario);
    assert!(tokens.iter().all(|&t| t <= EXPLORE_CONTEXT), "{tokens:?}");
}

/// Hardening D1: a turn of 3,000 tool calls. Only the first few dozen run, the rest come back as
/// errors; the agent comes to its last call quickly, and a cancel while the host makes room for
/// it lands within 2 s.
#[tokio::test]
async fn a_turn_of_3000_tool_calls_is_capped_and_stays_cancellable() {
    let calls: Vec<_> = (0..3_000)
        .map(|i| {
            call(
                "Read",
                json!({"path": if i % 2 == 0 { "src/auth.rs" } else { "README.md" }}),
            )
        })
        .collect();
    let script = Script::new()
        .rule(main_agent_calls(vec![task("Flood", "TASK-FLOOD")], "done"))
        .rule(budget_exhausted_rule().turn(
            Turn::text(explore_result("read auth", &["src/auth.rs:3"])).first_byte_delay_ms(20_000),
        ))
        .rule(explore_rule("TASK-FLOOD").turn(Turn::tools(calls)));
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let cancelled_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let tools_done_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let final_begun_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let ends = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let fired = Arc::new(AtomicBool::new(false));
    let (c, t, f, n, once) = (
        cancelled_at.clone(),
        tools_done_at.clone(),
        final_begun_at.clone(),
        ends.clone(),
        fired.clone(),
    );
    let ran = scenario
        .run_with(&rt, None, "go", move |r, rt| match &r.event {
            TraceEvent::ToolCallEnd { tool, .. }
                if tool == "Read" && n.fetch_add(1, Ordering::SeqCst) + 1 == 3_000 =>
            {
                *t.lock().unwrap() = Some(Instant::now());
            }
            // The host now makes room for the last call (eliding old outputs), then makes it;
            // the cancel arrives meanwhile and must not wait for either.
            TraceEvent::BudgetExhausted { .. } if !once.swap(true, Ordering::SeqCst) => {
                *f.lock().unwrap() = Some(Instant::now());
                *c.lock().unwrap() = Some(Instant::now());
                assert!(rt.cancel(&r.session_id, "user"));
            }
            _ => {}
        })
        .await;
    let child = &ran.children()[0];
    let ended = ran.tool_ends(child);
    assert_eq!(ended.len(), 3_000);
    let ran_calls = ended.iter().filter(|e| e.1 == ToolStatus::Ok).count();
    assert_eq!(ran_calls, 64, "only the per-turn cap of calls ran");
    let refused = ended
        .iter()
        .filter(|e| e.1 == ToolStatus::Error && e.2.contains("too many tool calls in one turn"))
        .count();
    assert_eq!(refused, 3_000 - 64, "the rest came back as errors");

    let tools_done = tools_done_at
        .lock()
        .unwrap()
        .expect("all 3,000 calls ended");
    let final_begun = final_begun_at
        .lock()
        .unwrap()
        .expect("the child ran out of context");
    assert!(
        final_begun - tools_done < Duration::from_secs(5),
        "the child came to its last call {:?} after the tools ended",
        final_begun - tools_done
    );
    assert_eq!(ran.ended_as(child), Some(TerminalReason::Cancelled));
    let cancelled = cancelled_at.lock().unwrap().expect("cancelled");
    let child_end_ms = ran.of(child).last().unwrap().ts_ms;
    let cancel_ms = ran
        .of(child)
        .iter()
        .find(|r| matches!(r.event, TraceEvent::CancelRequested { .. }))
        .expect("the cancel was recorded")
        .ts_ms;
    assert!(
        child_end_ms - cancel_ms < 2_000,
        "the child ended {} ms after the cancel",
        child_end_ms - cancel_ms
    );
    assert!(cancelled.elapsed() < Duration::from_secs(30));
}

/// Point 2: a child whose provider counts more tokens than the host estimated finds its history
/// near the budget. The host elides the old big output first and the child carries on to complete.
#[tokio::test]
async fn near_the_budget_old_outputs_are_elided_and_the_child_carries_on() {
    let big = generated_file(30_000);
    let script = Script::new()
        .rule(main_agent_calls(vec![task("Near", "TASK-NEAR")], "done"))
        .rule(
            explore_rule("TASK-NEAR")
                .turn(Turn::tools(vec![call("Read", json!({"path": "gen.rs"}))]).usage(2_000, 50))
                // The provider counts far more than the host estimated: the history is now near
                // the 16k budget in its tokens.
                .turn(
                    Turn::tools(vec![call("Read", json!({"path": "src/auth.rs"}))])
                        .usage(15_500, 50),
                )
                .turn(Turn::text(explore_result(
                    "login is in src/auth.rs",
                    &["src/auth.rs:3"],
                ))),
        );
    let scenario = Scenario::start(script).await;
    std::fs::write(scenario.project().join("gen.rs"), &big).unwrap();
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    assert_eq!(
        ran.child_completed().map(|(r, _)| r),
        Some(TerminalReason::Completed),
        "{:?}",
        ran.child_failed()
    );
    assert!(!ran
        .events(child)
        .iter()
        .any(|e| matches!(e, TraceEvent::BudgetExhausted { .. })));
    let first = tool_result_sent(&scenario, 0);
    assert!(
        first.contains("[elided by the host to fit the context budget"),
        "{first:.300}"
    );
    let second = tool_result_sent(&scenario, 1);
    assert!(second.contains("fn login"), "the newest output stays whole");
    assert_eq!(ran.model_calls(child), 3);
}

/// Point 2: when eliding cannot make room (what fills the context is the model's own text), the
/// child ends on its context budget with a partial result, and the parent is told why.
#[tokio::test]
async fn a_child_that_really_fills_its_context_ends_with_the_reason_visible() {
    let musings = "I keep thinking out loud about the design. ".repeat(300);
    let script = Script::new()
        .rule(main_agent_calls(vec![task("Chatty", "TASK-CHATTY")], "done"))
        .rule(budget_exhausted_rule().turn(Turn::text(
            json!({"status": "completed", "summary": "ran out of room", "findings": [], "evidence": ["src/auth.rs:3"], "unresolved_questions": ["config?"]}).to_string(),
        )))
        .rule(
            explore_rule("TASK-CHATTY")
                .turn(
                    Turn {
                        text: musings.clone(),
                        ..Turn::tools(vec![call("Read", json!({"path": "src/auth.rs"}))])
                    }
                    .usage(2_000, 50),
                )
                .turn(
                    Turn {
                        text: musings.clone(),
                        ..Turn::tools(vec![call("Read", json!({"path": "src/config.rs"}))])
                    }
                    .usage(15_800, 50),
                )
                .turn(Turn::text(explore_result("never", &[]))),
        );
    let scenario = Scenario::start(script).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario.run(&rt, "go").await;
    let child = &ran.children()[0];
    assert!(ran.events(child).iter().any(|e| matches!(
        e,
        TraceEvent::BudgetExhausted {
            budget: canopy_protocol::BudgetKind::ContextTokens,
            limit: EXPLORE_CONTEXT,
            ..
        }
    )));
    let (reason, result) = ran.child_completed().expect("a partial result");
    assert_eq!(reason, TerminalReason::ContextOverflow);
    assert_eq!(result.status, canopy_protocol::ResultStatus::Partial);
    // The parent model was told how the child ended.
    let parent_saw = scenario.last_request();
    assert!(
        parent_saw.contains("ended context_overflow"),
        "{parent_saw:.400}"
    );
}

/// The main agent on a small-context model (an 8k local model): one Read of a file many times its
/// context no longer overflows it. Its output is sized to what compaction cannot remove, so the run
/// answers, and every request it sent stayed under its context budget.
#[tokio::test]
async fn the_main_agent_on_a_small_context_reads_a_big_file_and_still_answers() {
    const MAIN_CONTEXT: u64 = 8_000;
    let big = generated_file(MAIN_CONTEXT as usize * 4 * 4);
    let script = Script::new().rule(
        main_agent_rule()
            .turn(Turn::tools(vec![call("Read", json!({"path": "gen.rs"}))]))
            .turn(Turn::tools(vec![call(
                "Read",
                json!({"path": "src/auth.rs"}),
            )]))
            .turn(Turn::text(
                "gen.rs holds generated mixing functions; login is in src/auth.rs:3",
            )),
    );
    let scenario = Scenario::start(script).await;
    std::fs::write(scenario.project().join("gen.rs"), &big).unwrap();
    let rt = scenario.runtime(ProviderKind::Openai, false, |rs| {
        rs.profile_overrides
            .insert("main".into(), main_budgets(10, 200_000, 120_000));
        if let Some((b, _)) = rs.profile_overrides.get_mut("main") {
            b.max_context_tokens = MAIN_CONTEXT;
        }
    });
    let ran = scenario.run(&rt, "Look at gen.rs").await;

    assert_eq!(ran.ended_as(&ran.root), Some(TerminalReason::Completed));
    let reads = ran.tool_ends(&ran.root);
    assert_eq!(reads.len(), 2);
    assert!(reads.iter().all(|r| r.1 == ToolStatus::Ok), "{reads:?}");
    assert!(reads[0].2.contains("pub fn generated_1("));
    assert!(reads[1].2.contains("fn login"));
    let sizes: Vec<u64> = scenario
        .server
        .requests()
        .iter()
        .map(|r| r.body.to_string().len() as u64 / 4)
        .collect();
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert!(
        sizes.iter().all(|&t| t <= MAIN_CONTEXT),
        "a request passed the 8k context: {sizes:?}"
    );
}
