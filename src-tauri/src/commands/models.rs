//! Model endpoints: a real test call, the model list, and probing for a local Ollama. All go through
//! `canopy_providers`, the same clients runs use, so a passing test means runs can reach the model.

use std::time::Duration;

use canopy_config::{KeyOrigin, ModelSlotConfig};
use canopy_host::connection::{self, CALL_TIMEOUT};
use canopy_protocol::ModelSlot;
use canopy_providers::{client_for, ModelListing, ProviderConfig, ProviderError};
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

/// The client configuration of a slot with its key. `on_screen` is the slot as the settings screen
/// shows it, saved or not, validated as saving would; without it, the slot in the settings in force.
/// The key is only ever the one stored for that configuration's own endpoint origin, or the slot's
/// environment variable when that origin is the slot's in the settings in force, so neither a key
/// stored for one endpoint nor an environment key reaches an endpoint only typed on screen. Tests and
/// listings make one attempt: retries would only hide the answer the person is waiting for. The key
/// is read off the async workers, since the keychain may wait for an unlock prompt.
async fn slot_config(
    state: &AppState,
    slot: ModelSlot,
    on_screen: Option<serde_json::Value>,
    purpose: Purpose,
) -> CommandResult<ProviderConfig> {
    // With a configuration from the screen, settings in force that cannot be built (a bad
    // environment override) only mean the environment key is not used.
    let effective = state.effective_settings();
    let (slot_settings, from_screen) = match on_screen {
        Some(value) => {
            let mut config = serde_json::from_value::<ModelSlotConfig>(value).map_err(|e| {
                CommandError::new(
                    ErrorCode::InvalidSettings,
                    format!(
                        "the {} model settings do not have the expected shape: {e}",
                        slot.as_str()
                    ),
                )
            })?;
            // Listing is how a person finds a model id to fill in, so an empty one is fine there;
            // clients refuse an empty id and listing never sends it, so any name does.
            if purpose == Purpose::List && config.model.trim().is_empty() {
                config.model = "list".to_string();
            }
            config.validate(slot.as_str())?;
            (config, true)
        }
        None => {
            let settings = effective.clone()?;
            let config = match slot {
                ModelSlot::Main => settings.main,
                ModelSlot::Light => settings.light.ok_or_else(|| {
                    CommandError::new(
                        ErrorCode::NotConfigured,
                        "the light model is not configured (subagents use the main model)",
                    )
                })?,
            };
            (config, false)
        }
    };
    // An endpoint typed on screen gets the slot's environment key only when it is the endpoint the
    // slot runs on anyway; a key stored for the on-screen endpoint itself still applies.
    let env_applies = !from_screen
        || match (&effective, KeyOrigin::of(&slot_settings.base_url)) {
            (Ok(effective), Ok(origin)) => {
                canopy_config::keys::env_key_applies(slot, &origin, effective)
            }
            _ => false,
        };
    let var = canopy_config::api_key_env_var(slot);
    let env_value = state.env(var).filter(|_| env_applies);
    let store = state.secrets().clone();
    let base_url = slot_settings.base_url.clone();
    let key = super::keys::blocking(move || {
        let env = |name: &str| if name == var { env_value.clone() } else { None };
        canopy_config::require_api_key_for(slot, &base_url, &env, store.as_ref())
            .map_err(CommandError::from)
    })
    .await?;
    let mut config = ProviderConfig::new(
        slot_settings.provider,
        slot_settings.base_url,
        slot_settings.model,
    );
    config.api_key = key;
    // A test call is shaped like a run's calls, so it fails or passes as they would.
    config.reasoning_effort = slot_settings.reasoning_effort;
    config.thinking_budget = slot_settings.thinking_budget_tokens;
    config.context_window = Some(slot_settings.context_window);
    config.detect_ollama = true;
    config.max_retries = 0;
    config.connect_timeout = Duration::from_secs(5);
    config.idle_timeout = Duration::from_secs(20);
    Ok(config)
}

/// What a slot configuration is needed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// A real call to the model.
    Call,
    /// Listing the endpoint's models.
    List,
}

/// A provider error phrased for the settings screen.
fn describe(error: &ProviderError, config: &ProviderConfig) -> String {
    connection::describe(error, &config.base_url, &config.model)
}

/// Sends a one-token, tool-less request to the slot's model and reports what happened. `config` is
/// the slot as shown on screen (see [`slot_config`]); without it the settings in force are used.
#[tauri::command]
pub async fn test_connection(
    state: State<'_, AppState>,
    slot: ModelSlot,
    config: Option<serde_json::Value>,
) -> CommandResult<ConnectionTest> {
    let config = slot_config(&state, slot, config, Purpose::Call).await?;
    let client = client_for(config.clone())
        .map_err(|e| CommandError::new(ErrorCode::ProviderError, describe(&e, &config)))?;
    let ping = connection::ping(client.as_ref(), &config.base_url, &config.model).await;
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
    let config = slot_config(&state, slot, config, Purpose::List).await?;
    let client = client_for(config.clone())
        .map_err(|e| CommandError::new(ErrorCode::ProviderError, describe(&e, &config)))?;
    let listing = tokio::time::timeout(CALL_TIMEOUT, client.list_models())
        .await
        .map_err(|_| {
            CommandError::new(
                ErrorCode::ProviderError,
                format!(
                    "{} did not list its models within {} s",
                    config.base_url,
                    CALL_TIMEOUT.as_secs()
                ),
            )
        })?
        .map_err(|e| CommandError::new(ErrorCode::ProviderError, describe(&e, &config)))?;
    Ok(listing)
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
