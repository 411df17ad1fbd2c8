//! The agent's tools. Each tool lives in its own file, takes a documented `Deserialize` argument
//! struct, and says whether it mutates the project, so a read-only profile is a filter over this list.
//! Every path is confined to the project root; failures are [`ToolError`]s the model sees as results.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use canopy_protocol::{TodoItem, ToolSpec};
use tokio_util::sync::CancellationToken;

mod error;
pub use error::ToolError;

/// What a tool call runs against.
#[derive(Clone)]
pub struct ToolContext {
    /// Canonical project root; every path is resolved against it and must stay inside.
    pub root: PathBuf,
    /// Fires when the call (or its session) is cancelled.
    pub cancel: CancellationToken,
    /// The id of this tool call (from the model).
    pub call_id: String,
    /// Shared per-session state (what was read when, for Edit's staleness check).
    pub session: Arc<SessionFiles>,
    /// Environment variable names never passed to child processes (API keys).
    pub env_denylist: Arc<Vec<String>>,
}

/// Per-session record of files the agent has read, so Edit can refuse a file changed since.
#[derive(Debug, Default)]
pub struct SessionFiles {}

/// What a successful tool call returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text the model sees.
    pub content: String,
    /// For TodoWrite: the new plan, so the host can publish it.
    pub todos: Option<Vec<TodoItem>>,
}

/// One tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;
    /// Description and JSON schema offered to the model.
    fn spec(&self) -> ToolSpec;
    /// Whether the tool can change the project or the machine (Edit, Write, Bash).
    fn mutates(&self) -> bool;
    /// One line saying what a call would do, for approval prompts ("Edit src/main.rs (3 lines)").
    fn summarize(&self, args: &serde_json::Value) -> String;
    /// Runs the call. Errors are returned to the model as tool results; they never end a run.
    async fn run(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// Every built-in tool (the `Task` tool lives in the runtime).
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    Vec::new()
}
