//! Opening a recorded session from History through the command layer: `load_session` leaves big tool
//! outputs out and `load_tool_output` brings each back exactly as recorded, for the main agent's calls
//! and a subagent's alike.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use canopy_test_support::{call, MockServer, Rule, Script, Turn};
use common::{project, Options, TestApp};
use serde_json::{json, Value};

/// A run whose main agent reads a small and a big file, then delegates a read of the big file to an
/// explore subagent; returns the app, the root session id and every persisted record streamed live.
fn recorded_run() -> (TestApp, MockServer, String, Vec<Value>) {
    let result = json!({
        "status": "completed",
        "summary": "big.rs is filler",
        "findings": ["filler lines"],
        "evidence": ["src/big.rs:1"],
        "unresolved_questions": []
    })
    .to_string();
    let script = Script::new()
        .rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![
                    call("Read", json!({"path": "src/main.rs"})),
                    call("Read", json!({"path": "src/big.rs"})),
                ]))
                .turn(Turn::tools(vec![call(
                    "Task",
                    json!({"description": "Read big", "prompt": "TASK-B read src/big.rs", "subagent_type": "explore"}),
                )]))
                .turn(Turn::text("Done.")),
        )
        .rule(
            Rule::new("child")
                .first_user_contains("TASK-B")
                .turn(Turn::tools(vec![call("Read", json!({"path": "src/big.rs"}))]))
                .turn(Turn::text(result)),
        );
    let server = tauri::async_runtime::block_on(MockServer::start(script)).unwrap();
    let env = HashMap::from([
        ("CANOPY_MAIN_PROVIDER".to_string(), "openai".to_string()),
        ("CANOPY_MAIN_BASE_URL".to_string(), server.openai_base_url()),
        ("CANOPY_MAIN_MODEL".to_string(), "mock-model".to_string()),
    ]);
    let t = TestApp::with(Options {
        env,
        ..Options::default()
    });
    let dir = project(t.dirs.path());
    let big: String = (1..=60)
        .map(|i| format!("// line {i}: \"quoted\" text, tabs\tand unicode \u{1F333}\n"))
        .collect();
    std::fs::write(dir.join("src/big.rs"), big).unwrap();
    t.ok("open_project", json!({ "path": dir }));

    let handle = t.ok(
        "start_run",
        json!({"prompt": "Read both files", "onEvent": "__CHANNEL__:40"}),
    );
    let root = handle["session_id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    let live = loop {
        let all: Vec<Value> = t
            .channels
            .lock()
            .unwrap()
            .iter()
            .filter(|(c, _)| *c == 40)
            .flat_map(|(_, b)| b.as_array().unwrap().clone())
            .collect();
        if all
            .iter()
            .any(|r| r["event"]["type"] == "run_ended" && r["session_id"] == json!(root))
        {
            break all;
        }
        assert!(Instant::now() < deadline, "the run did not end: {all:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let persisted = live
        .into_iter()
        .filter(|r| r["event"]["type"] != "assistant_delta")
        .collect();
    (t, server, root, persisted)
}

fn tool_ends(records: &[Value]) -> Vec<&Value> {
    records
        .iter()
        .filter(|r| r["event"]["type"] == "tool_call_end")
        .collect()
}

#[test]
fn load_session_elides_big_outputs_and_load_tool_output_brings_them_back() {
    let (t, _server, root, live) = recorded_run();
    let live_ends = tool_ends(&live);
    assert_eq!(live_ends.len(), 4, "main: 2 reads + Task; child: 1 read");
    let child = live_ends
        .iter()
        .find(|r| r["session_id"] != json!(root))
        .unwrap()["session_id"]
        .clone();

    let replay = t.ok("load_session", json!({"sessionId": root}));
    let replay = replay.as_array().unwrap().clone();
    assert_eq!(replay.len(), live.len());
    // Replay has the root's records, then the child's; live ones interleave.
    let by_key: HashMap<(String, u64), &Value> = live
        .iter()
        .map(|r| {
            let key = (
                r["session_id"].as_str().unwrap().to_string(),
                r["seq"].as_u64().unwrap(),
            );
            (key, r)
        })
        .collect();
    let mut elided = 0;
    for got in &replay {
        let want = by_key[&(
            got["session_id"].as_str().unwrap().to_string(),
            got["seq"].as_u64().unwrap(),
        )];
        let output = want["event"]["output"].as_str();
        if got["event"]["type"] != "tool_call_end" || output.unwrap().len() <= 256 {
            assert_eq!(got, want, "everything but big outputs comes as recorded");
            continue;
        }
        elided += 1;
        assert_eq!(got["event"]["output"], json!(""), "{got}");
        assert_eq!(got["event"]["output_elided"], json!(true), "{got}");
        let fetched = t.ok(
            "load_tool_output",
            json!({"sessionId": got["session_id"], "callId": got["event"]["call_id"]}),
        );
        assert_eq!(
            fetched.as_str(),
            output,
            "the recorded output, byte for byte"
        );
        let mut restored = got.clone();
        restored["event"]["output"] = fetched;
        restored["event"]
            .as_object_mut()
            .unwrap()
            .remove("output_elided");
        assert_eq!(&restored, want);
    }
    // Both reads of big.rs (main and child) are long; the read of main.rs is not.
    let big = live_ends
        .iter()
        .filter(|r| r["event"]["output"].as_str().unwrap().len() > 256)
        .count();
    assert!(big >= 2, "{live_ends:?}");
    assert_eq!(elided, big);
    let main_rs = replay
        .iter()
        .find(|r| {
            r["event"]["type"] == "tool_call_end"
                && r["event"]["output"].as_str().unwrap().contains("fn main()")
        })
        .expect("the short read is inline");
    assert!(main_rs["event"].get("output_elided").is_none(), "{main_rs}");
    let read_in_child = replay
        .iter()
        .find(|r| r["session_id"] == child && r["event"]["type"] == "tool_call_end")
        .unwrap();
    assert_eq!(read_in_child["event"]["output_elided"], json!(true));

    // The call is in the child's file, not the root's.
    let call_id = &read_in_child["event"]["call_id"];
    let (code, message) = t.err(
        "load_tool_output",
        json!({"sessionId": root, "callId": call_id}),
    );
    assert_eq!(code, "not_found");
    assert!(
        message.contains(call_id.as_str().unwrap()),
        "names the call: {message}"
    );
    let (code, message) = t.err(
        "load_tool_output",
        json!({"sessionId": "s-0000000000000000", "callId": call_id}),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("session_gone", "unknown session `s-0000000000000000`")
    );
    for bad in ["../escape", "a/b", ""] {
        let (code, message) = t.err(
            "load_tool_output",
            json!({"sessionId": bad, "callId": call_id}),
        );
        assert_eq!(code, "invalid_argument", "{bad:?}: {message}");
        assert!(message.contains("invalid session id"), "{message}");
    }
}

#[test]
fn load_tool_output_needs_a_project() {
    let t = TestApp::new();
    let (code, _) = t.err(
        "load_tool_output",
        json!({"sessionId": "s-1", "callId": "c-1"}),
    );
    assert_eq!(code, "no_project");
}

/// A session file as the runtime writes it (started, one run, ended), naming `parent`.
fn write_session(dir: &std::path::Path, id: &str, parent: Option<&str>, ts: u64) {
    let rec = |seq: u64, event: Value| {
        json!({"v": 1, "seq": seq, "ts_ms": ts + seq, "session_id": id, "run_id": "r-1", "parent_session_id": parent, "event": event}).to_string()
    };
    let lines = [
        rec(
            0,
            json!({"type": "session_started", "agent": "main", "profile": "main", "description": null,
            "model": {"slot": "main", "requested_slot": "main", "fallback": false, "provider": "openai", "model_id": "m", "base_url": "http://127.0.0.1:1/v1"},
            "budgets": {"max_steps": 10, "max_context_tokens": 1000, "max_total_tokens": 10000, "max_wall_time_ms": 60000},
            "project_root": "/p", "parent": null, "permission_mode": "main", "tools": ["Read"], "system_prompt": "p"}),
        ),
        rec(
            1,
            json!({"type": "run_started", "prompt": format!("prompt of {id}")}),
        ),
        rec(
            2,
            json!({"type": "run_ended", "terminal_reason": "completed", "final_text": null, "result": null, "error": null,
            "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": false}, "usage_with_descendants": {"input_tokens": 1, "output_tokens": 1, "estimated": false},
            "totals": {"steps": 1, "context_tokens": 1, "total_tokens": 2, "wall_time_ms": 5}, "tool_calls": 0}),
        ),
    ];
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
}

#[test]
fn sessions_whose_parent_links_go_round_are_listed_opened_and_deleted_without_hanging() {
    let t = TestApp::new();
    let dir = project(t.dirs.path());
    t.ok("open_project", json!({ "path": dir }));
    let traces = canopy_config::trace_dir_in(&t.data_dir(), &dir);
    write_session(&traces, "s-a", Some("s-b"), 1_000);
    write_session(&traces, "s-b", Some("s-a"), 2_000);
    write_session(&traces, "s-self", Some("s-self"), 3_000);
    // The app cannot move to another thread; a watchdog turns a reader looping on the cycle (which
    // also eats memory fast) into a failure rather than a hung test run.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watched = done.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        if !watched.load(std::sync::atomic::Ordering::SeqCst) {
            eprintln!("history loops on a parent cycle");
            std::process::exit(101);
        }
    });
    let listed = t.ok("list_sessions", json!({}));
    let loaded = t.ok("load_session", json!({"sessionId": "s-self"}));
    t.ok("delete_session", json!({"sessionId": "s-a"}));
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut rows: Vec<(String, Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session_id"].as_str().unwrap().to_string(),
                s["broken_parent"].clone(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        rows,
        [
            ("s-a".to_string(), json!("s-b")),
            ("s-b".to_string(), json!("s-a")),
            ("s-self".to_string(), json!("s-self")),
        ]
    );
    assert_eq!(loaded.as_array().unwrap().len(), 3, "{loaded}");
    assert!(!traces.join("s-a.jsonl").exists());
    assert!(
        traces.join("s-b.jsonl").exists(),
        "only the session asked for"
    );
}
