//! The one place that knows every tool by name: the built-in tools, `Task`, and the rows of the
//! person's permission policy (which the settings key by tool). Everything else asks a tool for its
//! [`ToolKind`] and whether it is read-only.

use std::sync::Arc;

use canopy_protocol::ToolKind;
use canopy_tools::{Tool, TypedTool, WriteTool};

/// What the host needs to know of a tool it may not have an instance of (a profile's allowlist, a
/// call to a tool this session lacks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolInfo {
    /// Name the model calls it by.
    pub name: String,
    /// What it does.
    pub kind: ToolKind,
    /// Whether a call leaves the project and the machine as they were.
    pub read_only: bool,
}

/// The name of the tool that delegates to a subagent. A session gets it when its allowlist names it;
/// it is built per session (it starts children), so it is not among the runtime's tools and its name
/// and kind are kept here.
pub const TASK: &str = "Task";
/// `Task`'s kind.
pub const TASK_KIND: ToolKind = ToolKind::Delegate;
/// `Task` changes nothing itself and its children are read-only, so several run at once; the gate
/// still asks the policy because it is a delegation.
pub const TASK_READ_ONLY: bool = true;

/// The row of the person's permission policy a call is decided by (the settings key it by tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyRow {
    /// Changing an existing file.
    Edit,
    /// Creating or overwriting a file.
    Write,
    /// Running a command.
    Bash,
    /// Starting a subagent.
    Task,
}

/// Every tool a profile may name: the built-in ones, read-only first, then `Task`.
pub fn known_tools() -> Vec<ToolInfo> {
    let mut tools: Vec<ToolInfo> = canopy_tools::builtin_tools()
        .iter()
        .map(|t| ToolInfo {
            name: t.name().to_string(),
            kind: t.kind(),
            read_only: t.read_only(),
        })
        .collect();
    tools.sort_by_key(|t| !t.read_only);
    tools.push(ToolInfo {
        name: TASK.to_string(),
        kind: TASK_KIND,
        read_only: TASK_READ_ONLY,
    });
    tools
}

/// The kind and read-only flag of the tool called `name`, from `tools` (a runtime's set) or `Task`.
pub fn kind_of(tools: &[Arc<dyn Tool>], name: &str) -> Option<(ToolKind, bool)> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .map(|t| (t.kind(), t.read_only()))
        .or((name == TASK).then_some((TASK_KIND, TASK_READ_ONLY)))
}

/// The policy row for a call that needs one: by kind, and for the two file-changing tools by which
/// of them it is (the settings give Edit and Write a row each). A kind the policy has no row for
/// (an external tool) has none: it is asked about, never silently allowed.
pub fn policy_row(tool: &str, kind: ToolKind) -> Option<PolicyRow> {
    match kind {
        ToolKind::Edit if tool == WriteTool::NAME => Some(PolicyRow::Write),
        ToolKind::Edit => Some(PolicyRow::Edit),
        ToolKind::Execute => Some(PolicyRow::Bash),
        ToolKind::Delegate => Some(PolicyRow::Task),
        ToolKind::Read | ToolKind::External => None,
    }
}

/// The known tools a person may allow ahead of time (the CLI's `--allow`): those whose kind the
/// policy has a row for, so the gate asks about them. A read tool is never asked about, so it is
/// not among them whatever its name.
pub fn approvable_tools() -> Vec<ToolInfo> {
    known_tools()
        .into_iter()
        .filter(|t| policy_row(&t.name, t.kind).is_some())
        .collect()
}

/// The approvable tool `word` names, in any case (`bash` for `Bash`).
pub fn approvable_tool(word: &str) -> Option<ToolInfo> {
    approvable_tools()
        .into_iter()
        .find(|t| t.name.eq_ignore_ascii_case(word))
}

/// `TOOL_KINDS` for the UI: the kind of every known tool, so views draw a call by what it does.
/// A name it does not hold (a tool from an MCP server) is external.
pub fn typescript_declarations() -> String {
    let entries: Vec<String> = known_tools()
        .iter()
        .map(|t| {
            format!(
                "  {}: {},\n",
                serde_json::Value::from(t.name.as_str()),
                serde_json::to_value(t.kind).unwrap_or_default()
            )
        })
        .collect();
    format!(
        "/** The kind of each tool Canopy knows; any other name is an external tool. */\n\
         export const TOOL_KINDS: {{ readonly [tool in string]?: ToolKind }} = {{\n{}}};\n",
        entries.concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_tools_list_read_only_first_then_task() {
        let names: Vec<String> = known_tools().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "Read",
                "Grep",
                "Glob",
                "TodoWrite",
                "Edit",
                "Write",
                "Bash",
                "Task"
            ]
        );
        assert_eq!(
            kind_of(&canopy_tools::builtin_tools(), "Task"),
            Some((ToolKind::Delegate, true))
        );
        assert_eq!(
            kind_of(&canopy_tools::builtin_tools(), "Bash"),
            Some((ToolKind::Execute, false))
        );
        assert_eq!(kind_of(&canopy_tools::builtin_tools(), "Nope"), None);
    }

    #[test]
    fn typescript_names_every_known_tool_with_its_kind() {
        let ts = typescript_declarations();
        assert!(ts.contains("  \"Bash\": \"execute\",\n"), "{ts}");
        assert!(ts.contains("  \"Write\": \"edit\",\n"), "{ts}");
        assert!(ts.contains("  \"Task\": \"delegate\",\n"), "{ts}");
        assert_eq!(ts.matches(": \"").count(), known_tools().len(), "{ts}");
    }

    #[test]
    fn policy_rows_follow_the_kind() {
        assert_eq!(policy_row("Edit", ToolKind::Edit), Some(PolicyRow::Edit));
        assert_eq!(policy_row("Write", ToolKind::Edit), Some(PolicyRow::Write));
        assert_eq!(policy_row("Bash", ToolKind::Execute), Some(PolicyRow::Bash));
        assert_eq!(
            policy_row("Task", ToolKind::Delegate),
            Some(PolicyRow::Task)
        );
        // An MCP tool that happens to be called "Edit" has no row: it is asked about.
        assert_eq!(policy_row("Edit", ToolKind::External), None);
        assert_eq!(policy_row("Read", ToolKind::Read), None);
    }

    #[test]
    fn approvable_tools_are_those_the_kind_gives_a_policy_row() {
        let names: Vec<String> = approvable_tools().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["Edit", "Write", "Bash", "Task"]);
        assert_eq!(
            approvable_tool("bash").map(|t| (t.name, t.kind)),
            Some(("Bash".to_string(), ToolKind::Execute))
        );
        assert_eq!(
            approvable_tool("TASK").map(|t| t.kind),
            Some(ToolKind::Delegate)
        );
        // Known tools whose kind needs no approval cannot be allowed: the kind decides, not the name.
        for t in known_tools() {
            let row = policy_row(&t.name, t.kind);
            assert_eq!(approvable_tool(&t.name).is_some(), row.is_some(), "{t:?}");
        }
        assert_eq!(approvable_tool("read"), None);
        assert_eq!(approvable_tool("todowrite"), None);
        assert_eq!(approvable_tool("network"), None);
    }
}
