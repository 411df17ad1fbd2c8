//! How often an explore child completes, hands in a partial result or overflows its context, on
//! real trees and under several budgets: the data behind the explore profile's built-in budgets
//! (docs/runtime.md).
//!
//! Each task is what a model exploring a code base does: list the files matching a symbol, look at
//! the matching lines, read the files with the most matches whole (the host's allowance cuts them),
//! follow one match up with `offset`/`limit`, search a second symbol, glob a folder, read one more
//! file, then answer citing lines. The plan is fixed (the scripted server does not think), but
//! every call runs for real on the tree, so what the child receives is what a model would. Each
//! run is one main agent delegating all tasks of a tree at once to explore children with the
//! budgets under test; the server records every request, so the bench also checks on the server's
//! side that no request went over its child's context budget.
//!
//! Run with `cargo bench -p canopy-runtime --bench explore_budgets`. Trees:
//! `CANOPY_BENCH_TREES=name=path,name=path` (default: this workspace, and the kernel tree that
//! `scripts/bench-search.sh` unpacks when it is there). Quick mode (`cargo test -p canopy-runtime
//! --bench explore_budgets`, or `CANOPY_BENCH_QUICK=1`): a small generated tree and the built-in
//! budgets only, where every child must complete; CI runs it as a smoke test of the bench and its
//! checks, not as a measurement.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use canopy_protocol::{Budgets, ModelSlot, TerminalReason, TraceEvent};
use canopy_runtime::profiles::EXPLORE_BUDGETS;
use canopy_test_support::{call, MockServer, Rule, Script, ScriptedCall, Turn};
use serde_json::json;

#[allow(dead_code)]
mod common;

use common::{
    explore_plan, fail, generated_tree, mock_runtime, mock_settings, start, BenchResult, KEY,
};

/// Budgets compared: the seed's explore budgets first, then larger ones, among them the built-in
/// default (checked against `EXPLORE_BUDGETS` at start, so the bench follows the real default).
const BUDGETS: [(&str, Budgets); 5] = [
    (
        "12 steps / 16k ctx / 32k total (seed)",
        budgets(12, 16_000, 32_000),
    ),
    (
        "12 steps / 16k ctx / 64k total",
        budgets(12, 16_000, 64_000),
    ),
    (
        "12 steps / 16k ctx / 96k total",
        budgets(12, 16_000, 96_000),
    ),
    (
        "12 steps / 16k ctx / 128k total (default)",
        budgets(12, 16_000, 128_000),
    ),
    (
        "16 steps / 32k ctx / 160k total",
        budgets(16, 32_000, 160_000),
    ),
];

/// Wall time is not under test: the tools' speed depends on the build and the machine (a debug
/// build grepping the kernel tree on a loaded 2-core box takes minutes), so every configuration gets
/// 30 minutes and the steps and tokens decide.
const fn budgets(steps: u32, context: u64, total: u64) -> Budgets {
    Budgets {
        max_steps: steps,
        max_context_tokens: context,
        max_total_tokens: total,
        max_wall_time_ms: 1_800_000,
    }
}

/// Symbols the tasks of a tree look for: (first, second).
fn topics(tree: &str) -> Vec<(&'static str, &'static str)> {
    match tree {
        "kernel" => vec![
            ("struct file_operations", "\\.unlocked_ioctl"),
            ("spin_lock_irqsave", "spin_unlock_irqrestore"),
            ("copy_from_user", "access_ok"),
            ("rcu_read_lock", "synchronize_rcu"),
            ("kthread_run", "kthread_should_stop"),
            ("DEFINE_MUTEX", "mutex_lock_interruptible"),
            ("module_init", "MODULE_LICENSE"),
            ("EXPORT_SYMBOL_GPL", "devm_kzalloc"),
        ],
        "generated" => vec![
            ("fn handle_request", "RequestError"),
            ("struct Config", "fn load_config"),
            ("fn retry", "Backoff"),
            ("CancellationToken", "fn cancel"),
        ],
        _ => vec![
            ("fn run_loop", "fn final_call"),
            ("TraceEvent::ToolCallEnd", "output_bytes"),
            ("CancellationToken", "child_token"),
            ("serde\\(tag = \"type\"", "rename_all"),
            ("spawn_blocking", "JoinError"),
            ("KeyOrigin", "fn of"),
            ("fn redact", "REDACTED"),
            ("Semaphore", "acquire_owned"),
        ],
    }
}

/// One task's plan, found by really searching the tree.
struct Task {
    tag: String,
    prompt: String,
    turns: Vec<Vec<ScriptedCall>>,
    evidence: Vec<String>,
}

async fn plan(root: &Path, n: usize, first: &str, second: &str) -> BenchResult<Option<Task>> {
    let Some(p) = explore_plan(root, first, second).await? else {
        return Ok(None);
    };
    let tag = format!("[T{n}]");
    Ok(Some(Task {
        prompt: format!(
            "{tag} Find where `{first}` is used and how it relates to `{second}`. Cite path:line evidence."
        ),
        tag,
        evidence: vec![format!("{}:{}", p.f1, p.line1), format!("{}:{}", p.f2, p.line2)],
        turns: p.turns,
    }))
}

fn answer(task: &Task, status: &str) -> String {
    json!({
        "status": status,
        "summary": format!("{}: the main uses are in {} and {}.", task.tag, task.evidence[0], task.evidence[1]),
        "findings": [format!("First use at {}", task.evidence[0])],
        "evidence": task.evidence,
        "unresolved_questions": [],
    })
    .to_string()
}

fn script(tasks: &[Task]) -> Script {
    let mut script = Script::new().require_api_key(KEY);
    for t in tasks {
        // The last, tool-less call after a budget ran out hands in what was found.
        script = script.rule(
            Rule::new(format!("final {}", t.tag))
                .system_contains("your budget is exhausted")
                .first_user_contains(t.tag.clone())
                .turn(Turn::text(answer(t, "partial"))),
        );
        let mut rule = Rule::new(format!("explore {}", t.tag))
            .system_contains("explore subagent")
            .first_user_contains(t.tag.clone());
        for calls in &t.turns {
            rule = rule.turn(Turn::tools(calls.clone()));
        }
        script = script.rule(rule.turn(Turn::text(answer(t, "completed"))));
    }
    let tasks: Vec<ScriptedCall> = tasks
        .iter()
        .map(|t| {
            call(
                "Task",
                json!({"description": t.tag, "subagent_type": "explore", "prompt": t.prompt}),
            )
        })
        .collect();
    script.rule(
        Rule::new("main")
            .system_contains("You are Canopy")
            .turn(Turn::tools(tasks))
            .turn(Turn::text("All explored.")),
    )
}

/// What the children of one run did.
#[derive(Default, Debug)]
struct Tally {
    completed: usize,
    partial: usize,
    overflow: usize,
    failed: usize,
    reasons: BTreeMap<String, usize>,
    /// Largest request a child sent, as the server counted it (bytes / 4), and the child budget.
    max_request_tokens: u64,
    total_tokens: Vec<u64>,
    tool_calls: Vec<u32>,
}

async fn run(root: &Path, tasks: &[Task], b: Budgets) -> BenchResult<Tally> {
    let server = MockServer::start(script(tasks)).await?;
    let runtime = mock_runtime(&server, &mock_settings(&server, 8), |rs| {
        rs.profile_overrides
            .insert("explore".into(), (b, ModelSlot::Light));
    })?;
    let common::Started {
        session,
        events: mut rx,
        traces: _traces,
    } = start(&runtime, root)?;
    let outcome = session.run("Explore these topics.".into()).await?;
    if outcome.terminal_reason != TerminalReason::Completed {
        return Err(fail(format!(
            "the main run ended {:?}: {:?}",
            outcome.terminal_reason, outcome.error
        )));
    }
    let root_id = session.session_id().to_string();
    let mut t = Tally::default();
    while let Ok(r) = rx.try_recv() {
        if r.session_id != root_id {
            continue;
        }
        let (reason, partial, usage, calls) = match &r.event {
            TraceEvent::SubagentCompleted {
                terminal_reason,
                result,
                usage,
                tool_calls,
                ..
            } => (
                *terminal_reason,
                result.status == canopy_protocol::ResultStatus::Partial,
                usage.total(),
                *tool_calls,
            ),
            TraceEvent::SubagentFailed {
                terminal_reason,
                usage,
                tool_calls,
                ..
            } => {
                t.failed += 1;
                (*terminal_reason, false, usage.total(), *tool_calls)
            }
            _ => continue,
        };
        let word = serde_json::to_value(reason)?
            .as_str()
            .unwrap_or_default()
            .to_string();
        *t.reasons.entry(word).or_default() += 1;
        t.total_tokens.push(usage);
        t.tool_calls.push(calls);
        if matches!(&r.event, TraceEvent::SubagentCompleted { .. }) {
            match reason {
                TerminalReason::ContextOverflow => t.overflow += 1,
                TerminalReason::Completed if !partial => t.completed += 1,
                _ => t.partial += 1,
            }
        }
    }
    if t.total_tokens.len() != tasks.len() {
        return Err(fail(format!(
            "{} of {} children reported back",
            t.total_tokens.len(),
            tasks.len()
        )));
    }
    t.max_request_tokens = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .filter(|body| body.contains("explore subagent"))
        .map(|body| body.len() as u64 / 4)
        .max()
        .unwrap_or(0);
    // The host's promise: no request of a child goes over the child's context budget.
    if t.max_request_tokens > b.max_context_tokens {
        return Err(fail(format!(
            "a child sent a request of {} tokens over its {}-token context budget",
            t.max_request_tokens, b.max_context_tokens
        )));
    }
    Ok(t)
}

fn median<T: Copy + Ord + Default>(mut v: Vec<T>) -> T {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn trees(quick: bool) -> BenchResult<Vec<(String, PathBuf)>> {
    if let Ok(list) = std::env::var("CANOPY_BENCH_TREES") {
        return list
            .split(',')
            .map(|item| {
                let (name, path) = item.split_once('=').ok_or_else(|| {
                    fail(format!("CANOPY_BENCH_TREES: `{item}` is not name=path"))
                })?;
                Ok((name.to_string(), PathBuf::from(path)))
            })
            .collect();
    }
    if quick {
        return Ok(Vec::new());
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .canonicalize()?;
    let mut out = vec![("workspace".to_string(), workspace)];
    let bench_dir = std::env::var("BENCH_TREE_DIR").unwrap_or_else(|_| "/tmp/canopy-bench".into());
    if let Ok(entries) = std::fs::read_dir(&bench_dir) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("linux-source") {
                out.push(("kernel".to_string(), e.path()));
            }
        }
    }
    Ok(out)
}

#[tokio::main]
async fn main() -> BenchResult<()> {
    let default = EXPLORE_BUDGETS;
    let listed = BUDGETS
        .iter()
        .find(|(label, _)| label.contains("(default)"));
    if listed.is_none_or(|(_, b)| {
        (b.max_steps, b.max_context_tokens, b.max_total_tokens)
            != (
                default.max_steps,
                default.max_context_tokens,
                default.max_total_tokens,
            )
    }) {
        return Err(fail(format!(
            "the built-in explore budgets changed ({default:?}): update the `(default)` row of BUDGETS"
        )));
    }
    let quick = std::env::var("CANOPY_BENCH_QUICK").is_ok_and(|v| v == "1")
        || !std::env::args().any(|a| a == "--bench");
    let generated = generated_tree()?;
    let mut trees = trees(quick)?;
    if quick && trees.is_empty() {
        println!("quick mode: a smoke test of the benchmark on a small generated tree, not a measurement");
        trees.push(("generated".into(), generated.path().to_path_buf()));
    }
    // `CANOPY_BENCH_BUDGETS=128k,160k` runs only the configurations whose label mentions one of them.
    // Quick mode runs the built-in budgets only.
    let only = std::env::var("CANOPY_BENCH_BUDGETS").unwrap_or_else(|_| {
        if quick {
            "(default)".into()
        } else {
            String::new()
        }
    });
    let configs: Vec<(&str, Budgets)> = BUDGETS
        .iter()
        .copied()
        .filter(|(label, _)| only.is_empty() || only.split(',').any(|w| label.contains(w.trim())))
        .collect();
    println!("| tree | budgets | tasks | completed | partial | context overflow | failed | how they ended | median tokens | median tool calls | largest request (tokens) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, root) in &trees {
        let mut tasks = Vec::new();
        for (i, (a, b)) in topics(name).into_iter().enumerate() {
            if let Some(task) = plan(root, i + 1, a, b).await? {
                tasks.push(task);
            }
        }
        if tasks.is_empty() {
            return Err(fail(format!("no task found matches in tree {name}")));
        }
        for (label, b) in &configs {
            let t = run(root, &tasks, *b).await?;
            println!(
                "| {name} | {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} of {} |",
                tasks.len(),
                t.completed,
                t.partial,
                t.overflow,
                t.failed,
                t.reasons
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                median(t.total_tokens.clone()),
                median(t.tool_calls.clone()),
                t.max_request_tokens,
                b.max_context_tokens,
            );
            if t.failed > 0 {
                eprintln!("  ended as: {:?}", t.reasons);
            }
            // With the built-in budgets, the generated tree's small tasks all finish.
            if quick && t.completed != tasks.len() {
                return Err(fail(format!(
                    "with the built-in budgets not every child completed: {:?}",
                    t.reasons
                )));
            }
        }
    }
    Ok(())
}
