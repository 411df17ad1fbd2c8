//! API keys: stored straight into the OS keychain, never returned to the webview, never logged, and
//! held only as `SecretString`. When no keychain is reachable the answer is `keychain_unavailable`
//! with the reason; there is no plaintext fallback.

use canopy_config::KeyStatus;
use canopy_protocol::{ModelSlot, SecretString};
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

/// Keychain access is a blocking D-Bus round trip (and may wait for an unlock prompt): keep it off the
/// async workers and the UI thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> CommandResult<T> + Send + 'static,
) -> CommandResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::new(ErrorCode::Platform, format!("keychain task failed: {e}")))?
}

/// Stores the API key for a slot in the keychain (replacing any previous one).
#[tauri::command]
pub async fn set_api_key(
    state: State<'_, AppState>,
    slot: ModelSlot,
    key: String,
) -> CommandResult<()> {
    let key = SecretString::new(key);
    let store = state.secrets().clone();
    blocking(move || store.set(slot, &key).map_err(CommandError::from)).await
}

/// Removes the slot's key from the keychain (no error when there was none).
#[tauri::command]
pub async fn delete_api_key(state: State<'_, AppState>, slot: ModelSlot) -> CommandResult<()> {
    let store = state.secrets().clone();
    blocking(move || store.delete(slot).map_err(CommandError::from)).await
}

/// Whether the slot has a key and where it comes from (environment first, then keychain).
#[tauri::command]
pub async fn api_key_status(
    state: State<'_, AppState>,
    slot: ModelSlot,
) -> CommandResult<KeyStatus> {
    let store = state.secrets().clone();
    let env_value = state.env(canopy_config::api_key_env_var(slot));
    let var = canopy_config::api_key_env_var(slot);
    blocking(move || {
        let env = |name: &str| if name == var { env_value.clone() } else { None };
        Ok(canopy_config::key_status(slot, &env, store.as_ref()))
    })
    .await
}
