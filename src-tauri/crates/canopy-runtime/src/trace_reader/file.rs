//! One session file: its records, read line by line (a truncated last line, from a crash mid-write,
//! is skipped, never fatal), the event tags the fast readers look for, and the session-id check that
//! keeps a file name inside the trace folder.

use std::fs;
use std::path::Path;

use canopy_protocol::TraceRecord;

use crate::RuntimeError;

/// The records of one trace file, plus how many lines could not be parsed.
#[derive(Debug, Clone)]
pub struct SessionFile {
    /// Records in file order.
    pub records: Vec<TraceRecord>,
    /// Lines that were not valid records (a truncated last line, typically).
    pub skipped_lines: usize,
}

// The writer serialises records compactly, so an event's tag appears in its line exactly like this.
// Inside a JSON string every `"` is escaped, so a match is the tag of some object in the line (the
// event's, or one nested in a value such as tool arguments: a decode confirms which).
pub(super) const RUN_STARTED_TAG: &str = "\"type\":\"run_started\"";
pub(super) const RUN_ENDED_TAG: &str = "\"type\":\"run_ended\"";
pub(super) const MODEL_CALL_END_TAG: &str = "\"type\":\"model_call_end\"";
pub(super) const TOOL_CALL_END_TAG: &str = "\"type\":\"tool_call_end\"";

pub(super) fn trace_error(path: &Path, e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Trace {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Reads one session file.
pub fn read_session_file(path: &Path) -> Result<SessionFile, RuntimeError> {
    // Bytes, not a string: a crash can cut a line inside a multi-byte character, and that must cost
    // one line, not the whole file.
    let bytes = fs::read(path).map_err(|e| trace_error(path, e))?;
    let mut records = Vec::new();
    let mut skipped_lines = 0;
    for line in bytes.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<TraceRecord>(line) {
            Ok(r) => records.push(r),
            Err(_) => skipped_lines += 1,
        }
    }
    Ok(SessionFile {
        records,
        skipped_lines,
    })
}

/// A session id becomes a file name: only letters, digits, `-`, `_` and `.` (never `..`).
pub(super) fn check_session_id(id: &str) -> Result<(), RuntimeError> {
    let reason = if id.is_empty() {
        "it is empty"
    } else if id.contains("..") {
        "it contains `..`"
    } else if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        "only letters, digits, `-`, `_` and `.` are allowed"
    } else {
        return Ok(());
    };
    Err(RuntimeError::InvalidSessionId {
        id: id.to_string(),
        reason,
    })
}
