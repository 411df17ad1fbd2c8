//! Reads trace folders back: one session file, a whole session tree (root + descendants, linked by
//! `parent_session_id`), summaries of root sessions for history, and one tool call's recorded output.
//! A truncated last line (a crash mid-write) is skipped, never fatal. History reads only the head and
//! tail of each file and replay can leave big tool outputs out, so both stay fast on large traces.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use canopy_protocol::{
    AgentKind, BudgetUsage, Budgets, ModelInfo, TerminalReason, TraceEvent, TraceRecord, Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

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
const RUN_STARTED_TAG: &str = "\"type\":\"run_started\"";
const RUN_ENDED_TAG: &str = "\"type\":\"run_ended\"";
const MODEL_CALL_END_TAG: &str = "\"type\":\"model_call_end\"";
const TOOL_CALL_END_TAG: &str = "\"type\":\"tool_call_end\"";

fn trace_error(path: &Path, e: impl std::fmt::Display) -> RuntimeError {
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
    /// The parent this session's file names when that link was not followed because it closes a
    /// cycle (a session that is, through its parents, its own ancestor): the session is shown as
    /// a root instead, so a damaged folder neither hangs a reader nor hides a file.
    pub broken_parent: Option<String>,
}

impl Drop for SessionNode {
    // A 3,000-deep chain of sessions would otherwise be dropped by 3,000 nested calls.
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.children);
        while let Some(mut node) = stack.pop() {
            stack.append(&mut node.children);
        }
    }
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
        broken_parent: None,
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
                node.status = status_of(*terminal_reason);
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

fn status_of(reason: TerminalReason) -> SessionStatus {
    match reason {
        TerminalReason::Completed => SessionStatus::Completed,
        TerminalReason::Cancelled => SessionStatus::Cancelled,
        _ => SessionStatus::Failed,
    }
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
    link(session_files(trace_dir))
}

/// Reads one session and its descendants only (found from each file's first line), so showing one
/// session of a large history does not parse all of it.
pub fn read_tree(trace_dir: &Path, session_id: &str) -> Result<SessionNode, RuntimeError> {
    check_session_id(session_id)?;
    let (ids, broken) = tree_ids_and_link(trace_dir, session_id)?;
    let files = ids
        .into_iter()
        .map(|id| {
            let path = trace_dir.join(format!("{id}.jsonl"));
            (id, path)
        })
        .collect();
    let mut node = link(files)
        .into_iter()
        .find(|n| n.session_id == session_id)
        .ok_or_else(|| RuntimeError::UnknownSession(session_id.to_string()))?;
    // Its parent's file is not among those read, so `link` cannot see the cycle; the heads did.
    node.broken_parent = broken;
    Ok(node)
}

/// Parses the given session files and links them into trees, roots newest first. A parent link
/// that closes a cycle is not followed: its session becomes a root with `broken_parent` set.
fn link(files: Vec<(String, PathBuf)>) -> Vec<SessionNode> {
    let mut nodes: HashMap<String, SessionNode> = HashMap::new();
    for (id, path) in files {
        if let Ok(file) = read_session_file(&path) {
            if file.records.is_empty() {
                continue;
            }
            nodes.insert(id.clone(), summarize(&id, &file));
        }
    }
    let parents: HashMap<&str, &str> = nodes
        .iter()
        .filter_map(|(id, n)| Some((id.as_str(), n.parent_session_id.as_deref()?)))
        .collect();
    let cyclic = cycle_members(&parents, |p| nodes.contains_key(p));
    let mut children_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut roots = Vec::new();
    for (id, node) in &nodes {
        match &node.parent_session_id {
            Some(p) if nodes.contains_key(p) && !cyclic.contains(id.as_str()) => {
                children_of.entry(p.clone()).or_default().push(id.clone())
            }
            _ => roots.push(id.clone()),
        }
    }
    let cyclic: HashSet<String> = cyclic.into_iter().map(str::to_string).collect();
    for id in &cyclic {
        if let Some(n) = nodes.get_mut(id) {
            n.broken_parent = n.parent_session_id.clone();
        }
    }
    let mut trees: Vec<SessionNode> = roots
        .iter()
        .filter_map(|r| build(r, &mut nodes, &children_of))
        .collect();
    trees.sort_by_key(|t| std::cmp::Reverse(t.started_ms));
    trees
}

/// Builds the tree under `root` without recursion (a chain of sessions can be thousands deep).
/// Each node is taken out of `nodes` once, so even a damaged map cannot make it loop.
fn build(
    root: &str,
    nodes: &mut HashMap<String, SessionNode>,
    children_of: &BTreeMap<String, Vec<String>>,
) -> Option<SessionNode> {
    let top = nodes.remove(root)?;
    // Depth-first: a node waits on the stack with its children still to build, and is attached
    // to its parent once they are all done.
    let mut stack: Vec<(SessionNode, std::vec::IntoIter<String>)> = Vec::new();
    let kids = |id: &str| children_of.get(id).cloned().unwrap_or_default().into_iter();
    let first = kids(&top.session_id);
    stack.push((top, first));
    loop {
        let next = stack.last_mut().and_then(|(_, pending)| pending.next());
        match next {
            Some(child_id) => {
                if let Some(child) = nodes.remove(&child_id) {
                    let pending = kids(&child_id);
                    stack.push((child, pending));
                }
            }
            None => {
                let (mut done, _) = stack.pop()?;
                done.children.sort_by_key(|n| n.started_ms);
                match stack.last_mut() {
                    Some((parent, _)) => parent.children.push(done),
                    None => return Some(done),
                }
            }
        }
    }
}

/// The sessions whose parent links go round in a circle (including one naming itself): following
/// `parent` from any of them comes back to it. `known` says whether a parent's file is there; a
/// chain that reaches a missing or absent parent ends. Linear in the number of sessions.
fn cycle_members<'a>(
    parents: &HashMap<&'a str, &'a str>,
    known: impl Fn(&str) -> bool,
) -> HashSet<&'a str> {
    let mut state: HashMap<&str, u8> = HashMap::new(); // 1 on the current path, 2 done
    let mut cyclic = HashSet::new();
    let mut ids: Vec<&str> = parents.keys().copied().collect();
    ids.sort_unstable();
    for start in ids {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(id) = at {
            match state.get(id) {
                Some(2) => break,
                Some(_) => {
                    // Back on the current path: everything from `id` on is the cycle.
                    if let Some(pos) = path.iter().position(|p| *p == id) {
                        cyclic.extend(path[pos..].iter().copied());
                    }
                    break;
                }
                None => {
                    state.insert(id, 1);
                    path.push(id);
                    at = parents.get(id).copied().filter(|p| known(p));
                }
            }
        }
        for id in path {
            state.insert(id, 2);
        }
    }
    cyclic
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
    /// The parent its file names, when that link closes a cycle and was not followed (the session
    /// is listed as a root instead).
    pub broken_parent: Option<String>,
}

/// Bytes read from the end of a root file to find its last run's end; grown (×4, up to the whole
/// file) when that window holds neither the last `run_ended` nor the last `run_started`.
const TAIL_WINDOW: u64 = 64 * 1024;

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

/// The sessions of a folder whose first lines' parent links go round in a circle.
fn head_cycles(heads: &[FileHead]) -> HashSet<&str> {
    let known: HashSet<&str> = heads.iter().map(|h| h.id.as_str()).collect();
    let parents: HashMap<&str, &str> = heads
        .iter()
        .filter_map(|h| Some((h.id.as_str(), h.head.parent_session_id.as_deref()?)))
        .collect();
    cycle_members(&parents, |p| known.contains(p))
}

/// Sessions in the tree under `id` (itself included); each counted once whatever the links say.
fn tree_size(id: &str, children: &HashMap<&str, Vec<&str>>) -> u32 {
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
struct RunEnd {
    status: SessionStatus,
    reason: TerminalReason,
    total_tokens: u64,
}

/// The last run's outcome, from the end of the file backwards: its `run_ended`, or — when a
/// `run_started` comes first — interrupted. Reads a growing window from the end, so a normal file
/// costs one small read.
fn last_run_end(path: &Path) -> RunEnd {
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
fn first_prompt(path: &Path) -> Option<String> {
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
#[derive(Deserialize)]
struct Head {
    ts_ms: u64,
    parent_session_id: Option<String>,
    event: HeadEvent,
}

/// The part of a first line's event that history needs.
#[derive(Deserialize)]
struct HeadEvent {
    /// Only `session_started` has it.
    #[serde(default)]
    agent: Option<AgentKind>,
}

/// One session file and what its first line says.
struct FileHead {
    id: String,
    path: PathBuf,
    head: Head,
}

/// The first line of every session file that has a readable one, in file-name order. Opening one
/// session or listing history must not cost a parse of the project's whole history.
fn heads(trace_dir: &Path) -> Vec<FileHead> {
    session_files(trace_dir)
        .into_iter()
        .filter_map(|(id, path)| {
            let file = fs::File::open(&path).ok()?;
            let mut first = Vec::new();
            BufReader::new(file).read_until(b'\n', &mut first).ok()?;
            let head = serde_json::from_slice::<Head>(&first).ok()?;
            Some(FileHead { id, path, head })
        })
        .collect()
}

/// The ids of a session and all its descendants, depth-first, children in start order, from the
/// first line of each file.
fn tree_ids(trace_dir: &Path, root_session_id: &str) -> Result<Vec<String>, RuntimeError> {
    tree_ids_and_link(trace_dir, root_session_id).map(|(ids, _)| ids)
}

/// [`tree_ids`], and the parent link of the root that was not followed because it closes a cycle.
fn tree_ids_and_link(
    trace_dir: &Path,
    root_session_id: &str,
) -> Result<(Vec<String>, Option<String>), RuntimeError> {
    let heads = heads(trace_dir);
    let cyclic = head_cycles(&heads);
    let mut children: HashMap<&str, Vec<(u64, &str)>> = HashMap::new();
    let mut known = false;
    for h in &heads {
        known |= h.id == root_session_id;
        if let Some(parent) = &h.head.parent_session_id {
            // A link that closes a cycle is not followed, as in `read_trees`.
            if !cyclic.contains(h.id.as_str()) {
                children
                    .entry(parent.as_str())
                    .or_default()
                    .push((h.head.ts_ms, &h.id));
            }
        }
    }
    if !known {
        return Err(RuntimeError::UnknownSession(root_session_id.to_string()));
    }
    for list in children.values_mut() {
        list.sort();
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![root_session_id];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(kids) = children.get(id) {
            stack.extend(kids.iter().rev().map(|(_, k)| *k));
        }
        out.push(id.to_string());
    }
    let broken = heads
        .iter()
        .find(|h| h.id == root_session_id && cyclic.contains(h.id.as_str()))
        .and_then(|h| h.head.parent_session_id.clone());
    Ok((out, broken))
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
type LineShape = Option<Option<std::ops::Range<usize>>>;

/// A syntax check only (no record is built): enough to drop a cut line.
fn check_syntax(line: &str) -> LineShape {
    serde_json::from_str::<serde::de::IgnoredAny>(line)
        .ok()
        .map(|_| None)
}

/// The fields of a `tool_call_end` line that elision needs, borrowed from the line.
#[derive(Deserialize)]
struct EndLine<'a> {
    #[serde(borrow)]
    event: EndEvent<'a>,
}

#[derive(Deserialize)]
struct EndEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a RawValue,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_elided: Option<&'a RawValue>,
}

/// Where the `output` value of a `tool_call_end` line is, when it decodes to more than `limit`
/// bytes. Decoding the probe checks the whole line's syntax too.
fn probe_output(line: &str, limit: usize) -> LineShape {
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

/// A session id becomes a file name: only letters, digits, `-`, `_` and `.` (never `..`).
fn check_session_id(id: &str) -> Result<(), RuntimeError> {
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

/// Deletes the files of a root session and its descendants.
pub fn delete_session_tree(trace_dir: &Path, root_session_id: &str) -> Result<(), RuntimeError> {
    for id in tree_ids(trace_dir, root_session_id)? {
        let path = trace_dir.join(format!("{id}.jsonl"));
        fs::remove_file(&path).map_err(|e| trace_error(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_protocol::{
        ModelSlot, PermissionMode, ProviderKind, ToolStatus, TRACE_SCHEMA_VERSION,
    };
    use serde_json::{json, Value};

    /// Writes trace files the way the runtime does: one compact JSON record per line.
    struct Trace {
        dir: tempfile::TempDir,
    }

    impl Trace {
        fn new() -> Self {
            Trace {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }

        fn write(&self, id: &str, events: Vec<TraceEvent>, parent: Option<&str>) -> Vec<String> {
            self.write_at(id, events, parent, 1_000)
        }

        /// Like `write`, with the first record at `ts0` ms.
        fn write_at(
            &self,
            id: &str,
            events: Vec<TraceEvent>,
            parent: Option<&str>,
            ts0: u64,
        ) -> Vec<String> {
            let lines: Vec<String> = events
                .into_iter()
                .enumerate()
                .map(|(i, event)| {
                    serde_json::to_string(&TraceRecord {
                        v: TRACE_SCHEMA_VERSION,
                        seq: i as u64,
                        ts_ms: ts0 + i as u64,
                        session_id: id.into(),
                        run_id: "r-1".into(),
                        parent_session_id: parent.map(str::to_string),
                        event,
                    })
                    .unwrap()
                })
                .collect();
            fs::write(self.file(id), lines.join("\n") + "\n").unwrap();
            lines
        }

        fn append(&self, id: &str, text: &str) {
            let mut bytes = fs::read(self.file(id)).unwrap();
            bytes.extend_from_slice(text.as_bytes());
            fs::write(self.file(id), bytes).unwrap();
        }

        fn file(&self, id: &str) -> PathBuf {
            self.path().join(format!("{id}.jsonl"))
        }
    }

    fn started(agent: AgentKind, system_prompt: &str) -> TraceEvent {
        TraceEvent::SessionStarted {
            agent,
            profile: "main".into(),
            description: None,
            model: ModelInfo {
                slot: ModelSlot::Main,
                requested_slot: ModelSlot::Main,
                fallback: false,
                provider: ProviderKind::Openai,
                model_id: "m".into(),
                base_url: "http://127.0.0.1:1/v1".into(),
            },
            budgets: Budgets {
                max_steps: 10,
                max_context_tokens: 1_000,
                max_total_tokens: 10_000,
                max_wall_time_ms: 60_000,
            },
            project_root: "/p".into(),
            parent: None,
            permission_mode: PermissionMode::Main,
            tools: vec!["Read".into()],
            system_prompt: system_prompt.into(),
            bash_sandbox: None,
        }
    }

    fn run(prompt: &str) -> TraceEvent {
        TraceEvent::RunStarted {
            prompt: prompt.into(),
        }
    }

    fn model_end(total_tokens: u64) -> TraceEvent {
        TraceEvent::ModelCallEnd {
            model_call_id: "m-1".into(),
            step: 1,
            text: "thinking".into(),
            reasoning: String::new(),
            tool_calls: vec![],
            finish_reason: None,
            usage: Usage {
                input_tokens: total_tokens,
                output_tokens: 0,
                reasoning_tokens: 0,
                estimated: false,
            },
            model: "m".into(),
            latency_ms: 1,
            error: None,
            totals: BudgetUsage {
                total_tokens,
                ..BudgetUsage::default()
            },
        }
    }

    fn ended(reason: TerminalReason, tokens_with_descendants: u64) -> TraceEvent {
        TraceEvent::RunEnded {
            terminal_reason: reason,
            final_text: None,
            result: None,
            error: None,
            usage: Usage::default(),
            usage_with_descendants: Usage {
                input_tokens: tokens_with_descendants,
                output_tokens: 0,
                reasoning_tokens: 0,
                estimated: false,
            },
            totals: BudgetUsage::default(),
            tool_calls: 0,
        }
    }

    fn begin(call_id: &str, arguments: Value) -> TraceEvent {
        TraceEvent::ToolCallBegin {
            call_id: call_id.into(),
            tool: "Read".into(),
            arguments,
            mutates: false,
        }
    }

    fn end(call_id: &str, output: &str) -> TraceEvent {
        TraceEvent::ToolCallEnd {
            call_id: call_id.into(),
            tool: "Read".into(),
            status: ToolStatus::Ok,
            output: output.into(),
            output_bytes: output.len() as u64,
            output_cap_bytes: 16_384,
            truncated: false,
            duration_ms: 3,
            output_elided: false,
        }
    }

    const ELIDE: LoadOptions = LoadOptions {
        elide_outputs_over: Some(256),
    };

    /// Outputs that exercise the splice: plain, at and past the limit, escapes, unicode, and text that
    /// looks like the field it sits in.
    fn tricky_outputs() -> Vec<(&'static str, String)> {
        vec![
            ("c-short", "fn main() {}".to_string()),
            ("c-at-limit", "a".repeat(256)),
            ("c-over-limit", "a".repeat(257)),
            (
                "c-escapes",
                format!(
                    "line \"one\"\n\ttab\\slash \u{1}ctl \"output\":\"fake\" {}",
                    "x".repeat(300)
                ),
            ),
            (
                "c-unicode",
                "caf\u{e9} \u{1F333} \u{65e5}\u{672c}".repeat(40),
            ),
            // 200 bytes decoded, over 256 as JSON: stays inline.
            ("c-escaped-short", "\"".repeat(200)),
            ("c-empty", String::new()),
            // Long enough as JSON to be over the limit without decoding.
            ("c-many-escapes", "\"".repeat(2_000)),
            // 1,500 bytes of JSON (`\u0001` each) for 250 decoded: stays inline.
            ("c-controls", "\u{1}".repeat(250)),
        ]
    }

    /// A root with one child; both make tool calls with the outputs above. The child's file ends in
    /// a line cut mid-write.
    fn tree_with_outputs(t: &Trace) -> Vec<(String, Vec<String>)> {
        let mut root = vec![started(AgentKind::Main, "sys"), run("map the code")];
        let mut child = vec![started(AgentKind::Subagent, "child sys"), run("look")];
        for (i, (id, output)) in tricky_outputs().into_iter().enumerate() {
            let events = if i % 2 == 0 { &mut root } else { &mut child };
            let call = format!("{id}-{i}");
            // Arguments holding an object tagged like the event must not be touched.
            events.push(begin(
                &call,
                json!({"type": "tool_call_end", "output": "y".repeat(400)}),
            ));
            events.push(end(&call, &output));
        }
        child.push(end("child-call", &"z".repeat(1_000)));
        root.push(begin("c-pending", json!({})));
        child.push(ended(TerminalReason::Completed, 5));
        root.push(ended(TerminalReason::Completed, 50));
        let root_lines = t.write("s-root", root, None);
        let child_lines = t.write("s-child", child, Some("s-root"));
        t.append(
            "s-child",
            "{\"v\":1,\"seq\":99,\"event\":{\"type\":\"tool_call_end\",\"output\":\"cut mid-wri",
        );
        vec![
            ("s-root".to_string(), root_lines),
            ("s-child".to_string(), child_lines),
        ]
    }

    #[test]
    fn elision_changes_only_big_outputs_and_they_can_be_fetched_back() {
        let t = Trace::new();
        let files = tree_with_outputs(&t);
        let full = load_session_tree(t.path(), "s-root").unwrap();
        let lazy = load_session_tree_json_with(t.path(), "s-root", &ELIDE).unwrap();

        // Byte for byte: each line as written, except the big outputs, replaced the slow and obvious
        // way (the writer serialises `output` exactly as `to_string` does).
        let mut expected = Vec::new();
        for (_, lines) in &files {
            for line in lines {
                let value: Value = serde_json::from_str(line).unwrap();
                let mut line = line.clone();
                if value["event"]["type"] == "tool_call_end" {
                    let output = value["event"]["output"].as_str().unwrap();
                    if output.len() > 256 {
                        let raw = format!("\"output\":{}", serde_json::to_string(output).unwrap());
                        assert!(line.contains(&raw));
                        line = line.replacen(&raw, "\"output\":\"\",\"output_elided\":true", 1);
                    }
                }
                expected.push(line);
            }
        }
        assert_eq!(lazy, format!("[{}]", expected.join(",")));

        // Parsed: the same records once each elided output is fetched back.
        let mut parsed: Vec<TraceRecord> = serde_json::from_str(&lazy).unwrap();
        let mut elided = Vec::new();
        for r in &mut parsed {
            if let TraceEvent::ToolCallEnd {
                call_id,
                output,
                output_elided,
                ..
            } = &mut r.event
            {
                if *output_elided {
                    assert_eq!(output, "", "{call_id}");
                    *output = read_tool_output(t.path(), &r.session_id, call_id).unwrap();
                    *output_elided = false;
                    elided.push(call_id.clone());
                }
            }
        }
        assert_eq!(parsed, full);
        elided.sort();
        assert_eq!(
            elided,
            [
                "c-escapes-3",
                "c-many-escapes-7",
                "c-over-limit-2",
                "c-unicode-4",
                "child-call"
            ]
        );

        // Without the option nothing changes.
        let plain: Vec<TraceRecord> =
            serde_json::from_str(&load_session_tree_json(t.path(), "s-root").unwrap()).unwrap();
        assert_eq!(plain, full);
    }

    #[test]
    fn a_cut_last_line_is_dropped_with_or_without_elision() {
        let t = Trace::new();
        tree_with_outputs(&t);
        let records = load_session_tree(t.path(), "s-root").unwrap();
        for options in [LoadOptions::default(), ELIDE] {
            let json = load_session_tree_json_with(t.path(), "s-root", &options).unwrap();
            let parsed: Vec<Value> = serde_json::from_str(&json).unwrap();
            assert_eq!(parsed.len(), records.len(), "{options:?}");
            assert!(!json.contains("cut mid-wri"));
        }
        assert_eq!(
            read_session_file(&t.file("s-child")).unwrap().skipped_lines,
            1
        );
    }

    #[test]
    fn read_tool_output_finds_calls_in_any_session_and_names_what_is_missing() {
        let t = Trace::new();
        tree_with_outputs(&t);
        assert_eq!(
            read_tool_output(t.path(), "s-child", "child-call").unwrap(),
            "z".repeat(1_000)
        );
        assert_eq!(
            read_tool_output(t.path(), "s-child", "c-escapes-3").unwrap(),
            tricky_outputs()[3].1
        );
        assert_eq!(
            read_tool_output(t.path(), "s-root", "c-unicode-4").unwrap(),
            tricky_outputs()[4].1
        );
        // The call exists, but in another session's file.
        let e = read_tool_output(t.path(), "s-root", "child-call").unwrap_err();
        assert!(
            matches!(&e, RuntimeError::UnknownToolCall { session_id, call_id }
                if session_id == "s-root" && call_id == "child-call"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "no tool call `child-call` in session `s-root`"
        );
        // Begun but never ended: nothing recorded.
        assert!(matches!(
            read_tool_output(t.path(), "s-root", "c-pending"),
            Err(RuntimeError::UnknownToolCall { .. })
        ));
        assert!(matches!(
            read_tool_output(t.path(), "s-nope", "child-call"),
            Err(RuntimeError::UnknownSession(id)) if id == "s-nope"
        ));
        for bad in ["", "../s-root", "a/b", "a\\b", "..", "s-root\0"] {
            let e = read_tool_output(t.path(), bad, "child-call").unwrap_err();
            assert!(
                matches!(e, RuntimeError::InvalidSessionId { .. }),
                "{bad:?}: {e:?}"
            );
        }
    }

    fn summary(t: &Trace, id: &str) -> SessionSummary {
        list_root_sessions(t.path())
            .into_iter()
            .find(|s| s.session_id == id)
            .unwrap_or_else(|| panic!("{id} not listed"))
    }

    #[test]
    fn history_lists_roots_with_the_last_runs_outcome_and_tree_size() {
        let t = Trace::new();
        t.write(
            "s-a",
            vec![
                started(AgentKind::Main, "sys"),
                run("first question\nwith a second line"),
                model_end(10),
                ended(TerminalReason::MaxSteps, 40),
                run("second question"),
                model_end(7),
                ended(TerminalReason::Completed, 90),
            ],
            None,
        );
        t.write(
            "s-a1",
            vec![started(AgentKind::Subagent, "c"), run("sub")],
            Some("s-a"),
        );
        t.write(
            "s-a2",
            vec![started(AgentKind::Subagent, "c"), run("sub")],
            Some("s-a1"),
        );
        // Newer, and its second run was cancelled after a completed first one.
        t.write_at(
            "s-b",
            vec![
                started(AgentKind::Main, "sys"),
                run("b"),
                ended(TerminalReason::Completed, 5),
                run("again"),
                ended(TerminalReason::Cancelled, 8),
            ],
            None,
            9_000,
        );

        let list = list_root_sessions(t.path());
        let ids: Vec<&str> = list.iter().map(|s| s.session_id.as_str()).collect();
        assert_eq!(ids, ["s-b", "s-a"], "roots only, newest first");
        let a = &list[1];
        assert_eq!(a.title, "first question");
        assert_eq!(a.started_ms, 1_000);
        assert_eq!(
            (a.status, a.terminal_reason, a.total_tokens, a.sessions),
            (
                SessionStatus::Completed,
                Some(TerminalReason::Completed),
                90,
                3
            )
        );
        let b = &list[0];
        assert_eq!(
            (b.status, b.terminal_reason, b.total_tokens, b.sessions),
            (
                SessionStatus::Cancelled,
                Some(TerminalReason::Cancelled),
                8,
                1
            )
        );
        // The same outcome the full parse derives.
        let trees = read_trees(t.path());
        let full = trees.iter().find(|n| n.session_id == "s-a").unwrap();
        assert_eq!(
            (
                full.status,
                full.usage_with_descendants.total(),
                count(full)
            ),
            (a.status, a.total_tokens, a.sessions)
        );
    }

    #[test]
    fn read_tree_reads_one_session_and_its_descendants_only() {
        let t = Trace::new();
        let sub = |p: &str| {
            vec![
                started(AgentKind::Subagent, p),
                run(p),
                ended(TerminalReason::Completed, 5),
            ]
        };
        t.write(
            "s-a",
            vec![
                started(AgentKind::Main, "a"),
                run("a"),
                ended(TerminalReason::Completed, 30),
            ],
            None,
        );
        t.write_at("s-b", sub("b"), Some("s-a"), 2_000);
        t.write_at("s-c", sub("c"), Some("s-b"), 3_000);
        t.write_at("s-d", sub("d"), Some("s-a"), 2_500);
        // Another root whose file is not even valid JSON: showing s-a must not need it.
        fs::write(t.file("s-other"), "{ not json\n").unwrap();

        let a = read_tree(t.path(), "s-a").unwrap();
        let ids = |n: &SessionNode| {
            n.children
                .iter()
                .map(|c| c.session_id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&a), ["s-b", "s-d"], "children in start order");
        assert_eq!(ids(&a.children[0]), ["s-c"]);
        assert_eq!(count(&a), 4);

        // A child shows as the root of its own subtree.
        let b = read_tree(t.path(), "s-b").unwrap();
        assert_eq!((b.session_id.as_str(), count(&b)), ("s-b", 2));

        assert!(
            matches!(read_tree(t.path(), "s-nope"), Err(RuntimeError::UnknownSession(id)) if id == "s-nope")
        );
        assert!(matches!(
            read_tree(t.path(), "../s-a"),
            Err(RuntimeError::InvalidSessionId { .. })
        ));
    }

    fn count(node: &SessionNode) -> u32 {
        1 + node.children.iter().map(count).sum::<u32>()
    }

    /// Every session id in the trees, depth-first, without recursion (a chain can be deep).
    fn all_ids(trees: &[SessionNode]) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack: Vec<&SessionNode> = trees.iter().collect();
        while let Some(n) = stack.pop() {
            out.push(n.session_id.clone());
            stack.extend(n.children.iter());
        }
        out.sort();
        out
    }

    /// Runs `f` on a thread with the main thread's usual stack and fails if it has not returned in
    /// `secs`: a reader that loops on a cycle must fail the test, not hang the suite.
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                let _ = tx.send(f());
            })
            .unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .expect("the reader did not finish: it loops")
    }

    fn sub(p: &str) -> Vec<TraceEvent> {
        vec![
            started(AgentKind::Subagent, p),
            run(p),
            ended(TerminalReason::Completed, 5),
        ]
    }

    /// s-a and s-b name each other as parent, s-c names itself, s-e hangs off s-a, and s-r is an
    /// ordinary root: what a hand-edited or corrupted trace folder can hold.
    fn cyclic(t: &Trace) {
        t.write_at("s-a", sub("a"), Some("s-b"), 1_000);
        t.write_at("s-b", sub("b"), Some("s-a"), 2_000);
        t.write_at(
            "s-c",
            vec![
                started(AgentKind::Main, "c"),
                run("c"),
                ended(TerminalReason::Completed, 5),
            ],
            Some("s-c"),
            3_000,
        );
        t.write_at("s-e", sub("e"), Some("s-a"), 4_000);
        t.write_at(
            "s-r",
            vec![
                started(AgentKind::Main, "r"),
                run("r"),
                ended(TerminalReason::Completed, 5),
            ],
            None,
            5_000,
        );
    }

    #[test]
    fn parent_cycles_end_and_every_file_is_still_shown() {
        let t = Trace::new();
        cyclic(&t);
        let dir = t.path().to_path_buf();
        let trees = within(5, move || read_trees(&dir));
        assert_eq!(all_ids(&trees), ["s-a", "s-b", "s-c", "s-e", "s-r"]);
        let broken = |id: &str| {
            trees
                .iter()
                .find(|t| t.session_id == id)
                .map(|t| t.broken_parent.clone())
        };
        // Each session of a cycle is a root that shows the link it could not follow.
        assert_eq!(broken("s-a"), Some(Some("s-b".into())));
        assert_eq!(broken("s-b"), Some(Some("s-a".into())));
        assert_eq!(broken("s-c"), Some(Some("s-c".into())));
        assert_eq!(broken("s-r"), Some(None));
        let a = trees.iter().find(|t| t.session_id == "s-a").unwrap();
        assert_eq!(
            a.children[0].session_id, "s-e",
            "what hangs off a cycle stays under it"
        );
        for id in ["s-a", "s-b", "s-c"] {
            let dir = t.path().to_path_buf();
            let tree = within(5, move || read_tree(&dir, id).unwrap());
            assert_eq!(tree.session_id, id);
            assert!(
                tree.broken_parent.is_some(),
                "{id} shows its broken link alone too"
            );
            let dir = t.path().to_path_buf();
            let records = within(5, move || load_session_tree(&dir, id).unwrap());
            assert!(records.iter().any(|r| r.session_id == id));
            let dir = t.path().to_path_buf();
            let json = within(5, move || load_session_tree_json(&dir, id).unwrap());
            assert!(json.contains(id));
        }
        let dir = t.path().to_path_buf();
        let listed = within(5, move || list_root_sessions(&dir));
        let mut ids: Vec<&str> = listed.iter().map(|s| s.session_id.as_str()).collect();
        ids.sort();
        // The subagent sessions in the cycle are listed too: nothing recorded is hidden.
        assert_eq!(ids, ["s-a", "s-b", "s-c", "s-r"]);
        let a = listed.iter().find(|s| s.session_id == "s-a").unwrap();
        assert_eq!((a.sessions, a.broken_parent.as_deref()), (2, Some("s-b")));
        let dir = t.path().to_path_buf();
        within(5, move || delete_session_tree(&dir, "s-c").unwrap());
        assert!(!t.file("s-c").exists());
        assert!(t.file("s-a").exists() && t.file("s-r").exists());
    }

    #[test]
    fn a_3000_deep_parent_chain_does_not_overflow_the_stack() {
        let t = Trace::new();
        t.write(
            "s-0",
            vec![
                started(AgentKind::Main, "root"),
                run("root"),
                ended(TerminalReason::Completed, 5),
            ],
            None,
        );
        for i in 1..=3000u64 {
            t.write_at(
                &format!("s-{i}"),
                sub("deep"),
                Some(&format!("s-{}", i - 1)),
                1_000 + i * 10,
            );
        }
        let dir = t.path().to_path_buf();
        let trees = within(30, move || {
            let trees = read_trees(&dir);
            let ids = all_ids(&trees);
            // Dropped here, on the big stack, like the CLI drops it.
            (ids.len(), trees.len())
        });
        assert_eq!(trees, (3001, 1));
        let dir = t.path().to_path_buf();
        let one = within(30, move || {
            all_ids(&[read_tree(&dir, "s-0").unwrap()]).len()
        });
        assert_eq!(one, 3001);
        let dir = t.path().to_path_buf();
        let records = within(30, move || load_session_tree(&dir, "s-0").unwrap().len());
        assert_eq!(records, 3001 * 3);
        let dir = t.path().to_path_buf();
        let listed = within(30, move || list_root_sessions(&dir));
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].sessions, 3001);
    }

    #[test]
    fn a_root_without_run_ended_is_interrupted_with_its_runs_tokens_so_far() {
        let t = Trace::new();
        t.write(
            "s-crash",
            vec![
                started(AgentKind::Main, "sys"),
                run("one"),
                model_end(30),
                ended(TerminalReason::Completed, 100),
                run("two"),
                model_end(12),
                model_end(25),
                end("c-1", "out"),
            ],
            None,
        );
        let s = summary(&t, "s-crash");
        assert_eq!(
            (
                s.status,
                s.terminal_reason,
                s.total_tokens,
                s.title.as_str()
            ),
            (
                SessionStatus::Interrupted,
                Some(TerminalReason::Interrupted),
                25,
                "one"
            )
        );
        // Killed before any model call, and before any run.
        t.write(
            "s-early",
            vec![started(AgentKind::Main, "sys"), run("early")],
            None,
        );
        t.write("s-bare", vec![started(AgentKind::Main, "sys")], None);
        for id in ["s-early", "s-bare"] {
            let s = summary(&t, id);
            assert_eq!(
                (s.status, s.total_tokens),
                (SessionStatus::Interrupted, 0),
                "{id}"
            );
        }
        assert_eq!(summary(&t, "s-bare").title, "");
    }

    #[test]
    fn an_interrupted_run_far_from_the_end_is_found_past_the_tail_window() {
        let t = Trace::new();
        let mut events = vec![
            started(AgentKind::Main, "sys"),
            run("one"),
            ended(TerminalReason::Completed, 100),
            run("two"),
            model_end(9),
        ];
        // More than the first tail window of outputs after the last run started.
        for i in 0..40 {
            events.push(end(&format!("c-{i}"), &"o".repeat(4_000)));
        }
        t.write("s-long", events, None);
        assert!(fs::metadata(t.file("s-long")).unwrap().len() > 2 * TAIL_WINDOW);
        let s = summary(&t, "s-long");
        assert_eq!((s.status, s.total_tokens), (SessionStatus::Interrupted, 9));
    }

    #[test]
    fn the_title_is_found_when_run_started_is_far_from_the_first_line() {
        let t = Trace::new();
        // A first line larger than any window, then other records before the run starts.
        t.write(
            "s-big",
            vec![
                started(AgentKind::Main, &"p".repeat(300_000)),
                end("c-0", "stray"),
                run("the real title"),
                ended(TerminalReason::Completed, 3),
            ],
            None,
        );
        let s = summary(&t, "s-big");
        assert_eq!(
            (s.title.as_str(), s.status, s.total_tokens),
            ("the real title", SessionStatus::Completed, 3)
        );
    }

    #[test]
    fn a_truncated_last_line_does_not_change_the_outcome() {
        let t = Trace::new();
        t.write(
            "s-cut",
            vec![
                started(AgentKind::Main, "sys"),
                run("q"),
                ended(TerminalReason::Completed, 44),
            ],
            None,
        );
        // A cut `run_started` (a new run the crash interrupted before it reached the disk whole),
        // ending inside a multi-byte character.
        t.append(
            "s-cut",
            "{\"v\":1,\"seq\":3,\"ts_ms\":5,\"session_id\":\"s-cut\",\"run_id\":\"r\",\"parent_session_id\":null,\"event\":{\"type\":\"run_started\",\"prompt\":\"caf\u{e9}",
        );
        let mut bytes = fs::read(t.file("s-cut")).unwrap();
        bytes.pop();
        fs::write(t.file("s-cut"), bytes).unwrap();
        let s = summary(&t, "s-cut");
        assert_eq!(
            (s.status, s.total_tokens, s.sessions),
            (SessionStatus::Completed, 44, 1)
        );
    }
}
