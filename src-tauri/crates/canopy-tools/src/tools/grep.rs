//! Grep: searches file contents with ripgrep's own engine (`grep-regex` + `grep-searcher`) over a
//! parallel `ignore` walk, so `.gitignore`/`.ignore` rules, hidden-file skipping and binary-file
//! skipping behave the way developers expect from `rg`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use canopy_protocol::{SeenFile, ToolKind};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::paths::{self, Access};
use crate::secrets::SecretFiles;
use crate::walk;
use crate::{args, ToolContext, ToolError, ToolOutput, TypedTool};
use crate::{stamp, truncate};

/// Results (lines or files) shown when no `max_results` is given.
pub const DEFAULT_MAX_RESULTS: u64 = 200;
/// A matched line longer than this is cut, so one minified file cannot fill the output.
const MAX_LINE_CHARS: usize = 1000;
/// Output room kept for the notes on what was left out.
const NOTE_ROOM_BYTES: usize = 200;
/// Bytes of output shown, whatever `max_results` says (the host's allowance may lower it).
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Matched text kept in memory while searching; past it only counts are kept.
const CONTENT_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// What Grep prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines as `path:line:text` (context lines as `path-line-text`).
    Content,
    /// Only the paths of files that match (the default).
    #[default]
    FilesWithMatches,
    /// `path:count` of matching lines per file.
    Count,
}

/// Arguments of Grep.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (Rust `regex` syntax, like ripgrep).
    pub pattern: String,
    /// File or directory to search, relative to the project root (default: the whole project).
    pub path: Option<String>,
    /// Only search files whose name matches this glob, e.g. `*.rs` or `src/**/*.ts`.
    pub glob: Option<String>,
    /// Match case-insensitively (default false).
    #[serde(default)]
    pub case_insensitive: bool,
    /// `files_with_matches` (default), `content` or `count`.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Lines of context before and after each match (content mode only), like `grep -C`.
    pub context: Option<u32>,
    /// At most this many lines (content) or files (other modes) are shown (default 200).
    #[schemars(range(min = 1))]
    pub max_results: Option<u64>,
}

/// The Grep tool.
pub struct GrepTool;

#[async_trait]
impl TypedTool for GrepTool {
    type Args = GrepArgs;
    const NAME: &'static str = "Grep";
    const KIND: ToolKind = ToolKind::Read;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Search file contents with a regular expression (ripgrep engine). Honours \
                .gitignore/.ignore, skips hidden and binary files. output_mode: \
                `files_with_matches` (default) lists matching files, `content` shows \
                `path:line:text`, `count` shows matches per file. Filter files with `glob` \
                (e.g. `*.rs`). Results are capped at `max_results` (default 200)."
            .to_string()
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        let pattern = args::str_field(args, "pattern").unwrap_or("?");
        match args::str_field(args, "path") {
            Some(path) => format!("Grep `{pattern}` in {path}"),
            None => format!("Grep `{pattern}`"),
        }
    }

    /// In content mode a line is `path:number:text` (a match) or `path-number-text` (context).
    fn shown_line(
        &self,
        _root: &Path,
        _args: &serde_json::Value,
        output: &str,
        path: &str,
        line: u32,
    ) -> Option<String> {
        output.lines().find_map(|l| {
            let (n, text) = crate::seen::path_line(l, path)?;
            (n == line).then(|| text.to_string())
        })
    }

    fn narrow_seen(&self, seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
        crate::seen::narrow_listed(seen, kept)
    }

    async fn call(&self, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let secrets = Arc::clone(&ctx.secrets);
        let cap = ctx.output_cap(MAX_OUTPUT_BYTES);
        let record_seen = ctx.record_seen;
        walk::run_cancellable(ctx, "grep", move |root, cancel| {
            grep(root, &args, &secrets, cap, record_seen, cancel)
        })
        .await
    }
}

/// One searched file that matched.
struct FileHit {
    rel: String,
    /// Matching lines (count mode) or output lines incl. context (content mode).
    lines: u64,
    /// Formatted output (content mode), unless the memory budget ran out.
    content: Option<Vec<u8>>,
}

fn grep(
    root: &Path,
    args: &GrepArgs,
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
    if args.context.is_some() && args.output_mode != OutputMode::Content {
        return Err(ToolError::InvalidArguments(
            "field `context`: only applies to output_mode `content`".to_string(),
        ));
    }
    let root = paths::canonical_root(root)?;
    let target = paths::resolve(&root, args.path.as_deref().unwrap_or("."), Access::Read)?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| ToolError::InvalidArguments(format!("field `pattern`: {e}")))?;

    let walker = walk::walk_builder(&target.abs, args.glob.as_deref(), &root, secrets)?;
    let hits: Mutex<Vec<FileHit>> = Mutex::new(Vec::new());
    let budget = AtomicUsize::new(CONTENT_BUDGET_BYTES);
    let mode = args.output_mode;
    let context = args.context.unwrap_or(0) as usize;

    walk::visit_files(&walker, cancel, || {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(mode == OutputMode::Content)
            .before_context(context)
            .after_context(context)
            .build();
        let hits = &hits;
        let budget = &budget;
        let root = &root;
        move |entry: &ignore::DirEntry| {
            if let Some(hit) =
                search_file(&mut searcher, &matcher, entry.path(), root, mode, budget)
            {
                hits.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(hit);
            }
        }
    });

    let mut hits = hits.into_inner().unwrap_or_else(PoisonError::into_inner);
    hits.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    let budget_ran_out = budget.load(Ordering::Relaxed) == 0;
    let (text, mut seen) = format_hits(
        &hits,
        mode,
        context > 0,
        max_results,
        budget_ran_out,
        &args.pattern,
        &target.display,
        cap,
    );
    // Printed lines are stamped so a later edit of the file makes a citation of them stale; a
    // file that cannot be read again now is recorded without a stamp.
    if !record_seen {
        seen.clear();
    }
    if mode == OutputMode::Content {
        for f in &mut seen {
            f.stamp = stamp::stamp_file(&root.join(&f.path)).ok();
        }
    }
    let mut out = ToolOutput::text(text);
    out.seen = seen;
    Ok(out)
}

fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    root: &Path,
    mode: OutputMode,
    budget: &AtomicUsize,
) -> Option<FileHit> {
    let rel = || rel_display(path, root);
    match mode {
        OutputMode::FilesWithMatches => {
            let mut sink = FirstMatch(false);
            searcher.search_path(matcher, path, &mut sink).ok()?;
            sink.0.then(|| FileHit {
                rel: rel(),
                lines: 1,
                content: None,
            })
        }
        OutputMode::Count => {
            let mut sink = CountSink(0);
            searcher.search_path(matcher, path, &mut sink).ok()?;
            (sink.0 > 0).then(|| FileHit {
                rel: rel(),
                lines: sink.0,
                content: None,
            })
        }
        OutputMode::Content => {
            let rel = rel();
            let mut sink = ContentSink {
                rel: rel.as_bytes(),
                out: Vec::new(),
                lines: 0,
                matched: false,
            };
            searcher.search_path(matcher, path, &mut sink).ok()?;
            if !sink.matched {
                return None;
            }
            let lines = sink.lines;
            let out = sink.out;
            let len = out.len();
            let kept = budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                    left.checked_sub(len)
                })
                .is_ok();
            if !kept {
                budget.store(0, Ordering::Relaxed);
            }
            Some(FileHit {
                rel,
                lines,
                content: kept.then_some(out),
            })
        }
    }
}

fn rel_display(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) => paths::display_rel(rel),
        Err(_) => PathBuf::from(path).to_string_lossy().into_owned(),
    }
}

/// Stops a file's search at its first match.
struct FirstMatch(bool);

impl Sink for FirstMatch {
    type Error = std::io::Error;
    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.0 = true;
        Ok(false)
    }
}

/// Counts matching lines.
struct CountSink(u64);

impl Sink for CountSink {
    type Error = std::io::Error;
    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.0 += mat.lines().count() as u64;
        Ok(true)
    }
}

/// Formats matches as `path:line:text`, context as `path-line-text`, gaps as `--`.
struct ContentSink<'a> {
    rel: &'a [u8],
    out: Vec<u8>,
    lines: u64,
    matched: bool,
}

impl ContentSink<'_> {
    fn push_line(&mut self, line_number: Option<u64>, sep: u8, line: &[u8]) {
        let out = &mut self.out;
        out.extend_from_slice(self.rel);
        out.push(sep);
        // Writing into a Vec cannot fail.
        let _ = write!(out, "{}", line_number.unwrap_or(0));
        out.push(sep);
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > MAX_LINE_CHARS {
            let text = String::from_utf8_lossy(line);
            out.extend_from_slice(truncate::cap_line(&text, MAX_LINE_CHARS).as_bytes());
        } else {
            out.extend_from_slice(line);
        }
        out.push(b'\n');
        self.lines += 1;
    }
}

impl Sink for ContentSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.matched = true;
        let mut number = mat.line_number();
        for line in mat.lines() {
            self.push_line(number, b':', line);
            number = number.map(|n| n + 1);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        if matches!(ctx.kind(), SinkContextKind::Other) {
            return Ok(true);
        }
        let mut number = ctx.line_number();
        for line in ctx.bytes().split_inclusive(|&b| b == b'\n') {
            self.push_line(number, b'-', line);
            number = number.map(|n| n + 1);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, std::io::Error> {
        self.out.extend_from_slice(b"--\n");
        self.lines += 1;
        Ok(true)
    }
}

#[allow(clippy::too_many_arguments)]
fn format_hits(
    hits: &[FileHit],
    mode: OutputMode,
    with_context: bool,
    max_results: u64,
    budget_ran_out: bool,
    pattern: &str,
    searched: &str,
    cap: usize,
) -> (String, Vec<SeenFile>) {
    // Room is kept for the notes that say how much was left out, so the whole result fits `cap`.
    let body_cap = cap.saturating_sub(NOTE_ROOM_BYTES);
    if hits.is_empty() {
        return (
            format!("No matches for `{pattern}` in `{searched}`."),
            Vec::new(),
        );
    }
    let mut seen = Vec::new();
    let max = usize::try_from(max_results).unwrap_or(usize::MAX);
    match mode {
        OutputMode::FilesWithMatches | OutputMode::Count => {
            let mut out = String::new();
            let mut listed = 0usize;
            for hit in hits.iter().take(max) {
                let count = if mode == OutputMode::Count {
                    format!(":{}", hit.lines)
                } else {
                    String::new()
                };
                if out.len() + hit.rel.len() + count.len() + 1 > body_cap {
                    break;
                }
                out.push_str(&hit.rel);
                out.push_str(&count);
                out.push('\n');
                listed += 1;
                seen.push(SeenFile {
                    path: hit.rel.clone(),
                    lines: Vec::new(),
                    stamp: None,
                    edit: None,
                });
            }
            if hits.len() > listed {
                let more = hits.len() - listed;
                out.push_str(&format!(
                    "… [truncated: {more} more file{} not shown]\n",
                    if more == 1 { "" } else { "s" }
                ));
            }
            if mode == OutputMode::Count {
                let total: u64 = hits.iter().map(|h| h.lines).sum();
                out.push_str(&format!(
                    "Total: {total} matching line{} in {} file{}.\n",
                    if total == 1 { "" } else { "s" },
                    hits.len(),
                    if hits.len() == 1 { "" } else { "s" }
                ));
            }
            (out, seen)
        }
        OutputMode::Content => {
            let total_lines: u64 = hits.iter().map(|h| h.lines).sum::<u64>()
                + if with_context {
                    hits.len() as u64 - 1
                } else {
                    0
                };
            let mut shown = Vec::new();
            let mut shown_lines = 0u64;
            'files: for (i, hit) in hits.iter().enumerate() {
                let Some(content) = &hit.content else {
                    continue;
                };
                if with_context && i > 0 && shown_lines < max_results {
                    shown.extend_from_slice(b"--\n");
                    shown_lines += 1;
                }
                let mut numbers = Vec::new();
                let mut full = false;
                for line in content.split_inclusive(|&b| b == b'\n') {
                    if shown_lines >= max_results || shown.len() + line.len() > body_cap {
                        full = true;
                        break;
                    }
                    shown.extend_from_slice(line);
                    shown_lines += 1;
                    if let Some(n) = line_number_of(line, &hit.rel) {
                        numbers.push(n);
                    }
                }
                if !numbers.is_empty() {
                    seen.push(SeenFile {
                        path: hit.rel.clone(),
                        lines: crate::seen::ranges(numbers),
                        stamp: None,
                        edit: None,
                    });
                }
                if full {
                    break 'files;
                }
            }
            let mut out = String::from_utf8_lossy(&shown).into_owned();
            if shown_lines < total_lines {
                let hidden_bytes: u64 = hits
                    .iter()
                    .map(|h| h.content.as_ref().map_or(0, |c| c.len() as u64))
                    .sum::<u64>()
                    .saturating_sub(shown.len() as u64);
                out.push_str(&truncate::marker(total_lines - shown_lines, hidden_bytes));
                if budget_ran_out {
                    out.push_str(
                        " (some files' lines were counted but not kept; narrow the search)",
                    );
                }
                out.push('\n');
            }
            (out, seen)
        }
    }
}

/// The line number of one of `rel`'s formatted content lines (`None` for a `--` break).
fn line_number_of(line: &[u8], rel: &str) -> Option<u32> {
    let line = std::str::from_utf8(line.get(..line.len().min(rel.len() + 24))?)
        .or_else(|e| std::str::from_utf8(&line[..e.valid_up_to()]))
        .ok()?;
    crate::seen::path_line(line, rel).map(|(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{project, run};
    use serde_json::json;

    #[tokio::test]
    async fn listings_fit_the_allowance_and_say_how_much_was_left_out() {
        let (dir, mut ctx) = project();
        let lines: String = (1..=20_000).map(|i| format!("hit {i}\n")).collect();
        std::fs::write(dir.path().join("many.txt"), lines).unwrap();
        for i in 0..300 {
            std::fs::write(dir.path().join(format!("f{i:03}.txt")), "hit\n").unwrap();
        }
        ctx.output_allowance = Some(2_000);
        let content = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "hit", "path": "many.txt", "output_mode": "content", "max_results": 100000}),
        )
        .await
        .unwrap()
        .content;
        assert!(content.len() <= 2_000, "{} bytes", content.len());
        let shown = content.lines().filter(|l| l.contains(":hit ")).count();
        assert!(
            content.contains(&format!("[truncated: {} more lines", 20_000 - shown)),
            "{content}"
        );
        let files = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "hit", "max_results": 1000}),
        )
        .await
        .unwrap()
        .content;
        assert!(files.len() <= 2_000, "{} bytes", files.len());
        let listed = files.lines().filter(|l| l.ends_with(".txt")).count();
        assert!(
            files.ends_with(&format!(
                "… [truncated: {} more files not shown]\n",
                301 - listed
            )),
            "{files}"
        );
    }

    fn tree() -> (tempfile::TempDir, ToolContext) {
        let (dir, ctx) = project();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {\n    needle();\n}\n").unwrap();
        std::fs::write(
            root.join("src/deep/lib.rs"),
            "// Needle in caps\npub fn needle() {}\nfn other() {}\nfn needle_two() {}\n",
        )
        .unwrap();
        std::fs::write(root.join("target/debug/out.rs"), "needle\n").unwrap();
        std::fs::write(root.join("build.log"), "needle\n").unwrap();
        std::fs::write(root.join(".hidden/h.rs"), "needle\n").unwrap();
        std::fs::write(root.join("notes.md"), "a needle in markdown\n").unwrap();
        let mut bin = b"needle".to_vec();
        bin.extend([0u8; 16]);
        std::fs::write(root.join("blob.bin"), bin).unwrap();
        (dir, ctx)
    }

    #[tokio::test]
    async fn files_with_matches_honours_gitignore_hidden_and_binary() {
        let (_dir, ctx) = tree();
        let out = run(&GrepTool, &ctx, json!({"pattern": "needle"}))
            .await
            .unwrap();
        assert_eq!(out.content, "notes.md\nsrc/deep/lib.rs\nsrc/main.rs\n");
    }

    #[tokio::test]
    async fn gitignore_applies_inside_a_git_repository_too() {
        let (dir, ctx) = tree();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let out = run(&GrepTool, &ctx, json!({"pattern": "needle"}))
            .await
            .unwrap();
        assert!(!out.content.contains("target/"), "{}", out.content);
        assert!(!out.content.contains("build.log"), "{}", out.content);
    }

    #[tokio::test]
    async fn content_mode_prints_path_line_text() {
        let (_dir, ctx) = tree();
        let out = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "fn needle", "output_mode": "content", "glob": "*.rs"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "src/deep/lib.rs:2:pub fn needle() {}\nsrc/deep/lib.rs:4:fn needle_two() {}\n"
        );
    }

    #[tokio::test]
    async fn context_lines_use_dashes_and_breaks() {
        let (_dir, ctx) = tree();
        let out = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "^pub fn", "output_mode": "content", "context": 1, "path": "src"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.content,
            "src/deep/lib.rs-1-// Needle in caps\nsrc/deep/lib.rs:2:pub fn needle() {}\nsrc/deep/lib.rs-3-fn other() {}\n"
        );
    }

    #[tokio::test]
    async fn content_mode_reports_the_printed_lines_and_stamps_those_files() {
        let (dir, ctx) = tree();
        let out = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "needle", "output_mode": "content", "context": 1, "glob": "*.rs"}),
        )
        .await
        .unwrap();
        let lib = out
            .seen
            .iter()
            .find(|f| f.path == "src/deep/lib.rs")
            .unwrap();
        // Hits on lines 2 and 4 with one line of context: 1-4 and 5 does not exist.
        assert_eq!(lib.lines, vec![[1, 4]], "{}", out.content);
        assert_eq!(
            lib.stamp,
            Some(stamp::stamp_file(&dir.path().join("src/deep/lib.rs")).unwrap())
        );
        let main = out.seen.iter().find(|f| f.path == "src/main.rs").unwrap();
        assert_eq!(main.lines, vec![[1, 3]]);
        // A capped search reports only what it printed.
        let capped = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "needle", "output_mode": "content", "glob": "*.rs", "max_results": 1}),
        )
        .await
        .unwrap();
        assert_eq!(capped.seen.len(), 1, "{}", capped.content);
        assert_eq!(capped.seen[0].path, "src/deep/lib.rs");
        assert_eq!(capped.seen[0].lines, vec![[2, 2]]);
    }

    #[tokio::test]
    async fn listings_report_the_files_they_name_without_lines_or_stamps() {
        let (_dir, ctx) = tree();
        for mode in ["files_with_matches", "count"] {
            let out = run(
                &GrepTool,
                &ctx,
                json!({"pattern": "needle", "output_mode": mode}),
            )
            .await
            .unwrap();
            let paths: Vec<&str> = out.seen.iter().map(|f| f.path.as_str()).collect();
            assert_eq!(
                paths,
                ["notes.md", "src/deep/lib.rs", "src/main.rs"],
                "{mode}"
            );
            assert!(out
                .seen
                .iter()
                .all(|f| f.lines.is_empty() && f.stamp.is_none()));
        }
        let none = run(&GrepTool, &ctx, json!({"pattern": "zebra"}))
            .await
            .unwrap();
        assert!(none.seen.is_empty());
    }

    #[tokio::test]
    async fn case_insensitive_and_count() {
        let (_dir, ctx) = tree();
        let sensitive = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "Needle", "output_mode": "count"}),
        )
        .await
        .unwrap();
        assert_eq!(
            sensitive.content,
            "src/deep/lib.rs:1\nTotal: 1 matching line in 1 file.\n"
        );
        let insensitive = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "Needle", "output_mode": "count", "case_insensitive": true, "path": "src/deep/lib.rs"}),
        )
        .await
        .unwrap();
        assert_eq!(
            insensitive.content,
            "src/deep/lib.rs:3\nTotal: 3 matching lines in 1 file.\n"
        );
    }

    #[tokio::test]
    async fn max_results_caps_with_a_marker() {
        let (dir, ctx) = project();
        let text: String = (0..500).map(|i| format!("hit {i}\n")).collect();
        std::fs::write(dir.path().join("many.txt"), text).unwrap();
        let out = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "hit", "output_mode": "content", "max_results": 10}),
        )
        .await
        .unwrap();
        let lines: Vec<&str> = out.content.lines().collect();
        assert_eq!(lines.len(), 11, "{}", out.content);
        assert_eq!(lines[0], "many.txt:1:hit 0");
        assert!(
            lines[10].starts_with("… [truncated: 490 more lines"),
            "{}",
            lines[10]
        );
        for i in 0..30 {
            std::fs::write(dir.path().join(format!("f{i:02}.txt")), "hit\n").unwrap();
        }
        let out = run(&GrepTool, &ctx, json!({"pattern": "hit", "max_results": 5}))
            .await
            .unwrap();
        assert!(
            out.content
                .ends_with("… [truncated: 26 more files not shown]\n"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn bad_pattern_and_glob_name_the_field() {
        let (_dir, ctx) = tree();
        let err = run(&GrepTool, &ctx, json!({"pattern": "fn("}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("field `pattern`"), "{err}");
        let err = run(&GrepTool, &ctx, json!({"pattern": "x", "glob": "a{b"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("field `glob`"), "{err}");
        let err = run(
            &GrepTool,
            &ctx,
            json!({"pattern": "x", "output_mode": "lines"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("output_mode"), "{err}");
    }

    #[tokio::test]
    async fn a_cancelled_call_reports_cancelled() {
        let (_dir, ctx) = tree();
        ctx.cancel.cancel();
        let err = run(&GrepTool, &ctx, json!({"pattern": "needle"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Cancelled), "{err}");
    }

    #[tokio::test]
    async fn no_matches_says_so() {
        let (_dir, ctx) = tree();
        let out = run(&GrepTool, &ctx, json!({"pattern": "zebra"}))
            .await
            .unwrap();
        assert_eq!(out.content, "No matches for `zebra` in `.`.");
    }

    #[tokio::test]
    async fn searching_outside_is_refused() {
        let (_dir, ctx) = tree();
        let err = run(&GrepTool, &ctx, json!({"pattern": "x", "path": "/etc"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
    }
}
