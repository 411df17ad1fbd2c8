//! Tools whose arguments are a Rust type: the schema the model sees and the parsing of what it sends
//! both come from that one type, so a built-in tool writes neither by hand. Every such tool is also
//! a [`Tool`] through the blanket implementation here; tools known only at run time (MCP servers)
//! implement [`Tool`] directly.

use async_trait::async_trait;
use canopy_protocol::{ToolKind, ToolSpec};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::{args, Tool, ToolContext, ToolError, ToolOutput};

/// A tool with typed arguments, a fixed name and a fixed kind.
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The arguments; their doc comments become the schema's descriptions, `deny_unknown_fields`
    /// its `additionalProperties: false`.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// Name the model calls it by.
    const NAME: &'static str;
    /// What it does (decides the gate, concurrency and the UI's drawing of a call).
    const KIND: ToolKind;
    /// Whether a call leaves the project and the machine as they were, so it may run alongside
    /// other read-only calls.
    const READ_ONLY: bool;

    /// What the model is told the tool does.
    fn description(&self) -> String;
    /// The schema offered to the model; the derived one unless the tool narrows it further.
    fn parameters(&self) -> serde_json::Value {
        args::schema::<Self::Args>()
    }
    /// One line saying what a call would do, from the raw (possibly invalid) arguments.
    fn summarize(&self, args: &serde_json::Value) -> String;
    /// Whether this call asks for network access (see [`Tool::wants_network`]).
    fn wants_network(&self, _args: &serde_json::Value) -> bool {
        false
    }
    /// See [`Tool::shown_line`].
    fn shown_line(
        &self,
        _root: &std::path::Path,
        _args: &serde_json::Value,
        _output: &str,
        _path: &str,
        _line: u32,
    ) -> Option<String> {
        None
    }
    /// See [`Tool::narrow_seen`].
    fn narrow_seen(
        &self,
        _seen: Vec<canopy_protocol::SeenFile>,
        _kept: &str,
    ) -> Vec<canopy_protocol::SeenFile> {
        Vec::new()
    }
    /// Runs a call whose arguments parsed.
    async fn call(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn kind(&self) -> ToolKind {
        T::KIND
    }

    fn read_only(&self) -> bool {
        T::READ_ONLY
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_string(),
            description: self.description(),
            parameters: self.parameters(),
        }
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        TypedTool::summarize(self, args)
    }

    fn wants_network(&self, args: &serde_json::Value) -> bool {
        TypedTool::wants_network(self, args)
    }

    fn shown_line(
        &self,
        root: &std::path::Path,
        args: &serde_json::Value,
        output: &str,
        path: &str,
        line: u32,
    ) -> Option<String> {
        TypedTool::shown_line(self, root, args, output, path, line)
    }

    fn narrow_seen(
        &self,
        seen: Vec<canopy_protocol::SeenFile>,
        kept: &str,
    ) -> Vec<canopy_protocol::SeenFile> {
        TypedTool::narrow_seen(self, seen, kept)
    }

    async fn run(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: T::Args = args::parse(args)?;
        self.call(args, ctx).await
    }
}
