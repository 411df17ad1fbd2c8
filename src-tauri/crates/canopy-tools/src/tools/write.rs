//! Write: creates a file (and its parent directories inside the root) or replaces one the agent has
//! read, atomically.

use async_trait::async_trait;
use canopy_protocol::{SeenFile, ToolKind};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fsutil;
use crate::paths::{self, Access};
use crate::stamp;
use crate::truncate;
use crate::{args, FileStamp, ToolContext, ToolError, ToolOutput, TypedTool};

/// Arguments of Write.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// File to write, relative to the project root. Missing parent directories are created. An
    /// existing file must have been Read in this session first.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// The Write tool.
pub struct WriteTool;

#[async_trait]
impl TypedTool for WriteTool {
    type Args = WriteArgs;
    const NAME: &'static str = "Write";
    const KIND: ToolKind = ToolKind::Edit;
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Write a whole file: creates it (and missing parent directories) or \
                replaces it. To replace an existing file, Read it first in this session. Prefer \
                Edit for changing part of a file."
            .to_string()
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        let path = args::str_field(args, "path").unwrap_or("?");
        let lines = args::str_field(args, "content").map_or(0, |s| s.lines().count());
        format!("Write {path} ({lines} lines)")
    }

    async fn call(&self, args: WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || write(&args, &ctx))
            .await
            .map_err(|e| ToolError::Failed(format!("write task failed: {e}")))?
    }
}

fn write(args: &WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let resolved = paths::resolve(&ctx.root, &args.path, Access::Write)?;
    let shown = &resolved.display;
    let existed = match std::fs::metadata(&resolved.abs) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::Refused(format!("`{shown}` is a directory")));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(crate::tools::read::not_regular(shown, &meta));
        }
        Ok(meta) => {
            fsutil::refuse_too_big_to_change(shown, &meta)?;
            let current = std::fs::read(&resolved.abs)
                .map_err(|err| ToolError::Failed(format!("cannot read `{shown}`: {err}")))?;
            fsutil::check_fresh(&ctx.session, &resolved.abs, shown, &current, &meta)?;
            true
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => false,
        Err(err) => return Err(ToolError::Failed(format!("cannot stat `{shown}`: {err}"))),
    };
    if let Some(parent) = resolved.abs.parent() {
        std::fs::create_dir_all(parent).map_err(|err| {
            ToolError::Failed(format!(
                "cannot create the directories for `{shown}`: {err}"
            ))
        })?;
    }
    fsutil::write_atomic(&resolved.abs, args.content.as_bytes(), shown)?;
    let meta = std::fs::metadata(&resolved.abs)
        .map_err(|err| ToolError::Failed(format!("cannot stat `{shown}` after writing: {err}")))?;
    ctx.session
        .record(&resolved.abs, FileStamp::of(args.content.as_bytes(), &meta));
    let lines = truncate::count_lines(&args.content);
    let mut out = ToolOutput::text(format!(
        "{} `{shown}` ({lines} lines, {}).",
        if existed { "Overwrote" } else { "Created" },
        truncate::human_bytes(args.content.len() as u64)
    ));
    if ctx.record_seen {
        // The agent wrote every line, so it knows every line of the file as it now is.
        out.seen = vec![SeenFile {
            path: shown.clone(),
            lines: if lines > 0 {
                vec![[1, u32::try_from(lines).unwrap_or(u32::MAX)]]
            } else {
                Vec::new()
            },
            stamp: Some(stamp::stamp_bytes(args.content.as_bytes())),
            edit: None,
        }];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::edit::EditTool;
    use crate::tools::read::ReadTool;
    use crate::tools::test_util::{project, run};
    use serde_json::json;

    #[tokio::test]
    async fn creates_parents_and_reports() {
        let (dir, ctx) = project();
        let out = run(
            &WriteTool,
            &ctx,
            json!({"path": "a/b/c.txt", "content": "hello\nworld\n"}),
        )
        .await
        .unwrap();
        assert_eq!(out.content, "Created `a/b/c.txt` (2 lines, 12 B).");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "hello\nworld\n"
        );
        // What the agent wrote it has seen: an Edit right after needs no Read.
        run(
            &EditTool,
            &ctx,
            json!({"path": "a/b/c.txt", "old_string": "world", "new_string": "there"}),
        )
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn a_write_reports_every_line_it_wrote_as_seen() {
        let (_dir, ctx) = project();
        let out = run(
            &WriteTool,
            &ctx,
            json!({"path": "src/n.rs", "content": "one\ntwo\nthree"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.seen,
            vec![SeenFile {
                path: "src/n.rs".into(),
                lines: vec![[1, 3]],
                stamp: Some(stamp::stamp_bytes(b"one\ntwo\nthree")),
                edit: None,
            }]
        );
        let empty = run(&WriteTool, &ctx, json!({"path": "e.txt", "content": ""}))
            .await
            .unwrap();
        assert!(empty.seen[0].lines.is_empty());
        assert_eq!(empty.seen[0].stamp, Some(stamp::stamp_bytes(b"")));
    }

    #[tokio::test]
    async fn overwriting_requires_a_fresh_read() {
        let (dir, ctx) = project();
        let file = dir.path().join("keep.txt");
        std::fs::write(&file, "precious\n").unwrap();
        let err = run(
            &WriteTool,
            &ctx,
            json!({"path": "keep.txt", "content": "oops"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("has not been Read"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious\n");
        run(&ReadTool, &ctx, json!({"path": "keep.txt"}))
            .await
            .unwrap();
        let out = run(
            &WriteTool,
            &ctx,
            json!({"path": "keep.txt", "content": "new\n"}),
        )
        .await
        .unwrap();
        assert!(out.content.starts_with("Overwrote"), "{}", out.content);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
    }

    #[tokio::test]
    async fn atomic_replace_leaves_no_temp_files_and_old_handles_see_old_content() {
        use std::io::Read as _;
        let (dir, ctx) = project();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "old content\n").unwrap();
        run(&ReadTool, &ctx, json!({"path": "f.txt"}))
            .await
            .unwrap();
        // A reader that opened the file before the write keeps the old inode: proof of rename, not truncate.
        let mut before = std::fs::File::open(&file).unwrap();
        run(
            &WriteTool,
            &ctx,
            json!({"path": "f.txt", "content": "new content\n"}),
        )
        .await
        .unwrap();
        let mut old = String::new();
        before.read_to_string(&mut old).unwrap();
        assert_eq!(old, "old content\n");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new content\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["f.txt"]);
    }

    #[tokio::test]
    async fn an_existing_fifo_is_refused_and_left_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let (dir, ctx) = project();
        let fifo = dir.path().join("p");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let err = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            run(&WriteTool, &ctx, json!({"path": "p", "content": "x"})),
        )
        .await
        .expect("Write on a FIFO must not block")
        .unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("`p` is not a regular file (it is a FIFO"),
            "{err}"
        );
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[tokio::test]
    async fn git_internals_and_outside_paths_are_refused() {
        let (dir, ctx) = project();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let err = run(
            &WriteTool,
            &ctx,
            json!({"path": ".git/hooks/pre-commit", "content": "x"}),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(!dir.path().join(".git/hooks").exists());
        let err = run(
            &WriteTool,
            &ctx,
            json!({"path": "../escape.txt", "content": "x"}),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        let err = run(&WriteTool, &ctx, json!({"path": "x.txt"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("`content`"), "{err}");
    }
}
