//! Projects: opening a folder as the project, the command-line project, the trust question about
//! a project's own profiles, and the recent-projects list — thin calls into
//! [`canopy_host::projects`].

use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

pub use canopy_host::profiles::{ProfileError, ProfileInfo, ProfilesTrust};
pub use canopy_host::projects::{ProjectInfo, RecentProject};

/// Opens `path` as the project and puts it first in the recent list (a list that cannot be written
/// becomes a startup warning; the project is open all the same).
pub fn open(state: &AppState, path: &str) -> CommandResult<ProjectInfo> {
    Ok(state.open_project(path)?)
}

/// Records the person's answer about the open project's own profiles, as shown to them (`digest`
/// from its `ProjectInfo`): `trusted` true uses them in runs from now on, false keeps to the
/// built-in profiles. Remembered per project and digest. `invalid_argument` when the files changed
/// since they were shown (they must be read again).
#[tauri::command]
pub async fn answer_project_profiles(
    state: State<'_, AppState>,
    digest: String,
    trusted: bool,
) -> CommandResult<ProjectInfo> {
    Ok(state
        .projects()
        .answer_profiles(state.host(), &digest, trusted)?)
}

/// Opens a folder as the project.
#[tauri::command]
pub async fn open_project(state: State<'_, AppState>, path: String) -> CommandResult<ProjectInfo> {
    open(&state, &path)
}

/// The open project (initially the one from `canopy FOLDER`), or `null`.
#[tauri::command]
pub async fn current_project(state: State<'_, AppState>) -> CommandResult<Option<ProjectInfo>> {
    Ok(state.project())
}

/// Recently opened projects, newest first.
#[tauri::command]
pub async fn list_recent_projects(state: State<'_, AppState>) -> CommandResult<Vec<RecentProject>> {
    Ok(state.projects().recent())
}

/// Removes a project from the recent list (its files and traces are untouched), by its stored path
/// or the canonical form of `path`, so a folder deleted since can still be forgotten.
#[tauri::command]
pub async fn forget_project(state: State<'_, AppState>, path: String) -> CommandResult<()> {
    Ok(state.projects().forget(&path)?)
}

/// Warnings collected since start (a settings file that was moved aside, an unusable command-line
/// folder), for the UI to show once.
#[tauri::command]
pub async fn startup_warnings(state: State<'_, AppState>) -> CommandResult<Vec<String>> {
    Ok(state.warnings())
}
