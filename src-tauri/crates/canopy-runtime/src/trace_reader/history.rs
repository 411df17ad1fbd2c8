//! History: root sessions listed from the head and tail of each file only, so the list stays fast
//! on large traces, and the ids of one tree for loading or deleting it.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use canopy_protocol::{AgentKind, TerminalReason, TraceEvent, TraceRecord};
use serde::Serialize;

use crate::RuntimeError;

use super::file::{trace_error, MODEL_CALL_END_TAG, RUN_ENDED_TAG, RUN_STARTED_TAG};
use super::links::{head_cycles, heads, tree_ids};
use super::tree::{status_of, SessionStatus};

/// A root session as history lists it.
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    /// Root session id.
    pub session_id: String,
    /// When it started.
    pub started_ms: u64,
    /// First prompt, shortened.
    pub title: String,
    /// Derived status.
    pub status: SessionStatus,
    /// Terminal reason of the last run.
    pub terminal_reason: Option<TerminalReason>,
    /// Tokens including descendants.
    pub total_tokens: u64,
    /// Number of sessions in the tree.
    pub sessions: u32,
    /// The parent its file names, when that link closes a cycle and was not followed (the session
    /// is listed as a root instead).
    pub broken_parent: Option<String>,
}

/// Bytes read from the end of a root file to find its last run's end; grown (×4, up to the whole
/// file) when that window holds neither the last `run_ended` nor the last `run_started`.
pub(super) const TAIL_WINDOW: u64 = 64 * 1024;

/// Root sessions of a trace folder, newest first.
///
/// Reads the first line of every file (to link trees), the head of each root file up to its first
/// `run_started` (the title) and a window at its end (the last run's outcome), so the cost grows with
/// the number of sessions, not with the bytes recorded. Tokens are the last run's
/// `usage_with_descendants`; for an interrupted last run (no `run_ended`), only what the root itself
/// used in that run so far (its last `model_call_end` totals), since descendants' usage is summed at
/// `run_ended` only.
pub fn list_root_sessions(trace_dir: &Path) -> Vec<SessionSummary> {
    let heads = heads(trace_dir);
    let known: HashSet<&str> = heads.iter().map(|h| h.id.as_str()).collect();
    let cyclic = head_cycles(&heads);
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for h in &heads {
        if let Some(parent) = &h.head.parent_session_id {
            if !cyclic.contains(h.id.as_str()) {
                children.entry(parent).or_default().push(&h.id);
            }
        }
    }
    let mut out: Vec<SessionSummary> = heads
        .iter()
        .filter(|h| {
            // As in `read_trees`: a session whose parent file is gone is a root too, and a file
            // without `session_started` counts as a main agent's. A session in a parent cycle is
            // listed whatever its kind: no other root leads to it.
            cyclic.contains(h.id.as_str())
                || (h
                    .head
                    .parent_session_id
                    .as_deref()
                    .is_none_or(|p| !known.contains(p))
                    && h.head.event.agent.unwrap_or(AgentKind::Main) == AgentKind::Main)
        })
        .map(|h| {
            let end = last_run_end(&h.path);
            SessionSummary {
                session_id: h.id.clone(),
                started_ms: h.head.ts_ms,
                title: first_prompt(&h.path)
                    .map(|p| shorten(&p, 80))
                    .unwrap_or_default(),
                status: end.status,
                terminal_reason: Some(end.reason),
                total_tokens: end.total_tokens,
                sessions: tree_size(&h.id, &children),
                broken_parent: cyclic
                    .contains(h.id.as_str())
                    .then(|| h.head.parent_session_id.clone())
                    .flatten(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    out
}

/// Sessions in the tree under `id` (itself included); each counted once whatever the links say.
pub(super) fn tree_size(id: &str, children: &HashMap<&str, Vec<&str>>) -> u32 {
    let mut seen = HashSet::new();
    let mut stack = vec![id];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(kids) = children.get(id) {
            stack.extend(kids);
        }
    }
    seen.len() as u32
}

/// How a root's last run ended, as history shows it.
pub(super) struct RunEnd {
    status: SessionStatus,
    reason: TerminalReason,
    total_tokens: u64,
}

/// The last run's outcome, from the end of the file backwards: its `run_ended`, or — when a
/// `run_started` comes first — interrupted. Reads a growing window from the end, so a normal file
/// costs one small read.
pub(super) fn last_run_end(path: &Path) -> RunEnd {
    let interrupted = |tokens: Option<u64>| RunEnd {
        status: SessionStatus::Interrupted,
        reason: TerminalReason::Interrupted,
        total_tokens: tokens.unwrap_or(0),
    };
    let Ok(mut file) = fs::File::open(path) else {
        return interrupted(None);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut window = TAIL_WINDOW;
    loop {
        let start = len.saturating_sub(window);
        let mut buf = Vec::new();
        if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut buf).is_err() {
            return interrupted(None);
        }
        let mut lines = buf.split(|b| *b == b'\n');
        if start > 0 {
            // Starts mid-line (or exactly at one; a wider window reads it whole if it matters).
            lines.next();
        }
        let mut run_tokens = None;
        for line in lines.rev() {
            let Ok(text) = std::str::from_utf8(line) else {
                continue;
            };
            let wanted = text.contains(RUN_ENDED_TAG)
                || text.contains(RUN_STARTED_TAG)
                || (run_tokens.is_none() && text.contains(MODEL_CALL_END_TAG));
            if !wanted {
                continue;
            }
            let Ok(record) = serde_json::from_str::<TraceRecord>(text) else {
                continue;
            };
            match record.event {
                TraceEvent::RunEnded {
                    terminal_reason,
                    usage_with_descendants,
                    ..
                } => {
                    return RunEnd {
                        status: status_of(terminal_reason),
                        reason: terminal_reason,
                        total_tokens: usage_with_descendants.total(),
                    }
                }
                TraceEvent::RunStarted { .. } => return interrupted(run_tokens),
                TraceEvent::ModelCallEnd { totals, .. } if run_tokens.is_none() => {
                    run_tokens = Some(totals.total_tokens)
                }
                _ => {}
            }
        }
        if start == 0 {
            return interrupted(run_tokens);
        }
        window = window.saturating_mul(4);
    }
}

/// The prompt of the first `run_started`, reading lines from the start only until it is found.
pub(super) fn first_prompt(path: &Path) -> Option<String> {
    let mut reader = BufReader::new(fs::File::open(path).ok()?);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        if !text.contains(RUN_STARTED_TAG) {
            continue;
        }
        if let Ok(TraceRecord {
            event: TraceEvent::RunStarted { prompt },
            ..
        }) = serde_json::from_str(text)
        {
            return Some(prompt);
        }
    }
}

pub(super) fn shorten(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let mut out: String = line.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// Deletes the files of a root session and its descendants.
pub fn delete_session_tree(trace_dir: &Path, root_session_id: &str) -> Result<(), RuntimeError> {
    for id in tree_ids(trace_dir, root_session_id)? {
        let path = trace_dir.join(format!("{id}.jsonl"));
        fs::remove_file(&path).map_err(|e| trace_error(&path, e))?;
    }
    Ok(())
}
