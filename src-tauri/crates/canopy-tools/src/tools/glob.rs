//! Glob: lists files whose project-relative path matches a glob (`globset`), over the same
//! gitignore-aware parallel walk as Grep, newest first so recently touched files come up top.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use async_trait::async_trait;
use canopy_protocol::{SeenFile, ToolKind};
use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::paths::{self, Access};
use crate::secrets::SecretFiles;
use crate::walk;
use crate::{args, ToolContext, ToolError, ToolOutput, TypedTool};

/// Paths shown when no `max_results` is given.
pub const DEFAULT_MAX_RESULTS: u64 = 200;
/// The longest pattern accepted. Real globs are tens of bytes; a huge one makes globset's regex
/// blow its size limit, which it answers with a panic.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// Listing size cap, whatever the number of files (the host's allowance may lower it).
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Output room kept for the note on what was left out.
const NOTE_ROOM_BYTES: usize = 100;

/// Arguments of Glob.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob matched against paths relative to `path`: `**/*.rs`, `src/**/*.ts`, `*.toml`. A pattern
    /// without `/` matches file names at any depth; `*` never crosses `/`, `**` does.
    pub pattern: String,
    /// Directory to search, relative to the project root (default: the whole project).
    pub path: Option<String>,
    /// At most this many paths are shown (default 200).
    #[schemars(range(min = 1))]
    pub max_results: Option<u64>,
}

/// The Glob tool.
pub struct GlobTool;

#[async_trait]
impl TypedTool for GlobTool {
    type Args = GlobArgs;
    const NAME: &'static str = "Glob";
    const KIND: ToolKind = ToolKind::Read;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Find files by glob pattern, e.g. `**/*.rs` or `src/**/*.ts`; a pattern \
            without `/` (like `*.toml`) matches file names at any depth. Honours .gitignore and \
            skips hidden files. Returns project-relative paths, newest first, capped at \
            `max_results` (default 200)."
            .to_string()
    }

    fn narrow_seen(&self, seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
        crate::seen::narrow_listed(seen, kept)
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        let pattern = args::str_field(args, "pattern").unwrap_or("?");
        match args::str_field(args, "path") {
            Some(path) => format!("Glob `{pattern}` in {path}"),
            None => format!("Glob `{pattern}`"),
        }
    }

    async fn call(&self, args: GlobArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let secrets = Arc::clone(&ctx.secrets);
        let cap = ctx.output_cap(MAX_OUTPUT_BYTES);
        let record_seen = ctx.record_seen;
        walk::run_cancellable(ctx, "glob", move |root, cancel| {
            glob(root, &args, &secrets, cap, record_seen, cancel)
        })
        .await
    }
}

fn glob(
    root: &Path,
    args: &GlobArgs,
    secrets: &Arc<SecretFiles>,
    cap: usize,
    record_seen: bool,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let max_results = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if max_results == 0 {
        return Err(ToolError::InvalidArguments(
            "field `max_results`: must be at least 1".to_string(),
        ));
    }
    if args.pattern.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "field `pattern`: must not be empty".to_string(),
        ));
    }
    if args.pattern.len() > MAX_PATTERN_BYTES {
        return Err(ToolError::InvalidArguments(format!(
            "field `pattern`: {} bytes is too long; a glob may be at most {MAX_PATTERN_BYTES} bytes",
            args.pattern.len()
        )));
    }
    let root = paths::canonical_root(root)?;
    let target = paths::resolve(&root, args.path.as_deref().unwrap_or("."), Access::Read)?;
    if !target.abs.is_dir() {
        return Err(ToolError::InvalidArguments(format!(
            "field `path`: `{}` is a file, not a directory",
            target.display
        )));
    }
    let pattern = args.pattern.strip_prefix("./").unwrap_or(&args.pattern);
    let name_only = !pattern.contains('/');
    let matcher: GlobMatcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::InvalidArguments(format!("field `pattern`: {e}")))?
        .compile_matcher();

    let found: Mutex<Vec<(SystemTime, String)>> = Mutex::new(Vec::new());
    let start = target.abs.as_path();
    walk::visit_files(
        &walk::walk_builder(start, None, &root, secrets)?,
        cancel,
        || {
            let matcher = &matcher;
            let found = &found;
            let root = &root;
            let mut flush = FlushOnDrop {
                local: Vec::new(),
                into: found,
            };
            move |entry: &ignore::DirEntry| {
                let path = entry.path();
                let is_match = if name_only {
                    path.file_name().is_some_and(|n| matcher.is_match(n))
                } else {
                    path.strip_prefix(start)
                        .is_ok_and(|rel| matcher.is_match(rel))
                };
                if is_match {
                    // Only matches pay for a stat; the walk itself never needs one.
                    let mtime = entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    let rel = path.strip_prefix(root).unwrap_or(path);
                    flush.local.push((mtime, paths::display_rel(rel)));
                }
            }
        },
    );
    let mut found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    if found.is_empty() {
        return Ok(ToolOutput::text(format!(
            "No files match `{}` in `{}`.",
            args.pattern, target.display
        )));
    }
    // Newest first; ties broken by path so the order is stable.
    let by_recency = |a: &(SystemTime, String), b: &(SystemTime, String)| {
        b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1))
    };
    let max = usize::try_from(max_results).unwrap_or(usize::MAX);
    let total = found.len();
    if total > max {
        // Only the shown prefix needs a full sort.
        found.select_nth_unstable_by(max - 1, by_recency);
        found.truncate(max);
    }
    found.sort_unstable_by(by_recency);
    let mut out = String::with_capacity(found.len() * 32);
    // Room is kept for the note on what was left out, so the whole listing fits `cap`.
    let body_cap = cap.saturating_sub(NOTE_ROOM_BYTES);
    let mut listed = 0usize;
    let mut seen = Vec::new();
    for (_, path) in &found {
        if out.len() + path.len() + 1 > body_cap {
            break;
        }
        out.push_str(path);
        out.push('\n');
        listed += 1;
        seen.push(SeenFile {
            path: path.clone(),
            lines: Vec::new(),
            stamp: None,
            edit: None,
        });
    }
    if total > listed {
        let more = total - listed;
        out.push_str(&format!(
            "… [truncated: {more} more file{} not shown]\n",
            if more == 1 { "" } else { "s" }
        ));
    }
    let mut result = ToolOutput::text(out);
    if record_seen {
        result.seen = seen;
    }
    Ok(result)
}

/// Collects a walker thread's matches locally and hands them over once, when the thread is done.
struct FlushOnDrop<'a> {
    local: Vec<(SystemTime, String)>,
    into: &'a Mutex<Vec<(SystemTime, String)>>,
}

impl Drop for FlushOnDrop<'_> {
    fn drop(&mut self) {
        self.into
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append(&mut self.local);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{project, run};
    use serde_json::json;
    use std::time::Duration;

    #[tokio::test]
    async fn a_listing_fits_the_allowance_and_says_how_many_were_left_out() {
        let (dir, mut ctx) = project();
        for i in 0..500 {
            std::fs::write(dir.path().join(format!("file_{i:04}.rs")), "").unwrap();
        }
        ctx.output_allowance = Some(1_000);
        let out = run(
            &GlobTool,
            &ctx,
            json!({"pattern": "*.rs", "max_results": 10000}),
        )
        .await
        .unwrap()
        .content;
        assert!(out.len() <= 1_000, "{} bytes", out.len());
        let listed = out.lines().filter(|l| l.ends_with(".rs")).count();
        assert!(listed > 20, "{listed}");
        assert!(
            out.ends_with(&format!(
                "… [truncated: {} more files not shown]\n",
                500 - listed
            )),
            "{out}"
        );
    }

    fn touch(path: &Path, secs_ago: u64) {
        let when = SystemTime::now() - Duration::from_secs(secs_ago);
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(when).unwrap();
    }

    fn tree() -> (tempfile::TempDir, ToolContext) {
        let (dir, ctx) = project();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        for (path, age) in [
            ("src/old.rs", 300),
            ("src/deep/newest.rs", 10),
            ("src/mid.rs", 100),
            ("top.rs", 200),
            ("target/gen.rs", 1),
            (".hidden/h.rs", 1),
            ("src/readme.md", 1),
        ] {
            std::fs::write(root.join(path), "x\n").unwrap();
            touch(&root.join(path), age);
        }
        (dir, ctx)
    }

    #[tokio::test]
    async fn recursive_glob_is_newest_first_and_honours_ignores() {
        let (_dir, ctx) = tree();
        let out = run(&GlobTool, &ctx, json!({"pattern": "**/*.rs"}))
            .await
            .unwrap();
        assert_eq!(
            out.content,
            "src/deep/newest.rs\nsrc/mid.rs\ntop.rs\nsrc/old.rs\n"
        );
    }

    #[tokio::test]
    async fn a_listing_reports_exactly_the_files_it_shows() {
        let (_dir, ctx) = tree();
        let out = run(
            &GlobTool,
            &ctx,
            json!({"pattern": "**/*.rs", "max_results": 2}),
        )
        .await
        .unwrap();
        let paths: Vec<&str> = out.seen.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["src/deep/newest.rs", "src/mid.rs"],
            "{}",
            out.content
        );
        assert!(out
            .seen
            .iter()
            .all(|f| f.lines.is_empty() && f.stamp.is_none()));
    }

    #[tokio::test]
    async fn star_does_not_cross_directories_but_bare_names_match_anywhere() {
        let (_dir, ctx) = tree();
        let out = run(&GlobTool, &ctx, json!({"pattern": "src/*.rs"}))
            .await
            .unwrap();
        assert_eq!(out.content, "src/mid.rs\nsrc/old.rs\n");
        let out = run(&GlobTool, &ctx, json!({"pattern": "newest.rs"}))
            .await
            .unwrap();
        assert_eq!(out.content, "src/deep/newest.rs\n");
        let out = run(
            &GlobTool,
            &ctx,
            json!({"pattern": "*.rs", "path": "src/deep"}),
        )
        .await
        .unwrap();
        assert_eq!(out.content, "src/deep/newest.rs\n");
    }

    #[tokio::test]
    async fn cap_keeps_the_newest_and_counts_the_rest() {
        let (_dir, ctx) = tree();
        let out = run(
            &GlobTool,
            &ctx,
            json!({"pattern": "**/*.rs", "max_results": 2}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "src/deep/newest.rs\nsrc/mid.rs\n… [truncated: 2 more files not shown]\n"
        );
    }

    #[tokio::test]
    async fn errors_are_specific() {
        let (_dir, ctx) = tree();
        let err = run(&GlobTool, &ctx, json!({"pattern": "a[b"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("field `pattern`"), "{err}");
        let err = run(&GlobTool, &ctx, json!({"pattern": "*", "path": "../"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        let err = run(&GlobTool, &ctx, json!({"pattern": "*", "path": "top.rs"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is a file"), "{err}");
        let out = run(&GlobTool, &ctx, json!({"pattern": "*.zig"}))
            .await
            .unwrap();
        assert_eq!(out.content, "No files match `*.zig` in `.`.");
    }

    #[tokio::test]
    async fn a_huge_pattern_is_refused_with_its_size_not_a_panic() {
        let (_dir, ctx) = tree();
        // 256 KiB, as a hostile model sent it: globset's compile panicked on it.
        let pattern = "{a,b}[a-z]*?".repeat(256 * 1024 / 12);
        let err = run(&GlobTool, &ctx, json!({ "pattern": pattern }))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(_)), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("field `pattern`: {} bytes", pattern.len()))
                && err
                    .to_string()
                    .contains(&format!("at most {MAX_PATTERN_BYTES}")),
            "{err}"
        );
        // The longest accepted pattern still runs.
        let longest = format!("{}*.rs", "?".repeat(MAX_PATTERN_BYTES - 4));
        assert!(run(&GlobTool, &ctx, json!({ "pattern": longest }))
            .await
            .is_ok());
    }
}
