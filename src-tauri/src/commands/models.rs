//! Model endpoints: a real test call, the model list, and probing for a local Ollama — thin calls
//! into the host layer ([`canopy_host::screen`], [`canopy_host::connection`]), which goes through
//! `canopy_providers`, the same clients runs use, so a passing test means runs can reach the model.

use canopy_host::screen::{self, slot_on_screen};
use canopy_protocol::ModelSlot;
use canopy_providers::ModelListing;
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

pub use canopy_host::screen::{probe_ollama, ConnectionTest, OllamaStatus};

/// Sends a one-token, tool-less request to the slot's model and reports what happened. `config` is
/// the slot as shown on screen (see [`canopy_host::Host::slot_client_config`]); without it the
/// settings in force are used.
#[tauri::command]
pub async fn test_connection(
    state: State<'_, AppState>,
    slot: ModelSlot,
    config: Option<serde_json::Value>,
) -> CommandResult<ConnectionTest> {
    Ok(state.host().test_connection(slot, config).await?)
}

/// The models the slot's endpoint offers, with the context window and prices where the endpoint
/// reports them (OpenRouter's listing, Ollama's `/api/show`); `config` as for [`test_connection`].
#[tauri::command]
pub async fn list_models(
    state: State<'_, AppState>,
    slot: ModelSlot,
    config: Option<serde_json::Value>,
) -> CommandResult<Vec<ModelListing>> {
    let on_screen = slot_on_screen(slot, config)?;
    Ok(state.host().list_models(slot, on_screen).await?)
}

/// Looks for an Ollama server on this machine (short timeout; absence is not an error).
#[tauri::command]
pub async fn detect_ollama(state: State<'_, AppState>) -> CommandResult<OllamaStatus> {
    Ok(screen::probe_ollama(state.ollama_base_url()).await)
}
