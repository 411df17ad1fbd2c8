//! What a settings screen sends and asks, checked once for every host: whole settings and single
//! model slots as they arrive (raw JSON, so a wrongly shaped object gets an error naming the problem
//! instead of a generic argument error), the endpoint a key command is about, a test call reported
//! for the screen, and probing this machine for a local Ollama.

use std::time::Duration;

use canopy_config::{ConfigError, KeyOrigin, ModelSlotConfig, Settings};
use canopy_protocol::ModelSlot;
use canopy_providers::{client_for, ProviderConfig};
use serde::Serialize;
use ts_rs::TS;

use crate::error::{HostError, HostResult};
use crate::host::Host;

/// Longest the Ollama probe waits: it runs when the settings screen opens and must not stall it.
pub const OLLAMA_TIMEOUT: Duration = Duration::from_millis(1500);

/// Where the default Ollama endpoint is probed.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434/v1";

/// The outcome of a test call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ConnectionTest {
    /// True when the model answered.
    pub ok: bool,
    /// Time from sending the request to the end of the answer (or the failure), ms.
    pub latency_ms: u64,
    /// Model id the endpoint reported.
    pub model: Option<String>,
    /// Why it failed (bad key, unreachable URL, unknown model), for people.
    pub error: Option<String>,
}

/// What the Ollama probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct OllamaStatus {
    /// True when an Ollama server answered.
    pub found: bool,
    /// Its OpenAI-compatible base URL (to put in settings).
    pub base_url: String,
    /// Models it has pulled.
    pub models: Vec<String>,
}

/// The slot as the settings screen shows it, saved or not; a wrongly shaped one is
/// [`HostError::InvalidSettings`] naming the problem.
pub fn slot_on_screen(
    slot: ModelSlot,
    value: Option<serde_json::Value>,
) -> HostResult<Option<ModelSlotConfig>> {
    value
        .map(|value| {
            serde_json::from_value::<ModelSlotConfig>(value).map_err(|e| {
                HostError::InvalidSettings(format!(
                    "the {} model settings do not have the expected shape: {e}",
                    slot.as_str()
                ))
            })
        })
        .transpose()
}

/// Asks the OpenAI-compatible endpoint at `base_url` for its models, briefly; absence is not an
/// error.
pub async fn probe_ollama(base_url: &str) -> OllamaStatus {
    // Clients refuse an empty model id; listing never sends it, so any name does.
    let mut config = ProviderConfig::new(canopy_protocol::ProviderKind::Openai, base_url, "probe");
    config.max_retries = 0;
    config.connect_timeout = OLLAMA_TIMEOUT;
    config.idle_timeout = OLLAMA_TIMEOUT;
    let models = match client_for(config) {
        Ok(client) => match tokio::time::timeout(OLLAMA_TIMEOUT, client.list_models()).await {
            Ok(Ok(models)) => Some(models.into_iter().map(|m| m.id).collect()),
            _ => None,
        },
        Err(_) => None,
    };
    OllamaStatus {
        found: models.is_some(),
        base_url: base_url.to_string(),
        models: models.unwrap_or_default(),
    }
}

impl Host {
    /// Validates, writes and adopts settings as a screen sent them.
    pub fn save_settings_json(&self, value: serde_json::Value) -> HostResult<Settings> {
        let settings: Settings = serde_json::from_value(value).map_err(|e| {
            HostError::InvalidSettings(format!("settings do not have the expected shape: {e}"))
        })?;
        Ok(self.save_settings(settings)?)
    }

    /// The origin a key command is about: the one of `base_url` when the screen sent it, otherwise
    /// that of the endpoint `slot` runs on now (light without its own endpoint runs on main's).
    pub fn key_origin(&self, slot: ModelSlot, base_url: Option<&str>) -> HostResult<KeyOrigin> {
        let settings;
        let url = match base_url {
            Some(url) => url,
            None => {
                settings = self.effective_settings()?;
                &settings.resolve_slot(slot).1.base_url
            }
        };
        KeyOrigin::of(url).map_err(|e| match e {
            ConfigError::Invalid { reason, .. } => {
                HostError::InvalidSettings(format!("{}.base_url: {reason}", slot.as_str()))
            }
            other => other.into(),
        })
    }

    /// A test call to `slot`'s model as the screen shows it (`on_screen`: the slot's JSON, saved or
    /// not; without it the settings in force), reported for the screen.
    pub async fn test_connection(
        &self,
        slot: ModelSlot,
        on_screen: Option<serde_json::Value>,
    ) -> HostResult<ConnectionTest> {
        let ping = self
            .test_call(slot, slot_on_screen(slot, on_screen)?)
            .await?;
        Ok(ConnectionTest {
            ok: ping.answer.is_ok(),
            latency_ms: ping.latency_ms,
            model: ping.answer.clone().ok(),
            error: ping.answer.err(),
        })
    }
}

#[cfg(test)]
mod tests {

    use canopy_test_support::{MockServer, Rule, Script, Turn};

    use super::*;

    use crate::host::test_host as host;

    #[test]
    fn a_wrongly_shaped_settings_object_is_refused_and_nothing_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let err = host
            .save_settings_json(serde_json::json!({"main": 3}))
            .unwrap_err();
        assert!(matches!(err, HostError::InvalidSettings(_)), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("settings do not have the expected shape: "),
            "{err}"
        );
        assert!(!dir.path().join("config/settings.json").exists());
        let settings = Settings {
            parallelism: 2,
            ..Settings::default()
        };
        let saved = host
            .save_settings_json(serde_json::to_value(&settings).unwrap())
            .unwrap();
        assert_eq!(saved, settings);
        assert_eq!(host.saved_settings().parallelism, 2);
        assert!(dir.path().join("config/settings.json").is_file());
    }

    #[test]
    fn a_key_is_about_the_endpoint_on_screen_or_the_one_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let shown = host
            .key_origin(ModelSlot::Main, Some("https://api.example.com/v1"))
            .unwrap();
        assert_eq!(shown, KeyOrigin::of("https://api.example.com/x").unwrap());
        let in_force = host.key_origin(ModelSlot::Light, None).unwrap();
        assert_eq!(
            in_force,
            KeyOrigin::of(&Settings::default().main.base_url).unwrap(),
            "light without an endpoint runs on main's"
        );
        let err = host
            .key_origin(ModelSlot::Light, Some("not a url"))
            .unwrap_err();
        assert!(matches!(err, HostError::InvalidSettings(_)), "{err:?}");
        assert!(err.to_string().starts_with("light.base_url: "), "{err}");
        let err = slot_on_screen(ModelSlot::Main, Some(serde_json::json!([1]))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the main model settings do not have the expected shape"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn the_ollama_probe_lists_what_answers_and_shrugs_at_silence() {
        let server = MockServer::start(Script::new().rule(Rule::new("any").turn(Turn::text("x"))))
            .await
            .unwrap();
        let found = probe_ollama(&server.openai_base_url()).await;
        assert!(found.found, "{found:?}");
        assert_eq!(found.base_url, server.openai_base_url());
        let silent = probe_ollama("http://127.0.0.1:9/v1").await;
        assert_eq!(
            silent,
            OllamaStatus {
                found: false,
                base_url: "http://127.0.0.1:9/v1".into(),
                models: Vec::new()
            }
        );
    }
}
