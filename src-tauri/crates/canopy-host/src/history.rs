//! History: a project's past sessions, read back from their trace files: the list, a session tree
//! for replay, one recorded tool output, and deleting a session.

use canopy_protocol::TerminalReason;
use std::path::Path;

use canopy_runtime::trace_reader::{self, LoadOptions, SessionNode, SessionStatus};
use serde::Serialize;
use ts_rs::TS;

use crate::error::{HostError, HostResult};

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

/// Root sessions in the trace folder `dir`, newest first. A trace without `run_ended` is
/// interrupted only if no run of this host is writing it: `is_running` says which are.
pub fn list_sessions(dir: &Path, is_running: impl Fn(&str) -> bool) -> Vec<SessionSummary> {
    trace_reader::list_root_sessions(dir)
        .into_iter()
        .map(|s| SessionSummary {
            status: if is_running(&s.session_id) {
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
        .collect()
}

/// `tool_call_end` outputs longer than this are left out of [`load_session`] (about half of a big
/// trace's bytes, and nothing shows them until a person expands the call).
pub const REPLAY_INLINE_OUTPUT_BYTES: usize = 256;

/// The records of a root session followed by every descendant's, as one JSON array, for replay.
/// The files' lines are forwarded rather than decoded and re-encoded: a 100k-record session is
/// tens of megabytes, and opening it from History should take about a second. Outputs over
/// [`REPLAY_INLINE_OUTPUT_BYTES`] come as `""` with `output_elided: true`; [`load_tool_output`]
/// fetches one. Reads files: runs off the async workers.
pub async fn load_session(dir: &Path, session_id: &str) -> HostResult<String> {
    let options = LoadOptions {
        elide_outputs_over: Some(REPLAY_INLINE_OUTPUT_BYTES),
    };
    let (dir, session_id) = (dir.to_path_buf(), session_id.to_string());
    Ok(tokio::task::spawn_blocking(move || {
        trace_reader::load_session_tree_json_with(&dir, &session_id, &options)
    })
    .await
    .map_err(|e| HostError::Blocking(e.to_string()))??)
}

/// The recorded output of one tool call (as in the trace: capped at `output_cap_bytes`), for a
/// `tool_call_end` that [`load_session`] returned with `output_elided`. `session_id` is the
/// session (root or descendant) whose file holds the call.
pub async fn load_tool_output(dir: &Path, session_id: &str, call_id: &str) -> HostResult<String> {
    let (dir, session_id, call_id) = (
        dir.to_path_buf(),
        session_id.to_string(),
        call_id.to_string(),
    );
    Ok(tokio::task::spawn_blocking(move || {
        trace_reader::read_tool_output(&dir, &session_id, &call_id)
    })
    .await
    .map_err(|e| HostError::Blocking(e.to_string()))??)
}

/// Deletes a session's trace files (root and descendants). The host refuses a running session
/// before calling this.
pub fn delete_session(dir: &Path, session_id: &str) -> HostResult<()> {
    Ok(trace_reader::delete_session_tree(dir, session_id)?)
}

/// The session trees recorded at `path`: every root's in a trace folder, or, for one `.jsonl`
/// file, that session's with its descendants (only their files are read, not the whole folder).
pub fn trees_at(path: &Path) -> HostResult<Vec<SessionNode>> {
    let trees = if path.is_dir() {
        trace_reader::read_trees(path)
    } else {
        if !path.exists() {
            return Err(HostError::NotFound(format!(
                "no trace file at {}",
                path.display()
            )));
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        vec![trace_reader::read_tree(dir, id).map_err(|e| {
            HostError::InvalidArgument(format!("cannot show {}: {e}", path.display()))
        })?]
    };
    if trees.is_empty() {
        return Err(HostError::NotFound(format!(
            "no sessions found in {}",
            path.display()
        )));
    }
    Ok(trees)
}
