//! One test call to a model, the same from both hosts (the app's "Test connection", the CLI's
//! `models check`): a tool-less request for a single token, with a time limit, reported in words.

use std::time::{Duration, Instant};

use canopy_config::{KeyOrigin, ModelSlotConfig};
use canopy_protocol::{Message, ModelInfo, ModelSlot};
use canopy_providers::{
    client_for, ModelClient, ModelListing, ModelRequest, ProviderConfig, ProviderError,
};
use canopy_runtime::ModelResolver;
use tokio_util::sync::CancellationToken;

use crate::error::{HostError, HostResult};
use crate::host::Host;

/// Longest a test call (or a model listing) may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What a test call found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    /// Time from sending the request to the end of the answer (or the failure), ms.
    pub latency_ms: u64,
    /// The model id the endpoint reported, or why the call failed, for people.
    pub answer: Result<String, String>,
}

/// A provider error phrased for a person checking an endpoint.
pub fn describe(error: &ProviderError, base_url: &str, model: &str) -> String {
    match error {
        ProviderError::Auth { .. } => format!("the API key was rejected: {error}"),
        ProviderError::NotFound { .. } => {
            format!("model `{model}` or its endpoint was not found at {base_url}: {error}")
        }
        ProviderError::Network(_) | ProviderError::IdleTimeout(_) => {
            format!("cannot reach {base_url}: {error}")
        }
        _ => error.to_string(),
    }
}

/// Milliseconds since `start`.
pub fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Sends a one-token, tool-less request through `client` (the model `model` at `base_url`, for the
/// wording of a failure) and reports what happened, giving up after [`CALL_TIMEOUT`].
pub async fn ping(client: &dyn ModelClient, base_url: &str, model: &str) -> Ping {
    let request = ModelRequest {
        system: "Reply with OK.".to_string(),
        messages: vec![Message::User {
            text: "ping".to_string(),
        }],
        tools: Vec::new(),
        allow_tool_calls: false,
        max_tokens: 1,
        temperature: None,
    };
    let cancel = CancellationToken::new();
    let start = Instant::now();
    let result =
        tokio::time::timeout(CALL_TIMEOUT, client.complete(&request, &|_| {}, &cancel)).await;
    let latency_ms = elapsed_ms(start);
    let answer = match result {
        Ok(Ok(response)) => Ok(response.model),
        Ok(Err(e)) => Err(describe(&e, base_url, model)),
        Err(_) => {
            cancel.cancel();
            Err(format!(
                "{base_url} did not answer within {} s",
                CALL_TIMEOUT.as_secs()
            ))
        }
    };
    Ping { latency_ms, answer }
}

/// What checking one configured slot found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotCheck {
    /// The slot asked for.
    pub slot: ModelSlot,
    /// The model it resolved to and the test call's outcome, or why it cannot be used at all
    /// (no key, a bad endpoint).
    pub outcome: Result<(ModelInfo, Ping), String>,
}

/// What a slot configuration is needed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A real call to the model.
    Call,
    /// Listing the endpoint's models.
    List,
}

impl Host {
    /// The client configuration of a slot with its key, for a test call or a model listing. `on_screen` is the slot as the settings screen
    /// shows it, saved or not, validated as saving would; without it, the slot in the settings in force.
    /// The key is only ever the one stored for that configuration's own endpoint origin, or the slot's
    /// environment variable when that origin is the slot's in the settings in force, so neither a key
    /// stored for one endpoint nor an environment key reaches an endpoint only typed on screen. Tests and
    /// listings make one attempt: retries would only hide the answer the person is waiting for. The key
    /// is read off the async workers, since the keychain may wait for an unlock prompt.
    pub async fn slot_client_config(
        &self,
        slot: ModelSlot,
        on_screen: Option<ModelSlotConfig>,
        purpose: Purpose,
    ) -> HostResult<ProviderConfig> {
        // With a configuration from the screen, settings in force that cannot be built (a bad
        // environment override) only mean the environment key is not used.
        let effective = self.effective_settings();
        let (slot_settings, from_screen) = match on_screen {
            Some(mut config) => {
                // Listing is how a person finds a model id to fill in, so an empty one is fine there;
                // clients refuse an empty id and listing never sends it, so any name does.
                if purpose == Purpose::List && config.model.trim().is_empty() {
                    config.model = "list".to_string();
                }
                config.validate(slot.as_str())?;
                (config, true)
            }
            None => {
                // Read again for an owned error: config errors are not `Clone`.
                let settings = self.effective_settings()?;
                let config = match slot {
                    ModelSlot::Main => settings.main,
                    ModelSlot::Light => settings.light.ok_or_else(|| {
                        HostError::NotConfigured(
                            "the light model is not configured (subagents use the main model)"
                                .to_string(),
                        )
                    })?,
                };
                (config, false)
            }
        };
        // An endpoint typed on screen gets the slot's environment key only when it is the endpoint the
        // slot runs on anyway; a key stored for the on-screen endpoint itself still applies.
        let env_applies = !from_screen
            || match (&effective, KeyOrigin::of(&slot_settings.base_url)) {
                (Ok(effective), Ok(origin)) => {
                    canopy_config::keys::env_key_applies(slot, &origin, effective)
                }
                _ => false,
            };
        let var = canopy_config::api_key_env_var(slot);
        let env_value = self.env(var).filter(|_| env_applies);
        let store = self.secrets().clone();
        let base_url = slot_settings.base_url.clone();
        let key = tokio::task::spawn_blocking(move || {
            let env = |name: &str| if name == var { env_value.clone() } else { None };
            canopy_config::require_api_key_for(slot, &base_url, &env, store.as_ref())
        })
        .await
        .map_err(|e| HostError::Blocking(format!("keychain task failed: {e}")))??;
        let mut config = ProviderConfig::new(
            slot_settings.provider,
            slot_settings.base_url,
            slot_settings.model,
        );
        config.api_key = key;
        // A test call is shaped like a run's calls, so it fails or passes as they would.
        config.reasoning_effort = slot_settings.reasoning_effort;
        config.thinking_budget = slot_settings.thinking_budget_tokens;
        config.context_window = Some(slot_settings.context_window);
        config.detect_ollama = true;
        config.max_retries = 0;
        config.connect_timeout = Duration::from_secs(5);
        config.idle_timeout = Duration::from_secs(20);
        Ok(config)
    }

    /// A test call to `slot`'s model (`on_screen` as for [`Host::slot_client_config`]). A client
    /// that cannot even be built (a malformed URL) is an error; everything after is in the [`Ping`].
    pub async fn test_call(
        &self,
        slot: ModelSlot,
        on_screen: Option<ModelSlotConfig>,
    ) -> HostResult<Ping> {
        let config = self
            .slot_client_config(slot, on_screen, Purpose::Call)
            .await?;
        let client = client_for(config.clone())
            .map_err(|e| HostError::Provider(describe(&e, &config.base_url, &config.model)))?;
        Ok(ping(client.as_ref(), &config.base_url, &config.model).await)
    }

    /// The models `slot`'s endpoint offers (`on_screen` as for [`Host::slot_client_config`]), with
    /// the context window and prices where the endpoint reports them.
    pub async fn list_models(
        &self,
        slot: ModelSlot,
        on_screen: Option<ModelSlotConfig>,
    ) -> HostResult<Vec<ModelListing>> {
        let config = self
            .slot_client_config(slot, on_screen, Purpose::List)
            .await?;
        let described =
            |e: ProviderError| HostError::Provider(describe(&e, &config.base_url, &config.model));
        let client = client_for(config.clone()).map_err(described)?;
        tokio::time::timeout(CALL_TIMEOUT, client.list_models())
            .await
            .map_err(|_| {
                HostError::Provider(format!(
                    "{} did not list its models within {} s",
                    config.base_url,
                    CALL_TIMEOUT.as_secs()
                ))
            })?
            .map_err(described)
    }

    /// Makes a test call on each slot in the settings in force (light falling back to main as in
    /// runs), one after the other.
    pub async fn check_models(&self) -> HostResult<Vec<SlotCheck>> {
        let models = self.models()?;
        let mut checks = Vec::new();
        for slot in [ModelSlot::Main, ModelSlot::Light] {
            let outcome = match models.resolve(slot) {
                Ok(resolved) => {
                    let info = resolved.info;
                    let ping = ping(resolved.client.as_ref(), &info.base_url, &info.model_id).await;
                    Ok((info, ping))
                }
                Err(e) => Err(e.to_string()),
            };
            checks.push(SlotCheck { slot, outcome });
        }
        Ok(checks)
    }
}
