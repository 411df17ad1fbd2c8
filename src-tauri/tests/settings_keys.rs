//! Settings, API keys and model endpoints through the command layer: validation, persistence, the
//! keychain's absence, and real calls to the scripted model server.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use canopy_config::{KeyOrigin, MemoryStore, SecretStore};
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

    // The form marks the field from `field_errors`, never by cutting up the message.
    let mut bad = settings.clone();
    bad["main"]["context_window"] = json!(512);
    let e = t
        .invoke("save_settings", json!({ "settings": bad }))
        .expect_err("a 512-token context window was saved");
    assert_eq!(e["code"], json!("invalid_settings"));
    let fields = e["field_errors"]
        .as_array()
        .expect("no field_errors in {e}");
    assert_eq!(fields.len(), 1, "{e}");
    assert_eq!(fields[0]["field"], json!("main.context_window"), "{e}");
    let reason = fields[0]["message"].as_str().unwrap();
    assert!(
        !reason.is_empty() && !reason.starts_with("main.context_window"),
        "{e}"
    );
    assert_eq!(
        e["message"],
        json!(format!("main.context_window: {reason}"))
    );
    // A value of the wrong shape names no field; other errors carry no `field_errors` at all.
    let mut bad = settings.clone();
    bad["parallelism"] = json!("many");
    let e = t
        .invoke("save_settings", json!({ "settings": bad }))
        .expect_err("saved");
    assert_eq!(e["code"], json!("invalid_settings"));
    assert!(e.get("field_errors").is_none(), "{e}");

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
    // Without a base URL the key is for the slot's current endpoint (the default, OpenAI).
    let openai = KeyOrigin::of("https://api.openai.com/v1").unwrap();
    assert_eq!(
        store
            .get(ModelSlot::Main, &openai)
            .unwrap()
            .unwrap()
            .expose(),
        "sk-test-abcdef123456"
    );
    let status = t.ok("api_key_status", json!({"slot": "main"}));
    assert_eq!(
        status,
        json!({"state": "present", "source": "keychain", "reason": null,
               "origin": "api.openai.com", "stored_for": []})
    );
    assert_eq!(
        t.ok("api_key_status", json!({"slot": "light"}))["state"],
        json!("absent")
    );

    let (code, _) = t.err("set_api_key", json!({"slot": "light", "key": "   "}));
    assert_eq!(code, "invalid_key");

    t.ok("delete_api_key", json!({"slot": "main"}));
    assert!(store.get(ModelSlot::Main, &openai).unwrap().is_none());
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
    assert_eq!(status["state"], json!("present"));
    assert_eq!(status["source"], json!("env"));
    // Light is unconfigured, so it runs on main's endpoint (OpenAI): named on screen, that one
    // has the environment key, another endpoint typed on screen does not.
    let status = t.ok(
        "api_key_status",
        json!({"slot": "light", "baseUrl": "https://api.openai.com/v1"}),
    );
    assert_eq!(status["source"], json!("env"));
    let status = t.ok(
        "api_key_status",
        json!({"slot": "light", "baseUrl": "https://api.anthropic.com"}),
    );
    assert_eq!(status["state"], json!("absent"), "{status}");
    assert_eq!(status["origin"], json!("api.anthropic.com"));
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
        ids(&t.ok("list_models", json!({"slot": "main"}))),
        ["mock-model", "other-model"]
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

#[test]
fn listed_models_carry_the_context_window_and_prices_the_endpoint_reports() {
    // Ollama: the context length comes from `/api/show` for each listed model.
    let ollama = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .models(["qwen2.5-coder:7b", "llama3.2:3b"])
            .ollama_model("qwen2.5-coder:7b", "qwen2", 32_768)
            .ollama_model("llama3.2:3b", "llama", 131_072)
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    // OpenRouter: `context_length` and per-token `pricing` in the listing itself.
    let router = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .models(["anthropic/claude-sonnet-4.5", "openrouter/auto"])
            .model_detail(
                "anthropic/claude-sonnet-4.5",
                1_000_000,
                "0.000003",
                "0.000015",
            )
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let t = TestApp::new();
    let listed = t.ok(
        "list_models",
        json!({"slot": "main", "config": on_screen("openai", &ollama.openai_base_url(), "")}),
    );
    assert_eq!(
        listed,
        json!([
            {"id": "qwen2.5-coder:7b", "context_window": 32768, "input_price_per_mtok": null, "output_price_per_mtok": null},
            {"id": "llama3.2:3b", "context_window": 131072, "input_price_per_mtok": null, "output_price_per_mtok": null},
        ])
    );
    let listed = t.ok(
        "list_models",
        json!({"slot": "main", "config": on_screen("openai", &router.openai_base_url(), "")}),
    );
    assert_eq!(
        listed,
        json!([
            {"id": "anthropic/claude-sonnet-4.5", "context_window": 1000000, "input_price_per_mtok": 3.0, "output_price_per_mtok": 15.0},
            {"id": "openrouter/auto", "context_window": null, "input_price_per_mtok": null, "output_price_per_mtok": null},
        ])
    );
}

/// The slot as the settings screen shows it, unsaved.
/// The ids of a `list_models` answer, in order.
#[track_caller]
fn ids(listing: &serde_json::Value) -> Vec<String> {
    listing
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| m["id"].as_str().expect("an id").to_string())
        .collect()
}

fn on_screen(provider: &str, base_url: &str, model: &str) -> serde_json::Value {
    json!({
        "provider": provider,
        "base_url": base_url,
        "model": model,
        "context_window": 32768,
        "input_price_per_mtok": null,
        "output_price_per_mtok": null,
        "max_output_tokens": 4096
    })
}

/// `server` was asked `count` times and none of its requests carried `secret` (named `what` in the
/// failure) or any credential header at all.
#[track_caller]
fn assert_no_credential(server: &MockServer, count: usize, secret: &str, what: &str) {
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        count,
        "server B was not asked {count} times"
    );
    for request in &requests {
        for (name, value) in &request.headers {
            assert!(
                !value.contains(secret),
                "server B received {what} in `{name}`"
            );
        }
        assert!(
            !request.headers.contains_key("authorization")
                && !request.headers.contains_key("x-api-key"),
            "server B received a credential header: {:?}",
            request.headers.keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_key_stored_for_one_endpoint_is_never_sent_to_another() {
    const KEY: &str = "sk-only-for-server-a-1234567890";
    let server_a = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .require_api_key(KEY)
            .models(["model-at-a"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let server_b = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .models(["model-at-b-1", "model-at-b-2"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let (url_a, url_b) = (server_a.openai_base_url(), server_b.openai_base_url());
    let label = |url: &str| {
        url.trim_start_matches("http://")
            .trim_end_matches("/v1")
            .to_string()
    };
    let t = TestApp::new();
    let mut settings = t.ok("get_settings", json!({}));
    settings["main"] = on_screen("openai", &url_a, "model-at-a");
    t.ok("save_settings", json!({ "settings": settings }));
    t.ok(
        "set_api_key",
        json!({"slot": "main", "key": KEY, "baseUrl": url_a}),
    );
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_a}));
    assert_eq!(status["state"], json!("present"));
    assert_eq!(status["origin"], json!(label(&url_a)));
    let at_a = t.ok(
        "test_connection",
        json!({"slot": "main", "config": on_screen("openai", &url_a, "model-at-a")}),
    );
    assert_eq!(at_a["ok"], json!(true), "{at_a}");

    // On screen (not saved) the slot now points at server B: another port, another origin.
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_b}));
    assert_eq!(status["state"], json!("absent"), "{status}");
    assert_eq!(status["origin"], json!(label(&url_b)));
    assert_eq!(status["stored_for"], json!([label(&url_a)]));
    for provider in ["openai", "anthropic"] {
        let url = if provider == "openai" {
            url_b.clone()
        } else {
            server_b.anthropic_base_url()
        };
        let at_b = t.ok(
            "test_connection",
            json!({"slot": "main", "config": on_screen(provider, &url, "model-at-b-1")}),
        );
        assert_eq!(at_b["ok"], json!(true), "{provider}: {at_b}");
    }
    assert_no_credential(&server_b, 2, KEY, "the key of server A");
    // List models asks the endpoint on screen, not the saved one.
    assert_eq!(
        ids(&t.ok(
            "list_models",
            json!({"slot": "main", "config": on_screen("openai", &url_b, "")})
        )),
        ["model-at-b-1", "model-at-b-2"]
    );
    assert_eq!(
        ids(&t.ok("list_models", json!({"slot": "main"}))),
        ["model-at-a"]
    );

    // Deleting at B deletes B's (absent) key only; back at A the key is still there.
    t.ok("delete_api_key", json!({"slot": "main", "baseUrl": url_b}));
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_a}));
    assert_eq!(status["state"], json!("present"));
    t.ok("delete_api_key", json!({"slot": "main", "baseUrl": url_a}));
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_a}));
    assert_eq!(status["state"], json!("absent"));
}

#[test]
fn an_unsaved_configuration_is_validated_like_save() {
    let t = TestApp::new();
    let (code, message) = t.err(
        "test_connection",
        json!({"slot": "light", "config": on_screen("openai", "localhost:11434", "m")}),
    );
    assert_eq!(code, "invalid_settings");
    assert!(
        message.starts_with("light.base_url: not a valid http(s) URL"),
        "{message}"
    );
    let (code, message) = t.err(
        "test_connection",
        json!({"slot": "main", "config": on_screen("openai", "http://127.0.0.1:9/v1", " ")}),
    );
    assert_eq!(code, "invalid_settings");
    assert!(message.starts_with("main.model"), "{message}");
    let (code, message) = t.err(
        "list_models",
        json!({"slot": "main", "config": {"provider": "gemini"}}),
    );
    assert_eq!(code, "invalid_settings");
    assert!(message.contains("gemini"), "{message}");
    let (code, message) = t.err(
        "api_key_status",
        json!({"slot": "main", "baseUrl": "ftp://example.com"}),
    );
    assert_eq!(code, "invalid_settings");
    assert!(message.starts_with("main.base_url"), "{message}");
    // A hosted endpoint on screen with no key for it: the person is told how to add one.
    let (code, message) = t.err(
        "test_connection",
        json!({"slot": "main", "config": on_screen("anthropic", "https://api.anthropic.com", "claude")}),
    );
    assert_eq!(code, "missing_key");
    assert!(message.contains("CANOPY_MAIN_API_KEY"), "{message}");
}

#[test]
fn an_environment_key_only_goes_to_the_endpoint_the_slot_runs_on() {
    const ENV_KEY: &str = "sk-env-main-abcdefghijklmnop";
    const B_KEY: &str = "sk-stored-for-b-0987654321";
    let server_a = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .require_api_key(ENV_KEY)
            .models(["model-at-a"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let server_b = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .models(["model-at-b"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let (url_a, url_b) = (server_a.openai_base_url(), server_b.openai_base_url());
    // The settings in force point main at A (through the environment) with the environment key.
    let mut env = model_env(&server_a, "model-at-a");
    env.insert("CANOPY_MAIN_API_KEY".into(), ENV_KEY.into());
    let t = TestApp::with(Options {
        env,
        ..Options::default()
    });

    // A on screen is the slot's endpoint in force: the environment key goes there.
    let at_a = t.ok(
        "test_connection",
        json!({"slot": "main", "config": on_screen("openai", &url_a, "model-at-a")}),
    );
    assert_eq!(at_a["ok"], json!(true), "{at_a}");
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_a}));
    assert_eq!(status["source"], json!("env"), "{status}");

    // B typed on screen, not saved: no environment key, in the status or on the wire.
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_b}));
    assert_eq!(status["state"], json!("absent"), "{status}");
    for (provider, url) in [
        ("openai", url_b.clone()),
        ("anthropic", server_b.anthropic_base_url()),
    ] {
        let at_b = t.ok(
            "test_connection",
            json!({"slot": "main", "config": on_screen(provider, &url, "model-at-b")}),
        );
        assert_eq!(at_b["ok"], json!(true), "{provider}: {at_b}");
    }
    assert_no_credential(&server_b, 2, ENV_KEY, "the environment key");

    // List models at an unsaved endpoint that would accept the environment key: it is not sent,
    // so the endpoint refuses the listing.
    let server_c = tauri::async_runtime::block_on(MockServer::start(
        Script::new()
            .require_api_key(ENV_KEY)
            .models(["model-at-c"])
            .rule(Rule::new("any").turn(Turn::text("OK"))),
    ))
    .unwrap();
    let (code, message) = t.err(
        "list_models",
        json!({"slot": "main", "config": on_screen("openai", &server_c.openai_base_url(), "")}),
    );
    assert_eq!(code, "provider_error", "{message}");
    assert!(message.contains("API key was rejected"), "{message}");

    // A key stored for B is B's own and is sent there, still never the environment key.
    t.ok(
        "set_api_key",
        json!({"slot": "main", "key": B_KEY, "baseUrl": url_b}),
    );
    let status = t.ok("api_key_status", json!({"slot": "main", "baseUrl": url_b}));
    assert_eq!(status["source"], json!("keychain"), "{status}");
    let at_b = t.ok(
        "test_connection",
        json!({"slot": "main", "config": on_screen("openai", &url_b, "model-at-b")}),
    );
    assert_eq!(at_b["ok"], json!(true), "{at_b}");
    let last = server_b.requests().pop().unwrap();
    let auth = last
        .headers
        .get("authorization")
        .cloned()
        .unwrap_or_default();
    assert!(
        auth.contains(B_KEY),
        "B's stored key was not sent: {auth:?}"
    );
    assert!(!auth.contains(ENV_KEY));

    // A hosted endpoint typed on screen (a typo) is refused for want of a key rather than being
    // sent the environment key; nothing is sent anywhere.
    let (code, message) = t.err(
        "list_models",
        json!({"slot": "main", "config": on_screen("openai", "https://typo.example/v1", "")}),
    );
    assert_eq!(code, "missing_key", "{message}");
    assert!(!message.contains(ENV_KEY), "{message}");
    // Without a configuration from the screen the settings in force (A, environment key) apply.
    assert_eq!(
        ids(&t.ok("list_models", json!({"slot": "main"}))),
        ["model-at-a"]
    );
}

#[test]
fn a_key_entered_for_an_endpoint_no_longer_configured_is_indexed_listed_and_redacted() {
    const CORP_KEY: &str = "corpkeyinthefile0123456789";
    let custom = "https://llm.corp.example:8443/v1";
    let server = tauri::async_runtime::block_on(MockServer::start(
        Script::new().rule(
            Rule::new("main")
                .system_contains("You are Canopy")
                .turn(Turn::tools(vec![canopy_test_support::call(
                    "Read",
                    json!({"path": "src/corp.env"}),
                )]))
                .turn(Turn::text("Read it.")),
        ),
    ))
    .unwrap();
    let store = Arc::new(MemoryStore::new());
    let t = TestApp::with(Options {
        secrets: store.clone(),
        env: model_env(&server, "mock-model"),
        ..Options::default()
    });
    // Entered on the settings screen while the slot showed the custom endpoint, never saved.
    t.ok(
        "set_api_key",
        json!({"slot": "main", "key": CORP_KEY, "baseUrl": custom}),
    );
    let index = std::fs::read_to_string(t.config_dir().join("keys.json")).unwrap();
    assert!(
        index.contains("\"main@https://llm.corp.example:8443\""),
        "{index}"
    );
    assert!(!index.contains(CORP_KEY), "{index}");

    // The custom URL is neither a preset nor in the settings, yet the status still names it.
    let status = t.ok(
        "api_key_status",
        json!({"slot": "main", "baseUrl": "https://api.openai.com/v1"}),
    );
    assert_eq!(status["state"], json!("absent"), "{status}");
    assert_eq!(status["stored_for"], json!(["llm.corp.example:8443"]));

    // A tool prints the key during a run on another endpoint: neither the model nor the trace
    // gets it.
    let dir = common::project(t.dirs.path());
    std::fs::write(dir.join("src/corp.env"), format!("CORP_KEY={CORP_KEY}\n")).unwrap();
    t.ok("open_project", json!({ "path": dir }));
    t.ok(
        "start_run",
        json!({"prompt": "Read the env file", "onEvent": "__CHANNEL__:71"}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !t.channels.lock().unwrap().iter().any(|(c, batch)| {
        *c == 71
            && batch.as_array().unwrap().iter().any(|r| {
                r["event"]["type"] == json!("run_ended") && r["parent_session_id"].is_null()
            })
    }) {
        assert!(std::time::Instant::now() < deadline, "the run did not end");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the model saw the tool result");
    let seen = requests[1].body.to_string();
    assert!(seen.contains("CORP_KEY=[REDACTED]"), "{seen}");
    assert!(!seen.contains(CORP_KEY), "{seen}");
    let traces: Vec<_> = walk(&t.data_dir())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(!traces.is_empty());
    for trace in traces {
        let text = std::fs::read_to_string(&trace).unwrap();
        assert!(!text.contains(CORP_KEY), "{}", trace.display());
    }

    // Deleting it drops the entry from the index and the status.
    t.ok("delete_api_key", json!({"slot": "main", "baseUrl": custom}));
    let index = std::fs::read_to_string(t.config_dir().join("keys.json")).unwrap();
    assert!(!index.contains("llm.corp.example"), "{index}");
    let status = t.ok(
        "api_key_status",
        json!({"slot": "main", "baseUrl": "https://api.openai.com/v1"}),
    );
    assert_eq!(status["stored_for"], json!([]));
}
