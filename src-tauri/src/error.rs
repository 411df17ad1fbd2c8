//! The one error type every command returns: a stable machine-readable `code` the UI can branch on
//! and a `message` written for people. Messages never contain a secret.

use serde::Serialize;
use ts_rs::TS;

/// Stable identifiers of what went wrong (snake_case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The command needs an open project and there is none.
    NoProject,
    /// A file, folder, live session or recorded tool call does not exist.
    NotFound,
    /// A past session's trace file is gone (deleted or moved since it was listed or opened).
    SessionGone,
    /// A path that must be a folder is not one.
    NotADirectory,
    /// A path resolves outside the open project.
    OutsideProject,
    /// A file looks binary (NUL byte in its first 8 KB).
    BinaryFile,
    /// A file is larger than the viewer reads.
    FileTooLarge,
    /// An argument is malformed (empty path, line range backwards, unknown answer).
    InvalidArgument,
    /// Settings (or a `CANOPY_*` override) failed validation; `field_errors` names the field.
    InvalidSettings,
    /// The OS keychain cannot be reached or is locked; the message says why.
    KeychainUnavailable,
    /// The keychain answered but refused the operation.
    KeychainError,
    /// The API key given is unusable (empty, several lines).
    InvalidKey,
    /// A remote endpoint needs an API key and none is set.
    MissingKey,
    /// The model slot is not configured (light slot unset).
    NotConfigured,
    /// The model endpoint failed (bad key, unreachable, unknown model).
    ProviderError,
    /// The agent runtime refused or failed.
    RuntimeError,
    /// The session is already running a prompt.
    Busy,
    /// No pending approval with that session and call id.
    NoSuchApproval,
    /// Reading or writing the app's own files failed.
    Io,
    /// A platform facility (opener, window) failed.
    Platform,
}

/// What a command returns on failure: `{ code, message }`, and for `invalid_settings` the fields at
/// fault as `field_errors` (absent otherwise), so a form marks them without parsing `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    /// What went wrong, for code.
    pub code: ErrorCode,
    /// What went wrong, for people.
    pub message: String,
    /// The settings fields that failed validation (`invalid_settings` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field_errors: Option<Vec<canopy_config::FieldError>>,
}

impl CommandError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CommandError {
            code,
            message: message.into(),
            field_errors: None,
        }
    }

    /// The error for commands that need an open project.
    pub fn no_project() -> Self {
        CommandError::new(
            ErrorCode::NoProject,
            "no project is open; open a folder first",
        )
    }
}

/// Config errors carry their own meaning; keep it in the code so the UI can say the right thing.
impl From<canopy_config::ConfigError> for CommandError {
    fn from(e: canopy_config::ConfigError) -> Self {
        use canopy_config::ConfigError as E;
        let code = match &e {
            E::Invalid { .. } => ErrorCode::InvalidSettings,
            E::Unavailable(_) => ErrorCode::KeychainUnavailable,
            E::Keychain(_) => ErrorCode::KeychainError,
            E::InvalidKey(_) => ErrorCode::InvalidKey,
            E::MissingKey { .. } => ErrorCode::MissingKey,
            E::Io { .. } | E::NoPlatformDir(..) | E::Serialize(_) => ErrorCode::Io,
        };
        CommandError {
            field_errors: e.field_error().map(|f| vec![f]),
            ..CommandError::new(code, e.to_string())
        }
    }
}

impl From<canopy_runtime::RuntimeError> for CommandError {
    fn from(e: canopy_runtime::RuntimeError) -> Self {
        use canopy_runtime::RuntimeError as E;
        let code = match &e {
            E::UnknownSession(_) => ErrorCode::SessionGone,
            E::UnknownToolCall { .. } => ErrorCode::NotFound,
            E::InvalidSessionId { .. } => ErrorCode::InvalidArgument,
            E::Busy(_) => ErrorCode::Busy,
            _ => ErrorCode::RuntimeError,
        };
        CommandError::new(code, e.to_string())
    }
}

/// The host layer keeps each failure's kind; it maps onto the same codes the commands always used.
impl From<canopy_host::HostError> for CommandError {
    fn from(e: canopy_host::HostError) -> Self {
        use canopy_host::HostError as E;
        let code = match e {
            E::Config(e) => return e.into(),
            E::Runtime(e) => return e.into(),
            E::NotFound(_) => ErrorCode::NotFound,
            E::OutsideProject(_) => ErrorCode::OutsideProject,
            E::BinaryFile(_) => ErrorCode::BinaryFile,
            E::FileTooLarge(_) => ErrorCode::FileTooLarge,
            E::InvalidArgument(_) => ErrorCode::InvalidArgument,
            E::Io(_) => ErrorCode::Io,
            E::Platform(_) => ErrorCode::Platform,
            E::NotConfigured(_) => ErrorCode::NotConfigured,
            E::Provider(_) => ErrorCode::ProviderError,
            E::Blocking(_) => ErrorCode::Platform,
            E::InvalidSettings(_) => ErrorCode::InvalidSettings,
            E::NotADirectory(_) => ErrorCode::NotADirectory,
            E::NoProject => return CommandError::no_project(),
            E::Busy(_) => ErrorCode::Busy,
            E::NoSuchApproval(_) => ErrorCode::NoSuchApproval,
            E::RunNotStarted(_) => ErrorCode::RuntimeError,
        };
        CommandError::new(code, e.to_string())
    }
}

/// Shorthand for command results.
pub type CommandResult<T> = Result<T, CommandError>;
