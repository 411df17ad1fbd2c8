//! One model call as both clients make it: encode the body once, then on every attempt POST it for
//! an event stream, fold the SSE events with the wire format's accumulator, and retry transient
//! failures. The clients differ only in the URL, the auth headers and the accumulator, so those are
//! all they supply.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::retry::with_retries;
use crate::sse::{self, Events, Failure};
use crate::{ModelListing, ModelResponse, ProviderConfig, ProviderError, StreamDelta};

/// Folds one wire format's stream events into a response.
pub(crate) trait Accumulate: Default {
    /// Feeds one SSE `data` payload; true once the stream's terminal event arrived.
    fn feed(
        &mut self,
        data: &str,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<bool, Failure>;

    /// The response, if the stream really finished.
    fn finish(self, requested_model: &str, request_bytes: usize) -> Result<ModelResponse, Failure>;
}

/// Streams `body` to the endpoint `post` builds (URL and auth, fresh for every attempt) until a
/// complete response, a permanent error, cancellation, or the last retry.
pub(crate) async fn complete<A: Accumulate>(
    config: &ProviderConfig,
    body: &Value,
    post: impl Fn() -> Result<reqwest::RequestBuilder, ProviderError> + Sync,
    on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<ModelResponse, ProviderError> {
    let body = serde_json::to_vec(body)
        .map_err(|e| ProviderError::Protocol(format!("cannot encode request: {e}")))?;
    with_retries(config, on_delta, cancel, || {
        attempt::<A>(config, &post, &body, on_delta, cancel)
    })
    .await
}

async fn attempt<A: Accumulate>(
    config: &ProviderConfig,
    post: &(dyn Fn() -> Result<reqwest::RequestBuilder, ProviderError> + Sync),
    body: &[u8],
    on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<ModelResponse, Failure> {
    let rb = post()?
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "text/event-stream")
        .body(body.to_vec());
    let response = sse::send(rb, config, cancel).await?;
    let mut events = Events::new(response, config);
    let mut acc = A::default();
    while let Some(event) = events.next(cancel).await? {
        if acc.feed(&event.data, on_delta)? {
            break;
        }
    }
    acc.finish(&config.model, body.len())
}

/// Sends an authorized model-list `GET` and reads the list. Nothing cancels it but its timeouts.
pub(crate) async fn list_models(
    request: reqwest::RequestBuilder,
    config: &ProviderConfig,
) -> Result<Vec<ModelListing>, ProviderError> {
    let cancel = CancellationToken::new();
    let response = sse::send(request, config, &cancel)
        .await
        .map_err(|f| f.error)?;
    crate::parse_model_list(response, config).await
}
