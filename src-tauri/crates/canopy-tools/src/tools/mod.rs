//! One file per tool.

pub(crate) mod bash;
pub(crate) mod edit;
pub(crate) mod glob;
pub(crate) mod grep;
pub(crate) mod read;
pub(crate) mod todo_write;
pub(crate) mod write;

#[cfg(test)]
pub(crate) mod test_util {
    //! Helpers for the tools' tests: a real temp project and a context on it.
    use crate::{ToolContext, ToolError, ToolOutput};

    pub(crate) fn project() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, ToolContext::new(root))
    }

    pub(crate) async fn run(
        tool: &dyn crate::Tool,
        ctx: &ToolContext,
        args: serde_json::Value,
    ) -> Result<ToolOutput, ToolError> {
        tool.run(args, ctx).await
    }
}
