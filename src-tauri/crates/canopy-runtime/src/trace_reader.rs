//! Reads trace folders back: one session file, a whole session tree (root + descendants, linked by
//! `parent_session_id`), and summaries of root sessions for history. A truncated last line (a crash
//! mid-write) is skipped, never fatal.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use canopy_protocol::{
    AgentKind, BudgetUsage, Budgets, ModelInfo, TerminalReason, TraceEvent, TraceRecord, Usage,
};
use serde::Serialize;

use crate::RuntimeError;

/// The records of one trace file, plus how many lines could not be parsed.
#[derive(Debug, Clone)]
pub struct SessionFile {
    /// Records in file order.
    pub records: Vec<TraceRecord>,
    /// Lines that were not valid records (a truncated last line, typically).
    pub skipped_lines: usize,
}

/// Reads one session file.
pub fn read_session_file(path: &Path) -> Result<SessionFile, RuntimeError> {
    // Bytes, not a string: a crash can cut a line inside a multi-byte character, and that must cost
    // one line, not the whole file.
    let bytes = fs::read(path).map_err(|e| RuntimeError::Trace {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
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

/// Status of a session as a reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// A run started and has not ended (and the file is still being written by this process).
    Running,
    /// The last run completed.
    Completed,
    /// The last run ended for another reason than completion or cancellation.
    Failed,
    /// The last run was cancelled.
    Cancelled,
    /// The trace stops without `run_ended` (crash or kill).
    Interrupted,
}

/// One node of a rebuilt session tree.
#[derive(Debug, Clone)]
pub struct SessionNode {
    /// Session id.
    pub session_id: String,
    /// Parent session id.
    pub parent_session_id: Option<String>,
    /// Main or subagent.
    pub agent: AgentKind,
    /// Profile name.
    pub profile: String,
    /// Task description (subagents).
    pub description: Option<String>,
    /// Model used.
    pub model: Option<ModelInfo>,
    /// Budgets.
    pub budgets: Option<Budgets>,
    /// Budget usage at the end (or the last known).
    pub totals: BudgetUsage,
    /// Own usage.
    pub usage: Usage,
    /// Usage including descendants.
    pub usage_with_descendants: Usage,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Terminal reason of the last run (`interrupted` if it never ended).
    pub terminal_reason: Option<TerminalReason>,
    /// Derived status.
    pub status: SessionStatus,
    /// First user prompt.
    pub first_prompt: Option<String>,
    /// Time of the first record.
    pub started_ms: u64,
    /// Time of the last record.
    pub last_ms: u64,
    /// Children in start order.
    pub children: Vec<SessionNode>,
    /// Lines that could not be parsed.
    pub skipped_lines: usize,
}

fn summarize(id: &str, file: &SessionFile) -> SessionNode {
    let mut node = SessionNode {
        session_id: id.to_string(),
        parent_session_id: None,
        agent: AgentKind::Main,
        profile: String::new(),
        description: None,
        model: None,
        budgets: None,
        totals: BudgetUsage::default(),
        usage: Usage::default(),
        usage_with_descendants: Usage::default(),
        tool_calls: 0,
        terminal_reason: None,
        status: SessionStatus::Interrupted,
        first_prompt: None,
        started_ms: file.records.first().map(|r| r.ts_ms).unwrap_or(0),
        last_ms: file.records.last().map(|r| r.ts_ms).unwrap_or(0),
        children: Vec::new(),
        skipped_lines: file.skipped_lines,
    };
    let mut open_run = false;
    let mut own = Usage::default();
    for r in &file.records {
        node.parent_session_id = r.parent_session_id.clone();
        match &r.event {
            TraceEvent::SessionStarted {
                agent,
                profile,
                description,
                model,
                budgets,
                ..
            } => {
                node.agent = *agent;
                node.profile = profile.clone();
                node.description = description.clone();
                node.model = Some(model.clone());
                node.budgets = Some(*budgets);
            }
            TraceEvent::RunStarted { prompt } => {
                open_run = true;
                if node.first_prompt.is_none() {
                    node.first_prompt = Some(prompt.clone());
                }
            }
            TraceEvent::ModelCallEnd { totals, usage, .. } => {
                node.totals = *totals;
                own.add(usage);
            }
            TraceEvent::ToolCallEnd { .. } => node.tool_calls += 1,
            TraceEvent::RunEnded {
                terminal_reason,
                usage,
                usage_with_descendants,
                totals,
                ..
            } => {
                open_run = false;
                node.terminal_reason = Some(*terminal_reason);
                node.totals = *totals;
                node.usage = *usage;
                node.usage_with_descendants = *usage_with_descendants;
                node.status = match terminal_reason {
                    TerminalReason::Completed => SessionStatus::Completed,
                    TerminalReason::Cancelled => SessionStatus::Cancelled,
                    _ => SessionStatus::Failed,
                };
            }
            _ => {}
        }
    }
    if open_run || node.terminal_reason.is_none() {
        node.status = SessionStatus::Interrupted;
        node.terminal_reason = Some(TerminalReason::Interrupted);
        node.usage = own;
        node.usage_with_descendants = own;
    }
    node
}

fn session_files(trace_dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(trace_dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| Some((p.file_stem()?.to_str()?.to_string(), p)))
        .collect();
    out.sort();
    out
}

/// Reads every session file in a folder and links them into trees; returns the roots, newest first.
/// Sessions whose parent file is missing are returned as roots too, so nothing recorded is hidden.
pub fn read_trees(trace_dir: &Path) -> Vec<SessionNode> {
    let mut nodes: HashMap<String, SessionNode> = HashMap::new();
    for (id, path) in session_files(trace_dir) {
        if let Ok(file) = read_session_file(&path) {
            if file.records.is_empty() {
                continue;
            }
            nodes.insert(id.clone(), summarize(&id, &file));
        }
    }
    let mut children_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut roots = Vec::new();
    for (id, node) in &nodes {
        match &node.parent_session_id {
            Some(p) if nodes.contains_key(p) => {
                children_of.entry(p.clone()).or_default().push(id.clone())
            }
            _ => roots.push(id.clone()),
        }
    }
    fn build(
        id: &str,
        nodes: &mut HashMap<String, SessionNode>,
        children_of: &BTreeMap<String, Vec<String>>,
    ) -> Option<SessionNode> {
        let mut node = nodes.remove(id)?;
        if let Some(kids) = children_of.get(id) {
            let mut built: Vec<SessionNode> = kids
                .iter()
                .filter_map(|k| build(k, nodes, children_of))
                .collect();
            built.sort_by_key(|n| n.started_ms);
            node.children = built;
        }
        Some(node)
    }
    let mut trees: Vec<SessionNode> = roots
        .iter()
        .filter_map(|r| build(r, &mut nodes, &children_of))
        .collect();
    trees.sort_by_key(|t| std::cmp::Reverse(t.started_ms));
    trees
}

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
}

fn count(node: &SessionNode) -> u32 {
    1 + node.children.iter().map(count).sum::<u32>()
}

/// Root sessions of a trace folder, newest first.
pub fn list_root_sessions(trace_dir: &Path) -> Vec<SessionSummary> {
    read_trees(trace_dir)
        .into_iter()
        .filter(|n| n.agent == AgentKind::Main)
        .map(|n| SessionSummary {
            title: n
                .first_prompt
                .as_deref()
                .map(|p| shorten(p, 80))
                .unwrap_or_default(),
            session_id: n.session_id.clone(),
            started_ms: n.started_ms,
            status: n.status,
            terminal_reason: n.terminal_reason,
            total_tokens: n.usage_with_descendants.total(),
            sessions: count(&n),
        })
        .collect()
}

fn shorten(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let mut out: String = line.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// A session's place in the tree, from the first line of its file alone.
#[derive(serde::Deserialize)]
struct Head {
    ts_ms: u64,
    parent_session_id: Option<String>,
}

/// The ids of a session and all its descendants, depth-first, children in start order. Reads only
/// the first line of each file: opening one session must not cost a parse of the project's whole
/// history.
fn tree_ids(trace_dir: &Path, root_session_id: &str) -> Result<Vec<String>, RuntimeError> {
    let mut children: HashMap<String, Vec<(u64, String)>> = HashMap::new();
    let mut known = false;
    for (id, path) in session_files(trace_dir) {
        let Ok(file) = fs::File::open(&path) else {
            continue;
        };
        let mut first = Vec::new();
        if std::io::BufRead::read_until(&mut std::io::BufReader::new(file), b'\n', &mut first)
            .is_err()
        {
            continue;
        }
        let Ok(head) = serde_json::from_slice::<Head>(&first) else {
            continue;
        };
        known |= id == root_session_id;
        if let Some(parent) = head.parent_session_id {
            children.entry(parent).or_default().push((head.ts_ms, id));
        }
    }
    if !known {
        return Err(RuntimeError::UnknownSession(root_session_id.to_string()));
    }
    for list in children.values_mut() {
        list.sort();
    }
    let mut out = Vec::new();
    let mut stack = vec![root_session_id.to_string()];
    while let Some(id) = stack.pop() {
        if let Some(kids) = children.get(&id) {
            stack.extend(kids.iter().rev().map(|(_, k)| k.clone()));
        }
        out.push(id);
    }
    Ok(out)
}

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

/// The same records as [`load_session_tree`], as one JSON array built from the files' own lines: a
/// host that only forwards them (the app, to the webview) skips decoding and re-encoding every
/// record. Lines that are not complete JSON (a crash mid-write) are left out, as the reader does.
pub fn load_session_tree_json(
    trace_dir: &Path,
    root_session_id: &str,
) -> Result<String, RuntimeError> {
    let mut out = String::from("[");
    for id in tree_ids(trace_dir, root_session_id)? {
        let path = trace_dir.join(format!("{id}.jsonl"));
        let bytes = fs::read(&path).map_err(|e| RuntimeError::Trace {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // A syntax check only (no record is built): enough to drop a cut line.
            if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err() {
                continue;
            }
            let Ok(text) = std::str::from_utf8(line) else {
                continue;
            };
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(text.trim_end());
        }
    }
    out.push(']');
    Ok(out)
}

/// Deletes the files of a root session and its descendants.
pub fn delete_session_tree(trace_dir: &Path, root_session_id: &str) -> Result<(), RuntimeError> {
    for id in tree_ids(trace_dir, root_session_id)? {
        let path = trace_dir.join(format!("{id}.jsonl"));
        fs::remove_file(&path).map_err(|e| RuntimeError::Trace {
            path,
            reason: e.to_string(),
        })?;
    }
    Ok(())
}
