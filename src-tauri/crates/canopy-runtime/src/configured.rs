//! Builds the runtime's inputs from the settings file and the key store: a [`ModelResolver`] that
//! applies light → main fallback and finds each slot's key (environment first, then the keychain),
//! the [`RuntimeSettings`], and the list of secrets to redact from traces.

use std::collections::HashMap;
use std::sync::Arc;

use canopy_config::{require_api_key, resolve_api_key, KeyOrigin, SecretStore, Settings};
use canopy_protocol::{ModelInfo, ModelSlot, SecretString};
use canopy_providers::{client_for, ProviderConfig};

use crate::profiles::builtin_profiles;
use crate::{ModelResolver, ResolvedModel, RuntimeError, RuntimeSettings};

/// A snapshot of the environment variables the runtime reads.
pub type EnvSnapshot = HashMap<String, String>;

/// Reads the `CANOPY_*` variables from the process environment.
pub fn env_snapshot() -> EnvSnapshot {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("CANOPY_"))
        .collect()
}

/// Model resolution from settings + keys.
pub struct ConfiguredModels {
    settings: Settings,
    env: EnvSnapshot,
    store: Arc<dyn SecretStore>,
}

impl ConfiguredModels {
    /// A resolver over these settings (env overrides already applied), env and key store.
    pub fn new(settings: Settings, env: EnvSnapshot, store: Arc<dyn SecretStore>) -> Self {
        ConfiguredModels {
            settings,
            env,
            store,
        }
    }

    /// Every key the slots can use (each slot's key for the endpoint it points at), for redaction.
    /// Keychain failures are ignored here: a key that cannot be read cannot leak either.
    pub fn secrets(&self) -> Vec<SecretString> {
        let env = |k: &str| self.env.get(k).cloned();
        [ModelSlot::Main, ModelSlot::Light]
            .into_iter()
            .filter_map(|slot| {
                let (used, config, _) = self.settings.resolve_slot(slot);
                let origin = KeyOrigin::of(&config.base_url).ok()?;
                resolve_api_key(used, &origin, &env, self.store.as_ref())
                    .ok()
                    .and_then(|r| r.key)
            })
            .collect()
    }
}

impl ModelResolver for ConfiguredModels {
    fn resolve(&self, slot: ModelSlot) -> Result<ResolvedModel, RuntimeError> {
        let (used, config, fallback) = self.settings.resolve_slot(slot);
        let env = |k: &str| self.env.get(k).cloned();
        let key =
            require_api_key(&self.settings, slot, &env, self.store.as_ref()).map_err(|e| {
                RuntimeError::Model {
                    slot: used.as_str().into(),
                    reason: e.to_string(),
                }
            })?;
        let mut pc = ProviderConfig::new(
            config.provider,
            config.base_url.clone(),
            config.model.clone(),
        );
        pc.api_key = key;
        let client = client_for(pc).map_err(|e| RuntimeError::Model {
            slot: used.as_str().into(),
            reason: e.to_string(),
        })?;
        Ok(ResolvedModel {
            client,
            info: ModelInfo {
                slot: used,
                requested_slot: slot,
                fallback,
                provider: config.provider,
                model_id: config.model.clone(),
                base_url: config.base_url.clone(),
            },
            context_window: config.context_window,
            max_output_tokens: config.max_output_tokens,
        })
    }
}

/// The runtime settings a settings file describes.
pub fn runtime_settings(settings: &Settings) -> RuntimeSettings {
    let mut rs = RuntimeSettings {
        policy: settings.permissions,
        parallelism: settings.parallelism.max(1) as usize,
        verification_gate: settings.verification_gate,
        ..RuntimeSettings::default()
    };
    if let Ok(builtins) = builtin_profiles() {
        for (name, overrides) in &settings.profiles {
            let base = builtins.iter().find(|p| p.name() == name);
            let (budgets, model) = match base {
                Some(p) => (
                    overrides.apply_to(p.budgets()),
                    overrides.model.unwrap_or(p.model()),
                ),
                None => continue,
            };
            rs.profile_overrides.insert(name.clone(), (budgets, model));
        }
    }
    rs
}
