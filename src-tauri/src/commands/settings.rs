//! Settings: reading and saving `settings.json` (validated by canopy-config, through the host layer).

use canopy_config::Settings;
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

/// The saved settings. `CANOPY_*` environment overrides are not included: they apply to runs on top of
/// these and are never saved (`startup_warnings` lists them).
#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> CommandResult<Settings> {
    Ok(state.host().saved_settings())
}

/// Validates and saves settings, returning what was saved. The argument is taken as raw JSON so that a
/// wrongly shaped object gets an `invalid_settings` error naming the problem instead of a generic
/// argument error.
#[tauri::command]
pub async fn save_settings(
    state: State<'_, AppState>,
    settings: serde_json::Value,
) -> CommandResult<Settings> {
    Ok(state.host().save_settings_json(settings)?)
}
