//! Replay: a root session's records with its descendants', optionally leaving big tool outputs out,
//! and one tool call's recorded output read back on demand.

use std::fs;
use std::path::Path;

use canopy_protocol::{TraceEvent, TraceRecord};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::RuntimeError;

use super::file::{check_session_id, read_session_file, trace_error, TOOL_CALL_END_TAG};
use super::links::tree_ids;

/// The records of a root session followed by every descendant's (depth-first), for replay.
pub fn load_session_tree(
    trace_dir: &Path,
    root_session_id: &str,
) -> Result<Vec<TraceRecord>, RuntimeError> {
    let mut out = Vec::new();
    for id in tree_ids(trace_dir, root_session_id)? {
        out.extend(read_session_file(&trace_dir.join(format!("{id}.jsonl")))?.records);
    }
    Ok(out)
}

/// How [`load_session_tree_json_with`] shapes the records it returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Leave out every `tool_call_end` `output` longer than this many bytes: it becomes `""` and the
    /// event gains `"output_elided":true` (fetch the text with [`read_tool_output`]). `None` keeps all.
    pub elide_outputs_over: Option<usize>,
}

/// The same records as [`load_session_tree`], as one JSON array built from the files' own lines: a
/// host that only forwards them (the app, to the webview) skips decoding and re-encoding every
/// record. Lines that are not complete JSON (a crash mid-write) are left out, as the reader does.
pub fn load_session_tree_json(
    trace_dir: &Path,
    root_session_id: &str,
) -> Result<String, RuntimeError> {
    load_session_tree_json_with(trace_dir, root_session_id, &LoadOptions::default())
}

/// [`load_session_tree_json`] with options. Every line is forwarded byte for byte except, when
/// [`LoadOptions::elide_outputs_over`] is set, the `output` value of big `tool_call_end` events.
pub fn load_session_tree_json_with(
    trace_dir: &Path,
    root_session_id: &str,
    options: &LoadOptions,
) -> Result<String, RuntimeError> {
    let mut out = String::from("[");
    for id in tree_ids(trace_dir, root_session_id)? {
        let path = trace_dir.join(format!("{id}.jsonl"));
        let bytes = fs::read(&path).map_err(|e| trace_error(&path, e))?;
        out.reserve(bytes.len());
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(text) = std::str::from_utf8(line) else {
                continue;
            };
            let text = text.trim_end();
            let shape = match options.elide_outputs_over {
                Some(limit) if text.contains(TOOL_CALL_END_TAG) => probe_output(text, limit),
                _ => check_syntax(text),
            };
            let Some(splice) = shape else {
                continue;
            };
            if out.len() > 1 {
                out.push(',');
            }
            match splice {
                Some(range) => {
                    out.push_str(&text[..range.start]);
                    out.push_str("\"\",\"output_elided\":true");
                    out.push_str(&text[range.end..]);
                }
                None => out.push_str(text),
            }
        }
    }
    out.push(']');
    Ok(out)
}

/// What to do with one line: `None` drop it (not JSON), `Some(None)` forward it as is,
/// `Some(Some(range))` forward it with the bytes in `range` (an `output` value) replaced.
pub(super) type LineShape = Option<Option<std::ops::Range<usize>>>;

/// A syntax check only (no record is built): enough to drop a cut line.
pub(super) fn check_syntax(line: &str) -> LineShape {
    serde_json::from_str::<serde::de::IgnoredAny>(line)
        .ok()
        .map(|_| None)
}

/// The fields of a `tool_call_end` line that elision needs, borrowed from the line.
#[derive(Deserialize)]
pub(super) struct EndLine<'a> {
    #[serde(borrow)]
    event: EndEvent<'a>,
}

#[derive(Deserialize)]
pub(super) struct EndEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a RawValue,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_elided: Option<&'a RawValue>,
}

/// Where the `output` value of a `tool_call_end` line is, when it decodes to more than `limit`
/// bytes. Decoding the probe checks the whole line's syntax too.
pub(super) fn probe_output(line: &str, limit: usize) -> LineShape {
    let Ok(probe) = serde_json::from_str::<EndLine>(line) else {
        // Valid JSON of another shape (the tag was nested in a value) is forwarded untouched.
        return check_syntax(line);
    };
    let event = probe.event;
    let Some(output) = event.output else {
        return Some(None);
    };
    if event.kind.get() != "\"tool_call_end\"" || event.output_elided.is_some() {
        return Some(None);
    }
    let raw = output.get();
    if !raw.starts_with('"') {
        return Some(None);
    }
    // The decoded text is never longer than its JSON form without the quotes.
    if raw.len() <= limit.saturating_add(2) {
        return Some(None);
    }
    // Every escape stands for at least one byte and is at most six (`\u0001`), so a long enough
    // JSON form is over the limit without decoding it.
    let decoded_len = if (raw.len() - 2) / 6 > limit {
        raw.len()
    } else if raw.contains('\\') {
        match serde_json::from_str::<String>(raw) {
            Ok(s) => s.len(),
            // Not a string: not an output this reader knows how to elide.
            Err(_) => return Some(None),
        }
    } else {
        raw.len() - 2
    };
    if decoded_len <= limit {
        return Some(None);
    }
    // `raw` borrows from `line`, so its position is the distance between the two pointers; the
    // check below makes sure of it rather than trusting the arithmetic.
    let start = (raw.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let range = start..start + raw.len();
    if line.get(range.clone()).map(str::as_ptr) != Some(raw.as_ptr()) {
        return Some(None);
    }
    Some(Some(range))
}

/// The recorded `output` of tool call `call_id` in session `session_id` (root or any descendant),
/// as written in the trace (already capped at `output_cap_bytes`). Only lines that mention the call
/// id are decoded.
pub fn read_tool_output(
    trace_dir: &Path,
    session_id: &str,
    call_id: &str,
) -> Result<String, RuntimeError> {
    check_session_id(session_id)?;
    let path = trace_dir.join(format!("{session_id}.jsonl"));
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(RuntimeError::UnknownSession(session_id.to_string()))
        }
        Err(e) => return Err(trace_error(&path, e)),
    };
    // The id as the writer serialises it (escaped like any JSON string).
    let needle = format!(
        "\"call_id\":{}",
        serde_json::Value::String(call_id.to_string())
    );
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        if !text.contains(&needle) || !text.contains(TOOL_CALL_END_TAG) {
            continue;
        }
        if let Ok(TraceRecord {
            event:
                TraceEvent::ToolCallEnd {
                    call_id: found,
                    output,
                    ..
                },
            ..
        }) = serde_json::from_str(text)
        {
            if found == call_id {
                return Ok(output);
            }
        }
    }
    Err(RuntimeError::UnknownToolCall {
        session_id: session_id.to_string(),
        call_id: call_id.to_string(),
    })
}
