//! The host layer shared by `canopy-cli` and the desktop app. Everything a host does between a
//! person and the runtime lives here once: the settings file with the `CANOPY_*` environment
//! overrides and the keys (stored, deleted and reported on for the settings screen too) ([`Host`], [`ConfiguredModels`]), turned into a [`canopy_runtime::Runtime`]
//! with the secrets it redacts; the person's trust in a project's own profiles; the history of past
//! sessions; the test call to a model; the viewer's file windows and its language table; opening a file in the person's
//! editor. The hosts only translate: the app into commands and `{code, message}` errors, the CLI
//! into subcommands, stdout and exit codes. Like the runtime, this crate never depends on tauri.

pub mod connection;
pub mod editor;
mod error;
pub mod files;
pub mod history;
mod host;
pub mod keys;
pub mod models;
pub mod profiles;
pub mod settings;

pub use error::{HostError, HostResult};
pub use host::{process_env, EnvFn, Host, HostSetup, SessionStart, StartedSession};
pub use models::{ConfiguredModels, EnvSnapshot};
pub use settings::runtime_settings;
