//! Edit: replaces an exact string in a file the agent has read, refusing ambiguous or stale edits,
//! keeping the file's line-ending convention, and writing atomically.

use async_trait::async_trait;
use canopy_protocol::{LineEdit, SeenEdit, SeenFile, ToolKind};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fsutil;
use crate::paths::{self, Access};
use crate::stamp::stamp_bytes;
use crate::{args, FileStamp, ToolContext, ToolError, ToolOutput, TypedTool};

/// Lines of each side shown per replacement in the summary.
const SUMMARY_LINES: usize = 8;
/// Replacements shown in the summary.
const SUMMARY_HUNKS: usize = 3;
/// Line regions an Edit reports to provenance; past it (a `replace_all` of thousands of places)
/// they are joined into one, which only ever makes earlier lines count as less seen.
pub const MAX_SEEN_REGIONS: usize = 256;

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

    let mut out = ToolOutput::text(summary(
        shown,
        &text,
        &positions,
        &args.old_string,
        &args.new_string,
    ));
    if ctx.record_seen {
        let applied = if args.replace_all {
            &positions[..]
        } else {
            &positions[..1]
        };
        out.seen = vec![seen_after_edit(
            shown,
            &text,
            &updated,
            applied,
            old.len(),
            new.len(),
        )];
    }
    Ok(out)
}

/// What an edit leaves its agent knowing of the file: the lines it wrote, the file's new stamp,
/// and how it moved the lines, so what the agent had seen of the content it edited stays seen.
fn seen_after_edit(
    shown: &str,
    before: &str,
    after: &str,
    positions: &[usize],
    old_len: usize,
    new_len: usize,
) -> SeenFile {
    let mut regions = line_regions(before, after, positions, old_len, new_len);
    let wrote =
        |r: &LineEdit| (r.new_count > 0).then(|| [r.new_start, r.new_start + (r.new_count - 1)]);
    let lines: Vec<[u32; 2]> = regions
        .iter()
        .filter_map(wrote)
        .take(MAX_SEEN_REGIONS)
        .collect();
    if regions.len() > MAX_SEEN_REGIONS {
        if let (Some(first), Some(last)) = (regions.first().copied(), regions.last().copied()) {
            let old_end = last.old_start + last.old_count;
            let new_end = last.new_start + last.new_count;
            regions = vec![LineEdit {
                old_start: first.old_start,
                old_count: old_end - first.old_start,
                new_start: first.new_start,
                new_count: new_end - first.new_start,
            }];
        }
    }
    SeenFile {
        path: shown.to_string(),
        lines,
        stamp: Some(stamp_bytes(after.as_bytes())),
        edit: Some(SeenEdit {
            base: stamp_bytes(before.as_bytes()),
            regions,
        }),
    }
}

/// The line regions that replacing `old_len` bytes by `new_len` bytes at each of `positions`
/// (ascending, non-overlapping byte offsets in `before`) changed, `after` being the result.
/// Lines wholly before a replacement are untouched; the lines after it are untouched from the
/// first line that starts where the replacement ends in both texts, or else from the line after
/// the one the replacement ends in (that line was joined or split). Replacements that share a
/// line are joined into one region.
pub(crate) fn line_regions(
    before: &str,
    after: &str,
    positions: &[usize],
    old_len: usize,
    new_len: usize,
) -> Vec<LineEdit> {
    let breaks = |t: &str| -> Vec<usize> {
        t.bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i)
            .collect()
    };
    let (old_breaks, new_breaks) = (breaks(before), breaks(after));
    // Complete lines in `text[..at]`.
    let lines_before = |br: &[usize], at: usize| br.partition_point(|&i| i < at);
    let starts_line = |t: &str, at: usize| at == 0 || t.as_bytes().get(at - 1) == Some(&b'\n');
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let mut out: Vec<LineEdit> = Vec::new();
    for (i, &p) in positions.iter().enumerate() {
        // Where this replacement sits in `after`: every earlier one changed the length.
        let Some(q) = (p + i * new_len).checked_sub(i * old_len) else {
            continue;
        };
        let (p_end, q_end) = (p + old_len, q + new_len);
        let clean_end = starts_line(before, p_end) && starts_line(after, q_end);
        let old_start = lines_before(&old_breaks, p) + 1;
        let new_start = lines_before(&new_breaks, q) + 1;
        let old_next = lines_before(&old_breaks, p_end) + if clean_end { 1 } else { 2 };
        let new_next = lines_before(&new_breaks, q_end) + if clean_end { 1 } else { 2 };
        let region = LineEdit {
            old_start: to_u32(old_start),
            old_count: to_u32(old_next.saturating_sub(old_start)),
            new_start: to_u32(new_start),
            new_count: to_u32(new_next.saturating_sub(new_start)),
        };
        match out.last_mut() {
            Some(prev) if region.old_start < prev.old_start + prev.old_count => {
                let old_end =
                    (region.old_start + region.old_count).max(prev.old_start + prev.old_count);
                let new_end =
                    (region.new_start + region.new_count).max(prev.new_start + prev.new_count);
                prev.old_count = old_end - prev.old_start;
                prev.new_count = new_end - prev.new_start;
            }
            _ => out.push(region),
        }
    }
    out
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

    fn regions(before: &str, old: &str, new: &str, all: bool) -> Vec<[u32; 4]> {
        let mut positions: Vec<usize> = before.match_indices(old).map(|(i, _)| i).collect();
        let after = if all {
            before.replace(old, new)
        } else {
            positions.truncate(1);
            before.replacen(old, new, 1)
        };
        line_regions(before, &after, &positions, old.len(), new.len())
            .iter()
            .map(|r| [r.old_start, r.old_count, r.new_start, r.new_count])
            .collect()
    }

    #[test]
    fn line_regions_say_which_lines_were_replaced_by_which() {
        let f = "a\nb\nc\nd\n";
        // Within one line: one line for one line.
        assert_eq!(regions(f, "b", "B", false), [[2, 1, 2, 1]]);
        // A line replaced by three.
        assert_eq!(regions(f, "b\n", "x\ny\nz\n", false), [[2, 1, 2, 3]]);
        assert_eq!(regions(f, "b", "x\ny\nz", false), [[2, 1, 2, 3]]);
        // Two lines joined into one, and a whole line removed.
        assert_eq!(regions(f, "b\nc", "bc", false), [[2, 2, 2, 1]]);
        assert_eq!(regions(f, "b\n", "", false), [[2, 1, 2, 0]]);
        // A removal that leaves the next line joined to the one before it.
        assert_eq!(regions(f, "\nb\n", "\n", false), [[1, 2, 1, 1]]);
        assert_eq!(regions(f, "b\n", "x", false), [[2, 2, 2, 1]]);
        // The first and the last line, the last without a line break.
        assert_eq!(regions("a\nb", "a\n", "", false), [[1, 1, 1, 0]]);
        assert_eq!(regions("a\nb", "b", "b\nc", false), [[2, 1, 2, 2]]);
        // replace_all: one region per place, each in its own file's numbering.
        assert_eq!(
            regions("x\n.\nx\n.\nx\n", "x\n", "y\ny\n", true),
            [[1, 1, 1, 2], [3, 1, 4, 2], [5, 1, 7, 2]]
        );
        // Places that share a line are one region.
        assert_eq!(regions("x = x;\nz\n", "x", "y\n", true), [[1, 1, 1, 3]]);
    }

    #[tokio::test]
    async fn an_edit_reports_what_it_wrote_and_how_it_moved_the_lines() {
        let (dir, ctx) = project();
        let file = dir.path().join("a.rs");
        let before = "fn a() {}\nfn b() {}\nfn c() {}\nfn b2() {}\n";
        std::fs::write(&file, before).unwrap();
        read(&ctx, "a.rs").await;
        let out = run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "fn b", "new_string": "// b\nfn b", "replace_all": true}),
        )
        .await
        .unwrap();
        let after = std::fs::read(&file).unwrap();
        assert_eq!(out.seen.len(), 1, "{:?}", out.seen);
        let seen = &out.seen[0];
        assert_eq!(seen.path, "a.rs");
        assert_eq!(seen.lines, vec![[2, 3], [5, 6]], "the lines it wrote");
        assert_eq!(seen.stamp, Some(crate::stamp::stamp_bytes(&after)));
        let edit = seen.edit.as_ref().unwrap();
        assert_eq!(edit.base, crate::stamp::stamp_bytes(before.as_bytes()));
        let spans: Vec<_> = edit
            .regions
            .iter()
            .map(|r| [r.old_start, r.old_count, r.new_start, r.new_count])
            .collect();
        assert_eq!(spans, [[2, 1, 2, 2], [4, 1, 5, 2]]);
    }

    #[tokio::test]
    async fn a_replace_all_of_many_places_reports_one_joined_region() {
        let (dir, ctx) = project();
        let file = dir.path().join("many.txt");
        let n = MAX_SEEN_REGIONS + 44;
        std::fs::write(&file, "x\n.\n".repeat(n)).unwrap();
        read(&ctx, "many.txt").await;
        let out = run(
            &EditTool,
            &ctx,
            json!({"path": "many.txt", "old_string": "x\n", "new_string": "y\ny\n", "replace_all": true}),
        )
        .await
        .unwrap();
        let seen = &out.seen[0];
        assert_eq!(seen.lines.len(), MAX_SEEN_REGIONS);
        let regions = &seen.edit.as_ref().unwrap().regions;
        let last_old = 2 * n as u32 - 1;
        assert_eq!(regions.len(), 1);
        assert_eq!(
            [
                regions[0].old_start,
                regions[0].old_count,
                regions[0].new_count
            ],
            [1, last_old, last_old + n as u32]
        );
    }

    #[tokio::test]
    async fn nothing_is_reported_seen_when_provenance_is_off() {
        let (dir, mut ctx) = project();
        ctx.record_seen = false;
        std::fs::write(dir.path().join("a.rs"), "let x = 1;\n").unwrap();
        read(&ctx, "a.rs").await;
        let out = run(
            &EditTool,
            &ctx,
            json!({"path": "a.rs", "old_string": "1", "new_string": "2"}),
        )
        .await
        .unwrap();
        assert!(out.seen.is_empty());
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
