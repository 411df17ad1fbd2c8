//! The mock server seen from raw HTTP: rule matching, turn selection, fault counting, the request
//! validation real APIs do, model lists, recorded requests, and the binary's startup line.

// Test helpers outside `#[test]` functions may panic on setup failures too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use canopy_test_support::{call, Fault, MockServer, Rule, Script, Turn};
use serde_json::{json, Value};

async fn post(url: String, headers: &[(&str, &str)], body: Value) -> (u16, String) {
    let mut rb = reqwest::Client::new().post(url).json(&body);
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

async fn openai(server: &MockServer, body: Value) -> (u16, String) {
    post(
        format!("{}/chat/completions", server.openai_base_url()),
        &[],
        body,
    )
    .await
}

async fn anthropic(server: &MockServer, body: Value) -> (u16, String) {
    post(
        format!("{}/v1/messages", server.anthropic_base_url()),
        &[("anthropic-version", "2023-06-01")],
        body,
    )
    .await
}

/// Concatenated OpenAI text deltas of an SSE body.
fn openai_text(sse: &str) -> String {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

fn chat(model: &str, messages: Value) -> Value {
    json!({"model": model, "stream": true, "messages": messages})
}

fn two_rule_script() -> Script {
    Script::new()
        .rule(
            Rule::new("explorer")
                .system_contains("explorer")
                .first_user_contains("auth")
                .turn(Turn::tools(vec![
                    call("Grep", json!({"pattern": "auth"})).with_id("c1")
                ]))
                .turn(Turn::text("explorer turn 1"))
                .turn(Turn::text("explorer last")),
        )
        .rule(
            Rule::new("light")
                .model("mock-light")
                .provider("openai")
                .turn(Turn::text("light model")),
        )
        .rule(
            Rule::new("wrapup")
                .last_user_contains("wrap up")
                .turn(Turn::text("wrapped")),
        )
}

#[tokio::test]
async fn first_matching_rule_and_turn_by_assistant_count() {
    let server = MockServer::start(two_rule_script()).await.unwrap();
    let sys = json!({"role": "system", "content": "You are an explorer."});
    let user = json!({"role": "user", "content": "find auth"});
    let (status, body) = openai(&server, chat("m", json!([sys.clone(), user.clone()]))).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"name\":\"Grep\"") && body.contains("\"finish_reason\":\"tool_calls\"")
    );

    let assistant = json!({"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Grep", "arguments": "{}"}}]});
    let tool = json!({"role": "tool", "tool_call_id": "c1", "content": "a.rs"});
    let mut req = chat("m", json!([sys.clone(), user.clone(), assistant, tool]));
    req["tools"] = json!([{"type": "function", "function": {"name": "Grep", "parameters": {}}}]);
    let (_, body) = openai(&server, req).await;
    assert_eq!(openai_text(&body), "explorer turn 1");

    // Past the last turn, the last turn repeats.
    let a = json!({"role": "assistant", "content": "x"});
    let u = json!({"role": "user", "content": "more"});
    let (_, body) = openai(
        &server,
        chat(
            "m",
            json!([
                sys,
                user,
                a.clone(),
                u.clone(),
                a.clone(),
                u.clone(),
                a.clone(),
                u.clone(),
                a.clone(),
                u
            ]),
        ),
    )
    .await;
    assert_eq!(openai_text(&body), "explorer last");

    let (_, body) = openai(
        &server,
        chat("mock-light", json!([{"role": "user", "content": "hi"}])),
    )
    .await;
    assert_eq!(openai_text(&body), "light model");
    // `provider: openai` keeps the light rule off the Anthropic endpoint.
    let (status, body) = anthropic(
        &server,
        json!({"model": "mock-light", "max_tokens": 10, "stream": true,
               "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");

    let (_, body) = openai(
        &server,
        chat("m", json!([{"role": "user", "content": "start"}, a.clone(), {"role": "user", "content": "please wrap up"}])),
    )
    .await;
    assert_eq!(openai_text(&body), "wrapped");
}

#[tokio::test]
async fn no_matching_rule_names_the_first_user_message() {
    let server = MockServer::start(two_rule_script()).await.unwrap();
    let (status, body) = openai(
        &server,
        chat(
            "m",
            json!([{"role": "user", "content": "unscripted question"}]),
        ),
    )
    .await;
    assert_eq!(status, 400);
    let v: Value = serde_json::from_str(&body).unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("unscripted question"), "{message}");
}

#[tokio::test]
async fn faults_apply_the_given_number_of_times_per_rule_and_turn() {
    let script = Script::new().rule(
        Rule::new("flaky")
            .turn(Turn::text("ok").fault(Fault::rate_limited(2).times(2)))
            .turn(Turn::text("second").fault(Fault::status(529))),
    );
    let server = MockServer::start(script).await.unwrap();
    let first = json!([{"role": "user", "content": "x"}]);
    let client = reqwest::Client::new();
    let url = format!("{}/chat/completions", server.openai_base_url());
    for _ in 0..2 {
        let resp = client
            .post(&url)
            .json(&chat("m", first.clone()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 429);
        assert_eq!(resp.headers()["retry-after"], "2");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    }
    let (status, body) = openai(&server, chat("m", first)).await;
    assert_eq!((status, openai_text(&body)), (200, "ok".to_string()));

    // Turn 1 keeps its own counter; Anthropic gets its own error shape.
    let msgs = json!([{"role": "user", "content": "x"}, {"role": "assistant", "content": "ok"},
                      {"role": "user", "content": "y"}]);
    let req = json!({"model": "m", "max_tokens": 10, "stream": true, "messages": msgs});
    let (status, body) = anthropic(&server, req.clone()).await;
    assert_eq!(status, 529);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["type"],
        "overloaded_error"
    );
    let (status, body) = anthropic(&server, req).await;
    assert_eq!(status, 200);
    assert!(body.contains("event: message_stop"));
}

#[tokio::test]
async fn cut_stream_ends_without_terminal_event() {
    let server = MockServer::start(Script::new().rule(
        Rule::new("cut").turn(Turn::text("x".repeat(500)).fault(Fault::cut_after_bytes(200))),
    ))
    .await
    .unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .json(&chat("m", json!([{"role": "user", "content": "x"}])))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.text().await.is_err(),
        "the body must break, not end cleanly"
    );
}

#[tokio::test]
async fn openai_validation_rejects_what_the_real_api_rejects() {
    let server = MockServer::start(Script::new().rule(Rule::new("any").turn(Turn::text("ok"))))
        .await
        .unwrap();
    let user = json!([{"role": "user", "content": "x"}]);
    let cases = [
        (json!({"tools": []}), "empty array"),
        (json!({"tool_choice": "none"}), "tool_choice"),
        (
            json!({"stream": false, "stream_options": {"include_usage": true}}),
            "stream_options",
        ),
    ];
    for (extra, expect) in cases {
        let mut req = chat("m", user.clone());
        for (k, v) in extra.as_object().unwrap() {
            req[k] = v.clone();
        }
        let (status, body) = openai(&server, req).await;
        assert_eq!(status, 400, "{body}");
        assert!(body.contains(expect), "{expect}: {body}");
    }
    // Arguments must go back as a string, and every call must be answered.
    let asst = |args: Value| {
        json!({"role": "assistant", "content": null,
               "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Grep", "arguments": args}}]})
    };
    let (status, body) = openai(
        &server,
        chat(
            "m",
            json!([{"role": "user", "content": "x"}, asst(json!({"a": 1})),
                         {"role": "tool", "tool_call_id": "c1", "content": "r"}]),
        ),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("expected a string"), "{body}");
    let (status, body) = openai(
        &server,
        chat("m", json!([{"role": "user", "content": "x"}, asst(json!("{}")), {"role": "user", "content": "y"}])),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("c1"), "{body}");
}

#[tokio::test]
async fn anthropic_validation_rejects_what_the_real_api_rejects() {
    let server = MockServer::start(Script::new().rule(Rule::new("any").turn(Turn::text("ok"))))
        .await
        .unwrap();
    let tools = json!([{"name": "Grep", "input_schema": {"type": "object"}}]);
    let tool_use = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {}}]});
    let tool_result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]});
    let user = json!({"role": "user", "content": "x"});
    let cases = [
        (
            json!({"model": "m", "stream": true, "messages": [user.clone()]}),
            "max_tokens",
        ),
        (
            json!({"model": "m", "max_tokens": 5, "stream": true, "messages": [user.clone(), tool_use.clone(), tool_result.clone()]}),
            "must define tools",
        ),
        (
            json!({"model": "m", "max_tokens": 5, "stream": true, "tools": tools.clone(),
                   "messages": [user.clone(), tool_use.clone(), {"role": "user", "content": "forgot the result"}]}),
            "without `tool_result`",
        ),
        (
            json!({"model": "m", "max_tokens": 5, "stream": true,
                   "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}),
            "non-empty",
        ),
        (
            json!({"model": "m", "max_tokens": 5, "stream": true, "tool_choice": {"type": "none"}, "messages": [user.clone()]}),
            "tool_choice",
        ),
    ];
    for (req, expect) in cases {
        let (status, body) = anthropic(&server, req).await;
        assert_eq!(status, 400, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["type"], "error");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(expect),
            "{expect}: {body}"
        );
    }
    // The same history with tools defined is fine.
    let (status, body) = anthropic(
        &server,
        json!({"model": "m", "max_tokens": 5, "stream": true, "tools": tools,
               "messages": [user, tool_use, tool_result]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn models_auth_and_recorded_requests() {
    let script = Script::new()
        .require_api_key("sk-test-123")
        .models(["mock-main", "mock-light"])
        .rule(Rule::new("any").turn(Turn::text("ok")));
    let server = MockServer::start(script).await.unwrap();
    let client = reqwest::Client::new();
    let models_url = format!("{}/models", server.openai_base_url());
    let v: Value = client
        .get(&models_url)
        .bearer_auth("sk-test-123")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][1]["id"], "mock-light");
    let v: Value = client
        .get(&models_url)
        .header("x-api-key", "sk-test-123")
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["data"][0]["type"], "model");
    assert_eq!(v["has_more"], false);
    let resp = client
        .get(&models_url)
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);

    let (status, body) = post(
        format!("{}/chat/completions", server.openai_base_url()),
        &[("authorization", "Bearer sk-test-123")],
        chat("unknown-model", json!([{"role": "user", "content": "x"}])),
    )
    .await;
    assert_eq!(status, 404);
    assert!(body.contains("model_not_found"));

    let recorded: Value = client
        .get(format!("{}/_requests", server.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(recorded.as_array().unwrap().len(), 1);
    assert_eq!(recorded[0]["model"], "unknown-model");
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

#[test]
fn script_json_format_and_binary_startup() {
    let text = r#"{
      "require_api_key": "sk-test-123",
      "models": ["mock-main"],
      "rules": [{"name": "r", "match": {"first_user_contains": "hi", "provider": "anthropic"},
                 "turns": [{"text": "hey", "tool_calls": [{"name": "Grep", "arguments": "{bad"}],
                            "chunk_bytes": 7, "fault": {"status": 429, "retry_after_s": 1}}]}]
    }"#;
    let script = Script::from_json(text).unwrap();
    assert_eq!(
        script.rules[0].matcher.provider.as_deref(),
        Some("anthropic")
    );
    assert_eq!(
        script.rules[0].turns[0].tool_calls[0].arguments_text(),
        "{bad"
    );
    let err = Script::from_json(r#"{"rules": [{"turns": [], "matc": {}}]}"#).unwrap_err();
    assert!(err.to_string().contains("matc"), "{err}");

    let dir = std::env::temp_dir().join(format!("canopy-mock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("script.json");
    std::fs::write(&path, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_canopy-mock-llm"))
        .arg("--script")
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let url = line
        .trim()
        .strip_prefix("listening on http://127.0.0.1:")
        .expect(&line);
    assert!(url.parse::<u16>().unwrap() > 0);
}
