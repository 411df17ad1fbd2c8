//! API keys: where they are stored (the OS keychain through [`KeyringStore`], or [`MemoryStore`] in
//! tests), how a run finds one (environment variable first, then the keychain), and the status the
//! settings screen shows. Key values only ever travel as [`SecretString`].

use std::collections::HashMap;
use std::sync::Mutex;

use canopy_protocol::{ModelSlot, SecretString};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{ConfigError, KeyError};
use crate::settings::Settings;

/// Keychain service name used by the app; tests use their own.
pub const DEFAULT_KEYRING_SERVICE: &str = "canopy";

/// Where API keys are kept. Implementations must never log or format key values.
pub trait SecretStore: Send + Sync {
    /// The key stored for `slot`, or `None` when there is none.
    fn get(&self, slot: ModelSlot) -> Result<Option<SecretString>, KeyError>;
    /// Stores (or replaces) the key for `slot`.
    fn set(&self, slot: ModelSlot, key: &SecretString) -> Result<(), KeyError>;
    /// Removes the key for `slot`; removing a key that does not exist is not an error.
    fn delete(&self, slot: ModelSlot) -> Result<(), KeyError>;
}

/// Trims the pasted key and refuses one that is empty or spans several lines.
fn clean_key(key: &SecretString) -> Result<SecretString, KeyError> {
    let trimmed = key.expose().trim();
    if trimmed.is_empty() {
        return Err(ConfigError::InvalidKey("it is empty"));
    }
    if trimmed.contains(['\n', '\r']) {
        return Err(ConfigError::InvalidKey("it contains a line break"));
    }
    Ok(SecretString::new(trimmed))
}

/// The OS keychain: Secret Service on Linux/BSD, Keychain on macOS, Credential Manager on Windows.
/// One entry per slot: service `canopy` (or the configured one), user `main` / `light`.
#[derive(Debug, Clone)]
pub struct KeyringStore {
    service: String,
}

impl Default for KeyringStore {
    fn default() -> Self {
        KeyringStore::new()
    }
}

impl KeyringStore {
    /// The app's store (service [`DEFAULT_KEYRING_SERVICE`]).
    pub fn new() -> Self {
        KeyringStore::with_service(DEFAULT_KEYRING_SERVICE)
    }

    /// A store under another service name, so tests never touch the app's entries.
    pub fn with_service(service: impl Into<String>) -> Self {
        KeyringStore {
            service: service.into(),
        }
    }

    /// The service name entries are stored under.
    pub fn service(&self) -> &str {
        &self.service
    }

    // On Linux the crate's default with `linux-native` enabled is keyutils with Secret Service
    // behind it, which reads a per-session kernel cache first and can answer from a stale copy; the
    // keychain people see and manage is the Secret Service, so entries go there directly.
    #[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
    fn entry(&self, slot: ModelSlot) -> Result<keyring::Entry, KeyError> {
        let credential = keyring::secret_service::SsCredential::new_with_target(
            None,
            &self.service,
            slot.as_str(),
        )
        .map_err(map_keyring_error)?;
        Ok(keyring::Entry::new_with_credential(Box::new(credential)))
    }

    #[cfg(not(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd")))]
    fn entry(&self, slot: ModelSlot) -> Result<keyring::Entry, KeyError> {
        keyring::Entry::new(&self.service, slot.as_str()).map_err(map_keyring_error)
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, slot: ModelSlot) -> Result<Option<SecretString>, KeyError> {
        match self.entry(slot)?.get_password() {
            Ok(key) => Ok(Some(SecretString::new(key))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_keyring_error(e)),
        }
    }

    fn set(&self, slot: ModelSlot, key: &SecretString) -> Result<(), KeyError> {
        let key = clean_key(key)?;
        self.entry(slot)?
            .set_password(key.expose())
            .map_err(map_keyring_error)?;
        tracing::debug!(service = %self.service, slot = slot.as_str(), "API key stored in keychain");
        Ok(())
    }

    fn delete(&self, slot: ModelSlot) -> Result<(), KeyError> {
        match self.entry(slot)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => {
                tracing::debug!(service = %self.service, slot = slot.as_str(), "API key removed from keychain");
                Ok(())
            }
            Err(e) => Err(map_keyring_error(e)),
        }
    }
}

/// Turns keyring's errors into ours with a reason a person can act on. Errors carry platform
/// messages (D-Bus, Secret Service), never the secret.
fn map_keyring_error(err: keyring::Error) -> KeyError {
    match err {
        keyring::Error::NoStorageAccess(inner) => ConfigError::Unavailable(format!(
            "the keychain is locked or access was refused ({inner}); unlock it (for example by logging in to the desktop) and try again"
        )),
        keyring::Error::PlatformFailure(inner) => {
            let detail = inner.to_string();
            let lower = detail.to_lowercase();
            let reason = if lower.contains("dbus")
                || lower.contains("d-bus")
                || lower.contains("autolaunch")
                || lower.contains("secrets")
                || lower.contains("no such file")
                || lower.contains("connection")
            {
                format!("no Secret Service is reachable on the D-Bus session bus ({detail}); install and start a keyring such as gnome-keyring, or set the API key through an environment variable")
            } else {
                format!("the platform keychain failed ({detail})")
            };
            ConfigError::Unavailable(reason)
        }
        keyring::Error::NoEntry => ConfigError::Keychain("no entry".to_string()),
        keyring::Error::BadEncoding(_) => {
            ConfigError::Keychain("the stored key is not UTF-8 text; delete it and enter it again".to_string())
        }
        keyring::Error::Ambiguous(items) => ConfigError::Keychain(format!(
            "{} keychain items match this key; remove the duplicates in your keychain manager",
            items.len()
        )),
        keyring::Error::TooLong(attr, limit) => ConfigError::Keychain(format!(
            "attribute `{attr}` is longer than the platform limit of {limit}"
        )),
        keyring::Error::Invalid(attr, reason) => {
            ConfigError::Keychain(format!("attribute `{attr}` is invalid: {reason}"))
        }
        other => ConfigError::Keychain(other.to_string()),
    }
}

/// An in-memory store for tests, optionally pretending the keychain is unreachable.
#[derive(Debug, Default)]
pub struct MemoryStore {
    keys: Mutex<HashMap<ModelSlot, SecretString>>,
    unavailable: Option<String>,
}

impl MemoryStore {
    /// An empty, working store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// A store whose every call fails with [`KeyError::Unavailable`] carrying `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        MemoryStore {
            keys: Mutex::default(),
            unavailable: Some(reason.into()),
        }
    }

    fn check(&self) -> Result<(), KeyError> {
        match &self.unavailable {
            Some(reason) => Err(ConfigError::Unavailable(reason.clone())),
            None => Ok(()),
        }
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<ModelSlot, SecretString>> {
        // A panic elsewhere while holding the lock cannot leave a HashMap half-updated in a way
        // that matters here, so a poisoned lock is still usable.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, slot: ModelSlot) -> Result<Option<SecretString>, KeyError> {
        self.check()?;
        Ok(self.keys().get(&slot).cloned())
    }

    fn set(&self, slot: ModelSlot, key: &SecretString) -> Result<(), KeyError> {
        self.check()?;
        let key = clean_key(key)?;
        self.keys().insert(slot, key);
        Ok(())
    }

    fn delete(&self, slot: ModelSlot) -> Result<(), KeyError> {
        self.check()?;
        self.keys().remove(&slot);
        Ok(())
    }
}

/// Where a key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The OS keychain.
    Keychain,
    /// `CANOPY_MAIN_API_KEY` / `CANOPY_LIGHT_API_KEY`.
    Env,
}

/// A key found for a slot (or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedKey {
    /// The key, if one was found.
    pub key: Option<SecretString>,
    /// Where it came from; `None` when there is no key.
    pub source: Option<KeySource>,
}

/// `CANOPY_MAIN_API_KEY` or `CANOPY_LIGHT_API_KEY`.
pub fn api_key_env_var(slot: ModelSlot) -> &'static str {
    match slot {
        ModelSlot::Main => "CANOPY_MAIN_API_KEY",
        ModelSlot::Light => "CANOPY_LIGHT_API_KEY",
    }
}

/// The message shown when a slot has no key, naming both ways to provide one.
pub fn missing_key_message(slot: ModelSlot) -> String {
    format!(
        "No API key for the {} model. Set the environment variable {}, or enter it in Settings → Models → API key (stored in the OS keychain).",
        slot.as_str(),
        api_key_env_var(slot)
    )
}

/// The key for `slot`: the environment variable first (empty counts as unset), then the keychain.
/// Pass the slot that will actually run — the first element of [`Settings::resolve_slot`] — so a
/// light request that falls back to main uses main's key. A keychain that cannot be reached is an
/// error here; [`require_api_key`] decides whether that matters.
pub fn resolve_api_key(
    slot: ModelSlot,
    env: &impl Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> Result<ResolvedKey, KeyError> {
    if let Some(value) = env(api_key_env_var(slot)) {
        let value = value.trim();
        if !value.is_empty() {
            return Ok(ResolvedKey {
                key: Some(SecretString::new(value)),
                source: Some(KeySource::Env),
            });
        }
    }
    let key = store.get(slot)?;
    let source = key.as_ref().map(|_| KeySource::Keychain);
    Ok(ResolvedKey { key, source })
}

/// True when `base_url` points at this machine (`localhost`, `127.0.0.0/8`, `::1`): such endpoints
/// (Ollama, LM Studio, a test server) may run without a key.
pub fn is_local_endpoint(base_url: &str) -> bool {
    let Ok(url) = url::Url::parse(base_url) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The key a run of `requested` needs, after light → main fallback: `Ok(Some)` with a key,
/// `Ok(None)` for a local endpoint without one, otherwise [`ConfigError::MissingKey`] with the
/// message of [`missing_key_message`] (and the keychain problem, if it could not be read).
pub fn require_api_key(
    settings: &Settings,
    requested: ModelSlot,
    env: &impl Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> Result<Option<SecretString>, ConfigError> {
    let (used, config, _) = settings.resolve_slot(requested);
    let local = is_local_endpoint(&config.base_url);
    match resolve_api_key(used, env, store) {
        Ok(ResolvedKey { key: Some(key), .. }) => Ok(Some(key)),
        Ok(_) if local => Ok(None),
        Ok(_) => Err(ConfigError::MissingKey {
            slot: used,
            keychain_problem: None,
        }),
        Err(_) if local => Ok(None),
        Err(ConfigError::Unavailable(reason)) | Err(ConfigError::Keychain(reason)) => {
            Err(ConfigError::MissingKey {
                slot: used,
                keychain_problem: Some(reason),
            })
        }
        Err(other) => Err(other),
    }
}

/// Whether a slot has a key, for the settings screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeyState {
    /// A key is available.
    Present,
    /// No key in the environment or the keychain.
    Absent,
    /// The keychain could not be asked (see `reason`).
    Unavailable,
}

/// The key status of one slot. Never contains the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KeyStatus {
    /// Present, absent or unavailable.
    pub state: KeyState,
    /// Where the present key comes from; `null` otherwise.
    pub source: Option<KeySource>,
    /// Why the keychain is unavailable; `null` otherwise.
    pub reason: Option<String>,
}

/// The status of `slot`'s own key (no fallback: this is what the settings screen shows per slot).
pub fn key_status(
    slot: ModelSlot,
    env: &impl Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> KeyStatus {
    match resolve_api_key(slot, env, store) {
        Ok(ResolvedKey {
            key: Some(_),
            source,
        }) => KeyStatus {
            state: KeyState::Present,
            source,
            reason: None,
        },
        Ok(_) => KeyStatus {
            state: KeyState::Absent,
            source: None,
            reason: None,
        },
        Err(e) => KeyStatus {
            state: KeyState::Unavailable,
            source: None,
            reason: Some(match e {
                ConfigError::Unavailable(reason) | ConfigError::Keychain(reason) => reason,
                other => other.to_string(),
            }),
        },
    }
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)] // tests change one field of the defaults at a time
mod tests {
    use super::*;
    use crate::settings::ModelSlotConfig;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn env_wins_over_keychain_and_empty_env_is_ignored() {
        let store = MemoryStore::new();
        store
            .set(ModelSlot::Main, &SecretString::new("from-keychain"))
            .unwrap();

        let env = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "from-env".to_string());
        let r = resolve_api_key(ModelSlot::Main, &env, &store).unwrap();
        assert_eq!(r.key.unwrap().expose(), "from-env");
        assert_eq!(r.source, Some(KeySource::Env));

        let blank = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "  ".to_string());
        let r = resolve_api_key(ModelSlot::Main, &blank, &store).unwrap();
        assert_eq!(r.key.unwrap().expose(), "from-keychain");
        assert_eq!(r.source, Some(KeySource::Keychain));

        let r = resolve_api_key(ModelSlot::Light, &env, &store).unwrap();
        assert_eq!(
            r,
            ResolvedKey {
                key: None,
                source: None
            }
        );
    }

    #[test]
    fn light_fallback_uses_the_main_key() {
        let store = MemoryStore::new();
        store
            .set(ModelSlot::Main, &SecretString::new("main-key"))
            .unwrap();
        let settings = Settings::default();
        let key = require_api_key(&settings, ModelSlot::Light, &no_env, &store).unwrap();
        assert_eq!(key.unwrap().expose(), "main-key");

        let mut with_light = Settings::default();
        with_light.light = Some(ModelSlotConfig::default());
        let err = require_api_key(&with_light, ModelSlot::Light, &no_env, &store).unwrap_err();
        assert!(err.to_string().contains("CANOPY_LIGHT_API_KEY"), "{err}");
    }

    #[test]
    fn missing_key_message_names_both_ways() {
        let msg = missing_key_message(ModelSlot::Main);
        assert!(msg.contains("CANOPY_MAIN_API_KEY"), "{msg}");
        assert!(
            msg.contains("Settings → Models → API key (stored in the OS keychain)"),
            "{msg}"
        );
        let err = require_api_key(
            &Settings::default(),
            ModelSlot::Main,
            &no_env,
            &MemoryStore::new(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), msg);
    }

    #[test]
    fn local_endpoints_run_without_a_key_even_without_a_keychain() {
        for url in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:1234/v1",
            "http://LOCALHOST/v1",
            "http://[::1]:8080/v1",
        ] {
            assert!(is_local_endpoint(url), "{url}");
            let mut s = Settings::default();
            s.main.base_url = url.to_string();
            let broken = MemoryStore::unavailable("no bus");
            assert_eq!(
                require_api_key(&s, ModelSlot::Main, &no_env, &broken).unwrap(),
                None
            );
        }
        for url in [
            "https://api.openai.com/v1",
            "http://localhost.evil.com/v1",
            "http://10.0.0.1/v1",
        ] {
            assert!(!is_local_endpoint(url), "{url}");
        }
    }

    #[test]
    fn remote_endpoint_with_broken_keychain_explains_both() {
        let broken = MemoryStore::unavailable("no Secret Service is reachable");
        let err = require_api_key(&Settings::default(), ModelSlot::Main, &no_env, &broken)
            .unwrap_err()
            .to_string();
        assert!(err.contains("CANOPY_MAIN_API_KEY"), "{err}");
        assert!(err.contains("no Secret Service is reachable"), "{err}");
        // The environment still works when the keychain does not.
        let env = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "k".to_string());
        assert!(require_api_key(&Settings::default(), ModelSlot::Main, &env, &broken).is_ok());
    }

    #[test]
    fn status_reports_present_absent_unavailable() {
        let store = MemoryStore::new();
        assert_eq!(
            key_status(ModelSlot::Main, &no_env, &store),
            KeyStatus {
                state: KeyState::Absent,
                source: None,
                reason: None
            }
        );
        store.set(ModelSlot::Main, &SecretString::new("k")).unwrap();
        assert_eq!(
            key_status(ModelSlot::Main, &no_env, &store),
            KeyStatus {
                state: KeyState::Present,
                source: Some(KeySource::Keychain),
                reason: None
            }
        );
        let env = |k: &str| (k == "CANOPY_LIGHT_API_KEY").then(|| "k".to_string());
        assert_eq!(
            key_status(ModelSlot::Light, &env, &store).source,
            Some(KeySource::Env)
        );

        let broken = MemoryStore::unavailable("keychain is locked");
        let status = key_status(ModelSlot::Main, &no_env, &broken);
        assert_eq!(status.state, KeyState::Unavailable);
        assert_eq!(status.reason.as_deref(), Some("keychain is locked"));
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["state"], "unavailable");
        assert_eq!(json["source"], serde_json::Value::Null);
    }

    #[test]
    fn stored_keys_are_trimmed_and_empty_ones_refused() {
        let store = MemoryStore::new();
        store
            .set(ModelSlot::Main, &SecretString::new("  sk-abc\n"))
            .unwrap();
        assert_eq!(
            store.get(ModelSlot::Main).unwrap().unwrap().expose(),
            "sk-abc"
        );
        let err = store
            .set(ModelSlot::Main, &SecretString::new(" \n "))
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid API key: it is empty");
        let err = store
            .set(ModelSlot::Main, &SecretString::new("a\nb"))
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid API key: it contains a line break");
        store.delete(ModelSlot::Main).unwrap();
        store.delete(ModelSlot::Main).unwrap();
        assert!(store.get(ModelSlot::Main).unwrap().is_none());
    }

    #[test]
    fn key_values_never_show_in_debug_output() {
        let store = MemoryStore::new();
        store
            .set(ModelSlot::Main, &SecretString::new("sk-very-secret"))
            .unwrap();
        let resolved = resolve_api_key(ModelSlot::Main, &no_env, &store).unwrap();
        assert!(!format!("{resolved:?}").contains("sk-very-secret"));
        assert!(!format!("{store:?}").contains("sk-very-secret"));
    }
}
