//! API keys in the key store, for the settings screen: storing, deleting and the status of the key
//! for one slot and endpoint origin. Keys are held only as `SecretString` and never returned.

use canopy_config::{ConfigError, KeyOrigin, KeyStatus};
use canopy_protocol::{ModelSlot, SecretString};

use crate::error::{HostError, HostResult};
use crate::host::Host;

/// Keychain access is a blocking D-Bus round trip (and may wait for an unlock prompt): kept off the
/// async workers and a window's thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ConfigError> + Send + 'static,
) -> HostResult<T> {
    Ok(tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| HostError::Blocking(format!("keychain task failed: {e}")))??)
}

impl Host {
    /// Stores `key` for `slot` and `origin`, replacing any previous key for that endpoint.
    pub async fn set_key(
        &self,
        slot: ModelSlot,
        origin: KeyOrigin,
        key: SecretString,
    ) -> HostResult<()> {
        let store = self.secrets().clone();
        blocking(move || store.set(slot, &origin, &key)).await
    }

    /// Removes the key for `slot` and `origin`; keys stored for other endpoints stay. No error when
    /// there was none.
    pub async fn delete_key(&self, slot: ModelSlot, origin: KeyOrigin) -> HostResult<()> {
        let store = self.secrets().clone();
        blocking(move || store.delete(slot, &origin)).await
    }

    /// Whether `slot` has a key for `origin` and where it comes from (environment first — only for
    /// the endpoint the slot runs on in the settings in force, which an origin `from_screen` need
    /// not be — then the key store). When it has none, `stored_for` names the other endpoints it
    /// still has one for: those the key index lists, and while that index is missing or not
    /// complete also the slot's endpoint in the settings and the presets'.
    pub async fn key_status(
        &self,
        slot: ModelSlot,
        origin: KeyOrigin,
        from_screen: bool,
    ) -> HostResult<KeyStatus> {
        let saved = self.saved_settings();
        // Only looked at for keys stored before the key index existed (see `key_status`).
        let mut elsewhere: Vec<KeyOrigin> = canopy_config::presets()
            .iter()
            .map(|p| p.base_url.as_str())
            .chain([saved.resolve_slot(slot).1.base_url.as_str()])
            .filter_map(|url| KeyOrigin::of(url).ok())
            .collect();
        let effective = self.effective_settings();
        if let Ok(effective) = &effective {
            elsewhere.extend(KeyOrigin::of(&effective.resolve_slot(slot).1.base_url).ok());
        }
        // The same rule as Test connection and List models: an endpoint sent from the screen has the
        // environment key only when it is the one the slot runs on in the settings in force.
        let env_applies = !from_screen
            || effective
                .as_ref()
                .is_ok_and(|e| canopy_config::keys::env_key_applies(slot, &origin, e));
        let store = self.secrets().clone();
        let var = canopy_config::api_key_env_var(slot);
        let env_value = self.env(var).filter(|_| env_applies);
        blocking(move || {
            let env = |name: &str| if name == var { env_value.clone() } else { None };
            Ok(canopy_config::key_status(
                slot,
                &origin,
                &elsewhere,
                &env,
                store.as_ref(),
            ))
        })
        .await
    }
}
