//! The providers crate's one error type.

use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// 401/403: the key is missing, wrong or lacks access.
    #[error("authentication failed ({status}): {message}")]
    Auth {
        /// HTTP status.
        status: u16,
        /// Provider's message.
        message: String,
    },
    /// 429 after all retries.
    #[error("rate limited: {message}")]
    RateLimited {
        /// Last `Retry-After`, if given.
        retry_after: Option<Duration>,
        /// Provider's message.
        message: String,
    },
    /// The request does not fit the model's context window.
    #[error("context length exceeded: {message}")]
    ContextLengthExceeded {
        /// Provider's message.
        message: String,
    },
    /// 404 or a model-not-found error.
    #[error("model or endpoint not found ({status}): {message}")]
    NotFound {
        /// HTTP status.
        status: u16,
        /// Provider's message.
        message: String,
    },
    /// Other 4xx.
    #[error("request rejected ({status}): {message}")]
    BadRequest {
        /// HTTP status.
        status: u16,
        /// Provider's message.
        message: String,
    },
    /// 5xx (incl. 529 overloaded) after all retries.
    #[error("server error ({status}): {message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// Provider's message.
        message: String,
    },
    /// Connection failed, was reset, or the stream ended early, after all retries.
    #[error("network error: {0}")]
    Network(String),
    /// No data within the idle timeout.
    #[error("stream idle for more than {0:?}")]
    IdleTimeout(Duration),
    /// The stream could not be understood (bad JSON, unknown event, `error` event).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// Cancelled by the caller.
    #[error("cancelled")]
    Cancelled,
}

/// The error an `error` chunk after a 200 carries (OpenRouter and others: `{"error": {"code": 502,
/// "message": "…"}}`; Ollama's streams too), typed like the same error as an HTTP status so
/// transient ones are retried. Here, not in a client module, so both clients use it without
/// importing each other.
pub(crate) fn stream_error(err: &serde_json::Value) -> ProviderError {
    let message = err
        .get("message")
        .and_then(serde_json::Value::as_str)
        .or_else(|| err.as_str())
        .unwrap_or("unknown error")
        .to_string();
    let code = err.get("code");
    let status = code.and_then(|c| {
        c.as_u64()
            .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
    });
    let word = code
        .and_then(serde_json::Value::as_str)
        .or_else(|| err.get("type").and_then(serde_json::Value::as_str))
        .unwrap_or("")
        .to_ascii_lowercase();
    let message = format!("error in stream: {message}");
    match status {
        Some(429) => ProviderError::RateLimited {
            retry_after: None,
            message,
        },
        Some(s @ 500..=599) => ProviderError::Server {
            status: s as u16,
            message,
        },
        _ if word.contains("overloaded") => ProviderError::Server {
            status: 529,
            message,
        },
        _ if word.contains("rate_limit") => ProviderError::RateLimited {
            retry_after: None,
            message,
        },
        _ if word.contains("server_error") || word.contains("api_error") => ProviderError::Server {
            status: 500,
            message,
        },
        _ => ProviderError::Protocol(message),
    }
}
