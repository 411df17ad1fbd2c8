//! The one place that knows every tool by name: the built-in tools, `Task`, and the rows of the
//! person's permission policy (which the settings key by tool). Everything else asks a tool for its
//! [`ToolKind`] and whether it is read-only.

use std::sync::Arc;

use canopy_protocol::ToolKind;
use canopy_tools::{Tool, TypedTool, WriteTool};

use crate::gate::{Policy, PolicyAction};
use crate::task::TaskTool;

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

/// The name of the tool a session gets when its allowlist names it; it is built per session
/// (it starts children), so it is not among the runtime's tools.
pub const TASK: &str = TaskTool::NAME;

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
        name: TaskTool::NAME.to_string(),
        kind: TaskTool::KIND,
        read_only: TaskTool::READ_ONLY,
    });
    tools
}

/// The kind and read-only flag of the tool called `name`, from `tools` (a runtime's set) or `Task`.
pub fn kind_of(tools: &[Arc<dyn Tool>], name: &str) -> Option<(ToolKind, bool)> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .map(|t| (t.kind(), t.read_only()))
        .or((name == TaskTool::NAME).then_some((TaskTool::KIND, TaskTool::READ_ONLY)))
}

/// The policy row for a call that needs one: by kind, and for the two file-changing tools by which
/// of them it is (the settings give Edit and Write a row each). A kind the policy has no row for
/// (an external tool) is asked about, never silently allowed.
pub fn policy_action(policy: &Policy, tool: &str, kind: ToolKind) -> PolicyAction {
    match kind {
        ToolKind::Edit if tool == WriteTool::NAME => policy.write,
        ToolKind::Edit => policy.edit,
        ToolKind::Execute => policy.bash,
        ToolKind::Delegate => policy.task,
        ToolKind::Read | ToolKind::External => PolicyAction::Ask,
    }
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
        let policy = Policy {
            edit: PolicyAction::Allow,
            write: PolicyAction::Deny,
            bash: PolicyAction::Ask,
            task: PolicyAction::Allow,
        };
        assert_eq!(
            policy_action(&policy, "Edit", ToolKind::Edit),
            PolicyAction::Allow
        );
        assert_eq!(
            policy_action(&policy, "Write", ToolKind::Edit),
            PolicyAction::Deny
        );
        assert_eq!(
            policy_action(&policy, "Bash", ToolKind::Execute),
            PolicyAction::Ask
        );
        assert_eq!(
            policy_action(&policy, "Task", ToolKind::Delegate),
            PolicyAction::Allow
        );
        // An MCP tool that happens to be called "Edit" is still asked about.
        assert_eq!(
            policy_action(&policy, "Edit", ToolKind::External),
            PolicyAction::Ask
        );
    }
}
