//! API keys: where they are stored (the OS keychain through [`KeyringStore`], or [`MemoryStore`] in
//! tests), how a run finds one (environment variable first, then the keychain), and the status the
//! settings screen shows. Key values only ever travel as [`SecretString`].
//!
//! A stored key belongs to a slot *and* to the origin (scheme, host, port) of the endpoint it was
//! entered for: the keychain account is `<slot>@<origin>`, e.g. `main@https://api.openai.com` or
//! `light@http://127.0.0.1:11434`. A key is only ever read for, and so only ever sent to, the origin
//! it was stored for; pointing a slot at another endpoint leaves it without a key until one is
//! entered for that endpoint. Entries of older versions (account `main` / `light`, no origin) are
//! never read. Keys from `CANOPY_*_API_KEY` environment variables are the person's explicit choice
//! for the endpoint the slot uses in the settings in force (saved plus environment overrides); an
//! endpoint only typed on the settings screen gets one only when it has that same origin (see
//! [`env_key_applies`]). Every key in reach — other origins' and unused slots' included — is
//! redacted from what runs record ([`keys_to_redact`]); which entries exist is known from the key
//! index next to the settings ([`crate::key_index`]), so finding them reads only those entries.

use std::fmt;

use canopy_protocol::{ModelSlot, SecretString};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{ConfigError, KeyError};
use crate::settings::{validate_base_url, Settings};

pub use crate::key_names::{api_key_env_var, missing_key_message};

mod memory;

pub use memory::MemoryStore;

/// Keychain service name used by the app; tests use their own.
pub const DEFAULT_KEYRING_SERVICE: &str = "canopy";

/// The origin of an endpoint — scheme, host and port, as a browser would compare them — that a
/// stored key is bound to. Paths do not matter: `https://openrouter.ai/api/v1` and
/// `https://openrouter.ai/other` share the key; `http://` and `https://`, or two ports, do not.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyOrigin(String);

impl KeyOrigin {
    /// The origin of `base_url`, which must be a valid http(s) URL (the same rule as settings);
    /// otherwise an [`ConfigError::Invalid`] naming `base_url`.
    pub fn of(base_url: &str) -> Result<KeyOrigin, ConfigError> {
        let url = validate_base_url(base_url)
            .map_err(|reason| ConfigError::invalid("base_url", reason))?;
        // Default ports are left out (`https://host`, not `https://host:443`), so typing the port
        // explicitly does not orphan a key.
        Ok(KeyOrigin(url.origin().ascii_serialization()))
    }

    /// `https://api.openai.com`, `http://127.0.0.1:4000`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The origin as people read it: host, plus the port when it is not the default
    /// (`api.openai.com`, `127.0.0.1:4000`); the scheme only when it is plain `http` to a
    /// non-loopback host, where it matters.
    pub fn label(&self) -> String {
        match self.0.split_once("://") {
            Some(("https", rest)) => rest.to_string(),
            Some((_, rest)) if is_local_endpoint(&self.0) => rest.to_string(),
            _ => self.0.clone(),
        }
    }

    /// The keychain account a key of `slot` for this origin is stored under: `main@https://…`.
    pub fn account(&self, slot: ModelSlot) -> String {
        format!("{}@{}", slot.as_str(), self.0)
    }
}

impl fmt::Display for KeyOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where API keys are kept, one per (slot, origin). Implementations must never log or format key
/// values.
pub trait SecretStore: Send + Sync {
    /// The key stored for `slot` at `origin`, or `None` when there is none.
    fn get(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<Option<SecretString>, KeyError>;
    /// Stores (or replaces) the key for `slot` at `origin`.
    fn set(&self, slot: ModelSlot, origin: &KeyOrigin, key: &SecretString) -> Result<(), KeyError>;
    /// Removes the key for `slot` at `origin`; removing a key that does not exist is not an error.
    fn delete(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<(), KeyError>;
    /// The entries this store knows hold keys, without reading the keychain (see
    /// [`crate::key_index`]). A store without an index knows none and is not complete, so callers
    /// probe the candidate origins they know of, as they did before the index existed.
    fn stored_keys(&self) -> StoredKeys {
        StoredKeys::default()
    }
    /// Called after every entry of [`SecretStore::stored_keys`] and every candidate origin of both
    /// slots was read without a keychain error; `found` are the entries that held a key. A store
    /// with an index records them and from then on lists every key (see [`StoredKeys::complete`]).
    fn probed_all(&self, _found: &[(ModelSlot, KeyOrigin)]) {}
}

/// What a store's key index says is stored (see [`SecretStore::stored_keys`]). Never holds a key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredKeys {
    /// Slot and origin of every entry the index lists, ordered by account name.
    pub accounts: Vec<(ModelSlot, KeyOrigin)>,
    /// True when no key can be stored outside `accounts`: keys stored before the index existed
    /// were looked for among the candidate origins and added. While false, callers also probe the
    /// candidates (presets and settings) as well.
    pub complete: bool,
}

/// Trims the pasted key and refuses one that is empty or spans several lines.
pub(crate) fn clean_key(key: &SecretString) -> Result<SecretString, KeyError> {
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
/// One entry per slot and origin: service `canopy` (or the configured one), user
/// `<slot>@<origin>` (see [`KeyOrigin::account`]).
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
    fn entry(&self, account: &str) -> Result<keyring::Entry, KeyError> {
        let credential =
            keyring::secret_service::SsCredential::new_with_target(None, &self.service, account)
                .map_err(map_keyring_error)?;
        Ok(keyring::Entry::new_with_credential(Box::new(credential)))
    }

    #[cfg(not(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd")))]
    fn entry(&self, account: &str) -> Result<keyring::Entry, KeyError> {
        keyring::Entry::new(&self.service, account).map_err(map_keyring_error)
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<Option<SecretString>, KeyError> {
        match self.entry(&origin.account(slot))?.get_password() {
            Ok(key) => Ok(Some(SecretString::new(key))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_keyring_error(e)),
        }
    }

    fn set(&self, slot: ModelSlot, origin: &KeyOrigin, key: &SecretString) -> Result<(), KeyError> {
        let key = clean_key(key)?;
        let account = origin.account(slot);
        self.entry(&account)?
            .set_password(key.expose())
            .map_err(map_keyring_error)?;
        tracing::debug!(service = %self.service, account = %account, "API key stored in keychain");
        Ok(())
    }

    fn delete(&self, slot: ModelSlot, origin: &KeyOrigin) -> Result<(), KeyError> {
        let account = origin.account(slot);
        match self.entry(&account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => {
                tracing::debug!(service = %self.service, account = %account, "API key removed from keychain");
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

/// The key for `slot` talking to `origin`: the environment variable first (empty counts as unset),
/// then the keychain entry stored for exactly that origin. Pass the slot that will actually run —
/// the first element of [`Settings::resolve_slot`] — so a light request that falls back to main
/// uses main's key. A keychain that cannot be reached is an error here; [`require_api_key`]
/// decides whether that matters.
pub fn resolve_api_key(
    slot: ModelSlot,
    origin: &KeyOrigin,
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
    let key = store.get(slot, origin)?;
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
    require_api_key_for(used, &config.base_url, env, store)
}

/// The key `slot` needs to talk to `base_url` (no fallback: `slot` is the one that runs), with the
/// rules of [`require_api_key`]. Only a key stored for `base_url`'s origin is returned, so a key
/// entered for one endpoint is never sent to another. A `base_url` that is not a valid http(s) URL
/// is a [`ConfigError::Invalid`] naming `<slot>.base_url`.
pub fn require_api_key_for(
    slot: ModelSlot,
    base_url: &str,
    env: &impl Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> Result<Option<SecretString>, ConfigError> {
    let origin = KeyOrigin::of(base_url).map_err(|e| match e {
        ConfigError::Invalid { reason, .. } => {
            ConfigError::invalid(format!("{}.base_url", slot.as_str()), reason)
        }
        other => other,
    })?;
    let local = is_local_endpoint(base_url);
    match resolve_api_key(slot, &origin, env, store) {
        Ok(ResolvedKey { key: Some(key), .. }) => Ok(Some(key)),
        Ok(_) if local => Ok(None),
        Ok(_) => Err(ConfigError::MissingKey {
            slot,
            keychain_problem: None,
        }),
        Err(_) if local => Ok(None),
        Err(ConfigError::Unavailable(reason)) | Err(ConfigError::Keychain(reason)) => {
            Err(ConfigError::MissingKey {
                slot,
                keychain_problem: Some(reason),
            })
        }
        Err(other) => Err(other),
    }
}

/// Whether `slot`'s environment key (`CANOPY_*_API_KEY`) may be used for `origin` when the settings
/// screen names an endpoint that may not be saved: only when `origin` is the one the slot runs on in
/// the settings in force (`effective`: saved plus environment overrides, light without its own
/// endpoint on main's). The variable is the person's choice for *that* endpoint; an endpoint typed
/// on screen (a typo, an untrusted server) must not receive it before it is saved.
pub fn env_key_applies(slot: ModelSlot, origin: &KeyOrigin, effective: &Settings) -> bool {
    KeyOrigin::of(&effective.resolve_slot(slot).1.base_url).is_ok_and(|o| &o == origin)
}

/// The origins keys may be stored for that the app knows of: every preset's endpoint plus each
/// slot's endpoint in `settings` (pass the saved and the effective settings), sorted, without
/// duplicates. Endpoints that are not valid URLs (the custom preset's empty one) are skipped.
pub fn known_key_origins<'a>(settings: impl IntoIterator<Item = &'a Settings>) -> Vec<KeyOrigin> {
    let mut urls: Vec<String> = crate::settings::presets()
        .into_iter()
        .map(|p| p.base_url)
        .collect();
    for s in settings {
        urls.push(s.main.base_url.clone());
        urls.extend(s.light.as_ref().map(|l| l.base_url.clone()));
    }
    let mut origins: Vec<KeyOrigin> = urls
        .iter()
        .filter_map(|url| KeyOrigin::of(url).ok())
        .collect();
    origins.sort();
    origins.dedup();
    origins
}

/// Every key that could be in reach of a run, for redaction from traces and from what the model
/// sees: both slots' environment keys and every keychain key of either slot — not only the keys the
/// slots use now, since a key stored for an endpoint a slot no longer points at is still in the
/// keychain and may still be printed by a tool. The entries read are the ones the store's index
/// lists ([`SecretStore::stored_keys`], usually one to three), plus, while the index is missing or
/// not complete, both slots' entries for each of `candidates` (see [`known_key_origins`]).
///
/// Reading stops at the first keychain error: a locked keychain may show an unlock prompt per entry,
/// and one refusal is answer enough. Keys that cannot be read cannot be redacted, but the run does
/// not need them either (its own key was resolved separately); the environment keys are still
/// returned, and the log says so without naming any key.
pub fn keys_to_redact(
    candidates: &[KeyOrigin],
    env: &impl Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> Vec<SecretString> {
    let mut keys: Vec<SecretString> = Vec::new();
    for slot in [ModelSlot::Main, ModelSlot::Light] {
        if let Some(value) = env(api_key_env_var(slot)) {
            let value = value.trim();
            if !value.is_empty() {
                keys.push(SecretString::new(value));
            }
        }
    }
    let index = store.stored_keys();
    let mut entries = index.accounts.clone();
    if !index.complete {
        for slot in [ModelSlot::Main, ModelSlot::Light] {
            for origin in candidates {
                let entry = (slot, origin.clone());
                if !entries.contains(&entry) {
                    entries.push(entry);
                }
            }
        }
    }
    let mut found = Vec::new();
    let mut all_read = true;
    for (slot, origin) in entries {
        match store.get(slot, &origin) {
            Ok(Some(key)) => {
                keys.push(key);
                found.push((slot, origin));
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(
                    account = %origin.account(slot),
                    error = %e,
                    "the keychain could not be read, so keys stored in it are not redacted from this run (environment keys still are)"
                );
                all_read = false;
                break;
            }
        }
    }
    if all_read && !index.complete {
        store.probed_all(&found);
    }
    let mut unique: Vec<SecretString> = Vec::with_capacity(keys.len());
    for key in keys {
        if !unique.iter().any(|k| k.expose() == key.expose()) {
            unique.push(key);
        }
    }
    unique
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

/// The key status of one slot for one endpoint. Never contains a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KeyStatus {
    /// Present, absent or unavailable.
    pub state: KeyState,
    /// Where the present key comes from; `null` otherwise.
    pub source: Option<KeySource>,
    /// Why the keychain is unavailable; `null` otherwise.
    pub reason: Option<String>,
    /// The endpoint origin this status is about, as people read it (`api.openai.com`,
    /// `127.0.0.1:4000`); see [`KeyOrigin::label`].
    pub origin: String,
    /// Other origins this slot still has a keychain key for (same form as `origin`): the ones the
    /// key index lists (any endpoint a key was entered for), or, for keys stored before the index
    /// existed, among the candidates the caller knows of; filled only when this origin has no key.
    /// Such a key is used again when the slot points back at its origin.
    pub stored_for: Vec<String>,
}

/// The status of `slot`'s own key for `origin` (no fallback: this is what the settings screen shows
/// per slot). When the keychain has no key for `origin`, [`KeyStatus::stored_for`] lists the
/// slot's other entries in the store's key index; `elsewhere` (for example the saved endpoint and
/// the presets') are looked at too while that index is missing or not complete.
pub fn key_status(
    slot: ModelSlot,
    origin: &KeyOrigin,
    elsewhere: &[KeyOrigin],
    env: &impl Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> KeyStatus {
    let status = |state, source, reason| KeyStatus {
        state,
        source,
        reason,
        origin: origin.label(),
        stored_for: Vec::new(),
    };
    match resolve_api_key(slot, origin, env, store) {
        Ok(ResolvedKey {
            key: Some(_),
            source,
        }) => status(KeyState::Present, source, None),
        Ok(_) => {
            let index = store.stored_keys();
            let mut others: Vec<KeyOrigin> = index
                .accounts
                .into_iter()
                .filter(|(s, _)| *s == slot)
                .map(|(_, o)| o)
                .collect();
            if !index.complete {
                others.extend(elsewhere.iter().cloned());
            }
            others.retain(|o| o != origin);
            others.sort();
            others.dedup();
            // The index may be stale (a key removed with another keychain tool), so each entry is
            // confirmed; the first keychain error ends the list rather than prompting again.
            let mut stored_for = Vec::new();
            for other in others {
                match store.get(slot, &other) {
                    Ok(Some(_)) => stored_for.push(other.label()),
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
            KeyStatus {
                stored_for,
                ..status(KeyState::Absent, None, None)
            }
        }
        Err(e) => status(
            KeyState::Unavailable,
            None,
            Some(match e {
                ConfigError::Unavailable(reason) | ConfigError::Keychain(reason) => reason,
                other => other.to_string(),
            }),
        ),
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

    fn origin(url: &str) -> KeyOrigin {
        KeyOrigin::of(url).unwrap()
    }

    fn openai() -> KeyOrigin {
        origin("https://api.openai.com/v1")
    }

    fn settings_at(url: &str) -> Settings {
        let mut s = Settings::default();
        s.main.base_url = url.to_string();
        s
    }

    #[test]
    fn origins_keep_scheme_host_and_port_and_drop_the_rest() {
        assert_eq!(openai().as_str(), "https://api.openai.com");
        assert_eq!(
            openai().account(ModelSlot::Main),
            "main@https://api.openai.com"
        );
        assert_eq!(openai(), origin("https://API.openai.com:443/other/path"));
        assert_eq!(
            origin("http://127.0.0.1:4000/v1").account(ModelSlot::Light),
            "light@http://127.0.0.1:4000"
        );
        assert_ne!(origin("http://api.openai.com/v1"), openai());
        assert_ne!(
            origin("http://127.0.0.1:4000/v1"),
            origin("http://127.0.0.1:4001/v1")
        );
        assert_eq!(openai().label(), "api.openai.com");
        assert_eq!(origin("http://127.0.0.1:4000/v1").label(), "127.0.0.1:4000");
        assert_eq!(
            origin("http://models.example.com/v1").label(),
            "http://models.example.com"
        );
        let err = KeyOrigin::of("localhost:11434").unwrap_err().to_string();
        assert!(
            err.starts_with("base_url: not a valid http(s) URL"),
            "{err}"
        );
    }

    #[test]
    fn env_wins_over_keychain_and_empty_env_is_ignored() {
        let store = MemoryStore::new();
        store
            .set(
                ModelSlot::Main,
                &openai(),
                &SecretString::new("from-keychain"),
            )
            .unwrap();

        let env = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "from-env".to_string());
        let r = resolve_api_key(ModelSlot::Main, &openai(), &env, &store).unwrap();
        assert_eq!(r.key.unwrap().expose(), "from-env");
        assert_eq!(r.source, Some(KeySource::Env));

        let blank = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "  ".to_string());
        let r = resolve_api_key(ModelSlot::Main, &openai(), &blank, &store).unwrap();
        assert_eq!(r.key.unwrap().expose(), "from-keychain");
        assert_eq!(r.source, Some(KeySource::Keychain));

        let r = resolve_api_key(ModelSlot::Light, &openai(), &env, &store).unwrap();
        assert_eq!(
            r,
            ResolvedKey {
                key: None,
                source: None
            }
        );
    }

    #[test]
    fn a_key_is_only_given_out_for_the_origin_it_was_stored_for() {
        let store = MemoryStore::new();
        store
            .set(ModelSlot::Main, &openai(), &SecretString::new("sk-openai"))
            .unwrap();
        let at_openai = settings_at("https://api.openai.com/v1");
        let key = require_api_key(&at_openai, ModelSlot::Main, &no_env, &store).unwrap();
        assert_eq!(key.unwrap().expose(), "sk-openai");

        // The slot now points at other endpoints: the OpenAI key must not go there.
        for url in [
            "https://api.anthropic.com",
            "https://evil.example.com/v1",
            "http://api.openai.com/v1",
            "https://api.openai.com:8443/v1",
        ] {
            let err =
                require_api_key(&settings_at(url), ModelSlot::Main, &no_env, &store).unwrap_err();
            assert!(
                matches!(
                    err,
                    ConfigError::MissingKey {
                        slot: ModelSlot::Main,
                        ..
                    }
                ),
                "{url}: {err}"
            );
        }
        // A loopback server gets no key rather than the OpenAI one.
        let local = settings_at("http://127.0.0.1:4000/v1");
        assert_eq!(
            require_api_key(&local, ModelSlot::Main, &no_env, &store).unwrap(),
            None
        );
        // Back at OpenAI the stored key is found again.
        let key = require_api_key(&at_openai, ModelSlot::Main, &no_env, &store).unwrap();
        assert_eq!(key.unwrap().expose(), "sk-openai");

        // An environment key is the person's explicit choice for whatever the slot points at.
        let env = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| "sk-env".to_string());
        let key = require_api_key(
            &settings_at("https://api.anthropic.com"),
            ModelSlot::Main,
            &env,
            &store,
        )
        .unwrap();
        assert_eq!(key.unwrap().expose(), "sk-env");
    }

    #[test]
    fn an_invalid_base_url_names_the_slot_field() {
        let err = require_api_key_for(ModelSlot::Light, "ftp://x", &no_env, &MemoryStore::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("light.base_url: not a valid http(s) URL"),
            "{err}"
        );
    }

    #[test]
    fn light_fallback_uses_the_main_key() {
        let store = MemoryStore::new();
        store
            .set(ModelSlot::Main, &openai(), &SecretString::new("main-key"))
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
            let broken = MemoryStore::unavailable("no bus");
            assert_eq!(
                require_api_key(&settings_at(url), ModelSlot::Main, &no_env, &broken).unwrap(),
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
    fn status_reports_present_absent_unavailable_for_one_origin() {
        let store = MemoryStore::new();
        let anthropic = origin("https://api.anthropic.com");
        assert_eq!(
            key_status(ModelSlot::Main, &openai(), &[], &no_env, &store),
            KeyStatus {
                state: KeyState::Absent,
                source: None,
                reason: None,
                origin: "api.openai.com".into(),
                stored_for: vec![],
            }
        );
        store
            .set(ModelSlot::Main, &openai(), &SecretString::new("k"))
            .unwrap();
        let candidates = [openai(), anthropic.clone(), openai()];
        assert_eq!(
            key_status(ModelSlot::Main, &openai(), &candidates, &no_env, &store),
            KeyStatus {
                state: KeyState::Present,
                source: Some(KeySource::Keychain),
                reason: None,
                origin: "api.openai.com".into(),
                stored_for: vec![],
            }
        );
        // Switched to Anthropic: not set there, and the OpenAI key is mentioned once.
        assert_eq!(
            key_status(ModelSlot::Main, &anthropic, &candidates, &no_env, &store),
            KeyStatus {
                state: KeyState::Absent,
                source: None,
                reason: None,
                origin: "api.anthropic.com".into(),
                stored_for: vec!["api.openai.com".into()],
            }
        );
        // The other slot's keys are not this slot's.
        assert_eq!(
            key_status(ModelSlot::Light, &anthropic, &candidates, &no_env, &store).stored_for,
            Vec::<String>::new()
        );
        let env = |k: &str| (k == "CANOPY_LIGHT_API_KEY").then(|| "k".to_string());
        assert_eq!(
            key_status(ModelSlot::Light, &openai(), &[], &env, &store).source,
            Some(KeySource::Env)
        );

        let broken = MemoryStore::unavailable("keychain is locked");
        let status = key_status(ModelSlot::Main, &openai(), &candidates, &no_env, &broken);
        assert_eq!(status.state, KeyState::Unavailable);
        assert_eq!(status.reason.as_deref(), Some("keychain is locked"));
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["state"], "unavailable");
        assert_eq!(json["source"], serde_json::Value::Null);
        assert_eq!(json["origin"], "api.openai.com");
    }

    #[test]
    fn the_environment_key_applies_only_to_the_slots_origin_in_force() {
        let mut effective = settings_at("https://api.anthropic.com/v1");
        assert!(env_key_applies(
            ModelSlot::Main,
            &origin("https://api.anthropic.com/other"),
            &effective
        ));
        for url in ["https://typo.example/v1", "http://api.anthropic.com/v1"] {
            assert!(
                !env_key_applies(ModelSlot::Main, &origin(url), &effective),
                "{url}"
            );
        }
        // Light without its own endpoint runs on main's; with one, on its own.
        let anthropic = origin("https://api.anthropic.com");
        assert!(env_key_applies(ModelSlot::Light, &anthropic, &effective));
        let mut light = ModelSlotConfig::default();
        light.base_url = "http://127.0.0.1:11434/v1".into();
        effective.light = Some(light);
        assert!(!env_key_applies(ModelSlot::Light, &anthropic, &effective));
        assert!(env_key_applies(
            ModelSlot::Light,
            &origin("http://127.0.0.1:11434"),
            &effective
        ));
    }

    #[test]
    fn every_stored_and_environment_key_in_reach_is_listed_for_redaction() {
        let mut saved = settings_at("https://models.internal.example/v1");
        let mut light = ModelSlotConfig::default();
        light.base_url = "http://127.0.0.1:4000/v1".into();
        saved.light = Some(light);
        let origins = known_key_origins([&saved]);
        for url in [
            "https://api.openai.com",
            "https://api.anthropic.com",
            "https://openrouter.ai",
            "https://models.internal.example",
            "http://127.0.0.1:4000",
        ] {
            assert!(origins.contains(&origin(url)), "{url} missing");
        }
        let mut sorted = origins.clone();
        sorted.dedup();
        assert_eq!(sorted, origins, "duplicates");

        let store = MemoryStore::new();
        store
            .set(
                ModelSlot::Main,
                &openai(),
                &SecretString::new("main-openai"),
            )
            .unwrap();
        store
            .set(
                ModelSlot::Light,
                &origin("https://openrouter.ai/api/v1"),
                &SecretString::new("light-router"),
            )
            .unwrap();
        store
            .set(
                ModelSlot::Light,
                &origin("http://127.0.0.1:4000"),
                &SecretString::new("main-openai"),
            )
            .unwrap();
        store
            .set(
                ModelSlot::Main,
                &origin("https://unknown.example"),
                &SecretString::new("unknown"),
            )
            .unwrap();
        let env = |k: &str| (k == "CANOPY_MAIN_API_KEY").then(|| " env-main ".to_string());
        let mut keys: Vec<String> = keys_to_redact(&origins, &env, &store)
            .iter()
            .map(|k| k.expose().to_string())
            .collect();
        keys.sort();
        assert_eq!(keys, ["env-main", "light-router", "main-openai"]);
        let broken = MemoryStore::unavailable("locked");
        assert_eq!(keys_to_redact(&origins, &no_env, &broken), Vec::new());
    }

    #[test]
    fn stored_keys_are_trimmed_and_empty_ones_refused() {
        let store = MemoryStore::new();
        let o = openai();
        store
            .set(ModelSlot::Main, &o, &SecretString::new("  sk-abc\n"))
            .unwrap();
        assert_eq!(
            store.get(ModelSlot::Main, &o).unwrap().unwrap().expose(),
            "sk-abc"
        );
        let err = store
            .set(ModelSlot::Main, &o, &SecretString::new(" \n "))
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid API key: it is empty");
        let err = store
            .set(ModelSlot::Main, &o, &SecretString::new("a\nb"))
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid API key: it contains a line break");
        // Deleting one origin's key leaves another origin's alone.
        let local = origin("http://127.0.0.1:4000/v1");
        store
            .set(ModelSlot::Main, &local, &SecretString::new("sk-local"))
            .unwrap();
        store.delete(ModelSlot::Main, &o).unwrap();
        store.delete(ModelSlot::Main, &o).unwrap();
        assert!(store.get(ModelSlot::Main, &o).unwrap().is_none());
        assert!(store.get(ModelSlot::Main, &local).unwrap().is_some());
    }

    #[test]
    fn key_values_never_show_in_debug_output() {
        let store = MemoryStore::new();
        store
            .set(
                ModelSlot::Main,
                &openai(),
                &SecretString::new("sk-very-secret"),
            )
            .unwrap();
        let resolved = resolve_api_key(ModelSlot::Main, &openai(), &no_env, &store).unwrap();
        assert!(!format!("{resolved:?}").contains("sk-very-secret"));
        assert!(!format!("{store:?}").contains("sk-very-secret"));
    }
}
