//! Bash: runs a shell command in the project root, inside the OS sandbox ([`crate::sandbox`]) unless
//! the person turned it off, in its own process group so a timeout or a cancel can kill everything it
//! started (grandchildren included), with an allowlisted environment and its output capped.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use canopy_protocol::ToolKind;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::sandbox::SandboxMode;
use crate::truncate;
use crate::{args, ToolContext, ToolError, ToolOutput, TypedTool};

/// Timeout when none is given.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout a call may ask for.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Output shown to the model, stdout and stderr together.
pub const MAX_OUTPUT_BYTES: usize = 30_000;
/// How long to wait for the pipes to close after the shell exits before deciding that a background
/// process is holding them.
const PIPE_GRACE: Duration = Duration::from_millis(300);

/// Arguments of Bash.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command, run with `bash -c` in the project root.
    pub command: String,
    /// Stop the command after this many milliseconds (default 120000, at most 600000).
    #[schemars(range(min = 1, max = 600_000))]
    pub timeout_ms: Option<u64>,
    /// A few words saying what the command is for, shown to the user.
    // Read from the raw arguments by `summarize` (approval prompts), never needed to run.
    #[allow(dead_code)]
    pub description: Option<String>,
    /// Set true only when the command needs the network (installing packages, downloading, calling
    /// a server). The person is asked to allow it; without it the command has no network at all.
    pub network: Option<bool>,
}

/// The Bash tool.
pub struct BashTool;

#[async_trait]
impl TypedTool for BashTool {
    type Args = BashArgs;
    const NAME: &'static str = "Bash";
    const KIND: ToolKind = ToolKind::Execute;
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Run a shell command (`bash -c`) in the project root. stdin is empty; \
            stdout and stderr are returned (capped at 30000 characters) with the exit code. \
            Default timeout 120000 ms, at most 600000; on timeout the command and everything \
            it started are killed. Commands run in a sandbox: only the project folder and a \
            private /tmp are writable, credentials in the home folder are hidden, there is no \
            network unless you set `network: true` (the person is asked to allow it), and \
            background processes are stopped when the command ends. Use \
            Read/Grep/Glob/Edit instead of cat/grep/find/sed."
            .to_string()
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        let command = args::str_field(args, "command").unwrap_or("?");
        let first_line = command.lines().next().unwrap_or("");
        let shown = truncate::cap_line(first_line, 120);
        let line = match args::str_field(args, "description") {
            Some(d) if !d.trim().is_empty() => format!("Bash: {d} (`{shown}`)"),
            _ => format!("Bash `{shown}`"),
        };
        if self.wants_network(args) {
            format!("{line} — wants network access")
        } else {
            line
        }
    }

    fn wants_network(&self, args: &serde_json::Value) -> bool {
        args.get("network").and_then(serde_json::Value::as_bool) == Some(true)
    }

    async fn call(&self, args: BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err(ToolError::InvalidArguments(format!(
                "field `timeout_ms`: must be between 1 and {MAX_TIMEOUT_MS}, got {timeout_ms}"
            )));
        }
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "field `command`: must not be empty".to_string(),
            ));
        }
        let wants_network = args.network == Some(true);
        if wants_network && !ctx.network_allowed {
            return Err(ToolError::Refused(
                "network access was not allowed for this command; run it without `network: true`, \
                 or ask the person to allow network for it"
                    .to_string(),
            ));
        }
        if ctx.sandbox.mode == SandboxMode::Required {
            ctx.sandbox.ensure_available(&ctx.root).await?;
        }
        run_command(&args.command, timeout_ms, wants_network, ctx).await
    }
}

/// Kills the process group when dropped while armed, so a dropped future (the runtime giving up on
/// the call) cannot leave the command running.
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    fn kill(&mut self) -> bool {
        match self.pgid.take() {
            Some(pgid) => killpg(pgid, Signal::SIGKILL).is_ok(),
            None => false,
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

async fn run_command(
    command: &str,
    timeout_ms: u64,
    network: bool,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let (mut cmd, marker) =
        ctx.sandbox
            .command(&ctx.root, command, network, &ctx.env_denylist, &ctx.call_id);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| match marker {
            Some(_) => ToolError::Failed(format!("could not start the sandbox: {e}")),
            None => ToolError::Failed(format!("could not start bash: {e}")),
        })?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| ToolError::Failed("bash exited before it could be tracked".to_string()))?;
    let mut guard = GroupGuard {
        pgid: Some(Pid::from_raw(pid)),
    };

    let out_buf = Arc::new(Mutex::new(Captured::default()));
    let err_buf = Arc::new(Mutex::new(Captured::default()));
    let readers = [
        tokio::spawn(capture(child.stdout.take(), Arc::clone(&out_buf))),
        tokio::spawn(capture(child.stderr.take(), Arc::clone(&err_buf))),
    ];

    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => Ending::Exited(status),
            Err(e) => return Err(ToolError::Failed(format!("waiting for bash failed: {e}"))),
        },
        _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => Ending::TimedOut,
        _ = ctx.cancel.cancelled() => Ending::Cancelled,
    };

    let mut notes = Vec::new();
    match ending {
        Ending::Exited(_) => {
            // A background job that inherited our pipes keeps them open after the shell exits;
            // waiting for it would hang the call, so it is stopped after a short grace period.
            if wait_finished(&readers, PIPE_GRACE).await {
                guard.disarm();
            } else if guard.kill() {
                notes.push(
                    "[background processes that kept the output open were killed when the command exited]"
                        .to_string(),
                );
            }
        }
        Ending::TimedOut | Ending::Cancelled => {
            guard.kill();
            let _ = child.wait().await;
        }
    }
    // Everything in the group is dead or detached from our pipes now; a process that escaped the
    // group (setsid) could still hold them, so do not wait forever.
    wait_finished(&readers, Duration::from_secs(2)).await;
    for (reader, buf) in readers.iter().zip([&out_buf, &err_buf]) {
        if !reader.is_finished() {
            reader.abort();
            lock(buf).still_open = true;
        }
    }
    let stdout = std::mem::take(&mut *lock(&out_buf));
    let mut stderr = std::mem::take(&mut *lock(&err_buf));
    if let Some(left) = marker.and_then(|m| stderr.strip_marker(m.as_bytes())) {
        notes.push(format!(
            "[background processes still running when the command exited were stopped: {left} (nothing outlives a Bash call; run a server and its client in the same command)]"
        ));
    }

    let body = render(&stdout, &stderr);
    match ending {
        Ending::Exited(status) => {
            let code = match status.code() {
                Some(code) => format!("exit code: {code}"),
                None => {
                    use std::os::unix::process::ExitStatusExt;
                    format!(
                        "killed by signal {}",
                        status.signal().map_or("?".to_string(), |s| s.to_string())
                    )
                }
            };
            let mut content = code;
            content.push('\n');
            content.push_str(&body);
            for note in notes {
                content.push_str(&note);
                content.push('\n');
            }
            Ok(ToolOutput::text(content))
        }
        Ending::TimedOut => Err(ToolError::CommandTimedOut {
            timeout_ms,
            output: if body.trim().is_empty() || body == NO_OUTPUT {
                String::new()
            } else {
                format!("; output before the kill:\n{body}")
            },
        }),
        Ending::Cancelled => Err(ToolError::Cancelled),
    }
}

const NO_OUTPUT: &str = "(no output)\n";

/// Waits until every reader has hit end-of-file, or `limit` passes; true if all finished.
async fn wait_finished(readers: &[tokio::task::JoinHandle<()>], limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if readers.iter().all(|r| r.is_finished()) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn lock(buf: &Mutex<Captured>) -> std::sync::MutexGuard<'_, Captured> {
    buf.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One stream's output: its start and its end are kept, the middle is only counted.
#[derive(Default)]
struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped_bytes: u64,
    dropped_lines: u64,
    still_open: bool,
}

const HEAD_BYTES: usize = MAX_OUTPUT_BYTES / 2;
const TAIL_BYTES: usize = MAX_OUTPUT_BYTES / 2;

impl Captured {
    fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < HEAD_BYTES {
            let take = bytes.len().min(HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend(bytes);
        while self.tail.len() > TAIL_BYTES {
            if let Some(b) = self.tail.pop_front() {
                self.dropped_bytes += 1;
                if b == b'\n' {
                    self.dropped_lines += 1;
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Removes the sandbox wrapper's note from the end of the stream (it is written last, after
    /// everything the command wrote) and returns the count it carries.
    fn strip_marker(&mut self, marker: &[u8]) -> Option<u64> {
        const LOOK_BACK: usize = 128;
        let mut end: Vec<u8> = Vec::with_capacity(LOOK_BACK);
        let from_tail = self.tail.len().min(LOOK_BACK);
        let from_head = (LOOK_BACK - from_tail).min(self.head.len());
        end.extend_from_slice(&self.head[self.head.len() - from_head..]);
        end.extend(self.tail.iter().skip(self.tail.len() - from_tail));
        let at = end.windows(marker.len()).rposition(|w| w == marker)?;
        let rest = std::str::from_utf8(&end[at + marker.len()..]).ok()?;
        let count: u64 = rest.strip_suffix('\n')?.parse().ok()?;
        let mut remove = end.len() - at;
        while remove > 0 && self.tail.pop_back().is_some() {
            remove -= 1;
        }
        let keep = self.head.len() - remove;
        self.head.truncate(keep);
        Some(count)
    }

    /// At most `limit` bytes: the start and the end, with a marker for the middle.
    fn render(&self, limit: usize) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.dropped_bytes == 0 && self.len() <= limit {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let keep_head = self.head.len().min(limit / 2);
        let keep_tail = tail.len().min(limit - keep_head);
        let cut_head = &self.head[keep_head..];
        let cut_tail = &tail[..tail.len() - keep_tail];
        let count_nl = |s: &[u8]| s.iter().filter(|&&b| b == b'\n').count() as u64;
        let dropped_bytes = self.dropped_bytes + cut_head.len() as u64 + cut_tail.len() as u64;
        let dropped_lines = self.dropped_lines + count_nl(cut_head) + count_nl(cut_tail);
        let mut out = String::from_utf8_lossy(&self.head[..keep_head]).into_owned();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&truncate::marker(dropped_lines, dropped_bytes));
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(&tail[tail.len() - keep_tail..]));
        out
    }
}

async fn capture<R: AsyncRead + Unpin>(stream: Option<R>, into: Arc<Mutex<Captured>>) {
    let Some(mut stream) = stream else {
        return;
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => lock(&into).push(&buf[..n]),
        }
    }
}

fn render(stdout: &Captured, stderr: &Captured) -> String {
    let (out_len, err_len) = (stdout.len(), stderr.len());
    if out_len == 0 && err_len == 0 {
        return NO_OUTPUT.to_string();
    }
    // stderr is usually short and explains a failure: it keeps up to a third of the budget even
    // when stdout is huge, and takes whatever stdout leaves unused.
    let err_limit =
        err_len.min((MAX_OUTPUT_BYTES / 3).max(MAX_OUTPUT_BYTES.saturating_sub(out_len)));
    let out_limit = MAX_OUTPUT_BYTES - err_limit;
    let mut body = String::new();
    for (label, captured, limit) in [("stdout", stdout, out_limit), ("stderr", stderr, err_limit)] {
        if captured.len() == 0 && !captured.still_open {
            continue;
        }
        body.push_str(&format!("--- {label} ---\n"));
        body.push_str(&captured.render(limit));
        if !body.ends_with('\n') {
            body.push('\n');
        }
        if captured.still_open {
            body.push_str("[stream still held open by a process outside the command's group; stopped reading]\n");
        }
    }
    body
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sandbox::is_secret_env;
    use crate::tools::test_util::{project, run};
    use crate::Tool;
    use serde_json::json;

    pub(crate) fn alive(pid: i32) -> bool {
        // A killed process may linger as a zombie until its new parent reaps it; that is dead too.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
                !matches!(state, Some('Z') | Some('X'))
            }
            Err(_) => false,
        }
    }

    /// The host PID of the process whose command line is exactly `args` (a sandboxed command only
    /// knows PIDs inside its own namespace, so the tests find theirs by a unique `sleep` argument).
    pub(crate) fn host_pids(args: &[&str]) -> Vec<i32> {
        let want: Vec<u8> = args.iter().flat_map(|a| a.bytes().chain([0])).collect();
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == want) && alive(pid) {
                out.push(pid);
            }
        }
        out
    }

    pub(crate) async fn wait_dead(pid: i32) -> bool {
        for _ in 0..50 {
            if !alive(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    #[tokio::test]
    async fn reports_exit_code_and_labelled_streams() {
        let (_dir, ctx) = project();
        let out = run(
            &BashTool,
            &ctx,
            json!({"command": "echo hello; echo oops >&2; exit 3", "description": "demo"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "exit code: 3\n--- stdout ---\nhello\n--- stderr ---\noops\n"
        );
    }

    #[tokio::test]
    async fn runs_in_the_project_root_with_empty_stdin() {
        let (dir, ctx) = project();
        std::fs::write(dir.path().join("marker.txt"), "").unwrap();
        let out = run(&BashTool, &ctx, json!({"command": "ls; cat"}))
            .await
            .unwrap();
        assert_eq!(out.content, "exit code: 0\n--- stdout ---\nmarker.txt\n");
    }

    #[tokio::test]
    async fn timeout_kills_the_grandchildren_too() {
        let (dir, ctx) = project();
        let started = std::time::Instant::now();
        let err = run(
            &BashTool,
            &ctx,
            json!({"command": "sleep 100.0101 & echo $! > bg.pid; echo started; sleep 100", "timeout_ms": 700}),
        )
        .await
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        let msg = err.to_string();
        assert!(
            matches!(
                err,
                ToolError::CommandTimedOut {
                    timeout_ms: 700,
                    ..
                }
            ),
            "{msg}"
        );
        assert!(
            msg.contains("every process it started were killed"),
            "{msg}"
        );
        assert!(
            msg.contains("started"),
            "output before the kill is kept: {msg}"
        );
        let _: i32 = std::fs::read_to_string(dir.path().join("bg.pid"))
            .unwrap()
            .trim()
            .parse()
            .expect("the background sleep started");
        for _ in 0..50 {
            if host_pids(&["sleep", "100.0101"]).is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let left = host_pids(&["sleep", "100.0101"]);
        assert!(
            left.is_empty(),
            "background sleep {left:?} survived the timeout"
        );
    }

    #[tokio::test]
    async fn cancel_kills_the_command_and_its_children() {
        let (dir, ctx) = project();
        let cancel = ctx.cancel.clone();
        let task = tokio::spawn({
            let ctx = ctx.clone();
            async move {
                BashTool
                    .run(
                        json!({"command": "sleep 100.0102 & echo $! > bg.pid; sleep 100"}),
                        &ctx,
                    )
                    .await
            }
        });
        let pid_file = dir.path().join("bg.pid");
        for _ in 0..100 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let pids = host_pids(&["sleep", "100.0102"]);
        assert_eq!(pids.len(), 1, "{pids:?}");
        let pid = pids[0];
        assert!(alive(pid));
        cancel.cancel();
        let result = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
        assert!(
            wait_dead(pid).await,
            "background sleep {pid} survived the cancel"
        );
    }

    #[tokio::test]
    async fn background_job_holding_the_pipe_does_not_hang_the_call() {
        let (_dir, ctx) = project();
        let started = std::time::Instant::now();
        let out = run(&BashTool, &ctx, json!({"command": "sleep 100 & echo done"}))
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            out.content
                .starts_with("exit code: 0\n--- stdout ---\ndone\n"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("background processes"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn denylisted_and_credential_like_variables_are_not_passed() {
        let (_dir, mut ctx) = project();
        // HOME is always set for the test process, so hiding it proves the denylist is applied.
        ctx.env_denylist = Arc::new(vec!["HOME".to_string()]);
        let out = run(
            &BashTool,
            &ctx,
            json!({"command": "echo \"home=${HOME-unset} path=${PATH:+set}\""}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "exit code: 0\n--- stdout ---\nhome=unset path=set\n"
        );
        let deny: Vec<String> = vec!["MY_PROVIDER_CRED".to_string()];
        assert!(is_secret_env("MY_PROVIDER_CRED", &deny));
        assert!(is_secret_env("OPENAI_API_KEY", &deny));
        assert!(is_secret_env("GITHUB_TOKEN", &deny));
        assert!(is_secret_env("aws_secret_access_key", &deny));
        assert!(!is_secret_env("PATH", &deny));
        assert!(!is_secret_env("TOKENIZERS_PARALLELISM", &deny));
    }

    #[tokio::test]
    async fn long_output_keeps_start_and_end_with_a_marker() {
        let (_dir, ctx) = project();
        let out = run(&BashTool, &ctx, json!({"command": "seq 1 100000"}))
            .await
            .unwrap();
        assert!(
            out.content.len() < MAX_OUTPUT_BYTES + 200,
            "{}",
            out.content.len()
        );
        assert!(out
            .content
            .starts_with("exit code: 0\n--- stdout ---\n1\n2\n"));
        assert!(
            out.content.ends_with("99999\n100000\n"),
            "{}",
            &out.content[out.content.len() - 50..]
        );
        assert!(out.content.contains("… [truncated: "), "marker missing");
    }

    #[tokio::test]
    async fn bad_arguments_are_specific() {
        let (_dir, ctx) = project();
        let err = run(
            &BashTool,
            &ctx,
            json!({"command": "true", "timeout_ms": 600_001}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("field `timeout_ms`"), "{err}");
        let err = run(&BashTool, &ctx, json!({"cmd": "true"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("`cmd`"), "{err}");
    }
}
