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
    BudgetKind, Decision, DecisionSource, ProviderKind, ResultStatus, TerminalReason, ToolStatus,
    TraceEvent,
};
use canopy_test_support::{call, Rule, Script, Turn};
use serde_json::json;

/// A `Read` that hangs like a read of a FIFO nobody writes to: it ignores its cancel token.
struct BlockedRead;

#[async_trait::async_trait]
impl canopy_tools::Tool for BlockedRead {
    fn name(&self) -> &str {
        "Read"
    }
    fn spec(&self) -> canopy_protocol::ToolSpec {
        canopy_protocol::ToolSpec {
            name: "Read".into(),
            description: "read".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn mutates(&self) -> bool {
        false
    }
    fn summarize(&self, _args: &serde_json::Value) -> String {
        "Read".into()
    }
    async fn run(
        &self,
        _args: serde_json::Value,
        _ctx: &canopy_tools::ToolContext,
    ) -> Result<canopy_tools::ToolOutput, canopy_tools::ToolError> {
        tokio::time::sleep(Duration::from_secs(40)).await;
        Ok(canopy_tools::ToolOutput {
            content: "finally".into(),
            todos: None,
        })
    }
}

fn blocked_read_script() -> Script {
    Script::new().rule(
        Rule::new("main")
            .system_contains("You are Canopy")
            .turn(Turn::tools(vec![call("Read", json!({"path": "p"}))]))
            .turn(Turn::text("Here is what I have.")),
    )
}

fn tool_end_status(ran: &Ran, tool: &str) -> Option<ToolStatus> {
    ran.find(&ran.root, |e| match e {
        TraceEvent::ToolCallEnd {
            tool: t, status, ..
        } if t == tool => Some(*status),
        _ => None,
    })
}

#[tokio::test]
async fn a_cancel_stops_a_run_whose_tool_is_blocked() {
    let Scenario {
        server,
        project,
        traces,
    } = Scenario::start(blocked_read_script()).await;
    let rt = runtime_with_tools(
        &settings_for(&server, ProviderKind::Openai, false),
        |_| {},
        vec![Arc::new(BlockedRead)],
    );
    let started = Instant::now();
    let ran = run_prompt(
        &rt,
        project.path(),
        traces.path(),
        None,
        "read p",
        |r, rt| {
            if matches!(&r.event, TraceEvent::ToolCallBegin { tool, .. } if tool == "Read") {
                assert!(rt.cancel(&r.session_id, "user (Ctrl-C)"));
            }
        },
    )
    .await;
    assert_eq!(ran.outcome.terminal_reason, TerminalReason::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the cancel waited {:?} for the blocked tool",
        started.elapsed()
    );
    assert_eq!(tool_end_status(&ran, "Read"), Some(ToolStatus::Cancelled));
    assert!(matches!(
        ran.events(&ran.root).last(),
        Some(TraceEvent::RunEnded {
            terminal_reason: TerminalReason::Cancelled,
            ..
        })
    ));
}

#[tokio::test]
async fn the_wall_time_deadline_stops_a_blocked_tool_and_the_agent_still_answers() {
    let Scenario {
        server,
        project,
        traces,
    } = Scenario::start(blocked_read_script()).await;
    let rt = runtime_with_tools(
        &settings_for(&server, ProviderKind::Openai, false),
        |rs| {
            rs.final_call_grace_ms = 10_000;
            rs.profile_overrides
                .insert("main".into(), main_budgets(60, 2_000_000, 1_500));
        },
        vec![Arc::new(BlockedRead)],
    );
    let started = Instant::now();
    let ran = run_prompt(
        &rt,
        project.path(),
        traces.path(),
        None,
        "read p",
        |_, _| {},
    )
    .await;
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
