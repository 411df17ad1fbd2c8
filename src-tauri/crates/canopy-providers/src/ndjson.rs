//! Newline-delimited JSON bodies (Ollama's native streaming format), read one line at a time under
//! the idle timeout and the cancel token. Bytes are buffered across reads before decoding, so a line
//! or a multi-byte character split between two reads arrives whole.

use std::pin::Pin;
use std::time::Duration;

use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::sse::Failure;
use crate::{ProviderConfig, ProviderError};

type ByteStream = Pin<Box<dyn Stream<Item = Result<Vec<u8>, reqwest::Error>> + Send>>;

/// Lines of one response body.
pub(crate) struct Lines {
    inner: ByteStream,
    buf: Vec<u8>,
    idle: Duration,
    ended: bool,
}

impl Lines {
    pub fn new(response: reqwest::Response, config: &ProviderConfig) -> Self {
        Lines {
            inner: Box::pin(response.bytes_stream().map(|r| r.map(|b| b.to_vec()))),
            buf: Vec::new(),
            idle: config.idle_timeout,
            ended: false,
        }
    }

    /// The next non-empty line; `None` when the body ended cleanly.
    pub async fn next(&mut self, cancel: &CancellationToken) -> Result<Option<String>, Failure> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                let text = String::from_utf8(line).map_err(|e| {
                    ProviderError::Protocol(format!("stream is not valid UTF-8: {e}"))
                })?;
                if text.trim().is_empty() {
                    continue;
                }
                return Ok(Some(text));
            }
            if self.ended {
                if self.buf.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                let rest = std::mem::take(&mut self.buf);
                return String::from_utf8(rest).map(Some).map_err(|e| {
                    ProviderError::Protocol(format!("stream is not valid UTF-8: {e}")).into()
                });
            }
            let item = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ProviderError::Cancelled.into()),
                r = tokio::time::timeout(self.idle, self.inner.next()) => match r {
                    Err(_) => return Err(ProviderError::IdleTimeout(self.idle).into()),
                    Ok(item) => item,
                },
            };
            match item {
                None => self.ended = true,
                Some(Ok(chunk)) => self.buf.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    return Err(ProviderError::Network(format!("stream broke: {e}")).into())
                }
            }
        }
    }
}
