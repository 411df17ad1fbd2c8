//! Settings: reading and saving `settings.json` (validated by canopy-config).

use canopy_config::Settings;
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

/// The saved settings. `CANOPY_*` environment overrides are not included: they apply to runs on top of
/// these and are never saved (`startup_warnings` lists them).
#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> CommandResult<Settings> {
    Ok(state.saved_settings())
}

/// Validates and saves settings, returning what was saved. The argument is taken as raw JSON so that a
/// wrongly shaped object gets an `invalid_settings` error naming the problem instead of a generic
/// argument error.
#[tauri::command]
pub async fn save_settings(
    state: State<'_, AppState>,
    settings: serde_json::Value,
) -> CommandResult<Settings> {
    let settings: Settings = serde_json::from_value(settings).map_err(|e| {
        CommandError::new(
            ErrorCode::InvalidSettings,
            format!("settings do not have the expected shape: {e}"),
        )
    })?;
    state.save_settings(settings)
}
