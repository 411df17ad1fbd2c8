//! The CLI as a person runs it: `run` against the scripted model server through the environment
//! overrides, `trace show` on what it recorded, `models check`, and the missing-key message.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use canopy_test_support::{call, MockServer, Rule, Script, Turn};
use serde_json::json;

const KEY: &str = "sk-test-cli-0123456789abcdefSECRET";

fn script() -> Script {
    let result = |s: &str, ev: &str| {
        json!({"status": "completed", "summary": s, "findings": [s], "evidence": [ev], "unresolved_questions": []}).to_string()
    };
    Script::new()
        .require_api_key(KEY)
        .rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![
                    call("Task", json!({"description": "Find the login code", "prompt": "TASK-A find login", "subagent_type": "explore"})),
                    call("Task", json!({"description": "Read the README", "prompt": "TASK-B read the readme", "subagent_type": "explore"})),
                ]))
                .turn(Turn::tools(vec![call("Read", json!({"path": "notes.txt"}))]))
                .turn(Turn::tools(vec![call("Edit", json!({"path": "notes.txt", "old_string": "draft", "new_string": "final"}))]))
                .turn(Turn::text("All done.")),
        )
        .rule(Rule::new("a").first_user_contains("TASK-A").turn(Turn::tools(vec![call("Grep", json!({"pattern": "login"}))])).turn(Turn::text(result("login in lib.rs", "lib.rs:1"))))
        .rule(Rule::new("b").first_user_contains("TASK-B").turn(Turn::tools(vec![call("Read", json!({"path": "notes.txt"}))])).turn(Turn::text(result("notes say draft", "notes.txt:1"))))
}

struct Env {
    dirs: tempfile::TempDir,
    base_url: String,
}

impl Env {
    fn cli(&self, args: &[&str], with_key: bool) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_canopy-cli"));
        c.args(args)
            .env("CANOPY_CONFIG_DIR", self.dirs.path().join("config"))
            .env("CANOPY_DATA_DIR", self.dirs.path().join("data"))
            .env("CANOPY_MAIN_PROVIDER", "openai")
            .env("CANOPY_MAIN_BASE_URL", &self.base_url)
            .env("CANOPY_MAIN_MODEL", "mock-main")
            .env("CANOPY_LIGHT_MODEL", "mock-light")
            .env_remove("CANOPY_MAIN_API_KEY")
            .env_remove("CANOPY_LIGHT_API_KEY");
        if with_key {
            c.env("CANOPY_MAIN_API_KEY", KEY)
                .env("CANOPY_LIGHT_API_KEY", KEY);
        }
        c
    }
}

async fn output(mut c: Command) -> Output {
    tokio::task::spawn_blocking(move || c.output().expect("run canopy-cli"))
        .await
        .expect("join")
}

fn project() -> tempfile::TempDir {
    let p = tempfile::tempdir().expect("tmp");
    std::fs::write(p.path().join("lib.rs"), "pub fn login() {}\n").expect("write");
    std::fs::write(p.path().join("notes.txt"), "draft\n").expect("write");
    p
}

#[tokio::test(flavor = "multi_thread")]
async fn run_then_trace_show_prints_the_tree_with_budgets() {
    let server = MockServer::start(script()).await.expect("server");
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: server.openai_base_url(),
    };
    let project = project();
    let traces = env.dirs.path().join("traces");
    let out = output(env.cli(
        &[
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "--trace-dir",
            traces.to_str().expect("utf8"),
            "--allow",
            "edit",
            "--json",
            "Look around and finalise the notes",
        ],
        true,
    ))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}\n{stderr}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json summary");
    assert_eq!(summary["terminal_reason"], "completed");
    assert_eq!(summary["final_text"], "All done.");
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.txt")).expect("read"),
        "final\n"
    );
    assert!(
        stderr.contains("[explore: Find the login code] Grep"),
        "progress names the subagent:\n{stderr}"
    );
    assert!(!stderr.contains(KEY));

    let show = output(env.cli(&["trace", "show", traces.to_str().expect("utf8")], false)).await;
    let tree = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(
        tree.starts_with("main — completed (completed) — mock-main [main]"),
        "{tree}"
    );
    assert!(
        tree.contains(
            "explore \"Find the login code\" — completed (completed) — mock-light [light]"
        ),
        "{tree}"
    );
    assert!(tree.contains("explore \"Read the README\""), "{tree}");
    assert!(
        tree.contains("steps 2/12"),
        "child budgets used/limit: {tree}"
    );
    for entry in std::fs::read_dir(&traces).expect("traces") {
        assert!(!std::fs::read_to_string(entry.expect("e").path())
            .expect("read")
            .contains(KEY));
    }

    // One file shows that session's own tree: a subagent's file shows it alone, not its parent.
    let child = std::fs::read_dir(&traces)
        .expect("traces")
        .map(|e| e.expect("e").path())
        .find(|p| {
            let text = std::fs::read_to_string(p).expect("read");
            let first: serde_json::Value =
                serde_json::from_str(text.lines().next().expect("a record")).expect("json");
            first["parent_session_id"].is_string() && text.contains("Find the login code")
        })
        .expect("the login explorer's trace file");
    let one = output(env.cli(&["trace", "show", child.to_str().expect("utf8")], false)).await;
    let shown = String::from_utf8_lossy(&one.stdout);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert!(
        shown.starts_with("explore \"Find the login code\" — completed"),
        "{shown}"
    );
    assert!(
        !shown.contains("main —") && !shown.contains("Read the README"),
        "{shown}"
    );

    let missing = traces.join("s-0000000000000000.jsonl");
    let gone = output(env.cli(&["trace", "show", missing.to_str().expect("utf8")], false)).await;
    assert!(!gone.status.success());
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("no trace file at"),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_allow_the_edit_is_denied_and_the_exit_code_still_reflects_the_run() {
    let server = MockServer::start(script()).await.expect("server");
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: server.openai_base_url(),
    };
    let project = project();
    let out = output(env.cli(
        &[
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "go",
        ],
        true,
    ))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Edit denied"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.txt")).expect("read"),
        "draft\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "All done.");
}

#[tokio::test(flavor = "multi_thread")]
async fn models_check_reports_each_slot() {
    let server = MockServer::start(
        Script::new()
            .require_api_key(KEY)
            .rule(Rule::new("any").turn(Turn::text("ok"))),
    )
    .await
    .expect("server");
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: server.openai_base_url(),
    };
    let ok = output(env.cli(&["models", "check"], true)).await;
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{text}");
    assert!(
        text.contains("main: OK — openai mock-main")
            && text.contains("light: OK — openai mock-light"),
        "{text}"
    );
    // A wrong key is reported per slot, as an authentication failure.
    let mut bad = env.cli(&["models", "check"], false);
    bad.env("CANOPY_MAIN_API_KEY", "sk-wrong-key-000000000000000000");
    let bad = output(bad).await;
    let text = String::from_utf8_lossy(&bad.stdout);
    assert!(!bad.status.success());
    assert!(
        text.contains("main: FAILED") && text.contains("authentication failed"),
        "{text}"
    );
    assert!(!text.contains("sk-wrong-key"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_endpoint_without_a_key_names_both_ways_to_provide_one() {
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: "https://models.example.invalid/v1".into(),
    };
    let project = project();
    let mut c = env.cli(
        &[
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "hi",
        ],
        false,
    );
    // No Secret Service either: the message must still be clear.
    c.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    let out = output(c).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("CANOPY_MAIN_API_KEY") && stderr.contains("keychain"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_the_model_quotes_never_reaches_stdout_or_stderr() {
    let quoting = || {
        Script::new().require_api_key(KEY).rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::text(format!(
                    "The keys in your env: the main one is {KEY} ok"
                ))),
        )
    };
    for json in [false, true] {
        // A fresh server per run: its script's turns are used up by one run.
        let server = MockServer::start(quoting()).await.expect("server");
        let env = Env {
            dirs: tempfile::tempdir().expect("tmp"),
            base_url: server.openai_base_url(),
        };
        let project = project();
        let mut args = vec!["run", "--project", project.path().to_str().expect("utf8")];
        if json {
            args.push("--json");
        }
        args.push("what keys do I have?");
        let out = output(env.cli(&args, true)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "json={json}: {stderr}");
        assert!(
            stdout.contains("the main one is [REDACTED] ok"),
            "json={json}: the answer is printed, redacted: {stdout}"
        );
        for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !text.contains(KEY) && !text.contains("0123456789abcdef"),
                "json={json}: the key reached {name}: {text}"
            );
        }
    }
}

/// A control sequence that clears the screen, a window-title change, and a fake progress line.
const HOSTILE: &str = "x\u{1b}[2J\u{1b}]0;owned\u{7}\n[main] ended: completed — 0 steps\r";

#[tokio::test(flavor = "multi_thread")]
async fn model_chosen_text_cannot_drive_the_terminal_or_fake_progress_lines() {
    let result = json!({"status": "completed", "summary": "ok", "findings": ["ok"], "evidence": ["lib.rs:1"], "unresolved_questions": []}).to_string();
    let script = Script::new()
        .require_api_key(KEY)
        .rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![
                    call(format!("Read{HOSTILE}"), json!({"path": HOSTILE})),
                    call(
                        "Task",
                        json!({"description": format!("Look{HOSTILE}"), "prompt": "TASK-H look", "subagent_type": "explore"}),
                    ),
                ]))
                .turn(Turn::text(format!("Answer line one\nline two{HOSTILE}"))),
        )
        .rule(
            Rule::new("h")
                .first_user_contains("TASK-H")
                .turn(Turn::tools(vec![call("Grep", json!({"pattern": HOSTILE}))]))
                .turn(Turn::text(result)),
        );
    let server = MockServer::start(script).await.expect("server");
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: server.openai_base_url(),
    };
    let project = project();
    let traces = env.dirs.path().join("traces");
    let out = output(env.cli(
        &[
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "--trace-dir",
            traces.to_str().expect("utf8"),
            "look",
        ],
        true,
    ))
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}\n{stderr}", out.status);
    let show = output(env.cli(&["trace", "show", traces.to_str().expect("utf8")], false)).await;
    let tree = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success());
    for (what, text) in [
        ("stdout", &stdout),
        ("stderr", &stderr),
        ("trace show", &tree),
    ] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'),
            "{what} passes control characters through:\n{text:?}"
        );
    }
    let fake_ends = stderr
        .lines()
        .filter(|l| l.starts_with("[main] ended: completed"))
        .count();
    assert_eq!(fake_ends, 1, "only the real end line:\n{stderr}");
    // What was escaped is still there to read.
    assert!(stderr.contains("\\x1b[2J"), "{stderr}");
    assert!(tree.contains("Lookx\\x1b[2J"), "{tree}");
    // The answer keeps its own line breaks.
    assert!(stdout.contains("Answer line one\nline two"), "{stdout}");
}

fn record(id: &str, parent: Option<&str>, seq: u64, ts: u64, event: serde_json::Value) -> String {
    json!({"v": 1, "seq": seq, "ts_ms": ts, "session_id": id, "run_id": "r-1", "parent_session_id": parent, "event": event}).to_string()
}

/// A session file as the runtime writes it: started, one run, ended.
fn session_file(dir: &std::path::Path, id: &str, parent: Option<&str>, ts: u64) {
    let agent = if parent.is_some() { "subagent" } else { "main" };
    let lines = [
        record(
            id,
            parent,
            0,
            ts,
            json!({"type": "session_started", "agent": agent, "profile": if parent.is_some() { "explore" } else { "main" }, "description": parent.map(|_| format!("task {id}")),
            "model": {"slot": "main", "requested_slot": "main", "fallback": false, "provider": "openai", "model_id": "m", "base_url": "http://127.0.0.1:1/v1"},
            "budgets": {"max_steps": 10, "max_context_tokens": 1000, "max_total_tokens": 10000, "max_wall_time_ms": 60000},
            "project_root": "/p", "parent": null, "permission_mode": "main", "tools": ["Read"], "system_prompt": "p"}),
        ),
        record(
            id,
            parent,
            1,
            ts + 1,
            json!({"type": "run_started", "prompt": "go"}),
        ),
        record(
            id,
            parent,
            2,
            ts + 2,
            json!({"type": "run_ended", "terminal_reason": "completed", "final_text": null, "result": null, "error": null,
            "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": false}, "usage_with_descendants": {"input_tokens": 1, "output_tokens": 1, "estimated": false},
            "totals": {"steps": 1, "context_tokens": 1, "total_tokens": 2, "wall_time_ms": 5}, "tool_calls": 0}),
        ),
    ];
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").expect("write");
}

/// `trace show` with a time limit: a reader that loops must fail the test, not hang it.
fn show_within(env: &Env, path: &std::path::Path, secs: u64) -> (bool, String, String) {
    let mut child = env
        .cli(&["trace", "show", path.to_str().expect("utf8")], false)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`trace show {}` did not finish in {secs}s", path.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err);
    (status.success(), reader.join().expect("reader"), err)
}

#[test]
fn trace_show_survives_parent_cycles_and_a_3000_deep_chain() {
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: "http://127.0.0.1:9/v1".into(),
    };
    let cycle = env.dirs.path().join("cycle");
    std::fs::create_dir(&cycle).expect("mkdir");
    session_file(&cycle, "s-a", Some("s-b"), 1_000);
    session_file(&cycle, "s-b", Some("s-a"), 2_000);
    session_file(&cycle, "s-self", Some("s-self"), 3_000);
    for path in [
        cycle.clone(),
        cycle.join("s-a.jsonl"),
        cycle.join("s-self.jsonl"),
    ] {
        let (ok, out, err) = show_within(&env, &path, 10);
        assert!(ok, "{err}");
        assert!(out.contains("s-a") || out.contains("s-self"), "{out}");
        assert!(
            out.contains("broken (a cycle)"),
            "the broken link is shown: {out}"
        );
    }
    let (_, all, _) = show_within(&env, &cycle, 10);
    for id in ["s-a", "s-b", "s-self"] {
        assert!(all.contains(id), "{id} is hidden:\n{all}");
    }

    let deep = env.dirs.path().join("deep");
    std::fs::create_dir(&deep).expect("mkdir");
    session_file(&deep, "s-0", None, 1_000);
    for i in 1..=3000u64 {
        session_file(
            &deep,
            &format!("s-{i}"),
            Some(&format!("s-{}", i - 1)),
            1_000 + i * 10,
        );
    }
    let (ok, out, err) = show_within(&env, &deep, 60);
    assert!(ok, "exit failed: {err}");
    assert!(out.contains("task s-3000"), "the deepest session is shown");
    let (ok, _, err) = show_within(&env, &deep.join("s-0.jsonl"), 60);
    assert!(ok, "exit failed: {err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_temp_file_left_by_a_killed_edit_is_removed_at_the_next_run_with_a_notice() {
    let script = Script::new().require_api_key(KEY).rule(
        Rule::new("main")
            .system_contains("You are Canopy")
            .turn(Turn::text("ok")),
    );
    let server = MockServer::start(script).await.expect("server");
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: server.openai_base_url(),
    };
    let project = project();
    std::fs::create_dir_all(project.path().join("src/deep")).expect("mkdir");
    let stale = project.path().join("src/deep/.canopy-write-Xy12Ab");
    std::fs::write(&stale, "half an edit").expect("write");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .expect("open")
        .set_modified(hour_ago)
        .expect("age it");
    // One being written right now (another run's Edit) is not touched.
    let fresh = project.path().join(".canopy-write-Qr34Cd");
    std::fs::write(&fresh, "in progress").expect("write");
    let out = output(env.cli(
        &[
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "--trace-dir",
            env.dirs.path().join("traces").to_str().expect("utf8"),
            "hello",
        ],
        true,
    ))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stale.exists(), "the stale temp file is gone");
    assert!(fresh.exists(), "a fresh one is left alone");
    assert!(
        stderr.contains("removed src/deep/.canopy-write-Xy12Ab"),
        "with a notice:\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn project_profiles_are_announced_and_used_only_once_trusted() {
    let script = Script::new().require_api_key(KEY).rule(
        Rule::new("main")
            .system_contains("You are Canopy")
            .turn(Turn::text("ok")),
    );
    let server = MockServer::start(script).await.expect("server");
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: server.openai_base_url(),
    };
    let project = project();
    let agents = project.path().join(".canopy/agents");
    std::fs::create_dir_all(&agents).expect("mkdir");
    let profile = |description: &str| {
        format!("---\nname: docs\ndescription: {description}\ntools: Read\n---\nYou read docs.\n")
    };
    std::fs::write(agents.join("docs.md"), profile("PROFILE-DESC-ONE")).expect("write");
    let traces = env.dirs.path().join("traces");
    let run = |extra: &'static [&'static str]| {
        let mut args = vec![
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "--trace-dir",
            traces.to_str().expect("utf8"),
        ];
        args.extend_from_slice(extra);
        args.push("hello");
        output(env.cli(&args, true))
    };
    let last_request_has = |needle: &str| {
        server
            .requests()
            .last()
            .expect("a request")
            .body
            .to_string()
            .contains(needle)
    };

    let out = run(&[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("project profiles in .canopy/agents are NOT used: docs")
            && stderr.contains("--trust-project-profiles"),
        "{stderr}"
    );
    assert!(
        !last_request_has("PROFILE-DESC-ONE"),
        "untrusted text reached the model"
    );

    let out = run(&["--trust-project-profiles"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("project profiles loaded from .canopy/agents (trusted with --trust-project-profiles): docs"),
        "{stderr}"
    );
    assert!(last_request_has("PROFILE-DESC-ONE"));

    // Remembered for the same files…
    let out = run(&[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("(trusted before): docs"), "{stderr}");
    assert!(last_request_has("PROFILE-DESC-ONE"));

    // …but a changed profile is new text, not trusted yet.
    std::fs::write(agents.join("docs.md"), profile("PROFILE-DESC-TWO")).expect("write");
    let out = run(&[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("are NOT used: docs"), "{stderr}");
    assert!(!last_request_has("PROFILE-DESC-TWO"));
}

/// A crafted evidence item as the runtime records it.
fn cited(raw: &str, line: u32, state: &str, trust: Option<&str>) -> serde_json::Value {
    let (path, _) = raw.split_once(':').expect("path:line");
    let mut e = json!({"raw": raw, "path": path, "line": line, "end_line": null, "state": state,
        "text": if state == "valid" { Some("x") } else { None }});
    if let Some(t) = trust {
        e["trust"] = json!(t);
        e["provenance"] = json!(match t {
            "unseen" => "unseen",
            "file_seen" => "file_seen",
            _ => "seen",
        });
    }
    e
}

fn result_with(
    evidence: Vec<serde_json::Value>,
    trust: Option<serde_json::Value>,
    unsupported: Option<&str>,
) -> serde_json::Value {
    let mut r = json!({"status": "completed", "summary": "s", "findings": ["f"], "evidence": evidence,
        "unresolved_questions": [], "verdict": null, "reasons": []});
    if let Some(t) = trust {
        r["trust"] = t;
    }
    if let Some(u) = unsupported {
        r["unsupported"] = json!(u);
    }
    r
}

fn trust(total: u32, grounded: u32, unseen: u32, stale: u32, invalid: u32) -> serde_json::Value {
    json!({"total": total, "grounded": grounded, "file_seen": 0, "unseen": unseen, "quote_mismatch": 0, "stale": stale, "invalid": invalid})
}

/// Appends records to a session file written by `session_file` (before its end, seq numbers after it).
fn append(dir: &std::path::Path, id: &str, parent: Option<&str>, events: Vec<serde_json::Value>) {
    let path = dir.join(format!("{id}.jsonl"));
    let mut text = std::fs::read_to_string(&path).expect("read");
    for (i, e) in events.into_iter().enumerate() {
        text.push_str(&record(id, parent, 10 + i as u64, 5_000 + i as u64, e));
        text.push('\n');
    }
    std::fs::write(path, text).expect("write");
}

#[test]
fn trace_show_prints_each_results_trust_line_why_it_is_unsupported_and_the_answer_check() {
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: "http://127.0.0.1:9/v1".into(),
    };
    let dir = env.dirs.path().join("traces");
    std::fs::create_dir(&dir).expect("mkdir");
    session_file(&dir, "s-root", None, 1_000);
    session_file(&dir, "s-good", Some("s-root"), 2_000);
    session_file(&dir, "s-guess", Some("s-root"), 3_000);
    let good = result_with(
        vec![
            cited("src/auth.rs:8", 8, "valid", Some("grounded")),
            cited("src/db.rs:3", 3, "valid", Some("stale")),
            cited("src/net.rs:4", 4, "valid", Some("unseen")),
        ],
        Some(trust(3, 1, 1, 1, 0)),
        None,
    );
    let guess = result_with(vec![], Some(trust(0, 0, 0, 0, 0)), Some("no_tool_calls"));
    let done = |child: &str, result: serde_json::Value| {
        json!({"type": "subagent_completed", "child_session_id": child, "tool_call_id": format!("call-{child}"),
            "terminal_reason": "completed", "result": result, "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": false},
            "tool_calls": 0, "elapsed_ms": 5})
    };
    append(
        &dir,
        "s-root",
        None,
        vec![
            done("s-good", good),
            done("s-guess", guess),
            json!({"type": "answer_checked", "references": [
                cited("src/auth.rs:8", 8, "valid", Some("grounded")),
                cited("src/gone.rs:9", 9, "missing_file", Some("invalid")),
            ], "trust": trust(2, 1, 0, 0, 1)}),
        ],
    );

    let (ok, out, err) = show_within(&env, &dir, 10);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let after = |id: &str| -> Vec<&str> {
        let at = lines
            .iter()
            .position(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{id} in:\n{out}"));
        lines[at + 1..]
            .iter()
            .take_while(|l| !l.contains("— s-"))
            .copied()
            .collect()
    };
    let good = after("s-good").join("\n");
    assert!(
        good.contains("evidence: 1 of 3 citations seen and valid · 1 unseen · 1 stale"),
        "{out}"
    );
    assert!(
        good.contains("src/db.rs:3 — stale: changed since it was read"),
        "{out}"
    );
    assert!(
        good.contains("src/net.rs:4 — unseen: never opened"),
        "{out}"
    );
    assert!(
        !good.contains("src/auth.rs:8"),
        "grounded ones are only counted: {out}"
    );
    let guess = after("s-guess").join("\n");
    assert!(
        guess.contains("unsupported: no tool calls — written after zero tool calls"),
        "{out}"
    );
    let root = after("s-root").join("\n");
    assert!(
        root.contains("answer references: 1 of 2 citations seen and valid · 1 invalid"),
        "{out}"
    );
    assert!(
        root.contains("src/gone.rs:9 — invalid (missing_file)"),
        "{out}"
    );
}

#[test]
fn trace_show_says_provenance_not_recorded_for_a_result_from_an_older_trace() {
    let env = Env {
        dirs: tempfile::tempdir().expect("tmp"),
        base_url: "http://127.0.0.1:9/v1".into(),
    };
    let dir = env.dirs.path().join("old");
    std::fs::create_dir(&dir).expect("mkdir");
    session_file(&dir, "s-root", None, 1_000);
    session_file(&dir, "s-old", Some("s-root"), 2_000);
    let old = result_with(vec![cited("src/auth.rs:8", 8, "valid", None)], None, None);
    append(
        &dir,
        "s-root",
        None,
        vec![
            json!({"type": "subagent_completed", "child_session_id": "s-old", "tool_call_id": "c",
            "terminal_reason": "completed", "result": old, "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": false},
            "tool_calls": 1, "elapsed_ms": 5}),
        ],
    );
    let (ok, out, err) = show_within(&env, &dir.join("s-root.jsonl"), 10);
    assert!(ok, "{err}");
    assert!(out.contains("evidence: provenance not recorded"), "{out}");
    assert!(!out.contains("unsupported"), "{out}");
}
