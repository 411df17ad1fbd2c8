//! The tools crate's one error type. Every variant is shown to the model as a tool result.

/// Why a tool call failed; the message is written for the model.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Arguments did not match the tool's schema.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The path does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The path resolves outside the project root (or into `.git/` for writes).
    #[error("refused: {0}")]
    OutsideProject(String),
    /// The operation was refused for another reason (binary file, stale read, ambiguous edit…).
    #[error("{0}")]
    Refused(String),
    /// The operation failed (I/O error, non-zero exit is not an error for Bash).
    #[error("failed: {0}")]
    Failed(String),
    /// The call ran past its timeout and was stopped.
    #[error("timed out after {0} ms")]
    Timeout(u64),
    /// A Bash command ran past its timeout; its whole process group was killed. Carries the
    /// output captured until then, so the model still sees how far it got.
    #[error("timed out after {timeout_ms} ms; the command and every process it started were killed{output}")]
    CommandTimedOut {
        /// The timeout that was exceeded.
        timeout_ms: u64,
        /// Output captured before the kill, already capped and labelled (may be empty).
        output: String,
    },
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}
