//! Canopy's settings and keys: the settings file (models, profiles' budgets, permissions), the model
//! presets, the config/data directories, environment overrides for headless use, and API-key
//! resolution from the environment or the OS keychain. Shared by the runtime, the CLI and the app; no
//! tauri here. API keys never live in settings: only in the keychain or in environment variables.

pub mod env;
pub mod error;
pub mod key_index;
pub mod key_names;
pub mod keys;
pub mod paths;
pub mod settings;
pub mod store;
pub mod trust;

pub use env::{apply_env_overrides, ENV_OVERRIDE_WARNING};
pub use error::{ConfigError, FieldError, KeyError};
pub use key_index::{IndexedStore, KEY_INDEX_FILE};
pub use keys::{
    api_key_env_var, is_local_endpoint, key_status, missing_key_message, require_api_key,
    require_api_key_for, resolve_api_key, KeyOrigin, KeySource, KeyState, KeyStatus, KeyringStore,
    MemoryStore, ResolvedKey, SecretStore, StoredKeys, DEFAULT_KEYRING_SERVICE,
};
pub use paths::{config_dir, data_dir, trace_dir_for_project, trace_dir_in};
pub use settings::{
    presets, ModelSlotConfig, PermissionPolicy, PolicyAction, Preset, ProfileOverrides,
    SandboxSettings, Settings, DEFAULT_SECRET_FILES, MAX_PARALLELISM, SETTINGS_VERSION,
};
pub use store::{LoadReport, SettingsStore};
pub use trust::{ProfileTrust, TrustAnswer, PROFILE_TRUST_FILE};

use canopy_protocol::typescript::export_decl;

/// TypeScript declarations of every public settings and key-status type, for `ui/src/generated/`.
/// `ModelSlot` and `ProviderKind` are not repeated: they come with the protocol declarations.
pub fn settings_declarations() -> String {
    [
        export_decl::<Settings>(),
        export_decl::<ModelSlotConfig>(),
        export_decl::<ProfileOverrides>(),
        export_decl::<PermissionPolicy>(),
        export_decl::<PolicyAction>(),
        export_decl::<SandboxSettings>(),
        export_decl::<Preset>(),
        export_decl::<KeyStatus>(),
        export_decl::<KeyState>(),
        export_decl::<KeySource>(),
        export_decl::<FieldError>(),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_cover_settings_and_key_status() {
        let ts = settings_declarations();
        for name in [
            "export type Settings",
            "export type ModelSlotConfig",
            "export type ProfileOverrides",
            "export type PermissionPolicy",
            "export type PolicyAction = \"allow\" | \"ask\" | \"deny\"",
            "export type Preset",
            "export type KeyStatus",
            "export type KeyState = \"present\" | \"absent\" | \"unavailable\"",
            "export type KeySource = \"keychain\" | \"env\"",
        ] {
            assert!(ts.contains(name), "missing {name} in:\n{ts}");
        }
        assert!(ts.contains("source: KeySource | null"), "{ts}");
        assert!(!ts.contains("bigint"), "{ts}");
        assert!(!ts.to_lowercase().contains("api_key"), "{ts}");
    }
}
