//! Both clients against the scripted loopback server: streaming, tool calls, usage, retries, faults,
//! timeouts, cancellation, error mapping, and the request shapes the server validates.

// Test helpers outside `#[test]` functions may panic on setup failures too.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use canopy_protocol::{FinishReason, Message, ProviderKind, SecretString, ToolCall, ToolSpec};
use canopy_providers::{
    client_for, ModelRequest, ModelResponse, ProviderConfig, ProviderError, StreamDelta,
};
use canopy_test_support::{call, Fault, MockServer, Rule, Script, Turn};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const KINDS: [ProviderKind; 2] = [ProviderKind::Openai, ProviderKind::Anthropic];

fn config(kind: ProviderKind, server: &MockServer) -> ProviderConfig {
    let base = match kind {
        ProviderKind::Openai => server.openai_base_url(),
        ProviderKind::Anthropic => server.anthropic_base_url(),
    };
    let mut c = ProviderConfig::new(kind, base, "mock-main");
    c.max_retries = 2;
    c.max_backoff = Duration::from_millis(1500);
    c.idle_timeout = Duration::from_secs(10);
    c
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} things"),
        parameters: json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
    }
}

fn request(user: &str) -> ModelRequest {
    ModelRequest {
        system: "You are a test agent.".into(),
        messages: vec![Message::user(user)],
        tools: vec![tool("Grep"), tool("Read")],
        allow_tool_calls: true,
        max_tokens: 1024,
        temperature: None,
    }
}

#[derive(Default, Clone)]
struct Deltas(Arc<Mutex<Vec<StreamDelta>>>);

impl Deltas {
    fn all(&self) -> Vec<StreamDelta> {
        self.0.lock().unwrap().clone()
    }
    fn text(&self) -> String {
        self.all()
            .into_iter()
            .filter_map(|d| match d {
                StreamDelta::Text(t) => Some(t),
                _ => None,
            })
            .collect()
    }
    fn retries(&self) -> Vec<(u32, Duration)> {
        self.all()
            .into_iter()
            .filter_map(|d| match d {
                StreamDelta::Retrying { attempt, delay, .. } => Some((attempt, delay)),
                _ => None,
            })
            .collect()
    }
}

async fn run(
    config: ProviderConfig,
    req: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, Deltas) {
    let client = client_for(config).unwrap();
    let deltas = Deltas::default();
    let sink = deltas.clone();
    let on_delta = move |d: StreamDelta| sink.0.lock().unwrap().push(d);
    let result = client
        .complete(req, &on_delta, &CancellationToken::new())
        .await;
    (result, deltas)
}

async fn serve(turns: Vec<Turn>) -> MockServer {
    let mut rule = Rule::new("main");
    for t in turns {
        rule = rule.turn(t);
    }
    MockServer::start(Script::new().models(["mock-main", "mock-light"]).rule(rule))
        .await
        .unwrap()
}

#[tokio::test]
async fn text_streams_in_tiny_chunks_with_multibyte_utf8() {
    let text = "Grüße aus Köln — 世界 🌍🌲 fin.";
    for kind in KINDS {
        for chunk in 1..=7 {
            let server = serve(vec![Turn::text(text).chunk_bytes(chunk).usage(120, 30)]).await;
            let (result, deltas) = run(config(kind, &server), &request("hello")).await;
            let r = result.unwrap_or_else(|e| panic!("{kind:?} chunk {chunk}: {e}"));
            assert_eq!(r.text, text, "{kind:?} chunk {chunk}");
            assert_eq!(deltas.text(), text, "{kind:?} chunk {chunk}");
            assert_eq!(r.finish_reason, FinishReason::Stop);
            assert!(r.tool_calls.is_empty());
            assert_eq!(
                (
                    r.usage.input_tokens,
                    r.usage.output_tokens,
                    r.usage.estimated
                ),
                (120, 30, false)
            );
            assert_eq!(r.model, "mock-main");
        }
    }
}

fn parallel_calls() -> Vec<canopy_test_support::ScriptedCall> {
    vec![
        call(
            "Grep",
            json!({"pattern": "fn \"auth\"\\s+", "glob": "**/*.rs"}),
        )
        .with_id("call_a"),
        call("Read", json!({"path": "src/naïve/日本.rs", "offset": 10})).with_id("call_b"),
    ]
}

#[tokio::test]
async fn parallel_tool_calls_sequential_and_interleaved() {
    for kind in KINDS {
        for interleave in [false, true] {
            let mut turn = Turn::tools(parallel_calls()).chunk_bytes(3);
            if interleave {
                turn = turn.interleaved();
            }
            let server = serve(vec![turn]).await;
            let (result, deltas) = run(config(kind, &server), &request("find auth")).await;
            let r = result.unwrap_or_else(|e| panic!("{kind:?} interleave {interleave}: {e}"));
            assert_eq!(r.finish_reason, FinishReason::ToolCalls);
            assert_eq!(r.tool_calls.len(), 2);
            let expected = parallel_calls();
            for (got, want) in r.tool_calls.iter().zip(&expected) {
                assert_eq!(Some(&got.id), want.id.as_ref());
                assert_eq!(got.name, want.name);
                let parsed: Value = serde_json::from_str(&got.arguments).unwrap();
                assert_eq!(parsed, want.arguments, "{kind:?} interleave {interleave}");
            }
            let started: Vec<(String, String)> = deltas
                .all()
                .into_iter()
                .filter_map(|d| match d {
                    StreamDelta::ToolCallStarted { id, name } => Some((id, name)),
                    _ => None,
                })
                .collect();
            assert_eq!(
                started,
                vec![
                    ("call_a".into(), "Grep".into()),
                    ("call_b".into(), "Read".into())
                ]
            );
        }
    }
}

#[tokio::test]
async fn invalid_argument_json_is_kept_verbatim() {
    for kind in KINDS {
        let server = serve(vec![Turn::tools(vec![canopy_test_support::call_raw(
            "Grep",
            "{\"pattern\": \"a",
        )])])
        .await;
        let (result, _) = run(config(kind, &server), &request("x")).await;
        let r = result.unwrap();
        assert_eq!(r.tool_calls[0].arguments, "{\"pattern\": \"a");
    }
}

#[tokio::test]
async fn usage_arrives_at_the_end_and_defaults_to_request_size() {
    for kind in KINDS {
        // No scripted usage: the server reports request bytes/4, which the client must pass through
        // (not estimate) because it was reported.
        let server = serve(vec![Turn::text("ok")]).await;
        let (result, _) = run(config(kind, &server), &request("count me")).await;
        let r = result.unwrap();
        let body_len = serde_json::to_vec(&server.requests()[0].body)
            .unwrap()
            .len() as u64;
        assert!(!r.usage.estimated, "{kind:?}");
        // The recorded body is re-serialised, so allow a little slack around bytes/4.
        let diff = r.usage.input_tokens.abs_diff(body_len / 4);
        assert!(
            diff <= 4,
            "{kind:?}: {} vs {}",
            r.usage.input_tokens,
            body_len / 4
        );
        if kind == ProviderKind::Openai {
            assert_eq!(
                server.requests()[0].body["stream_options"],
                json!({"include_usage": true})
            );
        }
    }
}

#[tokio::test]
async fn rate_limit_honours_retry_after_then_succeeds() {
    for kind in KINDS {
        let server = serve(vec![
            Turn::text("after the wait").fault(Fault::rate_limited(1))
        ])
        .await;
        let started = Instant::now();
        let (result, deltas) = run(config(kind, &server), &request("x")).await;
        let elapsed = started.elapsed();
        assert_eq!(result.unwrap().text, "after the wait");
        assert_eq!(
            deltas.retries(),
            vec![(1, Duration::from_secs(1))],
            "{kind:?}"
        );
        assert!(
            elapsed >= Duration::from_millis(950),
            "{kind:?} waited only {elapsed:?}"
        );
        assert!(
            elapsed < Duration::from_millis(2500),
            "{kind:?} waited {elapsed:?}"
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn server_errors_are_retried() {
    for (kind, status) in [
        (ProviderKind::Openai, 500),
        (ProviderKind::Anthropic, 529),
        (ProviderKind::Openai, 503),
    ] {
        let server = serve(vec![Turn::text("recovered").fault(Fault::status(status))]).await;
        let (result, deltas) = run(config(kind, &server), &request("x")).await;
        assert_eq!(result.unwrap().text, "recovered", "{kind:?} {status}");
        assert_eq!(deltas.retries().len(), 1);
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn persistent_server_error_gives_up_after_max_retries() {
    let server = serve(vec![Turn::text("never").fault(Fault::status(500).times(10))]).await;
    let mut c = config(ProviderKind::Openai, &server);
    c.max_retries = 1;
    let (result, _) = run(c, &request("x")).await;
    assert!(
        matches!(result, Err(ProviderError::Server { status: 500, .. })),
        "{result:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn cut_stream_is_an_error_never_a_partial_response() {
    for kind in KINDS {
        let long = "This answer will be cut in the middle of the stream. ".repeat(10);
        let server = serve(vec![
            Turn::text(long.clone()).fault(Fault::cut_after_bytes(300).times(10))
        ])
        .await;
        let (result, deltas) = run(config(kind, &server), &request("x")).await;
        assert!(
            matches!(result, Err(ProviderError::Network(_))),
            "{kind:?}: {result:?}"
        );
        assert_eq!(server.requests().len(), 3, "first try plus max_retries");
        assert_eq!(deltas.retries().len(), 2);

        // A single cut is survived by the retry, with the whole text.
        let server = serve(vec![
            Turn::text(long.clone()).fault(Fault::cut_after_bytes(300))
        ])
        .await;
        let (result, _) = run(config(kind, &server), &request("x")).await;
        assert_eq!(result.unwrap().text, long, "{kind:?}");
    }
}

#[tokio::test]
async fn stalled_stream_hits_the_idle_timeout_after_one_retry() {
    for kind in KINDS {
        let server = serve(vec![
            Turn::text("slow").fault(Fault::stall_ms(5000).times(5))
        ])
        .await;
        let mut c = config(kind, &server);
        c.idle_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let (result, deltas) = run(c, &request("x")).await;
        assert!(
            matches!(result, Err(ProviderError::IdleTimeout(d)) if d == Duration::from_millis(300)),
            "{kind:?}: {result:?}"
        );
        // One retry for a stall, not max_retries (2): each costs a whole idle timeout.
        assert_eq!(server.requests().len(), 2, "{kind:?}");
        assert_eq!(deltas.retries().len(), 1, "{kind:?}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_single_mid_stream_stall_is_retried_and_the_turn_completes() {
    for kind in KINDS {
        let server = serve(vec![
            Turn::text("finally all here").fault(Fault::stall_ms(5000))
        ])
        .await;
        let mut c = config(kind, &server);
        c.idle_timeout = Duration::from_millis(300);
        let (result, deltas) = run(c, &request("x")).await;
        assert_eq!(result.unwrap().text, "finally all here", "{kind:?}");
        assert_eq!(deltas.retries().len(), 1, "{kind:?}");
        assert_eq!(server.requests().len(), 2, "{kind:?}");
    }
}

#[tokio::test]
async fn cancel_mid_stream_returns_promptly() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("word ".repeat(200))
            .chunk_bytes(64)
            .delay_ms(20)])
        .await;
        let client = client_for(config(kind, &server)).unwrap();
        let cancel = CancellationToken::new();
        let got_text = Arc::new(Mutex::new(String::new()));
        let sink = got_text.clone();
        let on_delta = move |d: StreamDelta| {
            if let StreamDelta::Text(t) = d {
                sink.lock().unwrap().push_str(&t);
            }
        };
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            trigger.cancel();
        });
        let started = Instant::now();
        let result = client.complete(&request("x"), &on_delta, &cancel).await;
        let elapsed = started.elapsed();
        assert!(
            matches!(result, Err(ProviderError::Cancelled)),
            "{kind:?}: {result:?}"
        );
        assert!(
            elapsed < Duration::from_millis(800),
            "{kind:?} took {elapsed:?}"
        );
        assert!(
            !got_text.lock().unwrap().is_empty(),
            "cancelled mid-stream, not before it"
        );
    }
}

#[tokio::test]
async fn cancel_during_backoff_returns_promptly() {
    let server = serve(vec![Turn::text("x").fault(Fault::rate_limited(30))]).await;
    let mut c = config(ProviderKind::Anthropic, &server);
    c.max_backoff = Duration::from_secs(60);
    let client = client_for(c).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let result = client.complete(&request("x"), &|_| {}, &cancel).await;
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn wrong_key_is_an_auth_error_that_never_shows_the_key() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .require_api_key("sk-test-123")
                .rule(Rule::new("any").turn(Turn::text("welcome"))),
        )
        .await
        .unwrap();
        let mut c = config(kind, &server);
        c.api_key = Some(SecretString::new("sk-wrong-secret-999"));
        let (result, deltas) = run(c.clone(), &request("x")).await;
        let err = result.unwrap_err();
        assert!(
            matches!(err, ProviderError::Auth { status: 401, .. }),
            "{kind:?}: {err:?}"
        );
        assert!(!err.to_string().contains("sk-wrong-secret-999"));
        assert!(!format!("{err:?}").contains("sk-wrong-secret-999"));
        assert!(deltas.retries().is_empty(), "auth errors are not retried");

        c.api_key = Some(SecretString::new("sk-test-123"));
        assert!(!format!("{c:?}").contains("sk-test-123"));
        let (result, _) = run(c, &request("x")).await;
        assert_eq!(result.unwrap().text, "welcome");
        let headers = &server.requests()[1].headers;
        match kind {
            ProviderKind::Openai => assert_eq!(headers["authorization"], "Bearer sk-test-123"),
            ProviderKind::Anthropic => {
                assert_eq!(headers["x-api-key"], "sk-test-123");
                assert_eq!(headers["anthropic-version"], "2023-06-01");
            }
        }
    }
}

#[tokio::test]
async fn context_length_is_typed_and_not_retried() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("x").fault(Fault::context_length())]).await;
        let (result, _) = run(config(kind, &server), &request("x")).await;
        assert!(
            matches!(result, Err(ProviderError::ContextLengthExceeded { .. })),
            "{kind:?}: {result:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn unknown_model_is_not_found() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("x")]).await;
        let mut c = config(kind, &server);
        c.model = "no-such-model".into();
        let (result, _) = run(c, &request("x")).await;
        match result {
            Err(ProviderError::NotFound {
                status: 404,
                message,
            }) => assert!(message.contains("no-such-model")),
            other => panic!("{kind:?}: {other:?}"),
        }
    }
}

/// The model ids `list_models` returns for `server` over `kind`'s wire format.
async fn listed_ids(kind: ProviderKind, server: &MockServer) -> Vec<String> {
    let client = client_for(config(kind, server)).unwrap();
    client
        .list_models()
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect()
}

#[tokio::test]
async fn list_models_in_both_shapes() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("x")]).await;
        assert_eq!(
            listed_ids(kind, &server).await,
            vec!["mock-main", "mock-light"],
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn a_model_listed_twice_is_offered_once() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .models(["gpt-4o", "mock-main", "gpt-4o", "mock-main"])
                .rule(Rule::new("main").turn(Turn::text("x"))),
        )
        .await
        .unwrap();
        assert_eq!(
            listed_ids(kind, &server).await,
            vec!["gpt-4o", "mock-main"],
            "{kind:?}"
        );
    }
}

/// Runs turn 0 (two tool calls), answers them (one as an error), and runs turn 1. The server rejects
/// any history a real API would reject, so a pass means the translation is well-formed.
#[tokio::test]
async fn history_round_trip_through_tool_calls() {
    for kind in KINDS {
        let server = serve(vec![
            Turn::tools(parallel_calls()).with_text("Let me look."),
            Turn::text("Found it in src/auth.rs."),
        ])
        .await;
        let c = config(kind, &server);
        let mut req = request("where is auth?");
        let (first, _) = run(c.clone(), &req).await;
        let first = first.unwrap();
        req.messages.push(Message::Assistant {
            text: first.text.clone(),
            tool_calls: first.tool_calls.clone(),
            reasoning: first.reasoning.clone(),
        });
        req.messages.push(Message::ToolResult {
            call_id: first.tool_calls[0].id.clone(),
            name: "Grep".into(),
            content: "src/auth.rs:3: fn auth()".into(),
            is_error: false,
        });
        req.messages.push(Message::ToolResult {
            call_id: first.tool_calls[1].id.clone(),
            name: "Read".into(),
            content: "no such file".into(),
            is_error: true,
        });
        let (second, _) = run(c, &req).await;
        assert_eq!(
            second.unwrap_or_else(|e| panic!("{kind:?}: {e}")).text,
            "Found it in src/auth.rs."
        );

        let body = &server.requests()[1].body;
        match kind {
            ProviderKind::Openai => {
                let msgs = body["messages"].as_array().unwrap();
                assert_eq!(msgs[0]["role"], "system");
                let calls = msgs[2]["tool_calls"].as_array().unwrap();
                assert_eq!(
                    calls[0]["function"]["arguments"],
                    json!(first.tool_calls[0].arguments)
                );
                assert_eq!(msgs[3]["tool_call_id"], json!(first.tool_calls[0].id));
                assert_eq!(msgs[4]["role"], "tool");
            }
            ProviderKind::Anthropic => {
                assert_eq!(body["system"], "You are a test agent.");
                let msgs = body["messages"].as_array().unwrap();
                assert_eq!(msgs.len(), 3);
                let uses = msgs[1]["content"].as_array().unwrap();
                assert_eq!(uses[1]["input"], parallel_calls()[0].arguments);
                let results = msgs[2]["content"].as_array().unwrap();
                assert_eq!(results.len(), 2, "both results in one user turn");
                assert_eq!(results[1]["is_error"], true);
            }
        }
    }
}

fn tool_history() -> Vec<Message> {
    vec![
        Message::user("look"),
        Message::Assistant {
            text: String::new(),
            reasoning: Vec::new(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "Grep".into(),
                arguments: r#"{"pattern":"x"}"#.into(),
            }],
        },
        Message::ToolResult {
            call_id: "call_1".into(),
            name: "Grep".into(),
            content: "nothing".into(),
            is_error: false,
        },
        Message::user("Budget spent: answer now without tools."),
    ]
}

#[tokio::test]
async fn final_answer_request_keeps_tools_but_forbids_calls() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("Final answer.")]).await;
        let mut req = request("x");
        req.messages = tool_history();
        req.allow_tool_calls = false;
        let (result, _) = run(config(kind, &server), &req).await;
        assert_eq!(
            result.unwrap_or_else(|e| panic!("{kind:?}: {e}")).text,
            "Final answer."
        );
        let body = &server.requests()[0].body;
        assert_eq!(body["tools"].as_array().unwrap().len(), 2);
        match kind {
            ProviderKind::Openai => assert_eq!(body["tool_choice"], "none"),
            ProviderKind::Anthropic => assert_eq!(body["tool_choice"], json!({"type": "none"})),
        }
    }
}

#[tokio::test]
async fn no_tools_means_no_tools_field() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("plain")]).await;
        let mut req = request("x");
        req.tools.clear();
        req.allow_tool_calls = false;
        let (result, _) = run(config(kind, &server), &req).await;
        assert_eq!(result.unwrap().text, "plain");
        let body = &server.requests()[0].body;
        assert!(body.get("tools").is_none(), "{kind:?}: {body}");
        assert!(body.get("tool_choice").is_none(), "{kind:?}: {body}");
    }
}

#[tokio::test]
async fn empty_reply_is_a_finished_empty_response() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("not this").fault(Fault::empty())]).await;
        let (result, _) = run(config(kind, &server), &request("x")).await;
        let r = result.unwrap();
        assert!(r.text.is_empty() && r.tool_calls.is_empty());
        assert_eq!(r.finish_reason, FinishReason::Stop);
    }
}

#[tokio::test]
async fn unreachable_endpoint_is_a_network_error() {
    // Bind then drop a listener so the port is closed.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut c = ProviderConfig::new(
        ProviderKind::Openai,
        format!("http://127.0.0.1:{port}/v1"),
        "m",
    );
    c.max_retries = 1;
    c.max_backoff = Duration::from_millis(50);
    let (result, deltas) = run(c, &request("x")).await;
    assert!(
        matches!(result, Err(ProviderError::Network(_))),
        "{result:?}"
    );
    assert_eq!(deltas.retries().len(), 1);
}

/// A server that answers every request with `307` to `location`, and counts what it answered.
async fn redirecting_server(location: String) -> (String, Arc<Mutex<usize>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(Mutex::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = sock.read(&mut buf).await;
            *counted.lock().unwrap() += 1;
            let reply = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (format!("http://{addr}"), hits)
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_so_the_key_stays_home() {
    for kind in KINDS {
        // The "other origin" is the scripted server on another port, which records request headers.
        let elsewhere = serve(vec![Turn::text("should never be asked")]).await;
        let target = match kind {
            ProviderKind::Openai => format!("{}/chat/completions", elsewhere.openai_base_url()),
            ProviderKind::Anthropic => format!("{}/v1/messages", elsewhere.anthropic_base_url()),
        };
        let (home, hits) = redirecting_server(target.clone()).await;
        let mut c = ProviderConfig::new(kind, format!("{home}/v1"), "mock-main");
        c.api_key = Some(SecretString::new("sk-home-origin-only-0123456789"));
        c.max_retries = 2;
        c.max_backoff = Duration::from_millis(50);
        let (result, _) = run(c.clone(), &request("hi")).await;
        match &result {
            Err(ProviderError::BadRequest {
                status: 307,
                message,
            }) => {
                assert!(message.contains("does not follow redirects"), "{message}");
                assert!(
                    message.contains(&target),
                    "names where it redirects: {message}"
                );
            }
            other => panic!("{kind:?}: {other:?}"),
        }
        assert_eq!(
            *hits.lock().unwrap(),
            1,
            "{kind:?}: a redirect is not retried"
        );
        let listed = client_for(c).unwrap().list_models().await;
        assert!(
            matches!(listed, Err(ProviderError::BadRequest { status: 307, .. })),
            "{listed:?}"
        );
        assert_eq!(
            elsewhere.requests().len(),
            0,
            "{kind:?}: the other origin was asked (and would have seen the key)"
        );
    }
}

#[test]
fn bad_config_is_rejected_clearly() {
    let err = client_for(ProviderConfig::new(
        ProviderKind::Openai,
        "localhost:11434",
        "m",
    ))
    .err()
    .unwrap();
    assert!(err.to_string().contains("http://"), "{err}");
    let err = client_for(ProviderConfig::new(
        ProviderKind::Anthropic,
        "https://api.anthropic.com",
        " ",
    ))
    .err()
    .unwrap();
    assert!(err.to_string().contains("model"), "{err}");
}

#[tokio::test]
async fn usage_without_a_real_prompt_count_is_estimated_never_zero() {
    for usage in [
        json!({}),
        json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
        json!({"completion_tokens": 9}),
        json!({"prompt_tokens": null, "completion_tokens": 3}),
    ] {
        let server = serve(vec![Turn::text("hello there").openai_usage(usage.clone())]).await;
        let (result, _) = run(config(ProviderKind::Openai, &server), &request("count me")).await;
        let r = result.unwrap();
        let body_len = serde_json::to_vec(&server.requests()[0].body)
            .unwrap()
            .len() as u64;
        assert!(r.usage.estimated, "{usage}: {:?}", r.usage);
        assert!(
            r.usage.input_tokens.abs_diff(body_len / 4) <= 4,
            "{usage}: {} vs {}",
            r.usage.input_tokens,
            body_len / 4
        );
        assert!(r.usage.output_tokens > 0, "{usage}: {:?}", r.usage);
    }
    // A real prompt count without a completion count keeps the count, estimates the rest.
    let server = serve(vec![
        Turn::text("hello there").openai_usage(json!({"prompt_tokens": 50}))
    ])
    .await;
    let (result, _) = run(config(ProviderKind::Openai, &server), &request("x")).await;
    let usage = result.unwrap().usage;
    assert_eq!((usage.input_tokens, usage.estimated), (50, true));
    assert!(usage.output_tokens > 0);
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_honoured() {
    for kind in KINDS {
        let at = std::time::SystemTime::now() + Duration::from_secs(3);
        let server = serve(vec![Turn::text("after the date")
            .fault(Fault::rate_limited_header(httpdate::fmt_http_date(at)))])
        .await;
        let started = Instant::now();
        let (result, deltas) = run(config(kind, &server), &request("x")).await;
        assert_eq!(result.unwrap().text, "after the date");
        let retries = deltas.retries();
        assert_eq!(retries.len(), 1, "{kind:?}");
        // The date has whole seconds, so the wait is (2 s, 3 s]; the blind backoff would be ≤ 0.5 s.
        assert!(
            retries[0].1 > Duration::from_millis(1900) && retries[0].1 <= Duration::from_secs(3),
            "{kind:?}: {:?}",
            retries[0].1
        );
        assert!(started.elapsed() >= Duration::from_millis(1900));
    }
}

#[tokio::test]
async fn retry_after_ms_is_honoured() {
    let server = serve(vec![
        Turn::text("ms later").fault(Fault::rate_limited_ms(1200))
    ])
    .await;
    let started = Instant::now();
    let (result, deltas) = run(config(ProviderKind::Openai, &server), &request("x")).await;
    assert_eq!(result.unwrap().text, "ms later");
    assert_eq!(deltas.retries(), vec![(1, Duration::from_millis(1200))]);
    assert!(started.elapsed() >= Duration::from_millis(1150));
}

#[tokio::test]
async fn a_server_wait_above_the_backoff_cap_is_waited_out_in_full() {
    // max_backoff is 1.5 s in these configs; the server asks for 2 s.
    let server = serve(vec![Turn::text("patience").fault(Fault::rate_limited(2))]).await;
    let started = Instant::now();
    let (result, deltas) = run(config(ProviderKind::Anthropic, &server), &request("x")).await;
    assert_eq!(result.unwrap().text, "patience");
    assert_eq!(deltas.retries(), vec![(1, Duration::from_secs(2))]);
    assert!(started.elapsed() >= Duration::from_millis(1950));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_server_wait_above_max_retry_after_gives_up_at_once_and_says_why() {
    for kind in KINDS {
        let server = serve(vec![Turn::text("never").fault(Fault::rate_limited(600))]).await;
        let mut c = config(kind, &server);
        c.max_retry_after = Duration::from_secs(60);
        let started = Instant::now();
        let (result, deltas) = run(c, &request("x")).await;
        let err = result.unwrap_err();
        assert!(
            matches!(err, ProviderError::RateLimited { retry_after: Some(w), .. } if w == Duration::from_secs(600)),
            "{kind:?}: {err:?}"
        );
        assert!(
            err.to_string().starts_with(
                "rate limited: server asks to retry after 600 s, longer than the 60 s Canopy waits"
            ),
            "{err}"
        );
        assert!(deltas.retries().is_empty());
        assert_eq!(server.requests().len(), 1);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn tool_call_fragments_without_index_are_told_apart_by_id() {
    let server = serve(vec![Turn::tools(parallel_calls())
        .chunk_bytes(7)
        .without_tool_call_index()])
    .await;
    let (result, _) = run(config(ProviderKind::Openai, &server), &request("x")).await;
    let r = result.unwrap();
    let expected = parallel_calls();
    assert_eq!(r.tool_calls.len(), 2, "{:?}", r.tool_calls);
    for (got, want) in r.tool_calls.iter().zip(&expected) {
        assert_eq!(Some(&got.id), want.id.as_ref());
        assert_eq!(got.name, want.name);
        let parsed: Value = serde_json::from_str(&got.arguments).unwrap();
        assert_eq!(parsed, want.arguments);
    }
    // Calls without index that even reuse one id are still two calls, with distinct ids.
    let server = serve(vec![Turn::tools(vec![
        call("Read", json!({"path": "a.rs"})).with_id("dup"),
        call("Grep", json!({"pattern": "b"})).with_id("dup"),
    ])
    .without_tool_call_index()])
    .await;
    let (result, _) = run(config(ProviderKind::Openai, &server), &request("x")).await;
    let calls = result.unwrap().tool_calls;
    let got: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("dup", "Read", r#"{"path":"a.rs"}"#),
            ("dup_2", "Grep", r#"{"pattern":"b"}"#)
        ]
    );
}

#[tokio::test]
async fn duplicate_tool_call_ids_in_one_response_are_made_unique() {
    for kind in KINDS {
        let server = serve(vec![Turn::tools(vec![
            call("Read", json!({"path": "a"})).with_id("same"),
            call("Read", json!({"path": "b"})).with_id("same"),
            call("Read", json!({"path": "c"})).with_id("same_2"),
        ])])
        .await;
        let (result, _) = run(config(kind, &server), &request("x")).await;
        let calls = result.unwrap().tool_calls;
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        // The second "same" must not become "same_2": the third call already has that id.
        assert_eq!(ids, ["same", "same_3", "same_2"], "{kind:?}");
        let paths: Vec<&str> = calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(
            paths,
            [r#"{"path":"a"}"#, r#"{"path":"b"}"#, r#"{"path":"c"}"#]
        );
    }
}
