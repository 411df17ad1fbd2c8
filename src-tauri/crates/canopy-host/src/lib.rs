//! The host layer shared by `canopy-cli` and the desktop app. Everything a host does between a
//! person and the runtime lives here once: the settings file with the `CANOPY_*` environment
//! overrides and the keys (stored, deleted and reported on for the settings screen too)
//! ([`Host`], [`ConfiguredModels`]), turned into a [`canopy_runtime::Runtime`] with the secrets it
//! redacts; the open project, the recent list and the person's trust in a project's own profiles
//! ([`projects`]); live runs, their follow-ups, cancellation and approvals ([`runs`], with the
//! batching [`bridge`] to a viewer); the history of past sessions; the test call to a model; the
//! viewer's file windows and its language table; evidence re-checked against the disk when a
//! person opens it ([`evidence`]); opening a file in the person's editor. The hosts
//! only translate: the app into commands and `{code, message}` errors, the CLI into subcommands,
//! stdout and exit codes. Like the runtime, this crate never depends on tauri.

pub mod bridge;
pub mod connection;
pub mod editor;
mod error;
pub mod evidence;
pub mod files;
pub mod history;
mod host;
pub mod keys;
pub mod models;
pub mod profiles;
pub mod projects;
pub mod runs;
pub mod screen;
pub mod settings;

pub use error::{HostError, HostResult};
pub use host::{process_env, EnvFn, Host, HostSetup, SessionStart, StartedSession};
pub use models::{ConfiguredModels, EnvSnapshot};
pub use settings::runtime_settings;

#[cfg(test)]
mod tests {
    /// The names in a manifest's `[dependencies]` table.
    fn dependencies(manifest: &str) -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(manifest);
        let text = std::fs::read_to_string(&path).unwrap();
        let table = text.split("\n[dependencies]\n").nth(1).unwrap();
        let table = table.split("\n[").next().unwrap();
        table
            .lines()
            .filter_map(|l| l.split(['=', '.']).next())
            .map(str::trim)
            .filter(|name| !name.is_empty() && !name.starts_with('#'))
            .map(str::to_string)
            .collect()
    }

    /// The runtime takes settings, a resolver and secrets; reading settings files and keychains is
    /// the host layer's job, and no crate below the app knows about tauri.
    #[test]
    fn the_runtime_needs_no_settings_or_keychain_crate_and_no_crate_here_needs_tauri() {
        let runtime = dependencies("../canopy-runtime/Cargo.toml");
        assert!(runtime.contains(&"canopy-tools".to_string()), "{runtime:?}");
        for forbidden in ["canopy-config", "keyring", "canopy-host", "tauri"] {
            assert!(
                !runtime.iter().any(|d| d == forbidden),
                "{forbidden}: {runtime:?}"
            );
        }
        let host = dependencies("Cargo.toml");
        assert!(host.contains(&"canopy-config".to_string()), "{host:?}");
        assert!(!host.iter().any(|d| d.starts_with("tauri")), "{host:?}");
    }
}
