//! What evidence provenance costs (#12): the wall time of a scripted explore subagent on a real
//! tree with provenance tracked and without, and the memory of one agent's tracker after it was
//! shown 10,000 files.
//!
//! The subagent does what a model exploring a code base does (the plan of the `explore_budgets`
//! bench): list the files matching a symbol, grep its lines, read the two files with most matches
//! whole (cut to the agent's allowance), follow a match with `offset`/`limit`, grep a second symbol,
//! read its top file, glob a folder, read one more file, then answer citing two lines it read. Every
//! tool call runs for real on the tree; the scripted model answers at once, so model latency (seconds
//! per call with a real model) does not hide the cost: this is the worst case for the ratio. The child
//! wall time is the `elapsed_ms` its parent records in `subagent_completed` (tools, the loop, the
//! result check). "Without tracking" is `RuntimeSettings::track_provenance = false`: the tools stamp
//! nothing and report nothing seen, and the host neither tracks nor judges.
//!
//! Run with `cargo bench -p canopy-runtime --bench provenance`. The tree is the kernel that
//! `scripts/bench-search.sh` unpacks under `BENCH_TREE_DIR` (default `/tmp/canopy-bench`), or
//! `CANOPY_BENCH_TREE=path`. After criterion's own figures it runs `CANOPY_BENCH_PAIRS` (default 15)
//! interleaved with/without pairs, which load from other processes hits alike, and prints their
//! medians and ratio. Quick mode (`cargo test -p canopy-runtime --benches`, or
//! `CANOPY_BENCH_QUICK=1`): a small generated tree and one run each, checking what the bench relies
//! on (with tracking the cited lines come back grounded; without, no provenance is recorded; the
//! tracker stays under its bound) and asserting no timing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use canopy_protocol::{
    Budgets, EvidenceTrust, ModelSlot, SeenFile, SubagentResult, TerminalReason, TraceEvent,
};
use canopy_runtime::provenance::Tracker;
use canopy_test_support::{call, MockServer, Rule, Script, ScriptedCall, Turn};
use canopy_tools::{Tool, ToolContext};
use criterion::{black_box, Criterion, SamplingMode};
use serde_json::json;

#[allow(dead_code)]
mod common;

use common::{
    explore_plan, fail, generated_tree, median, mock_runtime, mock_settings, start, BenchResult,
    KEY,
};
/// Files the tracker bench records: "an agent that reads 10,000 files".
const FILES: usize = 10_000;
/// What one agent's tracker may hold after 10,000 files; the bench fails above it.
const TRACKER_BOUND_BYTES: usize = 4 * 1024 * 1024;

/// The explore budgets of the bench: the built-in context budget (so the allowance cuts as it
/// does for real), with steps, tokens and time enough for the whole plan.
const BUDGETS: Budgets = Budgets {
    max_steps: 16,
    max_context_tokens: 16_000,
    max_total_tokens: 1_000_000,
    max_wall_time_ms: 1_800_000,
};

/// One planned subagent task.
struct Task {
    turns: Vec<Vec<ScriptedCall>>,
    evidence: Vec<String>,
}

async fn plan(root: &Path, first: &str, second: &str) -> BenchResult<Task> {
    let p = explore_plan(root, first, second)
        .await?
        .ok_or_else(|| fail(format!("too few matches for `{first}` / `{second}`")))?;
    // Both citations are lines the agent was shown: the `offset`/`limit` read covers them.
    Ok(Task {
        evidence: vec![
            format!("{}:{}", p.f1, p.line1),
            format!("{}:{}", p.f1, p.line1 + 1),
        ],
        turns: p.turns,
    })
}

fn script(task: &Task) -> Script {
    let answer = json!({
        "status": "completed",
        "summary": "The symbol is defined and used where cited.",
        "findings": [format!("First use at {}", task.evidence[0])],
        "evidence": task.evidence,
        "unresolved_questions": [],
    })
    .to_string();
    let mut child = Rule::new("explore").system_contains("explore subagent");
    for calls in &task.turns {
        child = child.turn(Turn::tools(calls.clone()));
    }
    Script::new()
        .require_api_key(KEY)
        .rule(child.turn(Turn::text(answer)))
        .rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![call(
                    "Task",
                    json!({"description": "explore", "subagent_type": "explore", "prompt": "[T] Find where the symbol is used. Cite path:line evidence."}),
                )]))
                .turn(Turn::text("Explored.")),
        )
}

/// Runs the main agent delegating the task once; the child's wall time and result.
async fn run_child(
    root: &Path,
    task: &Task,
    tracking: bool,
) -> BenchResult<(Duration, SubagentResult)> {
    let server = MockServer::start(script(task)).await?;
    let runtime = mock_runtime(&server, &mock_settings(&server, 4), |rs| {
        rs.track_provenance = tracking;
        rs.profile_overrides
            .insert("explore".into(), (BUDGETS, ModelSlot::Light));
    })?;
    let common::Started {
        session,
        events: mut rx,
        traces: _traces,
    } = start(&runtime, root)?;
    let outcome = session.run("Explore.".into()).await?;
    if outcome.terminal_reason != TerminalReason::Completed {
        return Err(fail(format!("the run ended {:?}", outcome.terminal_reason)));
    }
    while let Ok(r) = rx.try_recv() {
        if let TraceEvent::SubagentCompleted {
            result,
            elapsed_ms,
            terminal_reason,
            ..
        } = r.event
        {
            if terminal_reason != TerminalReason::Completed {
                return Err(fail(format!("the child ended {terminal_reason:?}")));
            }
            return Ok((Duration::from_millis(elapsed_ms), result));
        }
    }
    Err(fail("the child did not complete"))
}

/// What the bench relies on: tracked, both citations are grounded; untracked, nothing is judged.
fn check(result: &SubagentResult, tracking: bool) -> BenchResult<()> {
    let trusts: Vec<_> = result.evidence.iter().map(|e| e.trust).collect();
    let ok = if tracking {
        trusts.iter().all(|t| *t == Some(EvidenceTrust::Grounded))
    } else {
        trusts.iter().all(Option::is_none) && result.trust.is_none()
    };
    if ok {
        Ok(())
    } else {
        Err(fail(format!(
            "tracking {tracking}: unexpected trust {trusts:?}"
        )))
    }
}

/// The records of an agent that was shown `FILES` files: each read in two pieces (its head and a
/// later range) and grepped on a few scattered lines, with a stamp each time.
fn shown_files(root_names: &[String]) -> Vec<Vec<SeenFile>> {
    (0..FILES)
        .map(|i| {
            let path = root_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("drivers/gen/sub{}/file_{i:05}.c", i % 97));
            let stamp = canopy_tools::stamp::stamp_bytes(path.as_bytes());
            let piece = |lines: Vec<[u32; 2]>| SeenFile {
                path: path.clone(),
                lines,
                stamp: Some(stamp.clone()),
                edit: None,
            };
            let n = i as u32;
            vec![
                piece(vec![[1, 400]]),
                piece(vec![[900 + n % 50, 1_020 + n % 50]]),
                piece(vec![
                    [1_500, 1_500],
                    [1_733, 1_734],
                    [2_100 + n % 7, 2_100 + n % 7],
                ]),
            ]
        })
        .collect()
}

fn record_all(results: &[Vec<SeenFile>]) -> Tracker {
    let mut t = Tracker::new();
    for r in results {
        t.record(r);
    }
    t
}

fn kernel_tree() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("CANOPY_BENCH_TREE") {
        return Some(PathBuf::from(path));
    }
    let dir = std::env::var("BENCH_TREE_DIR").unwrap_or_else(|_| "/tmp/canopy-bench".into());
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        (name.starts_with("linux-source") && e.path().join(".bench-ready").exists())
            .then(|| e.path())
    })
}

/// Up to `FILES` real paths of the tree, for the tracker's keys.
async fn tree_paths(root: &Path) -> Vec<String> {
    let out = canopy_tools::GlobTool
        .run(
            json!({"pattern": "**/*.[ch]", "max_results": FILES}),
            &ToolContext::new(root),
        )
        .await;
    out.map(|o| o.content.lines().take(FILES).map(str::to_string).collect())
        .unwrap_or_default()
}

fn main() -> BenchResult<()> {
    let quick = std::env::var("CANOPY_BENCH_QUICK").is_ok_and(|v| v == "1")
        || !std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Runtime::new()?;
    let generated = generated_tree()?;
    let (name, root, topics) = match (quick, kernel_tree()) {
        (false, Some(kernel)) => ("kernel", kernel, ("struct file_operations", "\\.unlocked_ioctl")),
        (false, None) => return Err(fail("no kernel tree: run scripts/bench-search.sh once (it unpacks it), or set CANOPY_BENCH_TREE")),
        (true, _) => {
            println!("quick mode: a smoke test of the benchmark on a small generated tree, not a measurement");
            ("generated", generated.path().canonicalize()?, ("fn handle_request", "RequestError"))
        }
    };
    let task = rt.block_on(plan(&root, topics.0, topics.1))?;

    // The bench's own checks, whatever the mode.
    for tracking in [true, false] {
        let (_, result) = rt.block_on(run_child(&root, &task, tracking))?;
        check(&result, tracking)?;
    }
    let names = rt.block_on(tree_paths(&root));
    let shown = shown_files(&names);
    let tracker = record_all(&shown);
    let bytes = tracker.approx_bytes();
    println!(
        "tracker after {FILES} files ({} recorded, 3 results each): {bytes} bytes ≈ {:.1} MB, {} bytes per file",
        tracker.len(),
        bytes as f64 / 1024.0 / 1024.0,
        bytes / FILES
    );
    if tracker.len() != FILES || bytes > TRACKER_BOUND_BYTES {
        return Err(fail(format!(
            "the tracker holds {} files in {bytes} bytes, over its {TRACKER_BOUND_BYTES}-byte bound",
            tracker.len()
        )));
    }

    let mut c = Criterion::default().configure_from_args();
    if !quick {
        c = c
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(20));
    }
    // A run that fails inside criterion's timing loop is kept and reported after it.
    let failure: std::cell::RefCell<Option<Box<dyn std::error::Error>>> =
        std::cell::RefCell::new(None);
    {
        let mut group = c.benchmark_group(format!("explore_child_{name}"));
        group.sampling_mode(SamplingMode::Flat);
        for (label, tracking) in [("tracking_on", true), ("tracking_off", false)] {
            group.bench_function(label, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        match rt.block_on(run_child(&root, &task, tracking)) {
                            Ok((d, _)) => total += d,
                            Err(e) => {
                                failure.borrow_mut().get_or_insert(e);
                            }
                        }
                    }
                    total
                })
            });
        }
        group.finish();
    }
    if let Some(e) = failure.into_inner() {
        return Err(e);
    }
    c.bench_function("tracker_record_10000_files", |b| {
        b.iter(|| black_box(record_all(&shown)).len())
    });
    c.final_summary();

    if !quick {
        let pairs: usize = std::env::var("CANOPY_BENCH_PAIRS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(15);
        let (mut on, mut off) = (Vec::new(), Vec::new());
        for _ in 0..pairs {
            on.push(rt.block_on(run_child(&root, &task, true))?.0.as_secs_f64() * 1000.0);
            off.push(rt.block_on(run_child(&root, &task, false))?.0.as_secs_f64() * 1000.0);
        }
        let ratios: Vec<f64> = on.iter().zip(&off).map(|(a, b)| a / b).collect();
        let (m_on, m_off, m_ratio) = (median(on.clone()), median(off.clone()), median(ratios));
        println!("| tree | child wall time, tracking on (median of {pairs}) | off | ratio of medians | median of paired ratios |");
        println!("|---|---|---|---|---|");
        println!(
            "| {name} | {m_on:.0} ms (min {:.0}) | {m_off:.0} ms (min {:.0}) | {:.3}× | {m_ratio:.3}× |",
            on.iter().copied().fold(f64::MAX, f64::min),
            off.iter().copied().fold(f64::MAX, f64::min),
            m_on / m_off,
        );
    }
    Ok(())
}
