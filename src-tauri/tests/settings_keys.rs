//! Settings, API keys and model endpoints through the command layer: validation, persistence, the
//! keychain's absence, and real calls to the scripted model server.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use canopy_config::{MemoryStore, SecretStore};
use canopy_protocol::ModelSlot;
use canopy_test_support::{MockServer, Rule, Script, Turn};
use common::{Options, TestApp};
use serde_json::json;

#[test]
fn settings_are_validated_saved_and_read_back_after_a_restart() {
    let t = TestApp::new();
    let mut settings = t.ok("get_settings", json!({}));
    assert_eq!(settings["version"], json!(1));
    settings["parallelism"] = json!(6);
    settings["main"]["model"] = json!("my-model");
    let saved = t.ok("save_settings", json!({ "settings": settings }));
    assert_eq!(saved["parallelism"], json!(6));
    assert!(t.config_dir().join("settings.json").is_file());

    let mut bad = settings.clone();
    bad["parallelism"] = json!(0);
    let (code, message) = t.err("save_settings", json!({ "settings": bad }));
    assert_eq!(code, "invalid_settings");
    assert!(message.contains("parallelism"), "{message}");
    let mut bad = settings.clone();
    bad["main"]["base_url"] = json!("not a url");
    let (code, message) = t.err("save_settings", json!({ "settings": bad }));
    assert_eq!(code, "invalid_settings");
    assert!(message.contains("main.base_url"), "{message}");
    let mut bad = settings.clone();
    bad["main"]["provider"] = json!("gemini");
    let (code, message) = t.err("save_settings", json!({ "settings": bad }));
    assert_eq!(code, "invalid_settings");
    assert!(message.contains("gemini"), "{message}");

    // A new app over the same folders sees what was saved, not the rejected values.
    let dirs = t.dirs;
    let t2 = TestApp::with(Options {
        dirs: Some(dirs),
        ..Options::default()
    });
    let reloaded = t2.ok("get_settings", json!({}));
    assert_eq!(reloaded["parallelism"], json!(6));
    assert_eq!(reloaded["main"]["model"], json!("my-model"));
}

#[test]
fn a_broken_settings_file_and_env_overrides_are_reported_at_start() {
    let dirs = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dirs.path().join("config")).unwrap();
    std::fs::write(dirs.path().join("config/settings.json"), "{ not json").unwrap();
    let t = TestApp::with(Options {
        dirs: Some(dirs),
        env: HashMap::from([("CANOPY_MAIN_MODEL".to_string(), "env-model".to_string())]),
        ..Options::default()
    });
    let warnings = t.ok("startup_warnings", json!({}));
    let text = warnings.to_string();
    assert!(text.contains("is not valid JSON"), "{text}");
    assert!(text.contains("CANOPY_MAIN_MODEL"), "{text}");
    // The override applies to runs, not to the settings the person edits.
    assert_ne!(
        t.ok("get_settings", json!({}))["main"]["model"],
        json!("env-model")
    );
}

#[test]
fn keys_go_to_the_store_and_are_never_returned() {
    let store = Arc::new(MemoryStore::new());
    let t = TestApp::with(Options {
        secrets: store.clone(),
        ..Options::default()
    });
    assert_eq!(
        t.ok("api_key_status", json!({"slot": "main"}))["state"],
        json!("absent")
    );
    let answer = t.ok(
        "set_api_key",
        json!({"slot": "main", "key": "  sk-test-abcdef123456\n"}),
    );
    assert!(!answer.to_string().contains("sk-test"), "{answer}");
    assert_eq!(
        store.get(ModelSlot::Main).unwrap().unwrap().expose(),
        "sk-test-abcdef123456"
    );
    let status = t.ok("api_key_status", json!({"slot": "main"}));
    assert_eq!(
        status,
        json!({"state": "present", "source": "keychain", "reason": null})
    );
    assert_eq!(
        t.ok("api_key_status", json!({"slot": "light"}))["state"],
        json!("absent")
    );

    let (code, _) = t.err("set_api_key", json!({"slot": "light", "key": "   "}));
    assert_eq!(code, "invalid_key");

    t.ok("delete_api_key", json!({"slot": "main"}));
    assert!(store.get(ModelSlot::Main).unwrap().is_none());
    assert_eq!(
        t.ok("api_key_status", json!({"slot": "main"}))["state"],
        json!("absent")
    );
}

#[test]
fn an_environment_key_is_reported_as_such() {
    let t = TestApp::with(Options {
        env: HashMap::from([("CANOPY_LIGHT_API_KEY".to_string(), "sk-env-999".to_string())]),
        ..Options::default()
    });
    let status = t.ok("api_key_status", json!({"slot": "light"}));
    assert_eq!(
        status,
        json!({"state": "present", "source": "env", "reason": null})
    );
}

#[test]
fn without_a_keychain_keys_are_refused_with_the_reason_and_nothing_is_kept() {
    let t = TestApp::with(Options {
        secrets: Arc::new(MemoryStore::unavailable(
            "no Secret Service on the session bus",
        )),
        ..Options::default()
    });
    let (code, message) = t.err(
        "set_api_key",
        json!({"slot": "main", "key": "sk-live-secret-1"}),
    );
    assert_eq!(code, "keychain_unavailable");
    assert!(message.contains("no Secret Service"), "{message}");
    assert!(!message.contains("sk-live"), "{message}");
    let status = t.ok("api_key_status", json!({"slot": "main"}));
    assert_eq!(status["state"], json!("unavailable"));
    assert!(status["reason"]
        .as_str()
        .unwrap()
        .contains("no Secret Service"));
    // No plaintext fallback anywhere in the app's folders.
    for entry in walk(t.dirs.path()) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains("sk-live-secret-1"),
            "{}",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn model_env(server: &MockServer, model: &str) -> HashMap<String, String> {
    HashMap::from([
        ("CANOPY_MAIN_PROVIDER".to_string(), "openai".to_string()),
        ("CANOPY_MAIN_BASE_URL".to_string(), server.openai_base_url()),
        ("CANOPY_MAIN_MODEL".to_string(), model.to_string()),
    ])
}

#[test]
fn test_connection_makes_a_real_call_and_reports_failures_precisely() {
    let server = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .models(["mock-model", "other-model"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let t = TestApp::with(Options {
        env: model_env(&server, "mock-model"),
        ..Options::default()
    });
    let result = t.ok("test_connection", json!({"slot": "main"}));
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["error"], json!(null));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["max_tokens"], json!(1));
    assert!(requests[0].body.get("tools").is_none());
    assert_eq!(
        t.ok("list_models", json!({"slot": "main"})),
        json!(["mock-model", "other-model"])
    );
    let (code, _) = t.err("test_connection", json!({"slot": "light"}));
    assert_eq!(code, "not_configured");

    // Nothing listens here: the error names the URL.
    let t = TestApp::with(Options {
        env: HashMap::from([
            ("CANOPY_MAIN_PROVIDER".to_string(), "openai".to_string()),
            (
                "CANOPY_MAIN_BASE_URL".to_string(),
                "http://127.0.0.1:9/v1".to_string(),
            ),
        ]),
        ..Options::default()
    });
    let result = t.ok("test_connection", json!({"slot": "main"}));
    assert_eq!(result["ok"], json!(false));
    assert!(
        result["error"].as_str().unwrap().contains("127.0.0.1:9"),
        "{result}"
    );
}

#[test]
fn a_rejected_key_is_reported_as_such() {
    let server = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .require_api_key("sk-right")
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let mut env = model_env(&server, "mock-model");
    env.insert("CANOPY_MAIN_API_KEY".into(), "sk-wrong".into());
    let t = TestApp::with(Options {
        env,
        ..Options::default()
    });
    let result = t.ok("test_connection", json!({"slot": "main"}));
    assert_eq!(result["ok"], json!(false));
    let error = result["error"].as_str().unwrap();
    assert!(error.contains("API key was rejected"), "{error}");
    assert!(!error.contains("sk-wrong"), "{error}");
}

#[test]
fn ollama_detection_finds_a_server_or_says_none() {
    let t = TestApp::new();
    let none = t.ok("detect_ollama", json!({}));
    assert_eq!(none["found"], json!(false));
    assert_eq!(none["models"], json!([]));

    let server = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .models(["llama3.2:3b"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let t = TestApp::with(Options {
        ollama_base_url: server.openai_base_url(),
        ..Options::default()
    });
    let found = t.ok("detect_ollama", json!({}));
    assert_eq!(found["found"], json!(true), "{found}");
    assert_eq!(found["models"], json!(["llama3.2:3b"]));
    assert_eq!(found["base_url"], json!(server.openai_base_url()));
}
