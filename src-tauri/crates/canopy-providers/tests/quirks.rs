//! The clients against the quirks the scripted server learned from the real services: adapting once
//! to a parameter a model rejects (and remembering it in the shared cache), plain OpenAI-compatible
//! servers keeping `max_tokens`, OpenRouter-style errors inside a 200 stream, reasoning text and
//! reasoning tokens, and Ollama's context length and model listing.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use canopy_protocol::{Message, ProviderKind, ReasoningBlock, ReasoningEffort};
use canopy_providers::{
    client_for, ModelRequest, ModelResponse, ProviderConfig, ProviderError, Quirks, StreamDelta,
};
use canopy_test_support::{Fault, MockServer, Rule, Script, Turn};
use tokio_util::sync::CancellationToken;

fn request(temperature: Option<f32>) -> ModelRequest {
    ModelRequest {
        system: "You are a test.".into(),
        messages: vec![Message::user("hello")],
        tools: Vec::new(),
        allow_tool_calls: true,
        max_tokens: 512,
        temperature,
    }
}

async fn run(
    config: ProviderConfig,
    request: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, Vec<StreamDelta>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let on_delta = move |d: StreamDelta| sink.lock().unwrap().push(d);
    let result = client_for(config)
        .unwrap()
        .complete(request, &on_delta, &CancellationToken::new())
        .await;
    let deltas = seen.lock().unwrap().clone();
    (result, deltas)
}

fn adapted(deltas: &[StreamDelta]) -> Vec<String> {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Adapted { change, .. } => Some(change.clone()),
            _ => None,
        })
        .collect()
}

async fn server(turn: Turn) -> MockServer {
    MockServer::start(Script::new().rule(Rule::new("any").turn(turn)))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_reasoning_model_is_adapted_to_once_per_parameter_and_the_lesson_is_shared() {
    let s = server(Turn::text("ok")).await;
    let quirks = Arc::new(Quirks::new());
    let mut config = ProviderConfig::new(ProviderKind::Openai, s.openai_base_url(), "o3-mini");
    config.quirks = quirks.clone();
    config.reasoning_effort = Some(ReasoningEffort::High);
    // The reasoning model gets no temperature in the first place; max_tokens is what a loopback
    // endpoint gets by default, and the server rejects it.
    let (result, deltas) = run(config.clone(), &request(Some(0.2))).await;
    assert_eq!(result.unwrap().text, "ok");
    assert_eq!(adapted(&deltas), ["max_tokens -> max_completion_tokens"]);
    let bodies: Vec<_> = s.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies.iter().all(|b| b.get("temperature").is_none()));
    assert_eq!(bodies[1]["max_completion_tokens"], 512);
    assert_eq!(bodies[1]["reasoning_effort"], "high");

    // A second client sharing the cache asks right the first time; one with its own cache learns anew.
    let (result, deltas) = run(config.clone(), &request(None)).await;
    assert!(result.is_ok() && adapted(&deltas).is_empty());
    assert_eq!(s.requests().len(), 3);
    config.quirks = Arc::new(Quirks::new());
    let (_, deltas) = run(config, &request(None)).await;
    assert_eq!(adapted(&deltas).len(), 1);
}

/// A plain endpoint gets `max_tokens` and a caller's temperature as given; a known reasoning model
/// never gets the temperature, so only its token parameter needs the one adaptation.
#[tokio::test]
async fn a_plain_server_keeps_max_tokens_and_temperature_and_a_reasoning_model_gets_no_temperature()
{
    let s = server(Turn::text("ok")).await;
    // `gpt-4.1` on a plain endpoint: max_tokens and the temperature go as given, in one request.
    let config = ProviderConfig::new(ProviderKind::Openai, s.openai_base_url(), "gpt-4.1");
    let (result, deltas) = run(config, &request(Some(0.2))).await;
    assert!(result.is_ok() && adapted(&deltas).is_empty());
    let body = &s.requests()[0].body;
    assert_eq!(body["max_tokens"], 512);
    assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("reasoning_effort").is_none());

    // A reasoning model known by its id: the temperature is left out before any 400.
    let s = server(Turn::text("ok")).await;
    let mut config = ProviderConfig::new(ProviderKind::Openai, s.openai_base_url(), "o4-mini");
    config.reasoning_effort = Some(ReasoningEffort::Low);
    let mut with_temp = request(Some(0.7));
    with_temp.temperature = Some(0.7);
    let (result, deltas) = run(config, &with_temp).await;
    assert!(result.is_ok());
    assert_eq!(adapted(&deltas), ["max_tokens -> max_completion_tokens"]);
    assert!(s
        .requests()
        .iter()
        .all(|r| r.body.get("temperature").is_none()));
}

#[tokio::test]
async fn an_error_chunk_after_a_200_ends_the_call_with_its_message_and_retries_when_transient() {
    let s =
        server(Turn::text("recovered").fault(Fault::stream_error(502, "Provider returned error")))
            .await;
    let mut config =
        ProviderConfig::new(ProviderKind::Openai, s.openai_base_url(), "openai/gpt-4.1");
    config.max_backoff = Duration::from_millis(20);
    let (result, deltas) = run(config.clone(), &request(None)).await;
    assert_eq!(result.unwrap().text, "recovered");
    let retries: Vec<String> = deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Retrying { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        retries,
        ["server error (502): error in stream: Provider returned error"]
    );

    // A 400 inside the stream is not transient: the call ends with that message, no retry.
    let s = server(Turn::text("never").fault(
        Fault::stream_error(400, "This endpoint's maximum context length is 8192 tokens").times(5),
    ))
    .await;
    let config = ProviderConfig::new(ProviderKind::Openai, s.openai_base_url(), "m");
    let (result, deltas) = run(config, &request(None)).await;
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("maximum context length is 8192 tokens"),
        "{err}"
    );
    assert!(!deltas
        .iter()
        .any(|d| matches!(d, StreamDelta::Retrying { .. })));
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test]
async fn reasoning_content_is_kept_counted_and_not_sent_back() {
    let s = server(Turn::text("answer").reasoning("Let me think about it.")).await;
    let config = ProviderConfig::new(
        ProviderKind::Openai,
        s.openai_base_url(),
        "deepseek-reasoner",
    );
    let (result, deltas) = run(config.clone(), &request(None)).await;
    let resp = result.unwrap();
    assert_eq!(
        resp.reasoning,
        [ReasoningBlock::Text {
            text: "Let me think about it.".into()
        }]
    );
    assert!(deltas.contains(&StreamDelta::Reasoning("Let m".into())));
    // completion_tokens_details.reasoning_tokens, part of the output count.
    assert_eq!(resp.usage.reasoning_tokens, 6);
    assert!(resp.usage.output_tokens > 6);
    let mut next = request(None);
    next.messages.push(Message::Assistant {
        text: resp.text,
        tool_calls: Vec::new(),
        reasoning: resp.reasoning,
    });
    next.messages.push(Message::user("and?"));
    let (result, _) = run(config, &next).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn ollama_runs_with_the_context_the_agent_needs_and_lists_real_windows() {
    let s = MockServer::start(
        Script::new()
            .models(["qwen3:8b"])
            .ollama_model("qwen3:8b", "qwen3", 40_960)
            .rule(Rule::new("any").turn(Turn::text("hi").reasoning("thinking"))),
    )
    .await
    .unwrap();
    let mut config = ProviderConfig::new(ProviderKind::Openai, s.openai_base_url(), "qwen3:8b");
    config.detect_ollama = true;
    config.context_window = Some(16_384);
    let (result, deltas) = run(config.clone(), &request(Some(0.3))).await;
    let resp = result.unwrap();
    assert_eq!(resp.text, "hi");
    assert_eq!(
        resp.reasoning,
        [ReasoningBlock::Text {
            text: "thinking".into()
        }]
    );
    assert_eq!(adapted(&deltas), ["/api/chat with num_ctx 16384"]);
    let body = &s.requests()[0].body;
    assert_eq!(s.requests()[0].path, "/api/chat");
    assert_eq!(body["options"]["num_ctx"], 16_384);
    assert_eq!(body["options"]["num_predict"], 512);
    let listed = client_for(config.clone())
        .unwrap()
        .list_models()
        .await
        .unwrap();
    assert_eq!(listed[0].id, "qwen3:8b");
    assert_eq!(listed[0].context_window, Some(40_960));

    // Not probed unless asked: the OpenAI-compatible path, as before.
    config.detect_ollama = false;
    let (result, _) = run(config, &request(None)).await;
    assert!(result.is_ok());
    assert_eq!(s.requests().last().unwrap().path, "/v1/chat/completions");
}
