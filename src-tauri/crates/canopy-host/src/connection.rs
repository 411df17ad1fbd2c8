//! One test call to a model, the same from both hosts (the app's "Test connection", the CLI's
//! `models check`): a tool-less request for a single token, with a time limit, reported in words.

use std::time::{Duration, Instant};

use canopy_protocol::{Message, ModelInfo, ModelSlot};
use canopy_providers::{ModelClient, ModelRequest, ProviderError};
use canopy_runtime::ModelResolver;
use tokio_util::sync::CancellationToken;

use crate::error::HostResult;
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

impl Host {
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
