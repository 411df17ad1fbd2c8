//! Subagent benchmarks against the scripted loopback model server and a real `Runtime`:
//!
//! 1. Fan-out: one main turn with 8 `Task` calls to `explore`, run with parallelism 8 and with
//!    parallelism 1; wall time of the whole run and of the Task batch, and the speed-up.
//! 2. Context isolation: tokens the children consumed (sum of their reported usage) against the
//!    tokens their results added to the parent's context (the `tool` messages of the parent's next
//!    request, bytes / 4).
//!
//! Every model call answers after a fixed first-byte latency (`CANOPY_BENCH_LATENCY_MS`, default 300),
//! so the figures measure the runtime's scheduling, not a model. The children really run Grep and
//! Read over a copy of this workspace's own sources, and the mock reports usage as request bytes / 4,
//! so the token counts follow what was actually read. Run with
//! `cargo bench -p canopy-runtime --bench subagents`.
//!
//! Quick mode (`cargo test -p canopy-runtime --bench subagents`, or `CANOPY_BENCH_QUICK=1`): one run
//! per configuration with no model latency. CI runs it as a smoke test: the benchmark must still
//! complete and its own checks hold (every child completes with valid evidence, the results stay far
//! smaller than what the children read); no timing is asserted.

use std::path::Path;
use std::time::Instant;

use canopy_protocol::{EvidenceState, TerminalReason, TraceEvent, Usage};
use canopy_test_support::{call, MockServer, Rule, Script, Turn};
use serde_json::json;

#[allow(dead_code)]
mod common;

use common::{fail, median, mock_runtime, mock_settings, start, BenchResult, KEY};

const CHILDREN: usize = 8;

/// One explore job: a grep, two files to read, and where the evidence points.
struct Topic {
    tag: &'static str,
    description: &'static str,
    grep: &'static str,
    grep_path: &'static str,
    files: [&'static str; 2],
    /// Evidence: (file, text of the line to cite). The line number is looked up in the fixture.
    cite: [(&'static str, &'static str); 2],
}

const TOPICS: [Topic; CHILDREN] = [
    Topic {
        tag: "T1",
        description: "Map the permission gate",
        grep: "Precheck",
        grep_path: "runtime/src",
        files: ["runtime/src/gate.rs", "tools/src/lib.rs"],
        cite: [
            ("runtime/src/gate.rs", "pub fn precheck"),
            ("tools/src/lib.rs", "fn mutates"),
        ],
    },
    Topic {
        tag: "T2",
        description: "Explain the trace recorder",
        grep: "fn emit",
        grep_path: "runtime/src",
        files: [
            "runtime/src/trace_writer.rs",
            "runtime/src/trace_reader/file.rs",
        ],
        cite: [
            ("runtime/src/trace_writer.rs", "pub fn emit"),
            (
                "runtime/src/trace_reader/file.rs",
                "pub fn read_session_file",
            ),
        ],
    },
    Topic {
        tag: "T3",
        description: "Check the result contract",
        grep: "EvidenceState",
        grep_path: "runtime/src",
        files: ["runtime/src/contract.rs", "runtime/src/readonly_check.rs"],
        cite: [
            ("runtime/src/contract.rs", "pub fn validate"),
            ("runtime/src/readonly_check.rs", "pub fn changes"),
        ],
    },
    Topic {
        tag: "T4",
        description: "List profile invariants",
        grep: "read_only",
        grep_path: "runtime/src",
        files: ["runtime/src/profiles.rs", "host/src/settings.rs"],
        cite: [
            ("runtime/src/profiles.rs", "pub fn new(spec"),
            ("host/src/settings.rs", "pub fn runtime_settings"),
        ],
    },
    Topic {
        tag: "T5",
        description: "Find path confinement",
        grep: "outside",
        grep_path: "tools/src",
        files: ["tools/src/paths.rs", "tools/src/fsutil.rs"],
        cite: [
            ("tools/src/paths.rs", "pub fn"),
            ("tools/src/fsutil.rs", "pub fn"),
        ],
    },
    Topic {
        tag: "T6",
        description: "Describe Read output limits",
        grep: "DEFAULT_LIMIT",
        grep_path: "tools/src",
        files: ["tools/src/tools/read.rs", "tools/src/truncate.rs"],
        cite: [
            ("tools/src/tools/read.rs", "pub struct ReadArgs"),
            ("tools/src/truncate.rs", "pub fn"),
        ],
    },
    Topic {
        tag: "T7",
        description: "Trace SSE parsing and retry",
        grep: "Retry-After|retry_after",
        grep_path: "providers/src",
        files: ["providers/src/sse.rs", "providers/src/retry.rs"],
        cite: [
            ("providers/src/sse.rs", "pub"),
            ("providers/src/retry.rs", "pub"),
        ],
    },
    Topic {
        tag: "T8",
        description: "Summarise compaction and redaction",
        grep: "REDACTED",
        grep_path: "runtime/src",
        files: ["runtime/src/compaction.rs", "runtime/src/redact.rs"],
        cite: [
            ("runtime/src/compaction.rs", "pub(crate) async fn compact"),
            ("runtime/src/redact.rs", "pub fn redact"),
        ],
    },
];

/// Copies `src` (recursively, `.rs` files only) to `dst`.
fn copy_sources(src: &Path, dst: &Path) -> BenchResult<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let path = entry.path();
        let target = dst.join(entry.file_name());
        if path.is_dir() {
            copy_sources(&path, &target)?;
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            std::fs::copy(&path, &target)?;
        }
    }
    Ok(())
}

/// A fixture project made of this workspace's runtime, tools and providers sources.
fn fixture() -> BenchResult<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (name, krate) in [
        ("runtime", "canopy-runtime"),
        ("host", "canopy-host"),
        ("tools", "canopy-tools"),
        ("providers", "canopy-providers"),
    ] {
        copy_sources(
            &crates.join(krate).join("src"),
            &dir.path().join(name).join("src"),
        )?;
    }
    for t in &TOPICS {
        for f in t.files {
            if !dir.path().join(f).is_file() {
                return Err(fail(format!(
                    "fixture file {f} is missing; update the topics in benches/subagents.rs"
                )));
            }
        }
    }
    Ok(dir)
}

/// 1-based number of the first line containing `needle` (1 when absent, still a valid citation).
fn line_of(root: &Path, file: &str, needle: &str) -> BenchResult<usize> {
    let text = std::fs::read_to_string(root.join(file))?;
    Ok(text
        .lines()
        .position(|l| l.contains(needle))
        .map_or(1, |i| i + 1))
}

/// The child's final answer: a contract-conforming JSON object citing real lines.
fn final_answer(root: &Path, t: &Topic) -> BenchResult<String> {
    let mut evidence = Vec::new();
    let mut findings = Vec::new();
    for (file, needle) in t.cite {
        let line = line_of(root, file, needle)?;
        evidence.push(format!("{file}:{line}"));
        findings.push(format!(
            "`{needle}` is defined in {file} at line {line}; it is the entry point for this part."
        ));
    }
    findings.push(format!(
        "The pattern `{}` occurs across {} and ties the two files together.",
        t.grep, t.grep_path
    ));
    Ok(json!({
        "status": "completed",
        "summary": format!(
            "{}: the logic lives in {} with supporting code in {}. I read both files in full and grepped {} for `{}`; the findings cite the defining lines.",
            t.description, t.files[0], t.files[1], t.grep_path, t.grep
        ),
        "findings": findings,
        "evidence": evidence,
        "unresolved_questions": [],
    })
    .to_string())
}

fn script(root: &Path, latency_ms: u64) -> BenchResult<Script> {
    let mut script = Script::new().require_api_key(KEY);
    for t in &TOPICS {
        let answer = final_answer(root, t)?;
        script = script.rule(
            Rule::new(format!("explore {}", t.tag))
                .system_contains("explore subagent")
                .first_user_contains(format!("[{}]", t.tag))
                .turn(
                    Turn::tools(vec![
                        call("Grep", json!({"pattern": t.grep, "path": t.grep_path, "output_mode": "content"})),
                        call("Read", json!({"path": t.files[0]})),
                    ])
                    .first_byte_delay_ms(latency_ms),
                )
                .turn(Turn::tools(vec![call("Read", json!({"path": t.files[1]}))]).first_byte_delay_ms(latency_ms))
                .turn(Turn::text(answer).first_byte_delay_ms(latency_ms)),
        );
    }
    let tasks: Vec<_> = TOPICS
        .iter()
        .map(|t| {
            call(
                "Task",
                json!({
                    "description": t.description,
                    "subagent_type": "explore",
                    "prompt": format!("[{}] {}. Search with Grep, read the relevant files, and cite path:line evidence.", t.tag, t.description),
                }),
            )
        })
        .collect();
    // The host runs at most twice the parallelism of Task calls per turn, so a main agent limited
    // to one child at a time delegates in turns of two; with parallelism 8 all go in one turn.
    for parallelism in PARALLELISMS {
        let per_turn = (2 * parallelism as usize).min(CHILDREN);
        let mut rule = Rule::new(format!("main p{parallelism}"))
            .system_contains("You are Canopy")
            .first_user_contains(prompt(parallelism));
        for batch in tasks.chunks(per_turn) {
            rule = rule.turn(
                Turn::tools(batch.to_vec())
                    .with_text("I'll split this across explore subagents.")
                    .first_byte_delay_ms(latency_ms),
            );
        }
        script = script.rule(
            rule.turn(
                Turn::text(
                    "Here is the architecture map, assembled from the eight subagent reports.",
                )
                .first_byte_delay_ms(latency_ms),
            ),
        );
    }
    Ok(script)
}

/// The configurations compared: all children at once, and one at a time.
const PARALLELISMS: [u32; 2] = [8, 1];

/// The person's prompt for a run with `parallelism` (each configuration has its own main rule).
fn prompt(parallelism: u32) -> String {
    format!("Map the architecture of this project: gate, traces, contract, profiles, paths, Read, SSE, compaction. [p{parallelism}]")
}

/// What one run measured.
struct Measured {
    wall_ms: u128,
    task_batch_ms: u64,
    children_usage: Usage,
    children_tool_output_bytes: u64,
    task_result_bytes: u64,
    task_result_bytes_on_wire: u64,
}

async fn run_once(server: &MockServer, project: &Path, parallelism: u32) -> BenchResult<Measured> {
    let runtime = mock_runtime(server, &mock_settings(server, parallelism), |_| {})?;
    let common::Started {
        session,
        events: mut rx,
        traces: _traces,
    } = start(&runtime, project)?;
    let requests_before = server.requests().len();
    let started = Instant::now();
    let outcome = session.run(prompt(parallelism)).await?;
    let wall_ms = started.elapsed().as_millis();
    if outcome.terminal_reason != TerminalReason::Completed {
        return Err(fail(format!(
            "the main run ended {:?}: {:?}",
            outcome.terminal_reason, outcome.error
        )));
    }
    let mut records = Vec::new();
    while let Ok(r) = rx.try_recv() {
        records.push(r);
    }
    let root = session.session_id().to_string();
    let mut first_requested = None;
    let mut last_done = 0u64;
    let mut completed = 0;
    let mut children_usage = Usage::default();
    let mut children_tool_output_bytes = 0;
    let mut task_result_bytes = 0;
    for r in &records {
        match &r.event {
            TraceEvent::SubagentRequested { .. } if r.session_id == root => {
                first_requested.get_or_insert(r.ts_ms);
            }
            TraceEvent::SubagentCompleted {
                result,
                usage,
                terminal_reason,
                ..
            } if r.session_id == root => {
                if *terminal_reason != TerminalReason::Completed {
                    return Err(fail(format!("a child ended {terminal_reason:?}")));
                }
                if let Some(bad) = result
                    .evidence
                    .iter()
                    .find(|e| e.state != EvidenceState::Valid)
                {
                    return Err(fail(format!(
                        "evidence {} checked as {:?}",
                        bad.raw, bad.state
                    )));
                }
                completed += 1;
                children_usage.add(usage);
                last_done = last_done.max(r.ts_ms);
            }
            TraceEvent::SubagentFailed { error, .. } if r.session_id == root => {
                return Err(fail(format!("a child failed: {error}")))
            }
            TraceEvent::ToolCallEnd {
                tool, output_bytes, ..
            } if r.session_id == root && tool == "Task" => task_result_bytes += output_bytes,
            TraceEvent::ToolCallEnd { output_bytes, .. } if r.session_id != root => {
                children_tool_output_bytes += output_bytes
            }
            _ => {}
        }
    }
    if completed != CHILDREN {
        return Err(fail(format!(
            "{completed} of {CHILDREN} children completed"
        )));
    }
    let task_batch_ms = last_done.saturating_sub(first_requested.unwrap_or(last_done));
    // The parent's follow-up request, as it reached the wire: its `tool` messages are the Task results.
    let task_result_bytes_on_wire = server.requests()[requests_before..]
        .iter()
        .filter(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.contains("You are Canopy"))
        })
        .filter_map(|r| r.body["messages"].as_array())
        .map(|msgs| {
            msgs.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().map_or(0, |s| s.len() as u64))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    Ok(Measured {
        wall_ms,
        task_batch_ms,
        children_usage,
        children_tool_output_bytes,
        task_result_bytes,
        task_result_bytes_on_wire,
    })
}

/// Quick mode: asked for, or not run by `cargo bench` (which passes `--bench`).
fn quick_mode() -> bool {
    std::env::var("CANOPY_BENCH_QUICK").is_ok_and(|v| v == "1")
        || !std::env::args().any(|a| a == "--bench")
}

#[tokio::main]
async fn main() -> BenchResult<()> {
    let quick = quick_mode();
    let env_num = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let latency_ms = env_num("CANOPY_BENCH_LATENCY_MS").unwrap_or(if quick { 0 } else { 300 });
    let reps = env_num("CANOPY_BENCH_REPS")
        .unwrap_or(if quick { 1 } else { 3 })
        .max(1) as usize;
    if quick {
        println!("quick mode: a smoke test of the benchmark, not a measurement");
    }
    let project = fixture()?;
    let server = MockServer::start(script(project.path(), latency_ms)?).await?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("subagent benchmarks: {CHILDREN} explore children, {latency_ms} ms per model call, {reps} runs each, {cores} cores");

    let mut walls: Vec<(u32, Vec<f64>, Vec<f64>)> = Vec::new();
    let mut last: Option<Measured> = None;
    for parallelism in PARALLELISMS {
        let (mut wall, mut batch) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let m = run_once(&server, project.path(), parallelism).await?;
            wall.push(m.wall_ms as f64);
            batch.push(m.task_batch_ms as f64);
            last = Some(m);
        }
        println!("parallelism {parallelism}: run wall ms {wall:?}, Task batch ms {batch:?}");
        walls.push((parallelism, wall, batch));
    }
    let [(_, par_wall, par_batch), (_, seq_wall, seq_batch)] =
        <[_; 2]>::try_from(walls).map_err(|_| fail("two configurations expected"))?;
    let (pw, pb, sw, sb) = (
        median(par_wall),
        median(par_batch),
        median(seq_wall),
        median(seq_batch),
    );
    println!();
    println!("| configuration | run wall time (median) | Task batch (median) |");
    println!("|---|---|---|");
    println!("| parallelism 8 | {pw:.0} ms | {pb:.0} ms |");
    println!("| parallelism 1 | {sw:.0} ms | {sb:.0} ms |");
    println!(
        "| speed-up | {:.2}x | {:.2}x |",
        sw / pw.max(1.0),
        sb / pb.max(1.0)
    );

    let m = last.ok_or_else(|| fail("no run measured"))?;
    let result_tokens = m.task_result_bytes_on_wire.div_ceil(4);
    let child_tokens = m.children_usage.total();
    // The point of delegating: what the children read stays out of the parent.
    if m.children_tool_output_bytes < 4 * m.task_result_bytes_on_wire {
        return Err(fail(format!(
            "the children read {} bytes but handed {} to the parent: isolation is gone",
            m.children_tool_output_bytes, m.task_result_bytes_on_wire
        )));
    }
    println!();
    println!("| context isolation | value |");
    println!("|---|---|");
    println!(
        "| tokens the 8 children consumed (input + output, all calls) | {child_tokens} ({} in, {} out) |",
        m.children_usage.input_tokens, m.children_usage.output_tokens
    );
    println!(
        "| bytes the children's tools returned to them (Grep + Read) | {} (~{} tokens) |",
        m.children_tool_output_bytes,
        m.children_tool_output_bytes.div_ceil(4)
    );
    println!(
        "| bytes the 8 Task results added to the parent's next request | {} (~{result_tokens} tokens; {} in the parent's trace) |",
        m.task_result_bytes_on_wire, m.task_result_bytes
    );
    println!(
        "| isolation ratio (children's tokens / result tokens) | {:.1} |",
        child_tokens as f64 / result_tokens.max(1) as f64
    );
    println!(
        "| reading kept out of the parent (tool output bytes / result bytes) | {:.1} |",
        m.children_tool_output_bytes as f64 / m.task_result_bytes_on_wire.max(1) as f64
    );
    Ok(())
}
