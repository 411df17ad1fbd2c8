//! Model resolution from the settings file and the key store: a [`ModelResolver`] that applies
//! light → main fallback and finds each slot's key (environment first, then the keychain), and the
//! list of secrets to redact from traces.

use std::collections::HashMap;
use std::sync::Arc;

use canopy_config::keys::{keys_to_redact, known_key_origins};
use canopy_config::{require_api_key, SecretStore, Settings};
use canopy_protocol::{ModelInfo, ModelSlot, SecretString};
use canopy_providers::{client_for, ProviderConfig, Quirks};

use canopy_runtime::{ModelResolver, ResolvedModel, RuntimeError};

/// A snapshot of the environment variables the runtime reads.
pub type EnvSnapshot = HashMap<String, String>;

/// The variables that carry the slots' API keys, read through `env` (model overrides are already
/// in the effective settings by then).
pub fn key_env(env: &dyn Fn(&str) -> Option<String>) -> EnvSnapshot {
    [ModelSlot::Main, ModelSlot::Light]
        .into_iter()
        .map(canopy_config::api_key_env_var)
        .filter_map(|name| env(name).map(|value| (name.to_string(), value)))
        .collect()
}

/// Model resolution from settings + keys.
pub struct ConfiguredModels {
    settings: Settings,
    env: EnvSnapshot,
    store: Arc<dyn SecretStore>,
    other_settings: Vec<Settings>,
    /// What the provider clients learn about endpoints (a rejected parameter, an Ollama server),
    /// kept for as long as this resolver, i.e. the runtime, lives.
    quirks: Arc<Quirks>,
}

impl ConfiguredModels {
    /// A resolver over these settings (env overrides already applied), env and key store.
    pub fn new(settings: Settings, env: EnvSnapshot, store: Arc<dyn SecretStore>) -> Self {
        ConfiguredModels {
            settings,
            env,
            store,
            other_settings: Vec::new(),
            quirks: Arc::new(Quirks::new()),
        }
    }

    /// Also redacts the keys stored for the endpoints of `saved` (the settings file before
    /// environment overrides), which may differ from the endpoints runs use when a
    /// `CANOPY_*_BASE_URL` variable is set.
    pub fn with_saved_settings(mut self, saved: Settings) -> Self {
        self.other_settings.push(saved);
        self
    }

    /// Every key a tool could come across, for redaction: both slots' environment keys and every
    /// keychain key the store's key index lists (see `canopy_config::IndexedStore`), not only the
    /// ones the slots use now — a key stored for an endpoint a slot has moved away from, or a light
    /// key while light is unconfigured, is still in the keychain and may be printed by a tool.
    /// While the index is missing or not complete (keys stored before it existed), both slots'
    /// entries for every endpoint the app knows of (the presets' and the settings') are read too.
    /// Reading stops at the first keychain error (a locked keychain would prompt once per entry);
    /// the environment keys are still returned. Blocking: call it off the async workers.
    pub fn secrets(&self) -> Vec<SecretString> {
        let env = |k: &str| self.env.get(k).cloned();
        let origins =
            known_key_origins(std::iter::once(&self.settings).chain(self.other_settings.iter()));
        keys_to_redact(&origins, &env, self.store.as_ref())
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
        pc.reasoning_effort = config.reasoning_effort;
        pc.thinking_budget = config.thinking_budget_tokens;
        pc.context_window = Some(config.context_window);
        pc.detect_ollama = true;
        pc.quirks = self.quirks.clone();
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

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_config::{KeyOrigin, MemoryStore};
    use canopy_runtime::redact::Redactor;

    fn origin(url: &str) -> KeyOrigin {
        KeyOrigin::of(url).unwrap()
    }

    fn store_key(store: &MemoryStore, slot: ModelSlot, url: &str, key: &str) {
        store
            .set(slot, &origin(url), &SecretString::new(key))
            .unwrap();
    }

    // Keys that do not look like any known key shape, so only the list of secrets can catch them.
    const OLD_OPENAI: &str = "oldopenai0123456789abcdef";
    const NOW_ANTHROPIC: &str = "nowanthropic0123456789abcdef";
    const LIGHT_UNUSED: &str = "lightrouter0123456789abcdef";
    const SAVED_ONLY: &str = "savedinternal0123456789abcdef";
    const FROM_ENV: &str = "fromenvlight0123456789abcdef";
    const UNKNOWN_ORIGIN: &str = "nobodyknows0123456789abcdef";

    #[test]
    fn keys_for_endpoints_the_slots_no_longer_use_are_still_redacted() {
        let store = Arc::new(MemoryStore::new());
        // Main used OpenAI, then moved to Anthropic; light is unconfigured but has a key stored
        // for OpenRouter; the saved settings point main at an internal server that an
        // environment override replaces for runs.
        store_key(
            &store,
            ModelSlot::Main,
            "https://api.openai.com/v1",
            OLD_OPENAI,
        );
        store_key(
            &store,
            ModelSlot::Main,
            "https://api.anthropic.com",
            NOW_ANTHROPIC,
        );
        store_key(
            &store,
            ModelSlot::Light,
            "https://openrouter.ai/api/v1",
            LIGHT_UNUSED,
        );
        store_key(
            &store,
            ModelSlot::Main,
            "https://models.internal.example/v1",
            SAVED_ONLY,
        );
        store_key(
            &store,
            ModelSlot::Main,
            "https://never-configured.example/v1",
            UNKNOWN_ORIGIN,
        );
        let mut effective = Settings::default();
        effective.main.provider = canopy_protocol::ProviderKind::Anthropic;
        effective.main.base_url = "https://api.anthropic.com".into();
        let mut saved = Settings::default();
        saved.main.base_url = "https://models.internal.example/v1".into();
        let env = EnvSnapshot::from([("CANOPY_LIGHT_API_KEY".to_string(), FROM_ENV.to_string())]);

        let models =
            ConfiguredModels::new(effective, env, store.clone()).with_saved_settings(saved);
        // What a tool might print: a project .env, or `secret-tool search service canopy`.
        let output = format!(
            "OPENAI_API_KEY={OLD_OPENAI}\nANTHROPIC_API_KEY={NOW_ANTHROPIC}\n\
             OPENROUTER_KEY={LIGHT_UNUSED}\nINTERNAL={SAVED_ONLY}\nLIGHT={FROM_ENV}\n"
        );
        let redacted = Redactor::new(models.secrets())
            .redact(&output)
            .expect("something to redact");
        for key in [
            OLD_OPENAI,
            NOW_ANTHROPIC,
            LIGHT_UNUSED,
            SAVED_ONLY,
            FROM_ENV,
        ] {
            assert!(!redacted.contains(&key[..12]), "{key} leaked: {redacted}");
        }
        assert_eq!(redacted.matches("[REDACTED]").count(), 5, "{redacted}");

        // Each key is listed once, and the run still uses only the key of its own endpoint.
        let secrets = models.secrets();
        let exposed: Vec<&str> = secrets.iter().map(SecretString::expose).collect();
        assert_eq!(exposed.len(), 5, "{exposed:?}");
        assert!(!exposed.contains(&UNKNOWN_ORIGIN));
        let key = require_api_key(
            &models.settings,
            ModelSlot::Main,
            &|k: &str| models.env.get(k).cloned(),
            store.as_ref(),
        )
        .unwrap();
        assert_eq!(key.unwrap().expose(), NOW_ANTHROPIC);
    }

    #[test]
    fn with_the_key_index_a_key_for_an_endpoint_nobody_configures_is_redacted_too() {
        let config = tempfile::tempdir().unwrap();
        let store = Arc::new(canopy_config::IndexedStore::new(
            Arc::new(MemoryStore::new()),
            config.path(),
        ));
        store
            .set(
                ModelSlot::Main,
                &origin("https://never-configured.example/v1"),
                &SecretString::new(UNKNOWN_ORIGIN),
            )
            .unwrap();
        let models = ConfiguredModels::new(Settings::default(), EnvSnapshot::new(), store);
        let redacted = Redactor::new(models.secrets())
            .redact(&format!("TOKEN={UNKNOWN_ORIGIN}"))
            .expect("something to redact");
        assert_eq!(redacted, "TOKEN=[REDACTED]");
    }

    #[test]
    fn an_unreadable_keychain_still_yields_the_environment_keys() {
        let env = EnvSnapshot::from([("CANOPY_MAIN_API_KEY".to_string(), FROM_ENV.to_string())]);
        let models = ConfiguredModels::new(
            Settings::default(),
            env,
            Arc::new(MemoryStore::unavailable("locked")),
        );
        let secrets = models.secrets();
        let exposed: Vec<&str> = secrets.iter().map(SecretString::expose).collect();
        assert_eq!(exposed, vec![FROM_ENV]);
    }
}
