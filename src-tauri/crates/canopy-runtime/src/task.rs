//! The `Task` tool: its typed arguments (the schema narrowed to the profiles a session can start),
//! and the result it hands back: only the child's validated result, with evidence checked on disk,
//! laid out for the model. Launching the child is [`crate::launcher`]'s.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use canopy_protocol::{
    EvidenceTrust, ModelSlot, ResultStatus, SubagentResult, TerminalReason, ToolKind, Unsupported,
};
use canopy_tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::agent::session::{AgentCtx, AgentOutcome};
use crate::launcher::{launch, start_refusal, Launched};
use crate::profiles::RuntimeProfile;
use crate::{provenance, registry};

/// Arguments of `Task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskArgs {
    /// Short label (3-8 words) shown to the person.
    description: String,
    /// Complete, self-contained instructions for the subagent.
    prompt: String,
    /// Which subagent profile to run.
    subagent_type: String,
    /// Optional: override the profile's model slot.
    #[serde(default)]
    model: Option<TaskModel>,
}

/// The model slot a `Task` call may ask for (the protocol's [`ModelSlot`], with a schema).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum TaskModel {
    /// The light model.
    Light,
    /// The main model.
    Main,
}

impl From<TaskModel> for ModelSlot {
    fn from(m: TaskModel) -> Self {
        match m {
            TaskModel::Light => ModelSlot::Light,
            TaskModel::Main => ModelSlot::Main,
        }
    }
}

/// The `Task` tool of one session.
pub(crate) struct TaskTool {
    parent: Weak<AgentCtx>,
    /// The read-only profiles it can start, as `(name, description)`.
    available: Vec<(String, String)>,
}

impl TaskTool {
    pub fn new(parent: Weak<AgentCtx>, profiles: Arc<Vec<RuntimeProfile>>) -> Self {
        let available = profiles
            .iter()
            .filter(|p| p.read_only())
            .map(|p| (p.name().to_string(), p.description().to_string()))
            .collect();
        TaskTool { parent, available }
    }
}

#[async_trait]
impl TypedTool for TaskTool {
    type Args = TaskArgs;
    const NAME: &'static str = registry::TASK;
    const KIND: ToolKind = registry::TASK_KIND;
    const READ_ONLY: bool = registry::TASK_READ_ONLY;

    fn description(&self) -> String {
        let list: Vec<String> = self
            .available
            .iter()
            .map(|(name, description)| format!("- `{name}`: {description}"))
            .collect();
        format!(
            "Delegate a self-contained, read-only job (wide searching and reading) to a subagent that runs in a fresh context with its own budget and returns one JSON result (summary, findings, evidence as path:line, unresolved questions). The subagent cannot see this conversation: put everything it needs in `prompt`. Several Task calls in one turn run in parallel.\nAvailable subagent types:\n{}",
            list.join("\n")
        )
    }

    /// The derived schema, with `subagent_type` narrowed to the profiles this session can start.
    fn parameters(&self) -> serde_json::Value {
        let mut schema = canopy_tools::args_schema::<TaskArgs>();
        let names: Vec<&str> = self.available.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(field) = schema.pointer_mut("/properties/subagent_type") {
            field["enum"] = json!(names);
        }
        schema
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        format!(
            "Task {}: {}",
            args.get("subagent_type")
                .and_then(|v| v.as_str())
                .unwrap_or("?"),
            args.get("description")
                .and_then(|v| v.as_str())
                .unwrap_or("")
        )
    }

    async fn call(&self, args: TaskArgs, tctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let parent = self
            .parent
            .upgrade()
            .ok_or_else(|| ToolError::Failed("the parent session has ended".into()))?;
        if args.description.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "`description` must not be empty".into(),
            ));
        }
        if args.prompt.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "`prompt` must not be empty: the subagent sees nothing but this prompt".into(),
            ));
        }
        let profile = parent
            .profiles
            .iter()
            .find(|p| p.name() == args.subagent_type && p.read_only())
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = parent
                    .profiles
                    .iter()
                    .filter(|p| p.read_only())
                    .map(|p| p.name())
                    .collect();
                ToolError::InvalidArguments(format!(
                    "unknown subagent_type `{}`; available: {}",
                    args.subagent_type,
                    names.join(", ")
                ))
            })?;
        // Refused here, before anything is recorded as requested, so the model learns at once
        // that delegating more cannot help.
        if let Some((why, _)) = start_refusal(&parent) {
            return Err(ToolError::Refused(why));
        }
        let description = args.description.trim().to_string();
        let launched = launch(
            &parent,
            &tctx.call_id,
            &description,
            profile,
            args.model.map(ModelSlot::from),
            args.prompt,
            &tctx.cancel,
        )
        .await;
        match launched {
            Launched::Done {
                outcome,
                child_session_id,
                model_id,
                fallback,
                elapsed_ms,
                violation,
            } => {
                // The parent model must hear of a violation whatever became of the child: it is
                // about to act on what the child reported, or to delegate again.
                let notice = violation.map(|changed| violation_notice(&description, &changed));
                match (&outcome.result, outcome.terminal_reason, notice) {
                    (_, TerminalReason::Cancelled, Some(notice)) => Err(ToolError::Failed(
                        format!("the subagent `{description}` was cancelled.\n\n{notice}"),
                    )),
                    (_, TerminalReason::Cancelled, None) => {
                        // A cancelled child is a cancelled call (not a failure); the parent
                        // carries on.
                        Err(ToolError::Cancelled)
                    }
                    (Some(result), reason, notice) => {
                        let mut content = format_result(
                            &description,
                            &child_session_id,
                            &model_id,
                            fallback,
                            result,
                            reason,
                            &outcome,
                            elapsed_ms,
                        );
                        if let Some(notice) = notice {
                            content = format!("{notice}\n\n{content}");
                        }
                        Ok(ToolOutput::text(content))
                    }
                    (None, reason, notice) => Err(ToolError::Failed(format!(
                        "the subagent `{description}` ended without a valid result ({}): {}{}",
                        reason_str(reason),
                        outcome.error.as_deref().unwrap_or("no error message"),
                        notice.map(|n| format!("\n\n{n}")).unwrap_or_default()
                    ))),
                }
            }
            Launched::NotStarted(e) => Err(e),
        }
    }
}

/// What the parent model is told when a read-only child's run changed files.
fn violation_notice(description: &str, changed: &[String]) -> String {
    format!(
        "READ-ONLY VIOLATION: while the read-only subagent `{description}` ran, the host found these project files changed: {}. A read-only subagent must not change anything: do not trust its report, and check these files (tell the person) before relying on them.",
        changed.join(", ")
    )
}

fn reason_str(r: TerminalReason) -> String {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn format_result(
    description: &str,
    child: &str,
    model_id: &str,
    fallback: bool,
    result: &SubagentResult,
    reason: TerminalReason,
    outcome: &AgentOutcome,
    elapsed_ms: u64,
) -> String {
    let evidence: Vec<serde_json::Value> = result
        .evidence
        .iter()
        .map(|e| {
            let mut item = json!({"ref": e.raw, "state": e.state, "line_text": e.text});
            if let Some(trust) = e.trust {
                item["trust"] = json!(trust);
            }
            item
        })
        .collect();
    let structured = json!({
        "status": result.status,
        "summary": result.summary,
        "findings": result.findings,
        "evidence": evidence,
        "unresolved_questions": result.unresolved_questions,
        "verdict": result.verdict,
        "reasons": result.reasons,
    });
    format!(
        "{summary}\n\n[subagent \"{description}\" ({child}) on {model_id}{fb}: {status}, ended {reason}, {tools} tool calls, {tokens} tokens, {secs:.1}s. Evidence was checked by the host: only items with state \"valid\" point at real lines.]\n{grounding}{structured}",
        grounding = grounding_lines(result),
        summary = result.summary,
        fb = if fallback { " (light model not configured; ran on main)" } else { "" },
        status = if result.status == ResultStatus::Partial { "partial" } else { "completed" },
        reason = reason_str(reason),
        tools = outcome.tool_calls,
        tokens = outcome.usage_with_descendants.total(),
        secs = elapsed_ms as f64 / 1000.0,
    )
}

/// What the parent model must know about the result's citations: the trust line, whether the
/// result is unsupported, and one line per citation that is not grounded (`[unseen] src/x.rs:12`).
/// Empty for a result checked without provenance.
fn grounding_lines(result: &SubagentResult) -> String {
    let Some(trust) = result.trust else {
        return String::new();
    };
    let mut out = format!("Citations: {}.\n", trust.line());
    match result.unsupported {
        Some(Unsupported::NoToolCalls) => out.push_str("UNSUPPORTED: the subagent wrote this result after zero tool calls: it looked at nothing, so treat its findings as unchecked guesses.\n"),
        Some(Unsupported::NoSeenEvidence) => out.push_str("UNSUPPORTED: none of the subagent's citations is a valid line it was shown by its own tool results, so treat its findings as unchecked.\n"),
        None => {}
    }
    let weak: Vec<String> = result
        .evidence
        .iter()
        .filter(|e| e.trust.is_some_and(|t| t != EvidenceTrust::Grounded))
        .map(provenance::describe)
        .collect();
    if !weak.is_empty() {
        out.push_str("Not grounded (check before relying on them):\n");
        for line in weak.iter().take(provenance::MAX_LISTED) {
            out.push_str(line);
            out.push('\n');
        }
        if weak.len() > provenance::MAX_LISTED {
            out.push_str(&format!(
                "and {} more\n",
                weak.len() - provenance::MAX_LISTED
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_tools::Tool;

    #[test]
    fn the_parent_is_told_which_citations_are_not_grounded_and_when_a_result_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "x\n").unwrap();
        let mut result = crate::contract::validate(
            crate::profiles::ResultContract::Explore,
            r#"{"status":"completed","summary":"s","findings":["f"],"evidence":["a.rs:1","a.rs:7"]}"#,
            dir.path(),
        )
        .unwrap();
        assert_eq!(grounding_lines(&result), "", "no provenance, nothing said");
        provenance::judge(
            &mut result.evidence,
            &provenance::Tracker::new(),
            dir.path(),
        );
        provenance::mark_support(&mut result, 0);
        assert_eq!(
            grounding_lines(&result),
            "Citations: 0 of 2 citations seen and valid · 1 unseen · 1 invalid.\n\
             UNSUPPORTED: the subagent wrote this result after zero tool calls: it looked at nothing, so treat its findings as unchecked guesses.\n\
             Not grounded (check before relying on them):\n\
             [unseen] a.rs:1\n\
             [invalid: line out of range] a.rs:7\n"
        );
    }

    #[test]
    fn the_parent_gets_at_most_twenty_ungrounded_citations_then_how_many_more() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "x\n").unwrap();
        let refs: Vec<String> = (1..=60).map(|i| format!("\"a.rs:{i}\"")).collect();
        let mut result = crate::contract::validate(
            crate::profiles::ResultContract::Explore,
            &format!(
                r#"{{"status":"completed","summary":"s","evidence":[{}]}}"#,
                refs.join(",")
            ),
            dir.path(),
        )
        .unwrap();
        provenance::judge(
            &mut result.evidence,
            &provenance::Tracker::new(),
            dir.path(),
        );
        provenance::mark_support(&mut result, 3);
        let lines = grounding_lines(&result);
        assert!(
            lines.contains("[invalid: line out of range] a.rs:20\nand 40 more\n"),
            "{lines}"
        );
        assert!(!lines.contains("a.rs:21"), "{lines}");
        assert_eq!(lines.lines().count(), 1 + 1 + 20 + 1, "{lines}");
    }

    #[test]
    fn the_schema_is_derived_and_names_only_read_only_profiles() {
        let profiles = Arc::new(crate::profiles::builtin_profiles().unwrap());
        let task = TaskTool::new(Weak::new(), profiles);
        assert_eq!(task.kind(), ToolKind::Delegate);
        assert!(task.read_only());
        let spec = task.spec();
        assert_eq!(spec.name, "Task");
        let schema = &spec.parameters;
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert!(!schema.to_string().contains("$ref"), "{schema}");
        assert_eq!(
            schema["required"],
            json!(["description", "prompt", "subagent_type"])
        );
        // `main` is not read-only, so it cannot be delegated to.
        assert_eq!(
            schema["properties"]["subagent_type"]["enum"],
            json!(["explore", "verify"])
        );
        assert_eq!(
            schema["properties"]["prompt"]["description"],
            "Complete, self-contained instructions for the subagent."
        );
        let model = schema["properties"]["model"].to_string();
        assert!(model.contains("light") && model.contains("main"), "{model}");
        assert!(
            spec.description.contains("- `explore`: "),
            "{}",
            spec.description
        );
        assert!(
            !spec.description.contains("- `main`"),
            "{}",
            spec.description
        );
    }
}
