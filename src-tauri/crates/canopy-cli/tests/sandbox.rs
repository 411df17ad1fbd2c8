//! The adversarial probe of issue #10, replayed through the real CLI against the scripted model: a
//! hostile model tries to read the CLI's own environment (where the API key is) through `/proc`,
//! to read `~/.ssh`, to read a withheld `.env` from a subagent, and to use the network without
//! leave. Each attempt is checked in what the trace recorded as the tool results.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::process::Command;

use canopy_test_support::{call, MockServer, Rule, Script, Turn};
use serde_json::{json, Value};

const KEY: &str = "sk-test-sandbox-0123456789abcdefSECRET";
const ENV_TOKEN: &str = "dotenv-token-4242";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every tool result in the trace folder: call id → (tool, status, output).
fn tool_results(traces: &std::path::Path) -> HashMap<String, (String, String, String)> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir(traces).expect("trace dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&path).expect("read").lines() {
            let record: Value = serde_json::from_str(line).expect("record");
            let ev = &record["event"];
            if ev["type"] == "tool_call_end" {
                out.insert(
                    ev["call_id"].as_str().unwrap().to_string(),
                    (
                        ev["tool"].as_str().unwrap().to_string(),
                        ev["status"].as_str().unwrap().to_string(),
                        ev["output"].as_str().unwrap().to_string(),
                    ),
                );
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_model_gets_neither_the_key_nor_ssh_nor_secret_files_nor_the_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let with_id = |mut c: canopy_test_support::ScriptedCall, id: &str| {
        c.id = Some(id.to_string());
        c
    };
    let script = Script::new()
        .require_api_key(KEY)
        .rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![with_id(
                    call(
                        "Bash",
                        json!({"command": "tr '\\0' '\\n' < /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do od -An -tx1 < $f | tr -d ' \\n'; done; echo; cat ~/.ssh/id_ed25519; echo ssh=$?"}),
                    ),
                    "probe-env",
                )]))
                .turn(Turn::tools(vec![with_id(
                    call("Bash", json!({"command": format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"), "network": true})),
                    "probe-net",
                )]))
                .turn(Turn::tools(vec![with_id(
                    call("Read", json!({"path": ".env"})),
                    "main-env",
                )]))
                .turn(Turn::tools(vec![with_id(
                    call("Task", json!({"description": "Look at the env", "prompt": "TASK-S read the env file", "subagent_type": "explore"})),
                    "task",
                )]))
                .turn(Turn::text("Done.")),
        )
        .rule(
            Rule::new("sub")
                .first_user_contains("TASK-S")
                .turn(Turn::tools(vec![with_id(
                    call("Read", json!({"path": ".env"})),
                    "sub-env",
                )]))
                .turn(Turn::text(
                    json!({"status": "completed", "summary": "s", "findings": ["f"], "evidence": ["notes.txt:1"], "unresolved_questions": []}).to_string(),
                )),
        );
    let server = MockServer::start(script).await.expect("server");

    let dirs = tempfile::tempdir().expect("tmp");
    // A fake home outside /tmp (the sandbox replaces /tmp), with a fake key where ssh keeps one.
    let home = tempfile::Builder::new()
        .prefix("canopy-cli-home-")
        .tempdir_in("/var/tmp")
        .expect("home");
    std::fs::create_dir_all(home.path().join(".ssh")).expect("mkdir");
    std::fs::write(
        home.path().join(".ssh/id_ed25519"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nZmFrZS1zc2gta2V5LW1hdGVyaWFs\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .expect("key");
    let project = tempfile::tempdir().expect("project");
    std::fs::write(project.path().join(".env"), format!("TOKEN={ENV_TOKEN}\n")).expect("env");
    std::fs::write(project.path().join("notes.txt"), "notes\n").expect("notes");
    // The person allowed `.env` for the main agent; subagents must still not get it.
    let config = dirs.path().join("config");
    std::fs::create_dir_all(&config).expect("config");
    let mut settings = canopy_config::Settings::default();
    settings.withheld_files.push("!.env".into());
    std::fs::write(
        config.join("settings.json"),
        serde_json::to_string(&settings).expect("json"),
    )
    .expect("settings");

    let traces = dirs.path().join("traces");
    let mut cli = Command::new(env!("CARGO_BIN_EXE_canopy-cli"));
    cli.args([
        "run",
        "--project",
        project.path().to_str().expect("utf8"),
        "--trace-dir",
        traces.to_str().expect("utf8"),
        "--allow",
        "bash",
        "--json",
        "probe",
    ])
    .env("HOME", home.path())
    .env("CANOPY_CONFIG_DIR", &config)
    .env("CANOPY_DATA_DIR", dirs.path().join("data"))
    .env("CANOPY_MAIN_PROVIDER", "openai")
    .env("CANOPY_MAIN_BASE_URL", server.openai_base_url())
    .env("CANOPY_MAIN_MODEL", "mock-main")
    .env("CANOPY_LIGHT_MODEL", "mock-light")
    .env("CANOPY_MAIN_API_KEY", KEY)
    .env("CANOPY_LIGHT_API_KEY", KEY);
    let out = tokio::task::spawn_blocking(move || cli.output().expect("run canopy-cli"))
        .await
        .expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let results = tool_results(&traces);
    let (_, status, env_probe) = &results["probe-env"];
    assert_eq!(status, "ok", "{env_probe}");
    // The probe ran (the shell's own allowlisted environment is there to see)…
    assert!(env_probe.contains("\nHOME="), "{env_probe}");
    // …but neither the CLI's environment nor the key, plain or encoded, nor the ssh key.
    for leak in [
        "CANOPY_MAIN_API_KEY".to_string(),
        hex(b"CANOPY_MAIN"),
        hex(KEY.as_bytes()),
        hex(b"0123456789abcdef"),
        "fake-ssh".to_string(),
        "ZmFrZS1zc2gta2V5".to_string(),
    ] {
        assert!(!env_probe.contains(&leak), "`{leak}` leaked: {env_probe}");
    }
    assert!(env_probe.contains("ssh=1"), "{env_probe}");

    // The network was asked for, and `--allow bash` alone does not grant it.
    let (_, status, net) = &results["probe-net"];
    assert_eq!(status, "denied", "{net}");
    assert!(listener.accept().is_err(), "a connection got through");

    // The main agent may read `.env` (the person's exception); the subagent may not.
    let (_, status, main_env) = &results["main-env"];
    assert_eq!(status, "ok", "{main_env}");
    assert!(main_env.contains(ENV_TOKEN), "{main_env}");
    let (_, status, sub_env) = &results["sub-env"];
    assert_eq!(status, "error", "{sub_env}");
    assert!(sub_env.contains("withheld as a secret file"), "{sub_env}");
    assert!(!sub_env.contains(ENV_TOKEN), "{sub_env}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_sandbox_turned_off_the_cli_says_so_before_running() {
    let script = || {
        Script::new().require_api_key(KEY).rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::text("ok")),
        )
    };
    let dirs = tempfile::tempdir().expect("tmp");
    let project = tempfile::tempdir().expect("project");
    let config = dirs.path().join("config");
    std::fs::create_dir_all(&config).expect("config");
    for (mode, noted) in [("off", true), ("required", false)] {
        // A fresh server per run: a rule's turns are used up by one run.
        let server = MockServer::start(script()).await.expect("server");
        let mut settings = canopy_config::Settings::default();
        settings.sandbox.mode = serde_json::from_value(json!(mode)).expect("mode");
        std::fs::write(
            config.join("settings.json"),
            serde_json::to_string(&settings).expect("json"),
        )
        .expect("settings");
        let mut cli = Command::new(env!("CARGO_BIN_EXE_canopy-cli"));
        cli.args([
            "run",
            "--project",
            project.path().to_str().expect("utf8"),
            "hi",
        ])
        .env("CANOPY_CONFIG_DIR", &config)
        .env("CANOPY_DATA_DIR", dirs.path().join("data"))
        .env("CANOPY_MAIN_PROVIDER", "openai")
        .env("CANOPY_MAIN_BASE_URL", server.openai_base_url())
        .env("CANOPY_MAIN_MODEL", "mock-main")
        .env("CANOPY_MAIN_API_KEY", KEY);
        let out = tokio::task::spawn_blocking(move || cli.output().expect("run"))
            .await
            .expect("join");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            stderr.contains("Bash runs WITHOUT a sandbox"),
            noted,
            "{mode}: {stderr}"
        );
    }
}

/// Host PIDs of live processes whose command line is exactly `args`.
fn host_pids(args: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = args.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')))
            .unwrap_or(true);
        if !zombie && std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == want) {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_a_command_started_die_with_the_cli_even_after_setsid_and_kill_9() {
    let script = Script::new().require_api_key(KEY).rule(
        Rule::new("main")
            .system_contains("You are Canopy")
            .turn(Turn::tools(vec![call(
                "Bash",
                json!({"command": "setsid sleep 100.0401 >/dev/null 2>&1 < /dev/null & sleep 100.0402"}),
            )]))
            .turn(Turn::text("done")),
    );
    let server = MockServer::start(script).await.expect("server");
    let dirs = tempfile::tempdir().expect("tmp");
    let project = tempfile::tempdir().expect("project");
    let mut cli = Command::new(env!("CARGO_BIN_EXE_canopy-cli"));
    cli.args([
        "run",
        "--project",
        project.path().to_str().expect("utf8"),
        "--allow",
        "bash",
        "go",
    ])
    .env("CANOPY_CONFIG_DIR", dirs.path().join("config"))
    .env("CANOPY_DATA_DIR", dirs.path().join("data"))
    .env("CANOPY_MAIN_PROVIDER", "openai")
    .env("CANOPY_MAIN_BASE_URL", server.openai_base_url())
    .env("CANOPY_MAIN_MODEL", "mock-main")
    .env("CANOPY_MAIN_API_KEY", KEY)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    let mut child = cli.spawn().expect("spawn");
    let mut started = false;
    for _ in 0..200 {
        if !host_pids(&["sleep", "100.0401"]).is_empty()
            && !host_pids(&["sleep", "100.0402"]).is_empty()
        {
            started = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(started, "the command never started");
    child.kill().expect("kill -9 the CLI");
    child.wait().expect("reap");
    for tag in ["100.0401", "100.0402"] {
        let mut left = host_pids(&["sleep", tag]);
        for _ in 0..100 {
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            left = host_pids(&["sleep", tag]);
        }
        assert!(
            left.is_empty(),
            "`sleep {tag}` outlived the killed CLI: {left:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn network_allowed_by_the_person_works_and_a_key_block_in_an_ordinary_file_is_redacted() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let with_id = |mut c: canopy_test_support::ScriptedCall, id: &str| {
        c.id = Some(id.to_string());
        c
    };
    let script = Script::new().require_api_key(KEY).rule(
        Rule::new("main")
            .system_contains("You are Canopy")
            .turn(Turn::tools(vec![with_id(
                call("Bash", json!({"command": format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"), "network": true})),
                "net",
            )]))
            .turn(Turn::tools(vec![with_id(
                call("Read", json!({"path": "deploy-notes.md"})),
                "notes",
            )]))
            .turn(Turn::tools(vec![with_id(
                call("Bash", json!({"command": "cat deploy-notes.md"})),
                "cat",
            )]))
            .turn(Turn::text("done")),
    );
    let server = MockServer::start(script).await.expect("server");
    let dirs = tempfile::tempdir().expect("tmp");
    let project = tempfile::tempdir().expect("project");
    std::fs::write(
        project.path().join("deploy-notes.md"),
        "Deploy with this key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----\nThen restart.\n",
    )
    .expect("notes");
    let traces = dirs.path().join("traces");
    let mut cli = Command::new(env!("CARGO_BIN_EXE_canopy-cli"));
    cli.args([
        "run",
        "--project",
        project.path().to_str().expect("utf8"),
        "--trace-dir",
        traces.to_str().expect("utf8"),
        "--allow",
        "bash,network",
        "go",
    ])
    .env("CANOPY_CONFIG_DIR", dirs.path().join("config"))
    .env("CANOPY_DATA_DIR", dirs.path().join("data"))
    .env("CANOPY_MAIN_PROVIDER", "openai")
    .env("CANOPY_MAIN_BASE_URL", server.openai_base_url())
    .env("CANOPY_MAIN_MODEL", "mock-main")
    .env("CANOPY_MAIN_API_KEY", KEY);
    let out = tokio::task::spawn_blocking(move || cli.output().expect("run"))
        .await
        .expect("join");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&traces);
    let (_, status, net) = &results["net"];
    assert_eq!(
        (status.as_str(), net.as_str()),
        ("ok", "exit code: 0\n--- stdout ---\nconnected\n")
    );
    assert!(listener.accept().is_ok());
    for id in ["notes", "cat"] {
        let (_, status, text) = &results[id];
        assert_eq!(status, "ok", "{text}");
        assert!(text.contains("Deploy with this key:"), "{text}");
        assert!(text.contains("[REDACTED PRIVATE KEY]"), "{text}");
        assert!(text.contains("Then restart."), "{text}");
        assert!(!text.contains("MIIEowIBAAKCAQEA"), "{id}: {text}");
    }
}
