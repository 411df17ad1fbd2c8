//! Retrying transient failures: which errors qualify, how long to wait (exponential backoff with
//! jitter, or the server's `Retry-After`, both capped by `max_backoff`), and waiting in a way the
//! cancel token interrupts.

use std::future::Future;
use std::hash::BuildHasher;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::sse::Failure;
use crate::{ModelResponse, ProviderConfig, ProviderError, StreamDelta};

/// First backoff step when the server gives no `Retry-After`.
const BASE_BACKOFF: Duration = Duration::from_millis(500);

/// 429, overloaded/unavailable 5xx and broken connections are worth another try; auth, other 4xx,
/// context length, protocol errors and idle timeouts are not.
pub(crate) fn is_retryable(error: &ProviderError) -> bool {
    match error {
        ProviderError::RateLimited { .. } | ProviderError::Network(_) => true,
        ProviderError::Server { status, .. } => matches!(status, 500 | 502 | 503 | 504 | 529),
        _ => false,
    }
}

/// Wait before retry number `attempt` (1-based).
pub(crate) fn backoff_delay(
    attempt: u32,
    retry_after: Option<Duration>,
    max_backoff: Duration,
) -> Duration {
    if let Some(wait) = retry_after {
        return wait.min(max_backoff);
    }
    let exp = BASE_BACKOFF.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let capped = exp.min(max_backoff);
    // Jitter in [capped/2, capped] spreads out many agents that failed together.
    let half = capped / 2;
    let random = std::collections::hash_map::RandomState::new().hash_one(attempt);
    let span = half.as_nanos().max(1) as u64;
    half + Duration::from_nanos(random % span)
}

/// Runs `attempt` until it succeeds, fails for good, or retries run out; announces each retry.
pub(crate) async fn with_retries<F, Fut>(
    config: &ProviderConfig,
    on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    cancel: &CancellationToken,
    mut attempt: F,
) -> Result<ModelResponse, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<ModelResponse, Failure>>,
{
    let mut retries = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        let failure = match attempt().await {
            Ok(response) => return Ok(response),
            Err(f) => f,
        };
        if !is_retryable(&failure.error) || retries >= config.max_retries {
            return Err(failure.error);
        }
        retries += 1;
        let delay = backoff_delay(retries, failure.retry_after, config.max_backoff);
        on_delta(StreamDelta::Retrying {
            attempt: retries,
            delay,
            error: failure.error.to_string(),
        });
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_honoured_but_capped() {
        let cap = Duration::from_secs(30);
        assert_eq!(
            backoff_delay(1, Some(Duration::from_secs(2)), cap),
            Duration::from_secs(2)
        );
        assert_eq!(backoff_delay(1, Some(Duration::from_secs(120)), cap), cap);
    }

    #[test]
    fn backoff_grows_with_jitter_and_stays_under_cap() {
        let cap = Duration::from_secs(3);
        for attempt in 1..=10 {
            let d = backoff_delay(attempt, None, cap);
            let full = BASE_BACKOFF.saturating_mul(1 << (attempt - 1)).min(cap);
            assert!(
                d >= full / 2 && d <= full,
                "attempt {attempt}: {d:?} not in [{:?}, {full:?}]",
                full / 2
            );
        }
    }

    #[test]
    fn only_transient_errors_retry() {
        assert!(is_retryable(&ProviderError::Network("reset".into())));
        assert!(is_retryable(&ProviderError::Server {
            status: 529,
            message: String::new()
        }));
        assert!(!is_retryable(&ProviderError::Server {
            status: 501,
            message: String::new()
        }));
        assert!(!is_retryable(&ProviderError::Auth {
            status: 401,
            message: String::new()
        }));
        assert!(!is_retryable(&ProviderError::ContextLengthExceeded {
            message: String::new()
        }));
        assert!(!is_retryable(&ProviderError::IdleTimeout(
            Duration::from_secs(1)
        )));
    }
}
