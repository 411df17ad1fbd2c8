//! The host layer's one error type. Hosts turn it into their own shape (the app's `{code, message}`,
//! the CLI's exit status and stderr line); the variants keep what each needs to tell apart.

use canopy_config::ConfigError;
use canopy_runtime::RuntimeError;

/// What went wrong in the host layer. Messages never contain a secret.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Settings, keys, paths or trust records (the config crate's own meaning is kept).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The runtime refused or failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A file or folder does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A path resolves outside the project.
    #[error("{0}")]
    OutsideProject(String),
    /// A file looks binary.
    #[error("{0}")]
    BinaryFile(String),
    /// A file is larger than the viewer reads.
    #[error("{0}")]
    FileTooLarge(String),
    /// An argument is malformed (empty path, a folder where a file is needed, lines backwards).
    #[error("{0}")]
    InvalidArgument(String),
    /// Reading a file failed.
    #[error("{0}")]
    Io(String),
    /// The model slot is not configured (the light slot unset).
    #[error("{0}")]
    NotConfigured(String),
    /// The model endpoint failed (bad key, unreachable, unknown model), in words for people.
    #[error("{0}")]
    Provider(String),
    /// A desktop facility (the default application, the file manager) failed.
    #[error("{0}")]
    Platform(String),
    /// A blocking task (keychain, trace files) could not be run to its end.
    #[error("{0}")]
    Blocking(String),
    /// Settings (or one slot of them) sent by a host do not have the expected shape.
    #[error("{0}")]
    InvalidSettings(String),
    /// A path that must be a folder is not one.
    #[error("{0}")]
    NotADirectory(String),
    /// The request needs an open project and there is none.
    #[error("no project is open; open a folder first")]
    NoProject,
    /// The session is already running a prompt.
    #[error("{0}")]
    Busy(String),
    /// No approval waits under that session and call id.
    #[error("{0}")]
    NoSuchApproval(String),
    /// A run ended before it started (its task went away without a word).
    #[error("{0}")]
    RunNotStarted(String),
}

/// Shorthand for host results.
pub type HostResult<T> = Result<T, HostError>;
