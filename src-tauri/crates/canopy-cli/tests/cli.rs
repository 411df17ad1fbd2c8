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
