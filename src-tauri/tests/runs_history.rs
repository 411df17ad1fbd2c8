//! Runs through the command layer against the scripted model server: events streamed in batches to the
//! run's channel, follow-ups on their own channel, approvals, cancellation (including the window
//! closing), and the history read back from the trace files.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use canopy_test_support::{call, MockServer, Rule, Script, Turn};
use common::{project, Options, TestApp};
use serde_json::{json, Value};

fn app_with_model(script: Script) -> (TestApp, MockServer) {
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
    t.ok("open_project", json!({ "path": dir }));
    (t, server)
}

/// Every record sent on channel `id` so far, in arrival order, and how many batches carried them.
fn records(t: &TestApp, id: u32) -> (Vec<Value>, usize) {
    let log = t.channels.lock().unwrap();
    let batches: Vec<&Value> = log
        .iter()
        .filter(|(c, _)| *c == id)
        .map(|(_, b)| b)
        .collect();
    let all = batches
        .iter()
        .flat_map(|b| b.as_array().unwrap().clone())
        .collect();
    (all, batches.len())
}

fn kind(r: &Value) -> &str {
    r["event"]["type"].as_str().unwrap()
}

fn is_root_end(r: &Value) -> bool {
    kind(r) == "run_ended" && r["parent_session_id"].is_null()
}

/// Waits until `pred` holds for some record on channel `id`.
fn wait_for(t: &TestApp, id: u32, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(found) = records(t, id).0.into_iter().find(|r| pred(r)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no {what} on channel {id}: {:?}",
            records(t, id).0
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn text_of(records: &[Value]) -> String {
    records
        .iter()
        .filter(|r| kind(r) == "assistant_delta")
        .map(|r| r["event"]["text"].as_str().unwrap())
        .collect()
}

#[test]
fn a_run_and_its_follow_up_stream_to_their_own_channels_and_land_in_history() {
    let (t, _server) = app_with_model(
        Script::new().rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::text("Hello from the mock model.").chunk_bytes(2))
                .turn(Turn::text("Second answer.")),
        ),
    );
    let handle = t.ok(
        "start_run",
        json!({"prompt": "Say hello", "onEvent": "__CHANNEL__:70"}),
    );
    let session_id = handle["session_id"].as_str().unwrap().to_string();
    assert!(
        handle["run_id"].as_str().unwrap().starts_with("r-"),
        "{handle}"
    );
    let end = wait_for(&t, 70, "run_ended", is_root_end);
    assert_eq!(end["event"]["terminal_reason"], json!("completed"));
    assert_eq!(end["run_id"], handle["run_id"]);

    let (first, batches) = records(&t, 70);
    assert_eq!(kind(&first[0]), "session_started");
    assert_eq!(kind(&first[1]), "run_started");
    assert!(
        is_root_end(first.last().unwrap()),
        "run_ended is the last record"
    );
    // Persisted records number 0, 1, 2, …; deltas (never persisted) carry the number of the record
    // they precede, so arrival order shows as a non-decreasing sequence.
    let persisted_seqs: Vec<u64> = first
        .iter()
        .filter(|r| kind(r) != "assistant_delta")
        .map(|r| r["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        persisted_seqs,
        (0..persisted_seqs.len() as u64).collect::<Vec<_>>(),
        "in order, none missing"
    );
    let all_seqs: Vec<u64> = first.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert!(all_seqs.windows(2).all(|w| w[0] <= w[1]), "{all_seqs:?}");
    assert_eq!(text_of(&first), "Hello from the mock model.");
    assert!(
        batches < first.len(),
        "{} records in {batches} batches: not coalesced",
        first.len()
    );

    let follow = t.ok(
        "send_message",
        json!({"sessionId": session_id, "prompt": "Again", "onEvent": "__CHANNEL__:71"}),
    );
    assert_eq!(follow["session_id"], json!(session_id));
    assert_ne!(follow["run_id"], handle["run_id"]);
    wait_for(&t, 71, "run_ended", is_root_end);
    let (second, _) = records(&t, 71);
    assert_eq!(kind(&second[0]), "run_started");
    assert!(second.iter().all(|r| r["run_id"] == follow["run_id"]));
    assert_eq!(text_of(&second), "Second answer.");
    assert_eq!(
        records(&t, 70).0.len(),
        first.len(),
        "nothing of the follow-up on the first channel"
    );

    let sessions = t.ok("list_sessions", json!({}));
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["session_id"], json!(session_id));
    assert_eq!(sessions[0]["title"], json!("Say hello"));
    assert_eq!(sessions[0]["status"], json!("completed"));

    let replay = t.ok("load_session", json!({"sessionId": session_id}));
    let persisted: Vec<&Value> = first
        .iter()
        .chain(&second)
        .filter(|r| kind(r) != "assistant_delta")
        .collect();
    assert_eq!(
        replay.as_array().unwrap().iter().collect::<Vec<_>>(),
        persisted
    );

    t.ok("delete_session", json!({"sessionId": session_id}));
    assert_eq!(t.ok("list_sessions", json!({})), json!([]));
    assert_eq!(
        t.err("load_session", json!({"sessionId": session_id})).0,
        "session_gone"
    );
}

#[test]
fn approvals_wait_for_the_person_and_follow_the_answer() {
    let (t, _server) = app_with_model(
        Script::new().rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![call(
                    "Write",
                    json!({"path": "notes.txt", "content": "from the agent\n"}),
                )]))
                .turn(Turn::text("Done.")),
        ),
    );
    let root =
        std::path::PathBuf::from(t.ok("current_project", json!({}))["root"].as_str().unwrap());

    let handle = t.ok(
        "start_run",
        json!({"prompt": "Write notes", "onEvent": "__CHANNEL__:80"}),
    );
    let asked = wait_for(&t, 80, "permission_requested", |r| {
        kind(r) == "permission_requested"
    });
    assert_eq!(asked["event"]["tool"], json!("Write"));
    assert!(
        !root.join("notes.txt").exists(),
        "nothing written before the answer"
    );
    // While it waits for the person, history shows it running, not interrupted.
    let listed = t.ok("list_sessions", json!({}));
    assert_eq!(listed[0]["status"], json!("running"), "{listed}");
    let call_id = asked["event"]["call_id"].clone();
    let (code, _) = t.err(
        "answer_approval",
        json!({"sessionId": handle["session_id"], "callId": "not-a-call", "answer": "allow_once"}),
    );
    assert_eq!(code, "no_such_approval");
    t.ok(
        "answer_approval",
        json!({"sessionId": handle["session_id"], "callId": call_id, "answer": "allow_once"}),
    );
    let end = wait_for(&t, 80, "run_ended", is_root_end);
    assert_eq!(end["event"]["terminal_reason"], json!("completed"));
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "from the agent\n"
    );
    let (code, _) = t.err(
        "answer_approval",
        json!({"sessionId": handle["session_id"], "callId": call_id, "answer": "deny"}),
    );
    assert_eq!(
        code, "no_such_approval",
        "an answered approval cannot be answered again"
    );

    std::fs::remove_file(root.join("notes.txt")).unwrap();
    let handle = t.ok(
        "start_run",
        json!({"prompt": "Write notes", "onEvent": "__CHANNEL__:81"}),
    );
    let asked = wait_for(&t, 81, "permission_requested", |r| {
        kind(r) == "permission_requested"
    });
    t.ok(
        "answer_approval",
        json!({"sessionId": handle["session_id"], "callId": asked["event"]["call_id"], "answer": "deny"}),
    );
    wait_for(&t, 81, "run_ended", is_root_end);
    let decided = wait_for(&t, 81, "permission_decided", |r| {
        kind(r) == "permission_decided"
    });
    assert_eq!(decided["event"]["decision"], json!("deny"));
    assert!(
        !root.join("notes.txt").exists(),
        "a denied write does not happen"
    );
    let (code, message) = t.err(
        "answer_approval",
        json!({"sessionId": "s-x", "callId": "c", "answer": "maybe"}),
    );
    assert_eq!(code, "invalid_argument");
    assert!(message.contains("maybe"), "{message}");
}

#[test]
fn cancel_stops_the_run_and_closing_the_window_is_recorded() {
    let (t, _server) = app_with_model(
        Script::new().rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::text("too late").first_byte_delay_ms(30_000)),
        ),
    );
    let handle = t.ok(
        "start_run",
        json!({"prompt": "Think long", "onEvent": "__CHANNEL__:90"}),
    );
    let sid = handle["session_id"].clone();
    wait_for(&t, 90, "model_call_begin", |r| {
        kind(r) == "model_call_begin"
    });
    let started = Instant::now();
    assert_eq!(t.ok("cancel_run", json!({"sessionId": sid})), json!(true));
    let end = wait_for(&t, 90, "run_ended", is_root_end);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel took {:?}",
        started.elapsed()
    );
    assert_eq!(end["event"]["terminal_reason"], json!("cancelled"));
    assert_eq!(
        t.ok("cancel_run", json!({"sessionId": sid})),
        json!(false),
        "nothing left to cancel"
    );

    // The window's close handler does this: cancel everything, then wait for the traces to end.
    t.ok(
        "send_message",
        json!({"sessionId": sid, "prompt": "Again", "onEvent": "__CHANNEL__:91"}),
    );
    wait_for(&t, 91, "model_call_begin", |r| {
        kind(r) == "model_call_begin"
    });
    let state = tauri::Manager::state::<canopy_app::AppState>(&t.app);
    assert_eq!(state.runs().cancel_all("window_closed"), 1);
    assert!(tauri::async_runtime::block_on(
        state.runs().wait_idle(Duration::from_secs(5))
    ));
    let replay = t.ok("load_session", json!({"sessionId": sid}));
    let replay = replay.as_array().unwrap();
    assert!(
        replay.iter().any(
            |r| kind(r) == "cancel_requested" && r["event"]["reason"] == json!("window_closed")
        ),
        "{replay:?}"
    );
    assert!(
        is_root_end(replay.last().unwrap()),
        "the trace ends with run_ended"
    );
}

#[test]
fn runs_need_a_project_and_a_prompt() {
    let t = TestApp::new();
    assert_eq!(
        t.err(
            "start_run",
            json!({"prompt": "hi", "onEvent": "__CHANNEL__:1"})
        )
        .0,
        "no_project"
    );
    let dir = project(t.dirs.path());
    t.ok("open_project", json!({ "path": dir }));
    assert_eq!(
        t.err(
            "start_run",
            json!({"prompt": "  ", "onEvent": "__CHANNEL__:1"})
        )
        .0,
        "invalid_argument"
    );
    assert_eq!(
        t.err(
            "send_message",
            json!({"sessionId": "s-nope", "prompt": "hi", "onEvent": "__CHANNEL__:1"})
        )
        .0,
        "not_found"
    );
    assert_eq!(t.ok("list_sessions", json!({})), json!([]));
}

#[test]
fn a_remote_model_without_a_key_is_refused_before_any_call() {
    let t = TestApp::with(Options {
        env: HashMap::from([
            ("CANOPY_MAIN_PROVIDER".to_string(), "openai".to_string()),
            (
                "CANOPY_MAIN_BASE_URL".to_string(),
                "https://models.example.com/v1".to_string(),
            ),
        ]),
        ..Options::default()
    });
    let dir = project(t.dirs.path());
    t.ok("open_project", json!({ "path": dir }));
    let (code, message) = t.err(
        "start_run",
        json!({"prompt": "hi", "onEvent": "__CHANNEL__:5"}),
    );
    assert_eq!(code, "missing_key");
    assert!(message.contains("CANOPY_MAIN_API_KEY"), "{message}");
    assert!(records(&t, 5).0.is_empty(), "no session was started");
    assert_eq!(t.ok("list_sessions", json!({})), json!([]));
}

/// After a full run with a key stored through the command, nothing under the config dir or the data
/// dir (settings, recent projects, every trace file) holds the key — even when the model repeats it.
#[test]
fn no_file_holds_the_api_key_after_a_full_run() {
    const KEY: &str = "sk-live-canopy-leakcheck-0123456789abcdef";
    let result = json!({"status": "completed", "summary": "found main", "findings": [], "evidence": ["src/main.rs:1"], "unresolved_questions": []}).to_string();
    let script = Script::new()
        .require_api_key(KEY)
        .rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![call(
                    "Task",
                    json!({"description": "Find main", "prompt": "TASK-K find main", "subagent_type": "explore"}),
                )]))
                .turn(Turn::text(format!("Done. (The key you gave me is {KEY}.)"))),
        )
        .rule(Rule::new("child").first_user_contains("TASK-K").turn(Turn::text(result)));
    let (t, _server) = app_with_model(script);
    t.ok("set_api_key", json!({"slot": "main", "key": KEY}));
    let settings = t.ok("get_settings", json!({}));
    t.ok("save_settings", json!({"settings": settings}));
    t.ok(
        "start_run",
        json!({"prompt": "Find main", "onEvent": "__CHANNEL__:90"}),
    );
    let end = wait_for(&t, 90, "run_ended", is_root_end);
    assert_eq!(end["event"]["terminal_reason"], json!("completed"), "{end}");
    let (all, _) = records(&t, 90);
    assert!(
        all.iter().any(|r| kind(r) == "subagent_completed"),
        "the run reached a subagent"
    );
    assert!(
        !serde_json::to_string(&all).unwrap().contains(KEY),
        "key in a live event"
    );

    let mut checked = 0;
    let mut stack = vec![t.config_dir(), t.data_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(KEY),
                "the key is in {}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 4,
        "settings, recent projects and three traces were checked ({checked})"
    );
}

#[test]
fn a_new_session_clears_temp_files_of_an_interrupted_edit_and_says_so() {
    let (t, _server) = app_with_model(
        Script::new().rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::text("Hi."))
                .turn(Turn::text("Hi again.")),
        ),
    );
    let dir = project(t.dirs.path());
    let stale = dir.join(".canopy-write-Ab12Cd");
    std::fs::write(&stale, "half").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(600))
        .unwrap();
    let handle = t.ok(
        "start_run",
        json!({"prompt": "Say hello", "onEvent": "__CHANNEL__:90"}),
    );
    assert!(!stale.exists());
    assert_eq!(
        handle["notices"],
        json!(["removed .canopy-write-Ab12Cd: a temporary file left by an edit or write that was interrupted"])
    );
    wait_for(&t, 90, "run_ended", is_root_end);
    let session_id = handle["session_id"].as_str().unwrap();
    let follow = t.ok(
        "send_message",
        json!({"sessionId": session_id, "prompt": "Again", "onEvent": "__CHANNEL__:91"}),
    );
    assert_eq!(follow["notices"], json!([]));
}
