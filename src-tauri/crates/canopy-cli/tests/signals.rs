//! Ctrl-C as a person at a terminal presses it, sent as real SIGINTs to the real binary: the first
//! cancels the run gracefully (the trace gets `run_ended cancelled`), a second one exits at once
//! with 130 even when the process is stuck. SIGTERM and SIGHUP stop a run the same way, Bash
//! commands included.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use canopy_test_support::{MockServer, Rule, Script, Turn};

const KEY: &str = "sk-test-signals-0123456789abcdef";

/// A model that takes a minute to say anything: the run sits in its first model call.
async fn slow_server() -> MockServer {
    MockServer::start(
        Script::new().require_api_key(KEY).rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::text("too late").first_byte_delay_ms(60_000)),
        ),
    )
    .await
    .expect("server")
}

struct Run {
    child: Child,
    stderr: mpsc::Receiver<String>,
    seen: Vec<String>,
    traces: PathBuf,
    _dirs: tempfile::TempDir,
}

impl Run {
    fn start(server: &MockServer, stdout: Stdio) -> Run {
        Run::start_with(server, stdout, &[])
    }

    fn start_with(server: &MockServer, stdout: Stdio, extra: &[&str]) -> Run {
        let dirs = tempfile::tempdir().expect("tmp");
        let project = dirs.path().join("project");
        std::fs::create_dir(&project).expect("mkdir");
        std::fs::write(project.join("lib.rs"), "pub fn f() {}\n").expect("write");
        let traces = dirs.path().join("traces");
        let mut child = Command::new(env!("CARGO_BIN_EXE_canopy-cli"))
            .args(["run", "--project"])
            .arg(&project)
            .arg("--trace-dir")
            .arg(&traces)
            .args(extra)
            .args(["--json", "say something"])
            .env("CANOPY_CONFIG_DIR", dirs.path().join("config"))
            .env("CANOPY_DATA_DIR", dirs.path().join("data"))
            .env("CANOPY_MAIN_PROVIDER", "openai")
            .env("CANOPY_MAIN_BASE_URL", server.openai_base_url())
            .env("CANOPY_MAIN_MODEL", "mock-main")
            .env("CANOPY_LIGHT_MODEL", "mock-main")
            .env("CANOPY_MAIN_API_KEY", KEY)
            .env("CANOPY_LIGHT_API_KEY", KEY)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn canopy-cli");
        // Drained all the time, so progress output never blocks the process on a full pipe.
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Run {
            child,
            stderr: rx,
            seen: Vec::new(),
            traces,
            _dirs: dirs,
        }
    }

    fn interrupt(&self) {
        self.signal("-INT");
    }

    fn signal(&self, which: &str) {
        let status = Command::new("kill")
            .args([which, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Waits until a stderr line contains `needle`.
    fn wait_stderr(&mut self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.seen.iter().any(|l| l.contains(needle)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "no {needle:?} on stderr in {limit:?}:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn drain_stderr(&mut self) -> String {
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn trace_text(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}

fn run_ended_cancelled(trace: &str) -> bool {
    trace
        .lines()
        .any(|l| l.contains("\"run_ended\"") && l.contains("\"cancelled\""))
}

async fn wait_for_model_call(server: &MockServer) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.requests().is_empty() {
        assert!(Instant::now() < deadline, "the run never called the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_ctrl_c_cancels_the_run_gracefully() {
    let server = slow_server().await;
    let mut run = Run::start(&server, Stdio::piped());
    wait_for_model_call(&server).await;
    run.interrupt();
    let status = run
        .wait_exit(Duration::from_secs(10))
        .expect("the run did not stop after Ctrl-C");
    let stderr = run.drain_stderr();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("canopy-cli: cancelling (press Ctrl-C again to abort at once)"),
        "{stderr}"
    );
    assert!(!stderr.contains("aborting"), "{stderr}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut run.child.stdout.take().expect("stdout"), &mut out)
        .expect("read stdout");
    let summary: serde_json::Value = serde_json::from_str(&out).expect("json summary");
    assert_eq!(summary["terminal_reason"], "cancelled", "{out}");
    assert!(run_ended_cancelled(&trace_text(&run.traces)));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_ctrl_c_exits_at_once_with_130_when_the_process_is_stuck() {
    let server = slow_server().await;
    // Stdout is a pipe nobody reads, already full: after the graceful cancel the process blocks
    // printing its summary, as it would under a pager that stopped reading. Only the second
    // Ctrl-C can end it.
    let (reader, writer) = std::io::pipe().expect("pipe");
    let mut filler = writer.try_clone().expect("clone");
    std::thread::spawn(move || {
        let block = vec![b'x'; 1 << 20];
        let _ = filler.write_all(&block);
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut run = Run::start(&server, Stdio::from(writer));
    wait_for_model_call(&server).await;

    run.interrupt();
    run.wait_stderr("cancelling", Duration::from_secs(10));
    // The first Ctrl-C still cancels gracefully: the run ends and the trace says so.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !run_ended_cancelled(&trace_text(&run.traces)) {
        assert!(
            Instant::now() < deadline,
            "no run_ended cancelled in the trace"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // …and the process is now stuck on its full stdout.
    assert!(
        run.wait_exit(Duration::from_millis(500)).is_none(),
        "expected the process to be blocked on stdout"
    );

    let sent = Instant::now();
    run.interrupt();
    let status = run
        .wait_exit(Duration::from_secs(5))
        .expect("a second Ctrl-C did not end the process");
    let took = sent.elapsed();
    let stderr = run.drain_stderr();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("canopy-cli: aborting"), "{stderr}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    drop(reader);
}

/// A model whose first turn runs `command` (a long one) in Bash, then waits.
async fn bash_server(command: &str) -> MockServer {
    MockServer::start(
        Script::new().require_api_key(KEY).rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![canopy_test_support::call(
                    "Bash",
                    serde_json::json!({"command": command}),
                )]))
                .turn(Turn::text("too late").first_byte_delay_ms(60_000)),
        ),
    )
    .await
    .expect("server")
}

/// Processes whose command line is exactly `marker`.
fn marker_processes(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (text.trim() == marker).then(|| e.file_name().to_string_lossy().to_string())
        })
        .collect()
}

/// `marker` is a command line no other process has (each test its own): how the test finds the
/// Bash call's process.
async fn a_stop_signal_during_bash_cancels_like_ctrl_c(which: &str, name: &str, marker: &str) {
    let server = bash_server(marker).await;
    let mut run = Run::start_with(&server, Stdio::piped(), &["--allow", "bash"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while marker_processes(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the Bash command never started:\n{}",
            run.drain_stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run.signal(which);
    let status = run
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("the run did not stop after {name}"));
    let stderr = run.drain_stderr();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("canopy-cli: cancelling on {name}")),
        "{stderr}"
    );
    assert!(
        run_ended_cancelled(&trace_text(&run.traces)),
        "no run_ended cancelled in the trace:\n{}",
        trace_text(&run.traces)
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !marker_processes(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the Bash command outlived the CLI: {:?}",
            marker_processes(marker)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_bash_call_cancels_the_run_and_stops_the_command() {
    a_stop_signal_during_bash_cancels_like_ctrl_c("-TERM", "SIGTERM", "sleep 313.25").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_during_a_bash_call_cancels_the_run_and_stops_the_command() {
    a_stop_signal_during_bash_cancels_like_ctrl_c("-HUP", "SIGHUP", "sleep 313.5").await;
}
