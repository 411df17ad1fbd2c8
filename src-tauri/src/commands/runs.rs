//! Runs: starting a main session in the open project, follow-ups, cancellation and approvals. Events
//! stream to the run's channel through [`crate::bridge`].

use std::path::Path;
use std::sync::Arc;

use canopy_host::{SessionStart, StartedSession};
use canopy_protocol::TraceRecord;
use canopy_runtime::ApprovalAnswer;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;
use tokio::sync::oneshot;
use ts_rs::TS;

use crate::bridge::{self, Sink, SinkQueue};
use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::runs::{AppApprover, LiveSession};
use crate::state::AppState;

/// Identifies a run that has started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct RunHandle {
    /// Root session id (for follow-ups, cancel and approvals).
    pub session_id: String,
    /// This run's id (as in the records' `run_id`).
    pub run_id: String,
    /// What the person should be told about the session's start, e.g. temporary files of an
    /// interrupted edit that were removed from the project. Empty for follow-ups.
    pub notices: Vec<String>,
}

fn check_prompt(prompt: &str) -> CommandResult<()> {
    if prompt.trim().is_empty() {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            "the prompt is empty",
        ));
    }
    Ok(())
}

/// Runs `prompt` in `live` in the background and answers once the run has started (with its id).
async fn launch(
    live: Arc<LiveSession>,
    prompt: String,
    channel: Channel<Vec<TraceRecord>>,
    notices: Vec<String>,
) -> CommandResult<RunHandle> {
    let session_id = live.session.session_id().to_string();
    if !live.try_begin() {
        return Err(CommandError::new(
            ErrorCode::Busy,
            format!("session {session_id} is still running; wait for it or cancel it first"),
        ));
    }
    let (started_tx, started_rx) = oneshot::channel();
    live.sinks.push(Sink::new(
        Box::new(move |batch| {
            // A closed webview cannot take events; the trace file still has them.
            let _ = channel.send(batch);
        }),
        started_tx,
    ));
    let (failed_tx, failed_rx) = oneshot::channel();
    // Cancellable from now on, before the task below is first polled.
    live.session.begin_run();
    let runner = live.clone();
    tauri::async_runtime::spawn(async move {
        // Ends the session's "running" state even if the run panics, so follow-ups and history
        // do not see it running forever.
        struct EndOnDrop(Arc<LiveSession>);
        impl Drop for EndOnDrop {
            fn drop(&mut self) {
                self.0.end();
            }
        }
        let guard = EndOnDrop(runner);
        let result = guard.0.session.run(prompt).await;
        drop(guard);
        if let Err(e) = result {
            let _ = failed_tx.send(CommandError::from(e));
        }
    });
    tokio::select! {
        Ok(run_id) = started_rx => Ok(RunHandle { session_id, run_id, notices }),
        Ok(error) = failed_rx => Err(error),
        else => Err(CommandError::new(ErrorCode::RuntimeError, "the run ended before it started")),
    }
}

/// Starts a new main session in the open project and runs `prompt` in it.
#[tauri::command]
pub async fn start_run(
    state: State<'_, AppState>,
    prompt: String,
    on_event: Channel<Vec<TraceRecord>>,
) -> CommandResult<RunHandle> {
    check_prompt(&prompt)?;
    let project = state.require_project()?;
    let root = Path::new(&project.root);
    let (events, received) = tokio::sync::mpsc::unbounded_channel();
    // The project's own profiles are used only while their files are the ones the person trusted
    // (the runtime checks the digest again just before the session starts). A missing main key is
    // `missing_key`, so the UI sends the person to Settings.
    let StartedSession {
        runtime, session, ..
    } = state
        .host()
        .start_session(
            root,
            SessionStart {
                trace_dir: Some(state.trace_dir()?),
                trusted_profiles: state.host().trusted_profiles(root),
                approver: Some(Arc::new(AppApprover::new(state.runs().approvals().clone()))),
                events,
            },
        )
        .await?;
    let sinks = SinkQueue::default();
    tauri::async_runtime::spawn(bridge::forward(received, sinks.clone()));
    let notices = session.notices().to_vec();
    let live = Arc::new(LiveSession::new(runtime, session, sinks));
    state.runs().insert(live.clone());
    launch(live, prompt, on_event, notices).await
}

/// Sends a follow-up prompt to a session started in this app run.
#[tauri::command]
pub async fn send_message(
    state: State<'_, AppState>,
    session_id: String,
    prompt: String,
    on_event: Channel<Vec<TraceRecord>>,
) -> CommandResult<RunHandle> {
    check_prompt(&prompt)?;
    let live = state.runs().get(&session_id).ok_or_else(|| {
        CommandError::new(
            ErrorCode::NotFound,
            format!("no live session {session_id}; sessions from history are read-only"),
        )
    })?;
    launch(live, prompt, on_event, Vec::new()).await
}

/// Cancels a session's running prompt and every subagent under it. False when nothing was running.
#[tauri::command]
pub async fn cancel_run(state: State<'_, AppState>, session_id: String) -> CommandResult<bool> {
    let live = state.runs().get(&session_id).ok_or_else(|| {
        CommandError::new(ErrorCode::NotFound, format!("no live session {session_id}"))
    })?;
    if !live.is_running() {
        return Ok(false);
    }
    Ok(live.runtime.cancel(&session_id, "user"))
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
    Ok(state
        .runs()
        .all()
        .iter()
        .any(|live| live.runtime.cancel(&session_id, "user")))
}

/// Answers a pending approval (`allow_once`, `allow_session` or `deny`).
#[tauri::command]
pub async fn answer_approval(
    state: State<'_, AppState>,
    session_id: String,
    call_id: String,
    answer: String,
) -> CommandResult<()> {
    // Parsed here rather than by Tauri so a bad value gets a `CommandError` like everything else.
    let answer: ApprovalAnswer = serde_json::from_value(serde_json::Value::String(answer.clone()))
        .map_err(|_| {
            CommandError::new(
                ErrorCode::InvalidArgument,
                format!("unknown answer `{answer}`; use allow_once, allow_session or deny"),
            )
        })?;
    if state
        .runs()
        .approvals()
        .answer(&session_id, &call_id, answer)
    {
        Ok(())
    } else {
        Err(CommandError::new(
            ErrorCode::NoSuchApproval,
            format!("no approval is waiting for call {call_id} of session {session_id} (answered already, or the run ended)"),
        ))
    }
}
