//! Edit: replaces an exact string in a file the agent has read, refusing ambiguous or stale edits,
//! keeping the file's line-ending convention, and writing atomically.

use async_trait::async_trait;
use canopy_protocol::ToolKind;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fsutil;
use crate::paths::{self, Access};
use crate::{args, FileStamp, ToolContext, ToolError, ToolOutput, TypedTool};

/// Lines of each side shown per replacement in the summary.
const SUMMARY_LINES: usize = 8;
/// Replacements shown in the summary.
const SUMMARY_HUNKS: usize = 3;

/// Arguments of Edit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// File to change, relative to the project root. It must have been Read in this session.
    pub path: String,
    /// Exact text to replace (whitespace and indentation included). Must occur exactly once unless
    /// `replace_all` is true.
    pub old_string: String,
    /// Replacement text.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    #[serde(default)]
    pub replace_all: bool,
}

/// The Edit tool.
pub struct EditTool;

#[async_trait]
impl TypedTool for EditTool {
    type Args = EditArgs;
    const NAME: &'static str = "Edit";
    const KIND: ToolKind = ToolKind::Edit;
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Replace exact text in a file. Read the file first in this session. \
            `old_string` must match exactly (indentation included) and occur exactly once; add \
            surrounding lines to make it unique, or set `replace_all` to change every \
            occurrence. Line endings follow the file (CRLF files stay CRLF)."
            .to_string()
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        let path = args::str_field(args, "path").unwrap_or("?");
        let old = args::str_field(args, "old_string").map_or(0, |s| s.lines().count());
        let new = args::str_field(args, "new_string").map_or(0, |s| s.lines().count());
        let all = if args.get("replace_all").and_then(|v| v.as_bool()) == Some(true) {
            ", all occurrences"
        } else {
            ""
        };
        format!("Edit {path} (-{old} +{new} lines{all})")
    }

    async fn call(&self, args: EditArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || edit(&args, &ctx))
            .await
            .map_err(|e| ToolError::Failed(format!("edit task failed: {e}")))?
    }
}

fn edit(args: &EditArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::InvalidArguments(
            "field `old_string`: must not be empty (use Write to create or replace a whole file)"
                .to_string(),
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::InvalidArguments(
            "field `new_string`: is identical to `old_string`; nothing would change".to_string(),
        ));
    }
    let resolved = paths::resolve(&ctx.root, &args.path, Access::Write)?;
    let shown = &resolved.display;
    let meta = std::fs::metadata(&resolved.abs).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::NotFound(format!("`{shown}` does not exist (use Write to create it)"))
        }
        _ => ToolError::Failed(format!("cannot read `{shown}`: {err}")),
    })?;
    if !meta.is_file() {
        return Err(crate::tools::read::not_regular(shown, &meta));
    }
    fsutil::refuse_too_big_to_change(shown, &meta)?;
    let bytes = std::fs::read(&resolved.abs)
        .map_err(|err| ToolError::Failed(format!("cannot read `{shown}`: {err}")))?;
    fsutil::check_fresh(&ctx.session, &resolved.abs, shown, &bytes, &meta)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::Refused(format!(
            "`{shown}` is not valid UTF-8; Edit would corrupt it (use Bash with a suitable tool)"
        ))
    })?;

    let crlf = uses_crlf(&text);
    let old = to_line_endings(&args.old_string, crlf);
    let new = to_line_endings(&args.new_string, crlf);
    let positions: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    // Uniqueness counts overlapping matches too: `aa` in `aaa` is two places an edit could mean.
    let overlapping = if args.replace_all {
        positions.clone()
    } else {
        overlapping_matches(&text, &old)
    };
    match overlapping.len() {
        0 => {
            return Err(ToolError::Refused(format!(
                "`old_string` not found in `{shown}`; it must match exactly, including whitespace and indentation (Read the file again to copy it)"
            )))
        }
        1 => {}
        n if !args.replace_all => {
            let lines: Vec<String> = overlapping
                .iter()
                .take(10)
                .map(|&p| line_of(&text, p).to_string())
                .collect();
            return Err(ToolError::Refused(format!(
                "`old_string` found {n} times in `{shown}` (lines {}); add surrounding context to make it unique, or set replace_all",
                lines.join(", ")
            )));
        }
        _ => {}
    }
    let updated = if args.replace_all {
        text.replace(old.as_str(), new.as_str())
    } else {
        text.replacen(old.as_str(), new.as_str(), 1)
    };
    fsutil::write_atomic(&resolved.abs, updated.as_bytes(), shown)?;
    let new_meta = std::fs::metadata(&resolved.abs)
        .map_err(|err| ToolError::Failed(format!("cannot stat `{shown}` after writing: {err}")))?;
    ctx.session
        .record(&resolved.abs, FileStamp::of(updated.as_bytes(), &new_meta));

    Ok(ToolOutput::text(summary(
        shown,
        &text,
        &positions,
        &args.old_string,
        &args.new_string,
    )))
}

/// Start of every match of `needle`, overlapping ones included.
fn overlapping_matches(text: &str, needle: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let at = from + i;
        out.push(at);
        // Step one character, not the needle's length, so a match inside the last one is found.
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// A file counts as CRLF when most of its line breaks are CRLF.
fn uses_crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= lf
}

fn to_line_endings(s: &str, crlf: bool) -> String {
    let lf = s.replace("\r\n", "\n");
    if crlf {
        lf.replace('\n', "\r\n")
    } else {
        lf
    }
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

fn summary(shown: &str, before: &str, positions: &[usize], old: &str, new: &str) -> String {
    let n = positions.len();
    let mut out = format!(
        "Edited `{shown}`: replaced {n} occurrence{}.\n",
        if n == 1 { "" } else { "s" }
    );
    // Lines shift as earlier replacements change the line count; track the offset for honest numbers.
    let delta = new.lines().count() as i64 - old.lines().count() as i64;
    for (i, &pos) in positions.iter().take(SUMMARY_HUNKS).enumerate() {
        let line = line_of(before, pos) as i64 + delta * i as i64;
        out.push_str(&format!("@@ line {line} @@\n"));
        push_side(&mut out, '-', old);
        push_side(&mut out, '+', new);
    }
    if n > SUMMARY_HUNKS {
        out.push_str(&format!("… and {} more\n", n - SUMMARY_HUNKS));
    }
    out
}

fn push_side(out: &mut String, sign: char, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(SUMMARY_LINES) {
        out.push(sign);
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    if lines.len() > SUMMARY_LINES {
        out.push_str(&format!(
            "{sign}… ({} more lines)\n",
            lines.len() - SUMMARY_LINES
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::read::ReadTool;
    use crate::tools::test_util::{project, run};
    use serde_json::json;

    async fn read(ctx: &ToolContext, path: &str) {
        run(&ReadTool, ctx, json!({"path": path})).await.unwrap();
    }

    #[tokio::test]
    async fn refuses_a_file_not_read_in_this_session() {
        let (dir, ctx) = project();
        std::fs::write(dir.path().join("a.rs"), "let x = 1;\n").unwrap();
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "1", "new_string": "2"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("has not been Read"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
            "let x = 1;\n"
        );
    }

    #[tokio::test]
    async fn refuses_a_file_changed_since_it_was_read() {
        let (dir, ctx) = project();
        let file = dir.path().join("a.rs");
        std::fs::write(&file, "let x = 1;\n").unwrap();
        read(&ctx, "a.rs").await;
        std::fs::write(&file, "let x = 10;\n").unwrap();
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "let x", "new_string": "let y"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("changed since it was last read (size 11 → 12 bytes)"),
            "{err}"
        );
        // Same size, different bytes: caught by the hash.
        read(&ctx, "a.rs").await;
        std::fs::write(&file, "let x = 20;\n").unwrap();
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "let x", "new_string": "let y"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string().contains("changed since it was last read"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "let x = 20;\n");
    }

    #[tokio::test]
    async fn overlapping_matches_make_an_edit_ambiguous() {
        let (dir, ctx) = project();
        let file = dir.path().join("s.txt");
        std::fs::write(&file, "x = \"aaa\";\n").unwrap();
        read(&ctx, "s.txt").await;
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": "s.txt", "old_string": "aa", "new_string": "b"}),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("`old_string` found 2 times in `s.txt` (lines 1, 1)"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = \"aaa\";\n");
        // Enough context makes it unique again.
        run(
            &EditTool,
            &ctx,
            json!({"path": "s.txt", "old_string": "\"aa", "new_string": "\"b"}),
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = \"ba\";\n");
    }

    #[tokio::test]
    async fn single_replacement_with_summary_and_followup_edit() {
        let (dir, ctx) = project();
        let file = dir.path().join("a.rs");
        std::fs::write(&file, "fn a() {}\nfn b() {}\nfn c() {}\n").unwrap();
        read(&ctx, "a.rs").await;
        let out = run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "fn b() {}", "new_string": "fn b() {\n    todo!()\n}"}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "fn a() {}\nfn b() {\n    todo!()\n}\nfn c() {}\n"
        );
        assert!(
            out.content.starts_with(
                "Edited `a.rs`: replaced 1 occurrence.\n@@ line 2 @@\n-fn b() {}\n+fn b() {\n"
            ),
            "{}",
            out.content
        );
        // The session now knows the new content, so a second edit needs no re-read.
        run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "fn c", "new_string": "fn d"}),
        )
        .await
        .unwrap();
        assert!(std::fs::read_to_string(&file)
            .unwrap()
            .contains("fn d() {}"));
    }

    #[tokio::test]
    async fn ambiguous_and_missing_strings_are_refused() {
        let (dir, ctx) = project();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x = 1\ny = 2\nx = 1\n").unwrap();
        read(&ctx, "a.txt").await;
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 3"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("found 2 times"), "{err}");
        assert!(err.to_string().contains("lines 1, 3"), "{err}");
        assert!(err.to_string().contains("replace_all"), "{err}");
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": "a.txt", "old_string": "z = 1", "new_string": "x = 3"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("not found"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x = 1\ny = 2\nx = 1\n"
        );
    }

    #[tokio::test]
    async fn replace_all_changes_every_occurrence() {
        let (dir, ctx) = project();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x = 1\ny = 2\nx = 1\n").unwrap();
        read(&ctx, "a.txt").await;
        let out = run(
            &EditTool,
            &ctx,
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 3", "replace_all": true}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x = 3\ny = 2\nx = 3\n"
        );
        assert!(
            out.content.contains("replaced 2 occurrences"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn crlf_files_stay_crlf_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, ctx) = project();
        let file = dir.path().join("win.txt");
        std::fs::write(&file, "one\r\ntwo\r\nthree\r\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        read(&ctx, "win.txt").await;
        run(
            &EditTool,
            &ctx,
            json!({"path": "win.txt", "old_string": "one\ntwo", "new_string": "one\n1.5\ntwo"}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read(&file).unwrap(),
            b"one\r\n1.5\r\ntwo\r\nthree\r\n"
        );
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "temp files left behind: {leftovers:?}");
    }

    #[tokio::test]
    async fn edits_inside_git_are_refused() {
        let (dir, ctx) = project();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
        read(&ctx, ".git/config").await;
        let err = run(
            &EditTool,
            &ctx,
            json!({"path": ".git/config", "old_string": "core", "new_string": "x"}),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
    }
}
