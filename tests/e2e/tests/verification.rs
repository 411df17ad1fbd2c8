//! The optional verification gate: the `verify` profile checks the main agent's final answer; a FAIL
//! sends its reasons back to the main agent once, a PASS lets the answer stand.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use canopy_e2e::*;
use canopy_protocol::{ProviderKind, TerminalReason, TraceEvent, Verdict};
use canopy_test_support::{Script, Turn};
use serde_json::json;

fn script(verdict: &str) -> Script {
    let reasons = if verdict == "PASS" {
        json!([])
    } else {
        json!(["src/auth.rs:3 takes two arguments, not one"])
    };
    Script::new()
        .rule(
            main_agent_rule()
                .turn(Turn::text("login takes one argument (src/auth.rs:3)."))
                .turn(Turn::text("Correction: login takes a user and a password (src/auth.rs:3).")),
        )
        .rule(verify_rule().turn(Turn::text(
            json!({"verdict": verdict, "reasons": reasons, "summary": "checked the signature", "findings": [], "evidence": ["src/auth.rs:3"], "unresolved_questions": []})
                .to_string(),
        )))
}

#[tokio::test]
async fn a_failed_verification_sends_the_reasons_back_once() {
    let scenario = Scenario::start(script("FAIL")).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |rs| rs.verification_gate = true);
    let ran = scenario
        .run(&rt, "How many arguments does login take?")
        .await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Completed);
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("Correction: login takes a user and a password (src/auth.rs:3).")
    );
    let verdicts: Vec<Verdict> = ran
        .events(&ran.root)
        .into_iter()
        .filter_map(|e| match e {
            TraceEvent::SubagentCompleted { result, .. } => result.verdict,
            _ => None,
        })
        .collect();
    assert_eq!(verdicts, [Verdict::Fail], "verified once, not in a loop");
    assert!(ran
        .events(&ran.root)
        .iter()
        .any(|e| matches!(e, TraceEvent::SubagentRequested { profile, model_slot, .. } if profile == "verify" && *model_slot == canopy_protocol::ModelSlot::Main)));
    let last_main = scenario
        .server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("You are Canopy"))
        .expect("main request");
    assert!(
        last_main
            .body
            .to_string()
            .contains("takes two arguments, not one"),
        "the reasons reached the main agent"
    );
}

#[tokio::test]
async fn a_passing_verification_lets_the_answer_stand() {
    let scenario = Scenario::start(script("PASS")).await;
    let rt = scenario.runtime(ProviderKind::Anthropic, true, |rs| {
        rs.verification_gate = true
    });
    let ran = scenario
        .run(&rt, "How many arguments does login take?")
        .await;
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("login takes one argument (src/auth.rs:3).")
    );
    assert_eq!(ran.children().len(), 1);
    let main_calls = ran.model_calls(&ran.root);
    assert_eq!(main_calls, 1);
}

#[tokio::test]
async fn the_gate_is_off_by_default() {
    let scenario = Scenario::start(script("FAIL")).await;
    let rt = scenario.runtime(ProviderKind::Openai, true, |_| {});
    let ran = scenario
        .run(&rt, "How many arguments does login take?")
        .await;
    assert!(ran.children().is_empty());
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("login takes one argument (src/auth.rs:3).")
    );
}
