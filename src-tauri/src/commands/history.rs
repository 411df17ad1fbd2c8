//! History: the open project's past sessions, read back from their trace files by the host layer
//! ([`canopy_host::history`]). Only "is this session running in this window" is the app's own.

use canopy_host::history;
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

pub use canopy_host::history::{SessionState, SessionSummary, REPLAY_INLINE_OUTPUT_BYTES};

/// Root sessions of the open project, newest first.
#[tauri::command]
pub async fn list_sessions(state: State<'_, AppState>) -> CommandResult<Vec<SessionSummary>> {
    let dir = state.trace_dir()?;
    let runs = state.runs();
    Ok(history::list_sessions(&dir, |id| {
        runs.get(id).is_some_and(|l| l.is_running())
    }))
}

/// The records of a root session followed by every descendant's (`TraceRecord[]` on the JS side),
/// for replay, forwarded as one JSON array without re-encoding. Outputs over
/// [`history::REPLAY_INLINE_OUTPUT_BYTES`] come as `""` with `output_elided: true`; the UI fetches
/// one with [`load_tool_output`] when it is expanded.
#[tauri::command]
pub async fn load_session(
    state: State<'_, AppState>,
    session_id: String,
) -> CommandResult<tauri::ipc::Response> {
    let dir = state.trace_dir()?;
    let json = history::load_session(&dir, &session_id).await?;
    Ok(tauri::ipc::Response::new(json))
}

/// The recorded output of one tool call, for a `tool_call_end` that `load_session` returned with
/// `output_elided`. `session_id` is the session (root or descendant) whose file holds the call.
#[tauri::command]
pub async fn load_tool_output(
    state: State<'_, AppState>,
    session_id: String,
    call_id: String,
) -> CommandResult<String> {
    let dir = state.trace_dir()?;
    Ok(history::load_tool_output(&dir, &session_id, &call_id).await?)
}

/// Deletes a session's trace files (root and descendants). A running session cannot be deleted.
#[tauri::command]
pub async fn delete_session(state: State<'_, AppState>, session_id: String) -> CommandResult<()> {
    if state
        .runs()
        .get(&session_id)
        .is_some_and(|l| l.is_running())
    {
        return Err(CommandError::new(
            ErrorCode::Busy,
            format!("session {session_id} is running; cancel it before deleting it"),
        ));
    }
    let dir = state.trace_dir()?;
    history::delete_session(&dir, &session_id)?;
    state.runs().remove(&session_id);
    Ok(())
}
