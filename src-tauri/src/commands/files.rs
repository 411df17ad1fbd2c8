//! The viewer's and the desktop's file commands, and re-checking recorded evidence against the
//! files: thin calls into the host layer ([`canopy_host::files`], [`canopy_host::editor`],
//! [`canopy_host::evidence`]), which confines every path to the open project
//! by the same rule the agent's tools obey. Only the desktop hand-offs (file manager, default
//! application) are the app's own.

use std::path::Path;

use canopy_host::{editor, evidence, files};
use canopy_protocol::CheckedEvidence;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_opener::OpenerExt;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

pub use canopy_host::editor::EditorOpened;
pub use canopy_host::evidence::RecheckedEvidence;
pub use canopy_host::files::{
    language_for, language_ids, FileWindow, LANGUAGE_BY_EXTENSION, LANGUAGE_BY_NAME,
    MAX_FILE_BYTES, MAX_WINDOW_LINES,
};

/// Reads a window of lines of a text file in the open project.
#[tauri::command]
pub async fn read_project_file(
    state: State<'_, AppState>,
    path: String,
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> CommandResult<FileWindow> {
    let project = state.require_project()?;
    Ok(files::read_window(
        Path::new(&project.root),
        &path,
        start_line,
        end_line,
    )?)
}

/// Checks recorded evidence (a result's citations, the main answer's references) against the open
/// project as it is now: whether each still exists and says the same, whether its file changed
/// since the agent read it. Nothing is written; provenance and quotes stay as recorded.
#[tauri::command]
pub async fn recheck_evidence(
    state: State<'_, AppState>,
    items: Vec<CheckedEvidence>,
) -> CommandResult<RecheckedEvidence> {
    let project = state.require_project()?;
    Ok(evidence::recheck(Path::new(&project.root), items).await?)
}

/// Shows a project file in the desktop's file manager.
#[tauri::command]
pub async fn reveal_file<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<()> {
    let project = state.require_project()?;
    let resolved = files::confine(Path::new(&project.root), &path)?;
    app.opener()
        .reveal_item_in_dir(&resolved.abs)
        .map_err(|e| CommandError::new(ErrorCode::Platform, format!("cannot show {path}: {e}")))
}

/// Opens a project file at `line` in the person's editor (`$VISUAL`, then `$EDITOR`, when it is a
/// desktop editor with a known line syntax), else with the desktop's default application, saying why
/// the line could not be passed.
#[tauri::command]
pub async fn open_in_editor<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
    line: Option<u32>,
) -> CommandResult<EditorOpened> {
    let project = state.require_project()?;
    let visual = std::env::var("VISUAL").ok();
    let editor = std::env::var("EDITOR").ok();
    Ok(editor::open_in_editor(
        Path::new(&project.root),
        &path,
        line,
        visual.as_deref(),
        editor.as_deref(),
        |file| {
            app.opener()
                .open_path(file.display().to_string(), None::<&str>)
                .map_err(|e| e.to_string())
        },
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_json_is_current() {
        crate::typescript::assert_generated_current(
            "../ui/src/lib/languages.json",
            &format!("{}\n", serde_json::to_string(&language_ids()).unwrap()),
            "language_for changed",
            "languages_json",
        );
    }
}
