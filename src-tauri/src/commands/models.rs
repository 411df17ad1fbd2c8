//! Model endpoints: a real test call, the model list, and probing for a local Ollama. All go through
//! `canopy_providers`, the same clients runs use, so a passing test means runs can reach the model.

use std::time::Duration;

use canopy_config::ModelSlotConfig;
use canopy_protocol::ModelSlot;
use canopy_providers::{client_for, ModelListing, ProviderConfig};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

/// Longest the Ollama probe waits: it runs when the settings screen opens and must not stall it.
const OLLAMA_TIMEOUT: Duration = Duration::from_millis(1500);

/// The outcome of a test call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ConnectionTest {
    /// True when the model answered.
    pub ok: bool,
    /// Time from sending the request to the end of the answer (or the failure), ms.
    pub latency_ms: u64,
    /// Model id the endpoint reported.
    pub model: Option<String>,
    /// Why it failed (bad key, unreachable URL, unknown model), for people.
    pub error: Option<String>,
}

/// What the Ollama probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct OllamaStatus {
    /// True when an Ollama server answered.
    pub found: bool,
    /// Its OpenAI-compatible base URL (to put in settings).
    pub base_url: String,
    /// Models it has pulled.
    pub models: Vec<String>,
}

/// The slot as the settings screen shows it, saved or not; a wrongly shaped one is
/// `invalid_settings` naming the problem.
fn on_screen(
    slot: ModelSlot,
    value: Option<serde_json::Value>,
) -> CommandResult<Option<ModelSlotConfig>> {
    value
        .map(|value| {
            serde_json::from_value::<ModelSlotConfig>(value).map_err(|e| {
                CommandError::new(
                    ErrorCode::InvalidSettings,
                    format!(
                        "the {} model settings do not have the expected shape: {e}",
                        slot.as_str()
                    ),
                )
            })
        })
        .transpose()
}

/// Sends a one-token, tool-less request to the slot's model and reports what happened. `config` is
/// the slot as shown on screen (see [`canopy_host::Host::slot_client_config`]); without it the
/// settings in force are used.
#[tauri::command]
pub async fn test_connection(
    state: State<'_, AppState>,
    slot: ModelSlot,
    config: Option<serde_json::Value>,
) -> CommandResult<ConnectionTest> {
    let ping = state
        .host()
        .test_call(slot, on_screen(slot, config)?)
        .await?;
    Ok(ConnectionTest {
        ok: ping.answer.is_ok(),
        latency_ms: ping.latency_ms,
        model: ping.answer.clone().ok(),
        error: ping.answer.err(),
    })
}

/// The models the slot's endpoint offers, with the context window and prices where the endpoint
/// reports them (OpenRouter's listing, Ollama's `/api/show`); `config` as for [`test_connection`].
#[tauri::command]
pub async fn list_models(
    state: State<'_, AppState>,
    slot: ModelSlot,
    config: Option<serde_json::Value>,
) -> CommandResult<Vec<ModelListing>> {
    Ok(state
        .host()
        .list_models(slot, on_screen(slot, config)?)
        .await?)
}

/// Looks for an Ollama server on this machine (short timeout; absence is not an error).
#[tauri::command]
pub async fn detect_ollama(state: State<'_, AppState>) -> CommandResult<OllamaStatus> {
    Ok(probe_ollama(state.ollama_base_url()).await)
}

/// Asks the OpenAI-compatible endpoint at `base_url` for its models.
pub async fn probe_ollama(base_url: &str) -> OllamaStatus {
    // Clients refuse an empty model id; listing never sends it, so any name does.
    let mut config = ProviderConfig::new(canopy_protocol::ProviderKind::Openai, base_url, "probe");
    config.max_retries = 0;
    config.connect_timeout = OLLAMA_TIMEOUT;
    config.idle_timeout = OLLAMA_TIMEOUT;
    let models = match client_for(config) {
        Ok(client) => match tokio::time::timeout(OLLAMA_TIMEOUT, client.list_models()).await {
            Ok(Ok(models)) => Some(models.into_iter().map(|m| m.id).collect()),
            _ => None,
        },
        Err(_) => None,
    };
    OllamaStatus {
        found: models.is_some(),
        base_url: base_url.to_string(),
        models: models.unwrap_or_default(),
    }
}
