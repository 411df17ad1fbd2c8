//! HTTP and SSE plumbing both clients share: sending a request under the idle timeout and the cancel
//! token, mapping error statuses and bodies to [`ProviderError`], and reading SSE events one at a time
//! with the idle timeout applied to each read.

use std::pin::Pin;
use std::time::Duration;

use canopy_protocol::SecretString;
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::{ProviderConfig, ProviderError};

/// A failed attempt: the error plus the server's `Retry-After`, if any.
#[derive(Debug)]
pub(crate) struct Failure {
    pub error: ProviderError,
    pub retry_after: Option<Duration>,
}

impl From<ProviderError> for Failure {
    fn from(error: ProviderError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

/// Longest provider message kept in an error.
const MAX_MESSAGE: usize = 600;

/// The HTTP client for one config. No overall timeout: streams may run for minutes; the idle timeout
/// guards each read instead. Redirects are not followed: reqwest keeps headers such as `x-api-key`
/// across a redirect to another host, and a key must only ever reach the origin it was stored for.
/// A 3xx is answered as the error it is.
pub(crate) fn http_client(config: &ProviderConfig) -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ProviderError::Network(format!("cannot build HTTP client: {e}")))
}

/// Removes the key from text that came back from the server, in case it echoes it.
pub(crate) fn scrub(text: &str, key: Option<&SecretString>) -> String {
    let mut out = match key {
        Some(k) if !k.is_empty() => text.replace(k.expose(), "[redacted]"),
        _ => text.to_string(),
    };
    if out.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

/// Describes a transport error without anything secret (reqwest errors name only the URL).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Sends a request; the response headers must arrive within the idle timeout. Non-2xx statuses
/// become a typed error.
pub(crate) async fn send(
    builder: reqwest::RequestBuilder,
    config: &ProviderConfig,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, Failure> {
    let response = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ProviderError::Cancelled.into()),
        r = tokio::time::timeout(config.idle_timeout, builder.send()) => match r {
            Err(_) => return Err(ProviderError::IdleTimeout(config.idle_timeout).into()),
            Ok(Err(e)) => return Err(ProviderError::Network(scrub(&describe(&e), config.api_key.as_ref())).into()),
            Ok(Ok(resp)) => resp,
        },
    };
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    if response.status().is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(|l| format!(" to {}", scrub(l, config.api_key.as_ref())))
            .unwrap_or_default();
        let message = format!(
            "the endpoint redirects{to}; Canopy does not follow redirects, so an API key only reaches \
             the origin it was stored for: set the base URL to the final address"
        );
        return Err(ProviderError::BadRequest { status, message }.into());
    }
    let retry_after = server_wait(response.headers(), std::time::SystemTime::now());
    let body = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ProviderError::Cancelled.into()),
        b = tokio::time::timeout(config.idle_timeout, response.text()) => match b {
            Ok(Ok(text)) => text,
            Ok(Err(_)) | Err(_) => String::new(),
        },
    };
    Err(Failure {
        error: map_status(status, &body, retry_after, config.api_key.as_ref()),
        retry_after,
    })
}

/// How long the server asks us to wait: `retry-after-ms` (OpenAI; milliseconds, the more precise)
/// first, then `Retry-After` as seconds or as an HTTP-date (a date in the past means now).
pub(crate) fn server_wait(
    headers: &reqwest::header::HeaderMap,
    now: std::time::SystemTime,
) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let number = |v: &str| v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0);
    if let Some(ms) = header("retry-after-ms").and_then(number) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header(reqwest::header::RETRY_AFTER.as_str())?;
    if let Some(secs) = number(value) {
        return Some(Duration::from_secs_f64(secs));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The provider's message and code from an error body (`{"error": {"message", "code"|"type"}}` in
/// both formats), or the raw body.
fn error_parts(body: &str) -> (String, String) {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let err = parsed.as_ref().and_then(|v| v.get("error"));
    let message = err
        .and_then(|e| e.get("message"))
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .or_else(|| err.and_then(|e| e.as_str()).map(str::to_string))
        .unwrap_or_else(|| body.trim().to_string());
    let code = err
        .and_then(|e| {
            e.get("code")
                .and_then(|c| c.as_str())
                .or_else(|| e.get("type").and_then(|t| t.as_str()))
        })
        .unwrap_or("")
        .to_string();
    (message, code)
}

/// True for the wording both providers (and common compatible servers) use for an over-long prompt.
fn is_context_length(message: &str, code: &str) -> bool {
    let m = message.to_ascii_lowercase();
    code == "context_length_exceeded"
        || m.contains("context_length_exceeded")
        || m.contains("prompt is too long")
        || m.contains("maximum context length")
        || m.contains("context length")
        || m.contains("context window")
}

/// Maps an HTTP error status and body to the typed error.
pub(crate) fn map_status(
    status: u16,
    body: &str,
    retry_after: Option<Duration>,
    key: Option<&SecretString>,
) -> ProviderError {
    let (message, code) = error_parts(body);
    let message = scrub(
        if message.is_empty() {
            "(no message)"
        } else {
            &message
        },
        key,
    );
    match status {
        401 | 403 => ProviderError::Auth { status, message },
        429 => ProviderError::RateLimited {
            retry_after,
            message,
        },
        404 => ProviderError::NotFound { status, message },
        _ if code == "model_not_found" => ProviderError::NotFound { status, message },
        400..=499 if is_context_length(&message, &code) => {
            ProviderError::ContextLengthExceeded { message }
        }
        400..=499 => ProviderError::BadRequest { status, message },
        _ => ProviderError::Server { status, message },
    }
}

type EventStream =
    Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

/// SSE events of one response, read under the idle timeout and the cancel token.
pub(crate) struct Events {
    inner: EventStream,
    idle: Duration,
    key: Option<SecretString>,
}

impl Events {
    pub fn new(response: reqwest::Response, config: &ProviderConfig) -> Self {
        Events {
            inner: Box::pin(response.bytes_stream().eventsource()),
            idle: config.idle_timeout,
            key: config.api_key.clone(),
        }
    }

    /// The next event; `None` when the body ended cleanly.
    pub async fn next(&mut self, cancel: &CancellationToken) -> Result<Option<Event>, Failure> {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::Cancelled.into()),
            r = tokio::time::timeout(self.idle, self.inner.next()) => match r {
                Err(_) => return Err(ProviderError::IdleTimeout(self.idle).into()),
                Ok(item) => item,
            },
        };
        match item {
            None => Ok(None),
            Some(Ok(event)) => Ok(Some(event)),
            Some(Err(EventStreamError::Transport(e))) => Err(ProviderError::Network(format!(
                "stream broke: {}",
                scrub(&describe(&e), self.key.as_ref())
            ))
            .into()),
            Some(Err(EventStreamError::Utf8(e))) => {
                Err(ProviderError::Protocol(format!("stream is not valid UTF-8: {e}")).into())
            }
            Some(Err(EventStreamError::Parser(e))) => {
                Err(ProviderError::Protocol(format!("malformed SSE: {e}")).into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        let openai_ctx = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert!(matches!(
            map_status(400, openai_ctx, None, None),
            ProviderError::ContextLengthExceeded { .. }
        ));
        let anthropic_ctx = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(matches!(
            map_status(400, anthropic_ctx, None, None),
            ProviderError::ContextLengthExceeded { .. }
        ));
        assert!(matches!(
            map_status(400, r#"{"error":{"message":"bad tools"}}"#, None, None),
            ProviderError::BadRequest { status: 400, .. }
        ));
        assert!(matches!(
            map_status(403, "", None, None),
            ProviderError::Auth { status: 403, .. }
        ));
        assert!(matches!(
            map_status(
                400,
                r#"{"error":{"message":"no","code":"model_not_found"}}"#,
                None,
                None
            ),
            ProviderError::NotFound { .. }
        ));
        assert!(matches!(
            map_status(529, "Overloaded", None, None),
            ProviderError::Server { status: 529, .. }
        ));
    }

    #[test]
    fn server_wait_reads_seconds_dates_and_milliseconds() {
        use reqwest::header::{HeaderMap, HeaderValue};
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let wait = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_str(v).unwrap());
            }
            server_wait(&h, now)
        };
        assert_eq!(wait(&[("retry-after", "7")]), Some(Duration::from_secs(7)));
        assert_eq!(
            wait(&[("retry-after", "1.5")]),
            Some(Duration::from_millis(1500))
        );
        let in_90s = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(
            wait(&[("retry-after", &in_90s)]),
            Some(Duration::from_secs(90))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
        assert_eq!(wait(&[("retry-after", &past)]), Some(Duration::ZERO));
        assert_eq!(
            wait(&[("retry-after", "20"), ("retry-after-ms", "250")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(wait(&[("retry-after", "soon")]), None);
        assert_eq!(wait(&[("retry-after", "-3")]), None);
        assert_eq!(wait(&[]), None);
    }

    #[test]
    fn echoed_key_is_scrubbed() {
        let key = SecretString::new("sk-live-abcdef");
        let err = map_status(
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-live-abcdef"}}"#,
            None,
            Some(&key),
        );
        let text = err.to_string();
        assert!(!text.contains("sk-live-abcdef"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}
