//! Session trees: every session file of a trace folder summarized and linked to its parent by
//! `parent_session_id`, with cycles and orphans kept visible rather than lost.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use canopy_protocol::{
    AgentKind, BudgetUsage, Budgets, ModelInfo, TerminalReason, TraceEvent, Usage,
};
use serde::Serialize;

use crate::RuntimeError;

use super::file::{check_session_id, read_session_file, SessionFile};
use super::links::{cycle_members, session_files, tree_ids_and_link};

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

pub(super) fn summarize(id: &str, file: &SessionFile) -> SessionNode {
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

pub(super) fn status_of(reason: TerminalReason) -> SessionStatus {
    match reason {
        TerminalReason::Completed => SessionStatus::Completed,
        TerminalReason::Cancelled => SessionStatus::Cancelled,
        _ => SessionStatus::Failed,
    }
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
pub(super) fn link(files: Vec<(String, PathBuf)>) -> Vec<SessionNode> {
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
pub(super) fn build(
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
