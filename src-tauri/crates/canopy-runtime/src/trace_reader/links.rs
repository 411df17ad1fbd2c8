//! Links between sessions, from the first line of each file alone: which session file is whose
//! child, the ids of one tree, and the parent links that go round in a circle (never followed).
//! Opening one session or listing history must not cost a parse of the project's whole history.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use canopy_protocol::AgentKind;
use serde::Deserialize;

use crate::RuntimeError;

pub(super) fn session_files(trace_dir: &Path) -> Vec<(String, PathBuf)> {
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

/// The sessions whose parent links go round in a circle (including one naming itself): following
/// `parent` from any of them comes back to it. `known` says whether a parent's file is there; a
/// chain that reaches a missing or absent parent ends. Linear in the number of sessions.
pub(super) fn cycle_members<'a>(
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

/// A session's place in the tree, from the first line of its file alone.
#[derive(Deserialize)]
pub(super) struct Head {
    pub(super) ts_ms: u64,
    pub(super) parent_session_id: Option<String>,
    pub(super) event: HeadEvent,
}

/// The part of a first line's event that history needs.
#[derive(Deserialize)]
pub(super) struct HeadEvent {
    /// Only `session_started` has it.
    #[serde(default)]
    pub(super) agent: Option<AgentKind>,
}

/// One session file and what its first line says.
pub(super) struct FileHead {
    pub(super) id: String,
    pub(super) path: PathBuf,
    pub(super) head: Head,
}

/// The first line of every session file that has a readable one, in file-name order. Opening one
/// session or listing history must not cost a parse of the project's whole history.
pub(super) fn heads(trace_dir: &Path) -> Vec<FileHead> {
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
pub(super) fn tree_ids(
    trace_dir: &Path,
    root_session_id: &str,
) -> Result<Vec<String>, RuntimeError> {
    tree_ids_and_link(trace_dir, root_session_id).map(|(ids, _)| ids)
}

/// [`tree_ids`], and the parent link of the root that was not followed because it closes a cycle.
pub(super) fn tree_ids_and_link(
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

/// The sessions of a folder whose first lines' parent links go round in a circle.
pub(super) fn head_cycles(heads: &[FileHead]) -> HashSet<&str> {
    let known: HashSet<&str> = heads.iter().map(|h| h.id.as_str()).collect();
    let parents: HashMap<&str, &str> = heads
        .iter()
        .filter_map(|h| Some((h.id.as_str(), h.head.parent_session_id.as_deref()?)))
        .collect();
    cycle_members(&parents, |p| known.contains(p))
}
