//! A scripted model server on loopback for tests and demos. It speaks the OpenAI Chat Completions and
//! Anthropic Messages streaming formats for real (validation, SSE framing, error bodies), and answers
//! each request from a [`Script`]: the first [`Rule`] whose matcher fits picks the reply, and the
//! number of assistant messages already in the history picks the [`Turn`]. Replies are thus a pure
//! function of the request, so many agents can share one server.
//!
//! ```no_run
//! # async fn demo() -> Result<(), canopy_test_support::MockError> {
//! use canopy_test_support::{call, MockServer, Rule, Script, Turn};
//! let server = MockServer::start(
//!     Script::new().rule(
//!         Rule::new("explore")
//!             .first_user_contains("auth")
//!             .turn(Turn::tools(vec![call("Grep", serde_json::json!({"pattern": "auth"}))]))
//!             .turn(Turn::text("Found it.")),
//!     ),
//! )
//! .await?;
//! let base = server.openai_base_url(); // http://127.0.0.1:PORT/v1
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

pub mod quirks;
mod script;
mod server;
mod wire;

pub use script::{
    call, call_raw, Fault, Matcher, ModelDetail, OllamaModel, Rule, Script, ScriptUsage,
    ScriptedCall, StreamError, Turn,
};

/// Why the mock server could not start.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The script file could not be read.
    #[error("cannot read script {path}: {reason}")]
    ReadScript {
        /// File path.
        path: String,
        /// OS error.
        reason: String,
    },
    /// The script is not valid.
    #[error("invalid script: {0}")]
    Script(String),
    /// Binding the port failed.
    #[error("cannot listen on 127.0.0.1:{port}: {reason}")]
    Bind {
        /// Requested port (0 = any).
        port: u16,
        /// OS error.
        reason: String,
    },
}

/// One model request the server received (also rejected ones).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// `/v1/chat/completions` or `/v1/messages`.
    pub path: String,
    /// Headers, lower-case names.
    pub headers: BTreeMap<String, String>,
    /// JSON body (a JSON string holding the raw text if the body was not JSON).
    pub body: serde_json::Value,
}

/// A running mock server; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<server::Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl MockServer {
    /// Starts serving `script` on `127.0.0.1` at a free port.
    pub async fn start(script: Script) -> Result<MockServer, MockError> {
        MockServer::start_on(script, 0).await
    }

    /// Starts serving `script` on `127.0.0.1:port` (0 = any free port).
    pub async fn start_on(script: Script, port: u16) -> Result<MockServer, MockError> {
        for rule in &script.rules {
            if rule.turns.is_empty() {
                return Err(MockError::Script(format!(
                    "rule {:?} has no turns",
                    rule.name
                )));
            }
        }
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| MockError::Bind {
                port,
                reason: e.to_string(),
            })?;
        let addr = listener.local_addr().map_err(|e| MockError::Bind {
            port,
            reason: e.to_string(),
        })?;
        let shared = Arc::new(server::Shared::new(script));
        let app = server::router(shared.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(MockServer {
            addr,
            shared,
            shutdown: Some(tx),
            task,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base URL for an OpenAI-compatible client: `http://127.0.0.1:PORT/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Base URL for an Anthropic client: `http://127.0.0.1:PORT`.
    pub fn anthropic_base_url(&self) -> String {
        self.url()
    }

    /// The model requests received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        match self.shared.requests.lock() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        // Open streams (e.g. a scripted stall) would keep a graceful shutdown waiting.
        self.task.abort();
    }
}
