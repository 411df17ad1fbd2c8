//! The runtime crate's one error type: failures of the host itself (bad profile, unreadable trace,
//! unresolvable model). Problems the model should see travel as tool results instead.

use std::path::PathBuf;

/// A fatal runtime error.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A profile broke an invariant.
    #[error("invalid profile `{name}`: {reason}")]
    InvalidProfile {
        /// Profile name (or file path for project profiles).
        name: String,
        /// Which invariant.
        reason: String,
    },
    /// A model slot could not be turned into a client (no key, bad URL, …).
    #[error("model slot `{slot}` is not usable: {reason}")]
    Model {
        /// `main` or `light`.
        slot: String,
        /// Why.
        reason: String,
    },
    /// The project folder is missing or not a directory.
    #[error("project folder {0} does not exist or is not a directory")]
    BadProject(PathBuf),
    /// A trace file could not be read or written.
    #[error("trace {path}: {reason}")]
    Trace {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A session id that is not known.
    #[error("unknown session `{0}`")]
    UnknownSession(String),
    /// A session id that cannot name a trace file (it becomes `<id>.jsonl` in the trace folder).
    #[error("invalid session id `{id}`: {reason}")]
    InvalidSessionId {
        /// The id as given.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The session's trace has no `tool_call_end` with that call id.
    #[error("no tool call `{call_id}` in session `{session_id}`")]
    UnknownToolCall {
        /// The session searched.
        session_id: String,
        /// The call id asked for.
        call_id: String,
    },
    /// A run is already in progress in this session.
    #[error("session `{0}` is already running a prompt")]
    Busy(String),
}
