//! The scripted server rejects, from raw HTTP, what the real services reject for a model id:
//! OpenAI reasoning models' `max_tokens` and temperature (the exact 400 bodies), `reasoning_effort`
//! on a model without reasoning, DeepSeek `reasoning_content` sent back, Anthropic thinking blocks
//! lost or altered across a tool call; and it mimics Ollama's silent prompt truncation.

// Test helpers outside `#[test]` functions may panic on setup failures too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use canopy_test_support::quirks::signature_for;
use canopy_test_support::{MockServer, Rule, Script, Turn};
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

async fn server() -> MockServer {
    MockServer::start(
        Script::new()
            .ollama_model("llama3.2:3b", "llama", 131_072)
            .ollama_default_ctx(256)
            .rule(
                Rule::new("instructed")
                    .system_contains("SYSTEM-MARK")
                    .turn(Turn::text("instructed")),
            )
            .rule(Rule::new("any").turn(Turn::text("uninstructed").reasoning("thinking it over"))),
    )
    .await
    .unwrap()
}

fn chat(model: &str, extra: Value) -> Value {
    let mut body = json!({"model": model, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[tokio::test]
async fn openai_reasoning_models_reject_max_tokens_and_temperature_exactly_as_openai_does() {
    let s = server().await;
    let url = format!("{}/chat/completions", s.openai_base_url());
    for model in ["gpt-5.4-mini", "o3-mini", "o1", "openai/gpt-5.2"] {
        let (status, body) = post(url.clone(), &[], chat(model, json!({"max_tokens": 100}))).await;
        assert_eq!(status, 400, "{model}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}})
        );
        let (status, body) = post(
            url.clone(),
            &[],
            chat(
                model,
                json!({"max_completion_tokens": 100, "temperature": 0.2}),
            ),
        )
        .await;
        assert_eq!(status, 400, "{model}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], "unsupported_value");
        assert_eq!(v["error"]["param"], "temperature");
        assert_eq!(v["error"]["message"], "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.");
        let (status, _) = post(
            url.clone(),
            &[],
            chat(
                model,
                json!({"max_completion_tokens": 100, "reasoning_effort": "high"}),
            ),
        )
        .await;
        assert_eq!(status, 200, "{model}");
    }
    // `minimal` is a gpt-5 effort only.
    let (status, _) = post(
        url.clone(),
        &[],
        chat("o3-mini", json!({"reasoning_effort": "minimal"})),
    )
    .await;
    assert_eq!(status, 400);
    // A model without reasoning takes max_tokens and a temperature, but no reasoning effort.
    let (status, _) = post(
        url.clone(),
        &[],
        chat("gpt-4.1", json!({"max_tokens": 100, "temperature": 0.2})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = post(
        url.clone(),
        &[],
        chat("gpt-4.1", json!({"reasoning_effort": "low"})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body.contains("Unsupported parameter: 'reasoning_effort'"),
        "{body}"
    );
}

#[tokio::test]
async fn deepseek_reasoner_streams_reasoning_and_rejects_it_sent_back() {
    let s = server().await;
    let url = format!("{}/chat/completions", s.openai_base_url());
    let (status, stream) = post(
        url.clone(),
        &[],
        chat(
            "deepseek-reasoner",
            json!({"stream_options": {"include_usage": true}}),
        ),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        stream.contains(r#""reasoning_content":"think""#),
        "{stream}"
    );
    assert!(
        stream.contains(r#""completion_tokens_details":{"reasoning_tokens":4}"#),
        "{stream}"
    );
    let echoed = json!({"model": "deepseek-reasoner", "stream": true, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "uninstructed", "reasoning_content": "thinking it over"},
        {"role": "user", "content": "and?"}]});
    let (status, body) = post(url.clone(), &[], echoed.clone()).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("reasoning_content"), "{body}");
    // deepseek-chat does not check it.
    let mut chat_model = echoed;
    chat_model["model"] = json!("deepseek-chat");
    assert_eq!(post(url, &[], chat_model).await.0, 200);
}

#[tokio::test]
async fn anthropic_thinking_must_come_back_signed_at_the_start_of_the_tool_turn() {
    let s = server().await;
    let url = format!("{}/v1/messages", s.anthropic_base_url());
    let h = [("anthropic-version", "2023-06-01")];
    let tools = json!([{"name": "Grep", "input_schema": {"type": "object"}}]);
    let sig = signature_for("I should grep.");
    let history = |assistant: Value| {
        json!({"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 4096,
            "thinking": {"type": "enabled", "budget_tokens": 2048}, "tools": tools,
            "messages": [
                {"role": "user", "content": "find auth"},
                {"role": "assistant", "content": assistant},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.rs"}]}]})
    };
    let tool_use =
        json!({"type": "tool_use", "id": "toolu_1", "name": "Grep", "input": {"pattern": "auth"}});
    let thinking = json!({"type": "thinking", "thinking": "I should grep.", "signature": sig});
    let (status, stream) = post(url.clone(), &h, history(json!([thinking, tool_use]))).await;
    assert_eq!(status, 200, "{stream}");
    assert!(
        stream.contains(r#""type":"thinking_delta""#)
            && stream.contains(r#""type":"signature_delta""#),
        "{stream}"
    );

    let (status, body) = post(url.clone(), &h, history(json!([tool_use]))).await;
    assert_eq!(status, 400);
    assert!(
        body.contains("a final `assistant` message must start with a thinking block"),
        "{body}"
    );
    let unsigned = json!({"type": "thinking", "thinking": "I should grep."});
    let (status, body) = post(url.clone(), &h, history(json!([unsigned, tool_use]))).await;
    assert_eq!(status, 400);
    assert!(body.contains("signature: Field required"), "{body}");
    let altered = json!({"type": "thinking", "thinking": "I should grep!", "signature": sig});
    let (status, body) = post(url.clone(), &h, history(json!([altered, tool_use]))).await;
    assert_eq!(status, 400);
    assert!(body.contains("Invalid `signature`"), "{body}");

    let mut hot = history(json!([thinking, tool_use]));
    hot["temperature"] = json!(0.5);
    assert_eq!(post(url.clone(), &h, hot).await.0, 400);
    let mut small = history(json!([thinking, tool_use]));
    small["max_tokens"] = json!(2048);
    let (status, body) = post(url.clone(), &h, small).await;
    assert_eq!(status, 400);
    assert!(
        body.contains("`max_tokens` must be greater than `thinking.budget_tokens`"),
        "{body}"
    );
}

#[tokio::test]
async fn ollama_drops_the_start_of_a_long_prompt_unless_num_ctx_makes_room() {
    let s = server().await;
    let long = format!("SYSTEM-MARK {}", "rule ".repeat(600));
    let messages = json!([{"role": "system", "content": long}, {"role": "user", "content": "hi"}]);
    // The OpenAI-compatible path runs the model with the default context: no error, no system prompt.
    let (status, stream) = post(
        format!("{}/chat/completions", s.openai_base_url()),
        &[],
        json!({"model": "llama3.2:3b", "stream": true, "messages": messages}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        stream.contains(r#""content":"unins""#) && !stream.contains(r#""content":"instr""#),
        "{stream}"
    );
    // The native chat API with num_ctx keeps it, and streams NDJSON.
    let (status, lines) = post(
        format!("{}/api/chat", s.url()),
        &[],
        json!({"model": "llama3.2:3b", "stream": true, "messages": messages, "options": {"num_ctx": 8192}}),
    )
    .await;
    assert_eq!(status, 200);
    let text: String = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|v| v["message"]["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(text, "instructed");
    assert!(lines.lines().last().unwrap().contains(r#""done":true"#));
    // /api/show reports the model's real context length.
    let show: Value = reqwest::Client::new()
        .post(format!("{}/api/show", s.url()))
        .json(&json!({"model": "llama3.2:3b"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(show["model_info"]["llama.context_length"], 131_072);
}
