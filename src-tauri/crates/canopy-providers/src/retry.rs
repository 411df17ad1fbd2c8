//! Retrying transient failures: which errors qualify, how long to wait (exponential backoff with
//! jitter capped by `max_backoff`, or exactly the server's `Retry-After`), and waiting in a way the
//! cancel token interrupts.
//!
//! Policy for a server-requested wait: it is honoured as given, even above `max_backoff` (retrying
//! earlier is certain to fail again), up to `max_retry_after`; a longer one is not waited for at
//! all — the call fails at once with "server asks to retry after N s". The caller's wall-time
//! deadline bounds every wait, since it bounds the whole call.

use std::future::Future;
use std::hash::BuildHasher;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::sse::Failure;
use crate::{ModelResponse, ProviderConfig, ProviderError, StreamDelta};

/// First backoff step when the server gives no `Retry-After`.
const BASE_BACKOFF: Duration = Duration::from_millis(500);

/// Stalled streams (idle timeouts) retried per call: a stall is the usual way a stream drops, but
/// every retry of one costs a whole idle timeout.
const MAX_IDLE_RETRIES: u32 = 1;

/// 429, overloaded/unavailable 5xx, broken connections and stalled streams are worth another try;
/// auth, other 4xx, context length and protocol errors are not.
pub(crate) fn is_retryable(error: &ProviderError) -> bool {
    match error {
        ProviderError::RateLimited { .. }
        | ProviderError::Network(_)
        | ProviderError::IdleTimeout(_) => true,
        ProviderError::Server { status, .. } => matches!(status, 500 | 502 | 503 | 504 | 529),
        _ => false,
    }
}

/// Wait before retry number `attempt` (1-based): the server's wait as given, else backoff.
pub(crate) fn backoff_delay(
    attempt: u32,
    retry_after: Option<Duration>,
    max_backoff: Duration,
) -> Duration {
    if let Some(wait) = retry_after {
        return wait;
    }
    let exp = BASE_BACKOFF.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let capped = exp.min(max_backoff);
    // Jitter in [capped/2, capped] spreads out many agents that failed together.
    let half = capped / 2;
    let random = std::collections::hash_map::RandomState::new().hash_one(attempt);
    let span = half.as_nanos().max(1) as u64;
    half + Duration::from_nanos(random % span)
}

/// The error for a server that asks for a longer wait than `max_retry_after`.
fn too_long_to_wait(error: ProviderError, wait: Duration, limit: Duration) -> ProviderError {
    let asks = format!(
        "server asks to retry after {} s, longer than the {} s Canopy waits",
        wait.as_secs_f64().ceil(),
        limit.as_secs_f64().ceil()
    );
    match error {
        ProviderError::RateLimited { message, .. } => ProviderError::RateLimited {
            retry_after: Some(wait),
            message: format!("{asks}; {message}"),
        },
        ProviderError::Server { status, message } => ProviderError::Server {
            status,
            message: format!("{asks}; {message}"),
        },
        other => other,
    }
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
    let mut idle_retries = 0u32;
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
        if let ProviderError::IdleTimeout(_) = failure.error {
            if idle_retries >= MAX_IDLE_RETRIES {
                return Err(failure.error);
            }
            idle_retries += 1;
        }
        if let Some(wait) = failure.retry_after.filter(|w| *w > config.max_retry_after) {
            return Err(too_long_to_wait(
                failure.error,
                wait,
                config.max_retry_after,
            ));
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
    fn retry_after_is_honoured_as_given_even_above_the_backoff_cap() {
        let cap = Duration::from_secs(30);
        assert_eq!(
            backoff_delay(1, Some(Duration::from_secs(2)), cap),
            Duration::from_secs(2)
        );
        assert_eq!(
            backoff_delay(1, Some(Duration::from_secs(60)), cap),
            Duration::from_secs(60)
        );
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
        assert!(is_retryable(&ProviderError::IdleTimeout(
            Duration::from_secs(1)
        )));
    }
}
