//! History: the open project's past sessions, read back from their trace files.

use canopy_protocol::TerminalReason;
use canopy_runtime::trace_reader::{self, LoadOptions, SessionStatus};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

/// How a root session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// A run is in progress.
    Running,
    /// The last run completed.
    Completed,
    /// The last run failed (budget, model error, …).
    Failed,
    /// The last run was cancelled.
    Cancelled,
    /// The trace stops without an end (the app was killed).
    Interrupted,
}

/// One past session as the history list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct SessionSummary {
    /// Root session id.
    pub session_id: String,
    /// Start time, ms since the Unix epoch.
    pub started_ms: u64,
    /// The first prompt, shortened.
    pub title: String,
    /// How it stands.
    pub status: SessionState,
    /// Why the last run ended.
    pub terminal_reason: Option<TerminalReason>,
    /// Tokens used including subagents.
    pub total_tokens: u64,
    /// Sessions in the tree (root + subagents).
    pub sessions: u32,
    /// The parent its trace file names, when that link goes round in a circle (a damaged or
    /// hand-made trace folder) and was not followed: it is listed as a root so nothing is hidden.
    pub broken_parent: Option<String>,
}

fn state_of(status: SessionStatus) -> SessionState {
    match status {
        SessionStatus::Running => SessionState::Running,
        SessionStatus::Completed => SessionState::Completed,
        SessionStatus::Failed => SessionState::Failed,
        SessionStatus::Cancelled => SessionState::Cancelled,
        SessionStatus::Interrupted => SessionState::Interrupted,
    }
}

/// Root sessions of the open project, newest first.
#[tauri::command]
pub async fn list_sessions(state: State<'_, AppState>) -> CommandResult<Vec<SessionSummary>> {
    let dir = state.trace_dir()?;
    let runs = state.runs();
    Ok(trace_reader::list_root_sessions(&dir)
        .into_iter()
        .map(|s| SessionSummary {
            // A trace without `run_ended` is interrupted only if no run of this app is writing it.
            status: if runs.get(&s.session_id).is_some_and(|l| l.is_running()) {
                SessionState::Running
            } else {
                state_of(s.status)
            },
            session_id: s.session_id,
            started_ms: s.started_ms,
            title: s.title,
            terminal_reason: s.terminal_reason,
            total_tokens: s.total_tokens,
            sessions: s.sessions,
            broken_parent: s.broken_parent,
        })
        .collect())
}

/// `tool_call_end` outputs longer than this are left out of `load_session` (about half of a big
/// trace's bytes, and nothing shows them until a person expands the call).
pub(crate) const REPLAY_INLINE_OUTPUT_BYTES: usize = 256;

/// The records of a root session followed by every descendant's (`TraceRecord[]` on the JS side),
/// for replay. The files' lines are forwarded as one JSON array rather than decoded and re-encoded:
/// a 100k-record session is tens of megabytes, and opening it from History should take about a second.
/// Outputs over [`REPLAY_INLINE_OUTPUT_BYTES`] come as `""` with `output_elided: true`; the UI fetches
/// one with [`load_tool_output`] when it is expanded.
#[tauri::command]
pub async fn load_session(
    state: State<'_, AppState>,
    session_id: String,
) -> CommandResult<tauri::ipc::Response> {
    let dir = state.trace_dir()?;
    let options = LoadOptions {
        elide_outputs_over: Some(REPLAY_INLINE_OUTPUT_BYTES),
    };
    let json = tauri::async_runtime::spawn_blocking(move || {
        trace_reader::load_session_tree_json_with(&dir, &session_id, &options)
    })
    .await
    .map_err(|e| CommandError::new(ErrorCode::RuntimeError, e.to_string()))??;
    Ok(tauri::ipc::Response::new(json))
}

/// The recorded output of one tool call (as in the trace: capped at `output_cap_bytes`), for a
/// `tool_call_end` that `load_session` returned with `output_elided`. `session_id` is the session
/// (root or descendant) whose file holds the call.
#[tauri::command]
pub async fn load_tool_output(
    state: State<'_, AppState>,
    session_id: String,
    call_id: String,
) -> CommandResult<String> {
    let dir = state.trace_dir()?;
    tauri::async_runtime::spawn_blocking(move || {
        trace_reader::read_tool_output(&dir, &session_id, &call_id)
    })
    .await
    .map_err(|e| CommandError::new(ErrorCode::RuntimeError, e.to_string()))?
    .map_err(CommandError::from)
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
    trace_reader::delete_session_tree(&dir, &session_id)?;
    state.runs().remove(&session_id);
    Ok(())
}
