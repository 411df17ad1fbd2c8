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
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}
