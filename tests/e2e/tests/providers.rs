//! Real providers' quirks end to end: a delegated run (main agent → Task → explore subagent →
//! result) over the scripted server for each behaviour the server learned from the real APIs —
//! an OpenAI reasoning model that rejects `max_tokens`, an Ollama model that silently drops the
//! start of a prompt beyond its default context, DeepSeek reasoning that must never be sent back,
//! Anthropic thinking whose signed blocks must survive tool calls, and an OpenRouter error inside
//! a 200 stream.

// Test code: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use canopy_e2e::*;
use canopy_protocol::{ProviderKind, ReasoningEffort, TerminalReason, TraceEvent, Usage};
use canopy_test_support::{call, Fault, MockServer, Rule, Script, Turn};
use serde_json::{json, Value};

const TASK: &str = "TASK-Q: where is login implemented?";

/// A delegated run's script: the main agent delegates once and then answers; the explore child
/// greps, then hands in a result. `main` and `child` adjust each rule's turns.
fn delegated(main: impl Fn(Turn, usize) -> Turn, child: impl Fn(Turn, usize) -> Turn) -> Script {
    Script::new()
        .rule(
            main_agent_rule()
                .turn(main(Turn::tools(vec![task("Find login", TASK)]), 0))
                .turn(main(Turn::text("Login is in src/auth.rs."), 1)),
        )
        .rule(
            explore_rule("TASK-Q")
                .turn(child(
                    Turn::tools(vec![call(
                        "Grep",
                        json!({"pattern": "fn login", "output_mode": "content"}),
                    )]),
                    0,
                ))
                .turn(child(
                    Turn::text(explore_result(
                        "login is in src/auth.rs",
                        &["src/auth.rs:3"],
                    )),
                    1,
                )),
        )
}

#[track_caller]
fn assert_delegated_run_completed(ran: &Ran) {
    assert_eq!(
        ran.outcome.terminal_reason,
        TerminalReason::Completed,
        "{:?}",
        ran.outcome.error
    );
    let (reason, result) = ran.child_completed().expect("the child completed");
    assert_eq!(reason, TerminalReason::Completed);
    assert_eq!(result.evidence[0].path, "src/auth.rs");
    assert_eq!(
        ran.outcome.final_text.as_deref(),
        Some("Login is in src/auth.rs.")
    );
}

fn model_call_ends(ran: &Ran, session: &str) -> Vec<(String, Usage)> {
    ran.events(session)
        .into_iter()
        .filter_map(|e| match e {
            TraceEvent::ModelCallEnd {
                reasoning,
                usage,
                error: None,
                ..
            } => Some((reasoning.clone(), *usage)),
            _ => None,
        })
        .collect()
}

fn adaptations(ran: &Ran) -> Vec<(String, String, String)> {
    ran.records
        .iter()
        .filter_map(|r| match &r.event {
            TraceEvent::ProviderAdapted {
                model,
                change,
                reason,
                ..
            } => Some((model.clone(), change.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

fn bodies(server: &MockServer, path: &str) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path == path)
        .map(|r| r.body)
        .collect()
}

#[tokio::test]
async fn an_openai_reasoning_model_run_adapts_to_max_completion_tokens_once_per_model() {
    let reasoning_usage = json!({"prompt_tokens": 1200, "completion_tokens": 300,
        "total_tokens": 1500, "completion_tokens_details": {"reasoning_tokens": 256}});
    let script = delegated(|t, _| t.openai_usage(reasoning_usage.clone()), |t, _| t);
    let scenario = Scenario::start(script).await;
    let mut settings = scenario.settings(ProviderKind::Openai, true);
    settings.main.model = "gpt-5.4-mini".into();
    settings.main.reasoning_effort = Some(ReasoningEffort::Minimal);
    let light = settings.light.as_mut().unwrap();
    light.model = "o4-mini".into();
    light.reasoning_effort = Some(ReasoningEffort::Minimal);
    let rt = runtime(&settings, |_| {});
    let ran = scenario.run(&rt, "Where is login?").await;
    assert_delegated_run_completed(&ran);

    // The server rejected `max_tokens` exactly once per model: the lesson was kept for the
    // model's later calls (the main agent's second call, the child's second call).
    let requests = bodies(&scenario.server, "/v1/chat/completions");
    let rejected: Vec<&Value> = requests
        .iter()
        .filter(|b| b.get("max_tokens").is_some())
        .collect();
    let rejected_models: Vec<&str> = rejected
        .iter()
        .map(|b| b["model"].as_str().unwrap())
        .collect();
    assert_eq!(rejected_models.len(), 2, "{rejected_models:?}");
    assert!(rejected_models.contains(&"gpt-5.4-mini") && rejected_models.contains(&"o4-mini"));
    let accepted: Vec<&Value> = requests
        .iter()
        .filter(|b| b.get("max_tokens").is_none())
        .collect();
    assert_eq!(accepted.len(), 4, "two calls per agent");
    for b in &accepted {
        assert_eq!(b["max_completion_tokens"], 4096);
        assert!(b.get("temperature").is_none());
        // `minimal` is a gpt-5 effort; the o-series gets the nearest one it takes.
        let want = if b["model"] == "gpt-5.4-mini" {
            "minimal"
        } else {
            "low"
        };
        assert_eq!(b["reasoning_effort"], want, "{b}");
    }

    // Each adaptation is in the trace with the server's own words.
    let adapted = adaptations(&ran);
    assert_eq!(adapted.len(), 2, "{adapted:?}");
    for (_, change, reason) in &adapted {
        assert_eq!(change, "max_tokens -> max_completion_tokens");
        assert!(reason.contains("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."), "{reason}");
    }

    // And on disk, inside the call it belongs to.
    let on_disk = scenario.trace_file_texts().concat();
    assert_eq!(on_disk.matches(r#""type":"provider_adapted""#).count(), 2);

    // Reasoning tokens are counted as part of the output.
    let ends = model_call_ends(&ran, &ran.root);
    assert_eq!(ends[0].1.output_tokens, 300);
    assert_eq!(ends[0].1.reasoning_tokens, 256);
    assert!(
        ran.outcome.usage.reasoning_tokens >= 512,
        "{:?}",
        ran.outcome.usage
    );
}

/// An Ollama model served with a 1024-token default context: the main agent's prompt (system prompt
/// and tools) is longer than that.
fn ollama_script() -> Script {
    delegated(|t, _| t, |t, _| t)
        .ollama_model("qwen2.5-coder:7b", "qwen2", 32_768)
        .ollama_default_ctx(1024)
        // What answers a request whose system prompt was dropped.
        .rule(Rule::new("no system prompt").turn(Turn::text("I have no instructions.")))
}

#[tokio::test]
async fn an_ollama_run_keeps_its_system_prompt_by_setting_num_ctx() {
    let scenario = Scenario::start(ollama_script()).await;
    let mut settings = scenario.settings(ProviderKind::Openai, false);
    settings.main.model = "qwen2.5-coder:7b".into();
    settings.main.context_window = 65_536;
    let rt = runtime(&settings, |_| {});
    let ran = scenario.run(&rt, "Where is login?").await;
    assert_delegated_run_completed(&ran);

    // Every call went through the native chat API with the context the agent needs, capped at
    // what the model takes; none through the truncating OpenAI-compatible path.
    assert!(bodies(&scenario.server, "/v1/chat/completions").is_empty());
    let chats = bodies(&scenario.server, "/api/chat");
    assert_eq!(chats.len(), 4);
    for b in &chats {
        assert_eq!(b["options"]["num_ctx"], 32_768, "{b}");
        assert_eq!(b["messages"][0]["role"], "system");
    }
    // Tool calls go back with arguments as objects and tool results by tool name.
    let last = chats
        .iter()
        .find(|b| b["messages"].to_string().contains("tool_name"))
        .unwrap();
    assert!(
        last["messages"].to_string().contains(r#""arguments":{"#),
        "{last}"
    );

    // The setting is in the trace, with the warning that the slot asks for more than the model has.
    let adapted = adaptations(&ran);
    assert!(!adapted.is_empty());
    let (_, change, reason) = &adapted[0];
    assert_eq!(change, "/api/chat with num_ctx 32768");
    assert!(
        reason.contains("at most 32768 tokens") && reason.contains("65536"),
        "{reason}"
    );
}

#[tokio::test]
async fn without_num_ctx_the_scripted_ollama_drops_the_system_prompt() {
    // The same server on its OpenAI-compatible path, as a client that does not know it is Ollama
    // talks to it: the answer comes from a model that never saw its instructions.
    let scenario = Scenario::start(ollama_script()).await;
    let mut settings = scenario.settings(ProviderKind::Openai, false);
    settings.main.model = "qwen2.5-coder:7b".into();
    let system = "You are Canopy. ".repeat(400);
    let mut config = canopy_providers::ProviderConfig::new(
        ProviderKind::Openai,
        scenario.server.openai_base_url(),
        "qwen2.5-coder:7b",
    );
    config.detect_ollama = false;
    let client = canopy_providers::client_for(config).unwrap();
    let request = canopy_providers::ModelRequest {
        system,
        messages: vec![canopy_protocol::Message::user("Where is login?")],
        tools: Vec::new(),
        allow_tool_calls: true,
        max_tokens: 256,
        temperature: None,
    };
    let resp = client
        .complete(
            &request,
            &|_| {},
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(resp.text, "I have no instructions.");
}

#[tokio::test]
async fn deepseek_reasoning_is_shown_and_counted_but_never_sent_back() {
    let script = delegated(
        |t, i| t.reasoning(format!("Main thinks step {i}: delegate the search.")),
        |t, i| t.reasoning(format!("Child thinks step {i}: grep for fn login.")),
    );
    let scenario = Scenario::start(script).await;
    let mut settings = scenario.settings(ProviderKind::Openai, true);
    settings.main.model = "deepseek-reasoner".into();
    settings.light.as_mut().unwrap().model = "deepseek-reasoner".into();
    let rt = runtime(&settings, |_| {});
    let ran = scenario.run(&rt, "Where is login?").await;
    assert_delegated_run_completed(&ran);

    let requests = bodies(&scenario.server, "/v1/chat/completions");
    assert_eq!(requests.len(), 4, "no request was rejected");
    for b in &requests {
        assert!(
            !b["messages"].to_string().contains("reasoning_content"),
            "{b}"
        );
        assert!(!b["messages"].to_string().contains("thinks step"), "{b}");
    }
    let ends = model_call_ends(&ran, &ran.root);
    assert_eq!(ends[0].0, "Main thinks step 0: delegate the search.");
    assert!(ends[0].1.reasoning_tokens > 0 && ends[0].1.reasoning_tokens < ends[0].1.output_tokens);
    let child = &ran.children()[0];
    assert_eq!(
        model_call_ends(&ran, child)[0].0,
        "Child thinks step 0: grep for fn login."
    );
}

#[tokio::test]
async fn anthropic_thinking_blocks_keep_their_signatures_across_tool_calls() {
    let script = delegated(
        |t, i| t.reasoning(format!("Main thinking {i}.")),
        |t, i| {
            let t = t.reasoning(format!("Child thinking {i}."));
            if i == 0 {
                t.redacted_thinking(
                    "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
                )
            } else {
                t
            }
        },
    );
    let scenario = Scenario::start(script).await;
    let mut settings = scenario.settings(ProviderKind::Anthropic, true);
    settings.main.thinking_budget_tokens = Some(2048);
    settings.light.as_mut().unwrap().thinking_budget_tokens = Some(1024);
    let rt = runtime(&settings, |_| {});
    let ran = scenario.run(&rt, "Where is login?").await;
    assert_delegated_run_completed(&ran);

    let requests = bodies(&scenario.server, "/v1/messages");
    assert_eq!(requests.len(), 4, "no request was rejected");
    for b in &requests {
        let budget = b["thinking"]["budget_tokens"].as_u64().unwrap();
        assert!(b["max_tokens"].as_u64().unwrap() > budget);
    }
    // The child's continuation after its Grep starts its assistant turn with the signed thinking
    // block and the redacted one, exactly as streamed.
    let continuation = requests
        .iter()
        .find(|b| b["messages"].to_string().contains("Child thinking 0."))
        .expect("the child's second call");
    let turn = &continuation["messages"][1]["content"];
    assert_eq!(turn[0]["type"], "thinking");
    assert_eq!(turn[0]["thinking"], "Child thinking 0.");
    assert_eq!(
        turn[0]["signature"].as_str().unwrap(),
        canopy_test_support::quirks::signature_for("Child thinking 0.")
    );
    assert_eq!(turn[1]["type"], "redacted_thinking");
    assert_eq!(turn[2]["type"], "tool_use");

    let child = &ran.children()[0];
    let ends = model_call_ends(&ran, child);
    assert_eq!(ends[0].0, "Child thinking 0.\n\n[redacted thinking]");
    assert!(ends[0].1.reasoning_tokens > 0);
}

#[tokio::test]
async fn an_openrouter_error_inside_a_200_stream_is_retried_and_named() {
    let script = delegated(
        |t, i| {
            if i == 0 {
                t.fault(Fault::stream_error(
                    502,
                    "Provider returned error: upstream overloaded",
                ))
            } else {
                t
            }
        },
        |t, i| {
            if i == 1 {
                t.fault(Fault::stream_error(
                    429,
                    "Rate limit exceeded: free-models-per-min",
                ))
            } else {
                t
            }
        },
    );
    let scenario = Scenario::start(script).await;
    let mut settings = scenario.settings(ProviderKind::Openai, true);
    settings.main.model = "openai/gpt-4.1".into();
    settings.light.as_mut().unwrap().model = "meta-llama/llama-3.3-70b-instruct".into();
    let rt = runtime(&settings, |_| {});
    let ran = scenario.run(&rt, "Where is login?").await;
    assert_delegated_run_completed(&ran);

    let retries: Vec<String> = ran
        .records
        .iter()
        .filter_map(|r| match &r.event {
            TraceEvent::ModelRetry { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(
        retries.iter().any(
            |e| e.contains("502") && e.contains("Provider returned error: upstream overloaded")
        ),
        "{retries:?}"
    );
    assert!(
        retries
            .iter()
            .any(|e| e.contains("Rate limit exceeded: free-models-per-min")),
        "{retries:?}"
    );
}
