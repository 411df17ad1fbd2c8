//! Ollama's model endpoints (`/api/version`, `/api/tags`, `/api/show`), answered from the script's
//! Ollama models; a script without them has no Ollama and these are 404, as on a machine without it.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{json_response, Shared};

fn ollama_not_found(shared: &Shared) -> Option<Response> {
    shared
        .script
        .ollama_models
        .is_empty()
        .then(|| StatusCode::NOT_FOUND.into_response())
}

pub(super) async fn ollama_version(State(shared): State<Arc<Shared>>) -> Response {
    if let Some(r) = ollama_not_found(&shared) {
        return r;
    }
    json_response(StatusCode::OK, serde_json::json!({"version": "0.12.6"}))
}

pub(super) async fn ollama_tags(State(shared): State<Arc<Shared>>) -> Response {
    if let Some(r) = ollama_not_found(&shared) {
        return r;
    }
    let models: Vec<Value> = shared
        .script
        .ollama_models
        .iter()
        .map(|(name, m)| {
            serde_json::json!({"name": name, "model": name, "size": 4_683_087_332u64,
            "details": {"format": "gguf", "family": m.architecture}})
        })
        .collect();
    json_response(StatusCode::OK, serde_json::json!({ "models": models }))
}

pub(super) async fn ollama_show(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    if let Some(r) = ollama_not_found(&shared) {
        return r;
    }
    let name = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| {
            v.get("model")
                .or_else(|| v.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default();
    match shared.script.ollama_models.get(&name) {
        None => json_response(
            StatusCode::NOT_FOUND,
            serde_json::json!({"error": format!("model '{name}' not found")}),
        ),
        Some(m) => {
            let mut info = serde_json::Map::new();
            info.insert("general.architecture".into(), m.architecture.clone().into());
            info.insert(
                format!("{}.context_length", m.architecture),
                m.context_length.into(),
            );
            info.insert(
                format!("{}.embedding_length", m.architecture),
                3584u64.into(),
            );
            json_response(
                StatusCode::OK,
                serde_json::json!({"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                    "details": {"format": "gguf", "family": m.architecture},
                    "model_info": info, "capabilities": ["completion", "tools"]}),
            )
        }
    }
}
