//! Runs: starting a main session in the open project, follow-ups, cancellation and approvals —
//! thin calls into [`canopy_host::runs`]. Each run's events reach its Tauri `Channel` in batches
//! through the host layer's [`canopy_host::bridge`].

use canopy_host::bridge::SinkFn;
use canopy_protocol::TraceRecord;
use tauri::ipc::Channel;
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

pub use canopy_host::runs::RunHandle;

/// The run's channel as a sink of event batches.
fn to_channel(channel: Channel<Vec<TraceRecord>>) -> SinkFn {
    Box::new(move |batch| {
        // A closed webview cannot take events; the trace file still has them.
        let _ = channel.send(batch);
    })
}

/// Starts a new main session in the open project and runs `prompt` in it. A missing main key is
/// `missing_key`, so the UI sends the person to Settings.
#[tauri::command]
pub async fn start_run(
    state: State<'_, AppState>,
    prompt: String,
    on_event: Channel<Vec<TraceRecord>>,
) -> CommandResult<RunHandle> {
    canopy_host::runs::check_prompt(&prompt)?;
    let root = state.project_root()?;
    let sink = to_channel(on_event);
    Ok(state
        .runs()
        .start(state.host(), &root, prompt, sink)
        .await?)
}

/// Sends a follow-up prompt to a session started in this app run.
#[tauri::command]
pub async fn send_message(
    state: State<'_, AppState>,
    session_id: String,
    prompt: String,
    on_event: Channel<Vec<TraceRecord>>,
) -> CommandResult<RunHandle> {
    let sink = to_channel(on_event);
    Ok(state.runs().send(&session_id, prompt, sink).await?)
}

/// Cancels a session's running prompt and every subagent under it. False when nothing was running.
#[tauri::command]
pub async fn cancel_run(state: State<'_, AppState>, session_id: String) -> CommandResult<bool> {
    Ok(state.runs().cancel(&session_id)?)
}

/// Says whether the page handles the window's close requests itself (it asks before a running run is
/// cancelled or unsaved settings are dropped). Until it does, closing cancels every run and waits.
#[tauri::command]
pub fn guard_close(state: State<'_, AppState>, on: bool) {
    state.set_close_guarded(on);
}

/// Cancels one subagent and its descendants; its parent goes on. False when it is not running.
#[tauri::command]
pub async fn cancel_node(state: State<'_, AppState>, session_id: String) -> CommandResult<bool> {
    Ok(state.runs().cancel_node(&session_id))
}

/// Answers a pending approval (`allow_once`, `allow_session` or `deny`). The word is parsed by the
/// host layer rather than by Tauri, so a bad value gets a `CommandError` like everything else.
#[tauri::command]
pub async fn answer_approval(
    state: State<'_, AppState>,
    session_id: String,
    call_id: String,
    answer: String,
) -> CommandResult<()> {
    Ok(state.runs().answer(&session_id, &call_id, &answer)?)
}
