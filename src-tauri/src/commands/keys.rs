//! API keys: stored straight into the OS keychain, never returned to the webview, never logged, and
//! held only as `SecretString`. When no keychain is reachable the answer is `keychain_unavailable`
//! with the reason; there is no plaintext fallback.
//!
//! Every key belongs to a slot and to the origin of an endpoint (see `canopy_config::KeyOrigin`).
//! The settings screen passes the base URL it shows, saved or not, so storing, deleting and the
//! status all concern the endpoint the person is looking at; without one, the slot's endpoint in
//! the settings in force is used (`canopy_host::Host::key_origin`).

use canopy_config::KeyStatus;
use canopy_protocol::{ModelSlot, SecretString};
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

/// Stores the API key for a slot and the endpoint at `base_url` (or the slot's current endpoint)
/// in the keychain, replacing any previous key for that endpoint.
#[tauri::command]
pub async fn set_api_key(
    state: State<'_, AppState>,
    slot: ModelSlot,
    key: String,
    base_url: Option<String>,
) -> CommandResult<()> {
    let key = SecretString::new(key);
    let origin = state.host().key_origin(slot, base_url.as_deref())?;
    Ok(state.host().set_key(slot, origin, key).await?)
}

/// Removes the slot's key for the endpoint at `base_url` (or the slot's current endpoint) from the
/// keychain; keys stored for other endpoints stay. No error when there was none.
#[tauri::command]
pub async fn delete_api_key(
    state: State<'_, AppState>,
    slot: ModelSlot,
    base_url: Option<String>,
) -> CommandResult<()> {
    let origin = state.host().key_origin(slot, base_url.as_deref())?;
    Ok(state.host().delete_key(slot, origin).await?)
}

/// Whether the slot has a key for the endpoint at `base_url` (or its current endpoint) and where it
/// comes from (environment first — only for the endpoint the slot runs on in the settings in
/// force — then keychain). When it has none, `stored_for` names the other
/// endpoints it still has one for: those the key index lists (`keys.json` in the config folder), and
/// while that index is missing or not complete also the slot's endpoint in the settings and the
/// presets'.
#[tauri::command]
pub async fn api_key_status(
    state: State<'_, AppState>,
    slot: ModelSlot,
    base_url: Option<String>,
) -> CommandResult<KeyStatus> {
    let origin = state.host().key_origin(slot, base_url.as_deref())?;
    Ok(state
        .host()
        .key_status(slot, origin, base_url.is_some())
        .await?)
}
