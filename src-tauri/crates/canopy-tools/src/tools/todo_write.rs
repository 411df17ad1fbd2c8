//! TodoWrite: replaces the agent's plan. It changes no file; the host publishes the new list.

use async_trait::async_trait;
use canopy_protocol::{TodoItem, TodoStatus, ToolKind};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{ToolContext, ToolError, ToolOutput, TypedTool};

/// State of one plan item.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoArgStatus {
    /// Not started.
    Pending,
    /// Being worked on now.
    InProgress,
    /// Done.
    Completed,
}

/// One plan item.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoArg {
    /// What to do, as a short imperative sentence.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: TodoArgStatus,
}

/// Arguments of TodoWrite.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The complete plan; it replaces the previous one.
    pub todos: Vec<TodoArg>,
}

/// The TodoWrite tool.
pub struct TodoWriteTool;

#[async_trait]
impl TypedTool for TodoWriteTool {
    type Args = TodoWriteArgs;
    const NAME: &'static str = "TodoWrite";
    const KIND: ToolKind = ToolKind::Read;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Replace your task plan with this list. Use it for multi-step work: keep \
                one item `in_progress`, mark items `completed` as soon as they are done. Send the \
                whole list every time."
            .to_string()
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        let n = args
            .get("todos")
            .and_then(|t| t.as_array())
            .map_or(0, Vec::len);
        format!("Update plan ({n} items)")
    }

    async fn call(&self, args: TodoWriteArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(i) = args.todos.iter().position(|t| t.content.trim().is_empty()) {
            return Err(ToolError::InvalidArguments(format!(
                "field `todos[{i}].content`: must not be empty"
            )));
        }
        let todos: Vec<TodoItem> = args
            .todos
            .into_iter()
            .map(|t| TodoItem {
                content: t.content.trim().to_string(),
                status: match t.status {
                    TodoArgStatus::Pending => TodoStatus::Pending,
                    TodoArgStatus::InProgress => TodoStatus::InProgress,
                    TodoArgStatus::Completed => TodoStatus::Completed,
                },
            })
            .collect();
        let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
        let content = format!(
            "Plan updated: {} item{} ({} completed, {} in progress, {} pending).",
            todos.len(),
            if todos.len() == 1 { "" } else { "s" },
            count(TodoStatus::Completed),
            count(TodoStatus::InProgress),
            count(TodoStatus::Pending)
        );
        Ok(ToolOutput {
            content,
            todos: Some(todos),
            seen: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{project, run};
    use serde_json::json;

    #[tokio::test]
    async fn returns_the_plan_and_a_confirmation() {
        let (_dir, ctx) = project();
        let out = run(
            &TodoWriteTool,
            &ctx,
            json!({"todos": [
                {"content": "Read the config loader", "status": "completed"},
                {"content": "Add the env override", "status": "in_progress"},
                {"content": "Write tests", "status": "pending"}
            ]}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "Plan updated: 3 items (1 completed, 1 in progress, 1 pending)."
        );
        let todos = out.todos.unwrap();
        assert_eq!(todos.len(), 3);
        assert_eq!(todos[1].content, "Add the env override");
        assert_eq!(todos[1].status, TodoStatus::InProgress);
    }

    #[tokio::test]
    async fn bad_items_name_the_field() {
        let (_dir, ctx) = project();
        let err = run(
            &TodoWriteTool,
            &ctx,
            json!({"todos": [{"content": "x", "status": "done"}]}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("todos[0].status"), "{err}");
        let err = run(
            &TodoWriteTool,
            &ctx,
            json!({"todos": [{"content": " ", "status": "pending"}]}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("todos[0].content"), "{err}");
    }
}
