//! The agent's tools. Each tool lives in its own file, takes a documented `Deserialize + JsonSchema`
//! argument type (see [`TypedTool`]) and declares its [`ToolKind`] and whether it is read-only, so
//! the host treats a call by what the tool does, never by its name.
//! Every path is confined to the project root; failures are [`ToolError`]s the model sees as results.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use async_trait::async_trait;
use canopy_protocol::{SeenFile, TodoItem, ToolKind, ToolSpec};
use tokio_util::sync::CancellationToken;

mod args;
mod error;
mod fsutil;
pub mod paths;
pub mod sandbox;
pub mod secrets;
pub mod seen;
pub mod stamp;
mod tools;
pub mod truncate;
mod typed;
mod walk;

pub use args::schema as args_schema;
pub use error::ToolError;
pub use fsutil::{remove_stale_temp_files, STALE_SWEEP_MAX_ENTRIES, STALE_TEMP_AGE, TEMP_PREFIX};
pub use tools::bash::BashTool;
pub use tools::edit::EditTool;
pub use tools::glob::GlobTool;
pub use tools::grep::GrepTool;
pub use tools::read::ReadTool;
pub use tools::todo_write::TodoWriteTool;
pub use tools::write::WriteTool;
pub use typed::TypedTool;

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
    /// How Bash runs commands (the OS sandbox, the environment allowlist).
    pub sandbox: Arc<sandbox::Sandbox>,
    /// The person allowed this call to use the network (Bash with `network: true`).
    pub network_allowed: bool,
    /// Files withheld from the agent (Read refuses them, Grep and Glob skip them).
    pub secrets: Arc<secrets::SecretFiles>,
    /// Bytes of output the agent can still take for this call (a share of the room left in its
    /// context budget), set by the host; `None` when no budget applies (the CLI, tests). A tool
    /// never returns more than [`ToolContext::output_cap`] of it.
    pub output_allowance: Option<usize>,
    /// Whether Read, Grep and Glob report what they showed ([`ToolOutput::seen`], with file
    /// stamps). On unless a bench measures what provenance costs.
    pub record_seen: bool,
}

impl ToolContext {
    /// A context for `root` with a fresh session, a fresh cancellation token, an empty denylist,
    /// the sandbox required, no network and the default secret-file list.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            cancel: CancellationToken::new(),
            call_id: String::new(),
            session: Arc::new(SessionFiles::default()),
            env_denylist: Arc::new(Vec::new()),
            sandbox: Arc::new(sandbox::Sandbox::default()),
            network_allowed: false,
            secrets: Arc::new(secrets::SecretFiles::default()),
            output_allowance: None,
            record_seen: true,
        }
    }

    /// The output size this call may return: the tool's own cap, or the host's allowance when that
    /// is smaller. Never below [`MIN_OUTPUT_BYTES`], so a result can always say how to read on.
    pub fn output_cap(&self, tool_cap: usize) -> usize {
        match self.output_allowance {
            Some(allowance) => allowance.max(MIN_OUTPUT_BYTES).min(tool_cap),
            None => tool_cap,
        }
    }
}

/// The smallest output allowance a tool is held to: room for a few lines and the note that says
/// how much was left out and how to get the rest.
pub const MIN_OUTPUT_BYTES: usize = 512;

/// What the session knows about one file at the moment the agent last read (or wrote) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// Modification time then.
    pub mtime: Option<SystemTime>,
    /// Size in bytes then.
    pub size: u64,
    /// Hash of the whole content then.
    pub hash: u64,
}

impl FileStamp {
    /// The stamp of `bytes` as found on disk with metadata `meta`.
    pub fn of(bytes: &[u8], meta: &std::fs::Metadata) -> Self {
        Self {
            mtime: meta.modified().ok(),
            size: meta.len(),
            hash: fsutil::content_hash(bytes),
        }
    }
}

/// Per-session record of files the agent has read, so Edit can refuse a file changed since.
/// Keys are canonical absolute paths.
#[derive(Debug, Default)]
pub struct SessionFiles {
    files: Mutex<HashMap<PathBuf, FileStamp>>,
}

impl SessionFiles {
    /// Remembers that the agent has seen `path` as `stamp` (after a Read, Edit or Write).
    pub fn record(&self, path: &Path, stamp: FileStamp) {
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_path_buf(), stamp);
    }

    /// What the agent last saw of `path`, if it has seen it in this session.
    pub fn get(&self, path: &Path) -> Option<FileStamp> {
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .copied()
    }

    /// Forgets every file (e.g. when a session is reset).
    pub fn clear(&self) {
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// What a successful tool call returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text the model sees.
    pub content: String,
    /// For TodoWrite: the new plan, so the host can publish it.
    pub todos: Option<Vec<TodoItem>>,
    /// What this output shows of which files (Read, Grep, Glob), or leaves the agent knowing of the
    /// file it changed (Edit, Write): the record evidence provenance is judged from. The host narrows it to what survives fitting the output to the context.
    pub seen: Vec<SeenFile>,
}

impl ToolOutput {
    /// Plain text output.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            todos: None,
            seen: Vec::new(),
        }
    }
}

/// One tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;
    /// What the tool does: the gate, concurrency, subagent allowlists and the UI go by this.
    fn kind(&self) -> ToolKind;
    /// Whether a call leaves the project and the machine as they were (Read, Grep, Glob,
    /// TodoWrite, Task); read-only calls in a row run together, any other call runs alone.
    fn read_only(&self) -> bool;
    /// Whether the tool can change the project or the machine (Edit, Write, Bash).
    fn mutates(&self) -> bool {
        !self.read_only()
    }
    /// Description and JSON schema offered to the model.
    fn spec(&self) -> ToolSpec;
    /// One line saying what a call would do, for approval prompts ("Edit src/main.rs (3 lines)").
    fn summarize(&self, args: &serde_json::Value) -> String;
    /// Whether this call asks for network access, which the person must allow for the call or the
    /// session whatever the policy says (Bash with `network: true`).
    fn wants_network(&self, _args: &serde_json::Value) -> bool {
        false
    }
    /// The text of line `line` of `path` (project-relative, as evidence cites it) as `output`, the
    /// result of a call with `args` in the project at `root`, showed it, if it did. The host uses it
    /// to say what an agent saw of a line it cites; only the tool knows its own output's layout.
    fn shown_line(
        &self,
        _root: &Path,
        _args: &serde_json::Value,
        _output: &str,
        _path: &str,
        _line: u32,
    ) -> Option<String> {
        None
    }
    /// `seen` (what this call's output showed) narrowed to what `kept`, the output after the host
    /// cut it to the agent's context, still shows. A tool that reports what it showed lays out its
    /// own output, so it says; by default nothing counts as seen once the output was cut, since
    /// forgetting is safe and guessing is not.
    fn narrow_seen(&self, _seen: Vec<SeenFile>, _kept: &str) -> Vec<SeenFile> {
        Vec::new()
    }
    /// Runs the call. Errors are returned to the model as tool results; they never end a run.
    async fn run(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

/// Every built-in tool (the `Task` tool lives in the runtime).
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool),
        Arc::new(GrepTool),
        Arc::new(GlobTool),
        Arc::new(EditTool),
        Arc::new(WriteTool),
        Arc::new(BashTool),
        Arc::new(TodoWriteTool),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_tools_are_the_seven_with_object_schemas() {
        let tools = builtin_tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            ["Read", "Grep", "Glob", "Edit", "Write", "Bash", "TodoWrite"]
        );
        let mutating: Vec<&str> = tools
            .iter()
            .filter(|t| t.mutates())
            .map(|t| t.name())
            .collect();
        assert_eq!(mutating, ["Edit", "Write", "Bash"]);
        let kinds: Vec<ToolKind> = tools.iter().map(|t| t.kind()).collect();
        assert_eq!(
            kinds,
            [
                ToolKind::Read,
                ToolKind::Read,
                ToolKind::Read,
                ToolKind::Edit,
                ToolKind::Edit,
                ToolKind::Execute,
                ToolKind::Read,
            ]
        );
        for tool in &tools {
            let spec = tool.spec();
            assert_eq!(spec.name, tool.name());
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.parameters["additionalProperties"], false,
                "{} must reject unknown fields",
                spec.name
            );
            assert!(spec.parameters.get("$schema").is_none());
            let text = spec.parameters.to_string();
            assert!(
                !text.contains("$ref"),
                "{}: sub-schemas must be inlined: {text}",
                spec.name
            );
            assert!(!spec.description.is_empty());
        }
    }
}
