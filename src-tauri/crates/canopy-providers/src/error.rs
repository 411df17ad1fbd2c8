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
