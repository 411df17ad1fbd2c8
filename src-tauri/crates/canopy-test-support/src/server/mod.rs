//! The HTTP side of the mock server: routes, auth, rule and turn selection, faults, recording, and
//! streaming a rendered turn in timed pieces.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;

use crate::script::{Fault, Rule, Script, ScriptUsage, Turn};
use crate::wire::{self, Api, OutCall, Rendered, RequestView};
use crate::RecordedRequest;

mod ollama;

use ollama::{ollama_show, ollama_tags, ollama_version};

/// Shared state of one server.
pub(crate) struct Shared {
    pub script: Script,
    pub requests: Mutex<Vec<RecordedRequest>>,
    /// Requests that already received the fault of (rule index, turn index).
    fault_hits: Mutex<HashMap<(usize, usize), u32>>,
    next_id: AtomicU64,
}

impl Shared {
    pub fn new(script: Script) -> Self {
        Shared {
            script,
            requests: Mutex::new(Vec::new()),
            fault_hits: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    fn fresh_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// True when this request should get the turn's fault (and counts it).
    fn take_fault(&self, rule: usize, turn: usize, fault: &Fault) -> bool {
        let limit = fault.times.unwrap_or(1);
        let mut hits = match self.fault_hits.lock() {
            Ok(h) => h,
            Err(poisoned) => poisoned.into_inner(),
        };
        let n = hits.entry((rule, turn)).or_insert(0);
        if *n < limit {
            *n += 1;
            true
        } else {
            false
        }
    }

    fn record(&self, path: &str, headers: &HeaderMap, body: Value) {
        let headers = headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut reqs = match self.requests.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        reqs.push(RecordedRequest {
            path: path.to_string(),
            headers,
            body,
        });
    }
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(openai_completions))
        .route("/v1/messages", post(anthropic_messages))
        .route("/v1/models", get(list_models))
        .route("/api/version", get(ollama_version))
        .route("/api/tags", get(ollama_tags))
        .route("/api/show", post(ollama_show))
        .route("/api/chat", post(ollama_chat))
        .route("/_requests", get(recorded))
        .layer(DefaultBodyLimit::max(256 * 1024 * 1024))
        .with_state(shared)
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

fn error_response(api: Api, status: u16, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, wire::error_body(api, status, message))
}

/// The key the client sent, in either header style.
fn presented_key(headers: &HeaderMap) -> Option<String> {
    if let Some(k) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(k.to_string());
    }
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string)
}

fn check_auth(shared: &Shared, api: Api, headers: &HeaderMap) -> Option<Response> {
    let required = shared.script.require_api_key.as_deref()?;
    let message = match presented_key(headers) {
        None if api == Api::Anthropic => "x-api-key header is required",
        None => "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        Some(k) if k == required => return None,
        Some(_) if api == Api::Anthropic => "invalid x-api-key",
        Some(_) => "Incorrect API key provided. You can find your API key in your account settings.",
    };
    Some(error_response(api, 401, message))
}

fn check_model(shared: &Shared, api: Api, model: &str) -> Option<Response> {
    if shared.script.models.is_empty() || shared.script.models.iter().any(|m| m == model) {
        return None;
    }
    let message = match api {
        Api::Openai => {
            format!("The model `{model}` does not exist or you do not have access to it.")
        }
        Api::Anthropic => format!("model: {model}"),
        Api::Ollama => format!("model \"{model}\" not found, try pulling it first"),
    };
    Some(error_response(api, 404, &message))
}

fn matches(rule: &Rule, api: Api, view: &RequestView) -> bool {
    let m = &rule.matcher;
    let contains = |hay: Option<&String>, needle: &Option<String>| match needle {
        None => true,
        Some(n) => hay.is_some_and(|h| h.contains(n.as_str())),
    };
    m.provider.as_deref().is_none_or(|p| p == api.as_str())
        && m.model.as_deref().is_none_or(|p| p == view.model)
        && (m
            .system_contains
            .as_deref()
            .is_none_or(|s| view.system.contains(s)))
        && contains(view.user_texts.first(), &m.first_user_contains)
        && contains(view.user_texts.last(), &m.last_user_contains)
        && m.any_message_contains
            .as_deref()
            .is_none_or(|s| view.all_texts.iter().any(|t| t.contains(s)))
}

async fn openai_completions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(shared, Api::Openai, "/v1/chat/completions", headers, body).await
}

async fn anthropic_messages(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(shared, Api::Anthropic, "/v1/messages", headers, body).await
}

async fn ollama_chat(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if shared.script.ollama_models.is_empty() {
        return StatusCode::NOT_FOUND.into_response();
    }
    handle(shared, Api::Ollama, "/api/chat", headers, body).await
}

/// The context Ollama runs `model` with: `num_ctx` when the request sets it (capped at the
/// model's length), else the server default. `None` when `model` is not an Ollama model.
fn ollama_ctx(shared: &Shared, model: &str, num_ctx: Option<u64>) -> Option<u64> {
    let m = shared.script.ollama_models.get(model)?;
    let default = shared.script.ollama_default_ctx.unwrap_or(4096);
    Some(num_ctx.unwrap_or(default).min(m.context_length))
}

/// The request as the model sees it: Ollama's models see only what fits in their context.
fn as_served(shared: &Shared, api: Api, body: &Value) -> Result<Value, String> {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("");
    match api {
        Api::Ollama => {
            let mut converted = wire::ollama_to_openai(body)?;
            let num_ctx = body.pointer("/options/num_ctx").and_then(Value::as_u64);
            if let Some(ctx) = ollama_ctx(shared, model, num_ctx) {
                crate::quirks::truncate_messages(&mut converted, ctx);
            }
            Ok(converted)
        }
        Api::Openai => {
            let mut served = body.clone();
            // The OpenAI-compatible path has no way to set the context: the default applies.
            if let Some(ctx) = ollama_ctx(shared, model, None) {
                crate::quirks::truncate_messages(&mut served, ctx);
            }
            Ok(served)
        }
        Api::Anthropic => Ok(body.clone()),
    }
}

/// The 400 a real service answers for what this model does not take, before anything else.
fn quirk_rejection(api: Api, body: &Value) -> Option<Response> {
    match api {
        Api::Openai => crate::quirks::openai_param_rejection(body)
            .or_else(|| crate::quirks::deepseek_echo_rejection(body))
            .map(|b| json_response(StatusCode::BAD_REQUEST, b)),
        Api::Anthropic => crate::quirks::anthropic_thinking(body)
            .and_then(|budget| {
                if budget.is_some() {
                    crate::quirks::anthropic_thinking_history(body)?;
                }
                Ok(())
            })
            .err()
            .map(|m| error_response(api, 400, &m)),
        Api::Ollama => None,
    }
}

async fn handle(
    shared: Arc<Shared>,
    api: Api,
    path: &str,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let body: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            shared.record(
                path,
                &headers,
                Value::String(String::from_utf8_lossy(&raw).into_owned()),
            );
            return error_response(api, 400, &format!("request body is not valid JSON: {e}"));
        }
    };
    shared.record(path, &headers, body.clone());
    if let Some(resp) = check_auth(&shared, api, &headers) {
        return resp;
    }
    if api == Api::Anthropic && headers.get("anthropic-version").is_none() {
        return error_response(api, 400, "anthropic-version: header is required");
    }
    if let Some(resp) = quirk_rejection(api, &body) {
        return resp;
    }
    let served = match as_served(&shared, api, &body) {
        Ok(v) => v,
        Err(message) => return error_response(api, 400, &message),
    };
    let parsed = match api {
        Api::Openai | Api::Ollama => wire::parse_openai(&served),
        Api::Anthropic => wire::parse_anthropic(&served),
    };
    let mut view = match parsed {
        Ok(v) => v,
        Err(message) => return error_response(api, 400, &message),
    };
    if api == Api::Anthropic {
        view.thinking_budget = crate::quirks::anthropic_thinking(&body).ok().flatten();
    }
    if let Some(resp) = check_model(&shared, api, &view.model) {
        return resp;
    }
    let Some((rule_idx, rule)) = shared
        .script
        .rules
        .iter()
        .enumerate()
        .find(|(_, r)| matches(r, api, &view))
    else {
        let first = view.user_texts.first().map(String::as_str).unwrap_or("");
        return error_response(
            api,
            400,
            &format!(
                "canopy-mock-llm: no rule matches this {} request (model {}, first user message: {first:?})",
                api.as_str(),
                view.model
            ),
        );
    };
    let Some(last_turn) = rule.turns.len().checked_sub(1) else {
        return error_response(
            api,
            400,
            &format!("canopy-mock-llm: rule {:?} has no turns", rule.name),
        );
    };
    let turn_idx = view.assistant_count.min(last_turn);
    let turn = &rule.turns[turn_idx];
    let mut fault = turn
        .fault
        .as_ref()
        .filter(|f| shared.take_fault(rule_idx, turn_idx, f))
        .cloned();
    if let Some(f) = &fault {
        if f.context_length {
            return json_response(StatusCode::BAD_REQUEST, wire::context_length_body(api));
        }
        if let Some(status) = f.status {
            let mut resp = error_response(api, status, wire::status_message(status));
            if let Some(raw) = &f.retry_after {
                match HeaderValue::from_str(raw) {
                    Ok(v) => {
                        resp.headers_mut().insert("retry-after", v);
                    }
                    Err(_) => {
                        return error_response(
                            api,
                            500,
                            &format!(
                                "canopy-mock-llm: retry_after {raw:?} is not a valid header value"
                            ),
                        )
                    }
                }
            } else if let Some(secs) = f.retry_after_s {
                resp.headers_mut()
                    .insert("retry-after", HeaderValue::from(secs));
            }
            if let Some(ms) = f.retry_after_ms {
                resp.headers_mut()
                    .insert("retry-after-ms", HeaderValue::from(ms));
            }
            return resp;
        }
    }
    let empty = fault.as_ref().is_some_and(|f| f.empty);
    if empty {
        fault = None;
    }
    let body_bytes = stream_body(&shared, api, turn, &view, raw.len(), empty, fault.as_ref());
    let content_type = match api {
        Api::Ollama => "application/x-ndjson",
        _ => "text/event-stream; charset=utf-8",
    };
    let resp = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", content_type)
        .header("cache-control", "no-cache")
        .body(paced_body(body_bytes, turn, fault));
    match resp {
        Ok(r) => r,
        Err(e) => error_response(
            api,
            500,
            &format!("canopy-mock-llm: could not build response: {e}"),
        ),
    }
}

/// Renders the whole SSE body of a turn; returns it and where the first event ends.
fn stream_body(
    shared: &Shared,
    api: Api,
    turn: &Turn,
    view: &RequestView,
    request_bytes: usize,
    empty: bool,
    fault: Option<&Fault>,
) -> (Vec<u8>, usize) {
    let (text, calls): (&str, Vec<OutCall>) = if empty {
        ("", Vec::new())
    } else {
        let prefix = match api {
            Api::Openai | Api::Ollama => "call_mock",
            Api::Anthropic => "toolu_mock",
        };
        let calls = turn
            .tool_calls
            .iter()
            .map(|c| OutCall {
                id: c
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("{prefix}{:06}", shared.fresh_id())),
                name: c.name.clone(),
                arguments: c.arguments_text(),
            })
            .collect();
        (turn.text.as_str(), calls)
    };
    let out_bytes = text.len()
        + calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
    let usage = turn.usage.filter(|_| !empty).unwrap_or(ScriptUsage {
        input_tokens: (request_bytes / 4) as u64,
        output_tokens: (out_bytes / 4).max(1) as u64,
    });
    let finish_reason = match (&turn.finish_reason, empty) {
        (Some(r), false) => r.clone(),
        _ if calls.is_empty() => "stop".to_string(),
        _ => "tool_calls".to_string(),
    };
    let message_id = match api {
        Api::Openai | Api::Ollama => format!("chatcmpl-mock{:06}", shared.fresh_id()),
        Api::Anthropic => format!("msg_mock{:06}", shared.fresh_id()),
    };
    let rendered = Rendered {
        turn,
        text,
        reasoning: if empty { "" } else { turn.reasoning.as_str() },
        thinking: view.thinking_budget.is_some(),
        stream_error: fault.and_then(|f| f.stream_error.as_ref()),
        calls,
        usage,
        finish_reason,
        model: &view.model,
        message_id,
        include_usage: view.include_usage,
    };
    match api {
        Api::Openai => wire::openai_stream(&rendered),
        Api::Anthropic => wire::anthropic_stream(&rendered),
        Api::Ollama => wire::ollama_stream(&rendered),
    }
}

/// Streams `body` in pieces with the turn's timing, applying a cut or stall fault.
fn paced_body(
    (mut bytes, first_event_end): (Vec<u8>, usize),
    turn: &Turn,
    fault: Option<Fault>,
) -> Body {
    let cut = fault.as_ref().and_then(|f| f.cut_after_bytes);
    if let Some(n) = cut {
        bytes.truncate(n);
    }
    let stall = fault
        .as_ref()
        .and_then(|f| f.stall_ms)
        .map(Duration::from_millis);
    let chunk = turn.chunk_bytes.filter(|n| *n > 0).unwrap_or(usize::MAX);
    let delay = Duration::from_millis(turn.delay_ms);
    let first_delay = Duration::from_millis(turn.first_byte_delay_ms);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::spawn(async move {
        if !first_delay.is_zero() {
            tokio::time::sleep(first_delay).await;
        }
        let mut pos = 0;
        let mut stalled = false;
        while pos < bytes.len() {
            let mut end = pos.saturating_add(chunk).min(bytes.len());
            if stall.is_some() && !stalled && pos < first_event_end {
                end = end.min(first_event_end);
            }
            if tx
                .send(Ok(Bytes::copy_from_slice(&bytes[pos..end])))
                .await
                .is_err()
            {
                return;
            }
            pos = end;
            if let (Some(d), false) = (stall, stalled) {
                if pos >= first_event_end {
                    stalled = true;
                    tokio::time::sleep(d).await;
                    continue;
                }
            }
            if !delay.is_zero() && pos < bytes.len() {
                tokio::time::sleep(delay).await;
            }
        }
        if cut.is_some() {
            // An error aborts the chunked body without its terminator: the client sees a broken stream.
            let _ = tx
                .send(Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "scripted cut",
                )))
                .await;
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    Body::from_stream(stream)
}

async fn list_models(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let api = if headers.contains_key("x-api-key") || headers.contains_key("anthropic-version") {
        Api::Anthropic
    } else {
        Api::Openai
    };
    if let Some(resp) = check_auth(&shared, api, &headers) {
        return resp;
    }
    json_response(
        StatusCode::OK,
        wire::models_body(api, &shared.script.models, &shared.script.model_details),
    )
}

async fn recorded(State(shared): State<Arc<Shared>>) -> Response {
    let bodies: Vec<Value> = match shared.requests.lock() {
        Ok(r) => r.iter().map(|r| r.body.clone()).collect(),
        Err(poisoned) => poisoned
            .into_inner()
            .iter()
            .map(|r| r.body.clone())
            .collect(),
    };
    json_response(StatusCode::OK, Value::Array(bodies))
}
