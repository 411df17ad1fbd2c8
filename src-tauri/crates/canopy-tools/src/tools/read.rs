//! Read: shows a text file with line numbers (`cat -n` style) and records what was seen, so a later
//! Edit or Write can tell whether the file changed in between.

use std::io::{BufRead, BufReader, Read as _};

use async_trait::async_trait;
use canopy_protocol::{SeenFile, ToolKind};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::paths::{self, Access};
use crate::{args, FileStamp, ToolContext, ToolError, ToolOutput, TypedTool};
use crate::{stamp, truncate};

/// Lines shown when no `limit` is given.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this are only read in pieces (`offset`/`limit`).
pub const MAX_WHOLE_FILE_BYTES: u64 = 10 * 1024 * 1024;
pub use crate::fsutil::MAX_FULL_SCAN_BYTES;
/// Total output cap, whatever the line count.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Output room kept for the closing note (total line count, where to read on).
const NOTE_ROOM_BYTES: usize = 320;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Arguments of Read.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// File to read: relative to the project root, or absolute inside it.
    pub path: String,
    /// First line to show, 1-based (default 1).
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to show (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// The Read tool.
pub struct ReadTool;

#[async_trait]
impl TypedTool for ReadTool {
    type Args = ReadArgs;
    const NAME: &'static str = "Read";
    const KIND: ToolKind = ToolKind::Read;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Read a text file from the project. Output is numbered like `cat -n` \
                (line number, tab, line). Reads up to 2000 lines by default; use `offset` (1-based) \
                and `limit` for long files. Lines over 2000 characters are cut. Binary files are \
                refused, and so are FIFOs, sockets and devices. Files over 10 MB must be read in \
                pieces with `offset`/`limit`; files over 64 MB are read only up to the last \
                requested line, so their total line count is not reported and they cannot be \
                changed with Edit or Write. A file must be Read before it can be Edited or \
                overwritten."
                .to_string()
    }

    fn summarize(&self, args: &serde_json::Value) -> String {
        format!("Read {}", args::str_field(args, "path").unwrap_or("?"))
    }

    /// A line of this call's output is `{number:>6}\t{text}`, for the file its `path` names.
    fn shown_line(
        &self,
        root: &std::path::Path,
        args: &serde_json::Value,
        output: &str,
        path: &str,
        line: u32,
    ) -> Option<String> {
        let read = args::str_field(args, "path")?;
        if paths::resolve(root, read, Access::Read).ok()?.display != path {
            return None;
        }
        output.lines().find_map(|l| {
            let (n, text) = crate::seen::numbered_line(l)?;
            (n == line).then(|| text.to_string())
        })
    }

    fn narrow_seen(&self, seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
        crate::seen::narrow_numbered(seen, kept)
    }

    async fn call(&self, args: ReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || read_file(&args, &ctx))
            .await
            .map_err(|e| ToolError::Failed(format!("read task failed: {e}")))?
    }
}

fn read_file(args: &ReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    if args.offset == Some(0) {
        return Err(ToolError::InvalidArguments(
            "field `offset`: lines are numbered from 1".to_string(),
        ));
    }
    if args.limit == Some(0) {
        return Err(ToolError::InvalidArguments(
            "field `limit`: must be at least 1".to_string(),
        ));
    }
    let resolved = paths::resolve(&ctx.root, &args.path, Access::Read)?;
    ctx.secrets.check(&ctx.root, &args.path, &resolved.abs)?;
    let shown = &resolved.display;
    let meta = std::fs::metadata(&resolved.abs).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ToolError::NotFound(format!("`{shown}` does not exist")),
        _ => ToolError::Failed(format!("cannot read `{shown}`: {err}")),
    })?;
    if meta.is_dir() {
        return Err(ToolError::Refused(format!(
            "`{shown}` is a directory; use Glob to list files in it"
        )));
    }
    // Opening a FIFO blocks until a writer appears, and a device can stream forever: only regular
    // files are read.
    if !meta.is_file() {
        return Err(not_regular(shown, &meta));
    }
    let size = meta.len();
    let piecewise = args.offset.is_some() || args.limit.is_some();
    if size > MAX_WHOLE_FILE_BYTES && !piecewise {
        return Err(ToolError::Refused(format!(
            "`{shown}` is {} (over the {} limit for a whole read); read it in pieces with `offset` and `limit`, or search it with Grep",
            truncate::human_bytes(size),
            truncate::human_bytes(MAX_WHOLE_FILE_BYTES)
        )));
    }
    let io_err = |err: std::io::Error| ToolError::Failed(format!("cannot read `{shown}`: {err}"));
    let mut file = std::fs::File::open(&resolved.abs).map_err(io_err)?;

    // Whole small files are read at once; big ones stream, keeping only the requested lines.
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    let end = offset.saturating_add(limit);
    // `total_lines` is None when the read stopped before the end of a very big file.
    let (selected, total_lines, lossy, stamp_hash, seen_stamp) = if size <= MAX_WHOLE_FILE_BYTES {
        let mut bytes = Vec::with_capacity(size as usize);
        file.read_to_end(&mut bytes).map_err(io_err)?;
        refuse_binary(&bytes, shown)?;
        let text = String::from_utf8_lossy(&bytes);
        let lossy = matches!(text, std::borrow::Cow::Owned(_));
        let mut selected = Vec::new();
        let mut total = 0u64;
        for (i, line) in text.lines().enumerate() {
            total += 1;
            let n = i as u64 + 1;
            if n >= offset && n < end {
                selected.push((n, line.to_string()));
            }
        }
        let hash = crate::fsutil::content_hash(&bytes);
        (
            selected,
            Some(total),
            lossy,
            Some(hash),
            ctx.record_seen.then(|| stamp::stamp_bytes(&bytes)),
        )
    } else {
        let mut reader = BufReader::new(file);
        let mut head = vec![0u8; BINARY_SNIFF_BYTES];
        let got = read_up_to(&mut reader, &mut head).map_err(io_err)?;
        refuse_binary(&head[..got], shown)?;
        let mut reader = BufReader::new(std::io::Cursor::new(head[..got].to_vec()).chain(reader));
        let scan_to_end = size <= MAX_FULL_SCAN_BYTES;
        let mut hasher = std::hash::DefaultHasher::new();
        // What provenance records: the bytes actually read, which are the whole file only when
        // the read went to its end.
        let mut stamper = stamp::Stamper::new();
        let mut selected = Vec::new();
        let mut total = 0u64;
        let mut lossy = false;
        let mut buf = Vec::new();
        let at_eof = loop {
            if !scan_to_end && total + 1 >= end {
                // Past the last requested line: only find out whether anything follows.
                break reader.fill_buf().map_err(io_err)?.is_empty();
            }
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf).map_err(io_err)?;
            if n == 0 {
                break true;
            }
            std::hash::Hasher::write(&mut hasher, &buf);
            if ctx.record_seen {
                stamper.update(&buf);
            }
            total += 1;
            if total >= offset && total < end {
                let line = String::from_utf8_lossy(&buf);
                lossy |= matches!(line, std::borrow::Cow::Owned(_));
                let line = line.trim_end_matches('\n').trim_end_matches('\r');
                selected.push((total, line.to_string()));
            }
        };
        // Only a read that saw every byte knows the line count and can vouch for the content.
        let whole = at_eof.then_some(total);
        let hash = at_eof.then(|| std::hash::Hasher::finish(&hasher));
        (
            selected,
            whole,
            lossy,
            hash,
            ctx.record_seen.then(|| stamper.finish(size)),
        )
    };

    if let Some(hash) = stamp_hash {
        ctx.session.record(
            &resolved.abs,
            FileStamp {
                mtime: meta.modified().ok(),
                size,
                hash,
            },
        );
    }

    if total_lines == Some(0) {
        let mut out = ToolOutput::text(format!("`{shown}` is empty (0 bytes)."));
        if ctx.record_seen {
            out.seen = vec![SeenFile {
                path: shown.clone(),
                lines: Vec::new(),
                stamp: seen_stamp,
                edit: None,
            }];
        }
        return Ok(out);
    }
    if let Some(total_lines) = total_lines.filter(|&t| offset > t) {
        return Err(ToolError::InvalidArguments(format!(
            "field `offset`: `{shown}` has {total_lines} lines; offset {offset} is past the end"
        )));
    }

    let mut out = String::new();
    if lossy {
        out.push_str("[note: the file is not valid UTF-8; invalid bytes are shown as U+FFFD]\n");
    }
    // The host's allowance (a share of the room left in the agent's context) or the tool's own
    // cap; room is kept for the note that says how to read on, so the whole result fits.
    let out_cap = ctx.output_cap(MAX_OUTPUT_BYTES);
    let body_cap = out_cap
        .saturating_sub(NOTE_ROOM_BYTES)
        .max(NOTE_ROOM_BYTES / 2);
    let mut written_lines = 0u64;
    let mut cut_by_bytes = None;
    for (n, line) in &selected {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let entry = format!("{n:>6}\t{}\n", truncate::cap_line(line, MAX_LINE_CHARS));
        if out.len() + entry.len() > body_cap {
            cut_by_bytes = Some(*n);
            if written_lines == 0 {
                // Not even one line fits: show the start of it, so reading on always advances.
                let room = body_cap.saturating_sub(out.len() + 40);
                let cut = truncate::floor_char_boundary(&entry, room);
                out.push_str(entry[..cut].trim_end_matches('\n'));
                out.push_str(
                    "… [line cut to fit the output allowance; Read shows no more of this line]\n",
                );
                written_lines = 1;
            }
            break;
        }
        out.push_str(&entry);
        written_lines += 1;
    }
    let last_shown = offset + written_lines - 1;
    let why = if cut_by_bytes.is_some() {
        "output size cap reached"
    } else {
        "line limit reached"
    };
    match total_lines {
        Some(total_lines) if cut_by_bytes.is_some() && last_shown < total_lines => {
            let more = total_lines - last_shown;
            out.push_str(&format!(
                "… [truncated: {more} more line{} not shown: this call's output allowance is {} (a share of the room left in your context); `{shown}` has {total_lines} lines in all. Read on with offset={} limit={written_lines}, or Grep for what you need]\n",
                if more == 1 { "" } else { "s" },
                truncate::human_bytes(out_cap as u64),
                last_shown + 1,
            ));
        }
        Some(total_lines) if last_shown < total_lines => {
            let more = total_lines - last_shown;
            out.push_str(&format!(
                "… [truncated: {more} more line{} not shown ({why}); continue with offset={}]\n",
                if more == 1 { "" } else { "s" },
                last_shown + 1
            ));
        }
        Some(_) => {}
        None => out.push_str(&format!(
            "… [truncated: more lines follow ({why}); `{shown}` is {}, so it was read only up to line {} and its total line count is unknown; continue with offset={}]\n",
            truncate::human_bytes(size),
            end - 1,
            last_shown + 1
        )),
    }
    let mut result = ToolOutput::text(out);
    if ctx.record_seen {
        result.seen = vec![SeenFile {
            path: shown.clone(),
            // A line cut to fit still had its number and start shown: it counts as seen.
            lines: if written_lines > 0 {
                vec![[to_u32(offset), to_u32(last_shown)]]
            } else {
                Vec::new()
            },
            stamp: seen_stamp,
            edit: None,
        }];
    }
    Ok(result)
}

fn to_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The refusal for a path that exists but is not a regular file, naming what it is.
pub(crate) fn not_regular(shown: &str, meta: &std::fs::Metadata) -> ToolError {
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    let kind = if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else {
        "a special file"
    };
    ToolError::Refused(format!(
        "`{shown}` is not a regular file (it is {kind}); only regular files can be read or written"
    ))
}

fn read_up_to(reader: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

fn refuse_binary(bytes: &[u8], shown: &str) -> Result<(), ToolError> {
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if sniff.contains(&0) {
        return Err(ToolError::Refused(format!(
            "`{shown}` is a binary file ({} bytes); not shown",
            bytes.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{project, run};
    use serde_json::json;

    #[tokio::test]
    async fn a_file_over_the_allowance_shows_what_fits_and_exactly_how_to_read_on() {
        let (dir, mut ctx) = project();
        let text: String = (1..=5_000).map(|i| format!("line number {i}\n")).collect();
        std::fs::write(dir.path().join("big.txt"), &text).unwrap();
        ctx.output_allowance = Some(4_000);
        let first = run(&ReadTool, &ctx, json!({"path": "big.txt"}))
            .await
            .unwrap()
            .content;
        assert!(first.len() <= 4_000, "{} bytes", first.len());
        assert!(first.starts_with("     1\tline number 1\n"));
        let shown = first
            .lines()
            .filter(|l| l.contains("\tline number"))
            .count() as u64;
        assert!(shown > 50, "{shown} lines shown");
        let note = first.lines().last().unwrap();
        assert!(note.contains("`big.txt` has 5000 lines in all"), "{note}");
        assert!(
            note.contains(&format!("Read on with offset={} limit={shown}", shown + 1)),
            "{note}"
        );
        // Following the note gives the next lines, again within the allowance.
        let next = run(
            &ReadTool,
            &ctx,
            json!({"path": "big.txt", "offset": shown + 1, "limit": shown}),
        )
        .await
        .unwrap()
        .content;
        assert!(next.len() <= 4_000);
        assert!(next.starts_with(&format!("{:>6}\tline number {}\n", shown + 1, shown + 1)));
        // Without an allowance (the CLI, the main agent) the tool's own limits apply.
        ctx.output_allowance = None;
        let whole = run(&ReadTool, &ctx, json!({"path": "big.txt"}))
            .await
            .unwrap()
            .content;
        assert!(whole.contains("line number 2000\n"));
        assert!(whole.contains("(line limit reached); continue with offset=2001]"));
    }

    #[tokio::test]
    async fn one_line_longer_than_the_allowance_is_cut_so_reading_on_advances() {
        let (dir, mut ctx) = project();
        std::fs::write(
            dir.path().join("min.js"),
            format!("{}\nnext\n", "x".repeat(1_900)),
        )
        .unwrap();
        ctx.output_allowance = Some(600);
        let out = run(&ReadTool, &ctx, json!({"path": "min.js"}))
            .await
            .unwrap()
            .content;
        assert!(out.len() <= 600 + 100, "{} bytes", out.len());
        assert!(
            out.contains("[line cut to fit the output allowance; Read shows no more of this line]"),
            "{out}"
        );
        assert!(out.contains("Read on with offset=2 limit=1"), "{out}");
    }

    #[tokio::test]
    async fn numbers_lines_like_cat_n() {
        let (dir, ctx) = project();
        std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\r\ngamma").unwrap();
        let out = run(&ReadTool, &ctx, json!({"path": "a.txt"}))
            .await
            .unwrap();
        assert_eq!(out.content, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    }

    #[tokio::test]
    async fn offset_and_limit_select_lines_and_say_where_to_continue() {
        let (dir, ctx) = project();
        let text: String = (1..=50).map(|i| format!("row {i}\n")).collect();
        std::fs::write(dir.path().join("rows.txt"), text).unwrap();
        let out = run(
            &ReadTool,
            &ctx,
            json!({"path": "rows.txt", "offset": 10, "limit": 3}),
        )
        .await
        .unwrap();
        assert!(
            out.content
                .starts_with("    10\trow 10\n    11\trow 11\n    12\trow 12\n"),
            "{}",
            out.content
        );
        assert!(
            out.content
                .contains("[truncated: 38 more lines not shown (line limit reached); continue with offset=13]"),
            "{}",
            out.content
        );
        let err = run(&ReadTool, &ctx, json!({"path": "rows.txt", "offset": 51}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("has 50 lines"), "{err}");
    }

    #[tokio::test]
    async fn binary_files_are_refused_with_their_size() {
        let (dir, ctx) = project();
        let mut bytes = b"ELF".to_vec();
        bytes.extend([0u8, 1, 2, 3]);
        std::fs::write(dir.path().join("prog"), &bytes).unwrap();
        let err = run(&ReadTool, &ctx, json!({"path": "prog"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "`prog` is a binary file (7 bytes); not shown"
        );
    }

    #[tokio::test]
    async fn invalid_utf8_is_decoded_lossily_with_a_note() {
        let (dir, ctx) = project();
        std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
        let out = run(&ReadTool, &ctx, json!({"path": "latin1.txt"}))
            .await
            .unwrap();
        assert!(out.content.contains("not valid UTF-8"), "{}", out.content);
        assert!(
            out.content.contains("     1\tcaf\u{fffd}\n"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn long_lines_are_cut_with_a_marker() {
        let (dir, ctx) = project();
        std::fs::write(dir.path().join("wide.txt"), "y".repeat(2500)).unwrap();
        let out = run(&ReadTool, &ctx, json!({"path": "wide.txt"}))
            .await
            .unwrap();
        assert!(
            out.content.contains("[line truncated: 500 more chars]"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn bad_arguments_name_the_field() {
        let (_dir, ctx) = project();
        let err = run(&ReadTool, &ctx, json!({"path": "a", "ofset": 3}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(_)));
        assert!(err.to_string().contains("`ofset`"), "{err}");
        let err = run(&ReadTool, &ctx, json!({})).await.unwrap_err();
        assert!(err.to_string().contains("`path`"), "{err}");
        let err = run(&ReadTool, &ctx, json!({"path": "a", "limit": "ten"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("`limit`"), "{err}");
    }

    #[tokio::test]
    async fn missing_files_and_directories_get_specific_errors() {
        let (dir, ctx) = project();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let err = run(&ReadTool, &ctx, json!({"path": "nope.txt"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err}");
        let err = run(&ReadTool, &ctx, json!({"path": "sub"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }

    #[tokio::test]
    async fn huge_files_need_offset_or_limit_and_can_then_be_edited() {
        let (dir, ctx) = project();
        let line = format!("{}\n", "z".repeat(99));
        let mut text = line.repeat(110_000);
        text.push_str("the end\n");
        std::fs::write(dir.path().join("big.log"), &text).unwrap();
        let err = run(&ReadTool, &ctx, json!({"path": "big.log"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("10.5 MB"), "{err}");
        assert!(err.to_string().contains("`offset` and `limit`"), "{err}");
        let out = run(
            &ReadTool,
            &ctx,
            json!({"path": "big.log", "offset": 110_001}),
        )
        .await
        .unwrap();
        assert_eq!(out.content, "110001\tthe end\n");
        // The streamed read recorded the same stamp a whole read would have, so Edit accepts it.
        run(
            &crate::EditTool,
            &ctx,
            json!({"path": "big.log", "old_string": "the end", "new_string": "THE END"}),
        )
        .await
        .unwrap();
        assert!(std::fs::read_to_string(dir.path().join("big.log"))
            .unwrap()
            .ends_with("THE END\n"));
    }

    fn mkfifo(path: &std::path::Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[tokio::test]
    async fn a_fifo_is_refused_at_once_instead_of_blocking() {
        let (dir, ctx) = project();
        mkfifo(&dir.path().join("p"));
        // Without the check, File::open blocks until a writer opens the pipe: the timeout catches it.
        let err = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            run(&ReadTool, &ctx, json!({"path": "p"})),
        )
        .await
        .expect("Read on a FIFO must not block")
        .unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "`p` is not a regular file (it is a FIFO (named pipe)); only regular files can be read or written"
        );
        // A symlink to it resolves to the FIFO and is refused the same way.
        std::os::unix::fs::symlink(dir.path().join("p"), dir.path().join("link")).unwrap();
        let err = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            run(&ReadTool, &ctx, json!({"path": "link"})),
        )
        .await
        .expect("Read on a link to a FIFO must not block")
        .unwrap_err();
        assert!(err.to_string().contains("is not a regular file"), "{err}");
    }

    #[tokio::test]
    async fn a_unix_socket_is_refused() {
        let (dir, ctx) = project();
        let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("s.sock")).unwrap();
        let err = run(&ReadTool, &ctx, json!({"path": "s.sock"}))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("`s.sock` is not a regular file (it is a socket)"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_piece_of_a_huge_file_stops_after_the_last_requested_line() {
        let (dir, ctx) = project();
        let path = dir.path().join("huge.log");
        let text: String = (1..=2000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        // 4 GiB, sparse: the tail is NUL bytes with no newline. Scanning it would take many seconds
        // and buffer it as one 4 GiB "line"; a read that stops at the requested lines never sees it.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(4 * 1024 * 1024 * 1024).unwrap();
        drop(file);
        let started = std::time::Instant::now();
        let out = run(
            &ReadTool,
            &ctx,
            json!({"path": "huge.log", "offset": 10, "limit": 3}),
        )
        .await
        .unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(
            out.content
                .starts_with("    10\tline 10\n    11\tline 11\n    12\tline 12\n"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains(
                "… [truncated: more lines follow (line limit reached); `huge.log` is 4096.0 MB, so it was read only up to line 12 and its total line count is unknown; continue with offset=13]"
            ),
            "{}",
            out.content
        );
        // Nothing vouches for the unread rest, and such a file is too big for Edit anyway.
        let err = run(
            &crate::EditTool,
            &ctx,
            json!({"path": "huge.log", "old_string": "line 10\n", "new_string": "x"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`huge.log` is 4096.0 MB, over the 64.0 MB limit for Edit and Write"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_read_reports_the_lines_it_showed_and_a_stamp_of_the_file() {
        let (dir, mut ctx) = project();
        let text: String = (1..=50).map(|i| format!("row {i}\n")).collect();
        let path = dir.path().join("rows.txt");
        std::fs::write(&path, &text).unwrap();
        let whole = run(&ReadTool, &ctx, json!({"path": "rows.txt"}))
            .await
            .unwrap();
        assert_eq!(whole.seen.len(), 1);
        assert_eq!(whole.seen[0].path, "rows.txt");
        assert_eq!(whole.seen[0].lines, vec![[1, 50]]);
        assert_eq!(
            whole.seen[0].stamp,
            Some(stamp::stamp_file(&path).unwrap()),
            "the whole file is stamped"
        );
        let piece = run(
            &ReadTool,
            &ctx,
            json!({"path": "rows.txt", "offset": 10, "limit": 3}),
        )
        .await
        .unwrap();
        assert_eq!(piece.seen[0].lines, vec![[10, 12]]);
        // Cut to an allowance: only the lines that made it into the text count.
        ctx.output_allowance = Some(400);
        let cut = run(&ReadTool, &ctx, json!({"path": "rows.txt"}))
            .await
            .unwrap();
        let last = cut
            .content
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(n, _)| n.trim().parse::<u32>().unwrap())
            .max()
            .unwrap();
        assert!(last < 50, "{}", cut.content);
        assert_eq!(cut.seen[0].lines, vec![[1, last]]);
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let empty = run(&ReadTool, &ctx, json!({"path": "empty.txt"}))
            .await
            .unwrap();
        assert!(empty.seen[0].lines.is_empty());
        assert!(empty.seen[0].stamp.is_some());
    }

    #[tokio::test]
    async fn a_read_that_stops_early_in_a_huge_file_stamps_only_what_it_read() {
        let (dir, ctx) = project();
        let path = dir.path().join("huge.log");
        let head: String = (1..=2000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &head).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(MAX_FULL_SCAN_BYTES + 1024).unwrap();
        drop(file);
        let out = run(
            &ReadTool,
            &ctx,
            json!({"path": "huge.log", "offset": 10, "limit": 3}),
        )
        .await
        .unwrap();
        let seen = &out.seen[0];
        assert_eq!(seen.lines, vec![[10, 12]]);
        let s = seen.stamp.as_ref().unwrap();
        let first_12: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        assert_eq!(
            s,
            &stamp::stamp_prefix(first_12.as_bytes(), MAX_FULL_SCAN_BYTES + 1024)
        );
        assert!(!s.whole);
        assert!(stamp::unchanged(&path, s));
    }

    #[tokio::test]
    async fn reading_outside_the_root_is_refused() {
        let (_dir, ctx) = project();
        let err = run(&ReadTool, &ctx, json!({"path": "../../etc/passwd"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
    }
}
