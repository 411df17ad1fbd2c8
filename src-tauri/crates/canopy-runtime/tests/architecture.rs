//! The shape the crates keep (issue #9): no module of any crate over ~600 lines of code outside its
//! tests, and no module of the runtime or tools crates importing one that imports it back, so each
//! piece can be read and changed on its own. Read from the sources, as a newcomer would.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lines of non-test code a module may have.
const MAX_CODE_LINES: usize = 620;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code before its `#[cfg(test)]` module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("\n#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `a::b` for `src/a/b.rs` or `src/a/b/mod.rs`; `""` for the crate root.
fn module_path(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts.join("::")
}

/// The modules of the crate at `src` and the ones each names through `crate::` or `super::`
/// (the deepest module the path reaches). The crate root declares every module and is left out.
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_path(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_path(src, file);
        if me.is_empty() {
            continue;
        }
        let parent = me.rsplit_once("::").map_or("", |(p, _)| p).to_string();
        let text = code(file);
        let mut deps = BTreeSet::new();
        for (prefix, base) in [("crate::", String::new()), ("super::", parent.clone())] {
            for (at, _) in text.match_indices(prefix) {
                let before = text[..at].chars().last();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let rest = &text[at + prefix.len()..];
                let path: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
                // `use crate::{a, b::c}` names several modules at once.
                let braced: Vec<String> = if rest[path.len()..].starts_with('{') {
                    let inner = &rest[path.len() + 1..];
                    let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
                    inner
                        .split(',')
                        .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                        .collect()
                } else {
                    vec![String::new()]
                };
                for extra in braced {
                    let mut full: Vec<&str> = Vec::new();
                    if !base.is_empty() {
                        full.extend(base.split("::"));
                    }
                    full.append(&mut segments.clone());
                    if !extra.is_empty() {
                        full.push(&extra);
                    }
                    let target = (1..=full.len())
                        .rev()
                        .map(|n| full[..n].join("::"))
                        .find(|m| modules.contains(m));
                    if let Some(target) = target {
                        if target != me
                            && !target.is_empty()
                            && !me.starts_with(&format!("{target}::"))
                        {
                            deps.insert(target);
                        }
                    }
                }
                segments.clear();
            }
        }
        graph.insert(me, deps);
    }
    graph
}

/// One import cycle of `graph`, if it has any.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let start = path.iter().position(|p| p == next).unwrap_or(0);
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, state, path) {
                        return Some(cycle);
                    }
                }
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str()) {
            if let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

/// The `src` folder of every crate of the workspace, the app's included: the size limit holds for all.
fn every_crate_src() -> Vec<(String, PathBuf)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                p.join("src"),
            )
        })
        .collect();
    dirs.push(("canopy-app".to_string(), crates.join("../src")));
    dirs.sort();
    dirs
}

#[test]
fn no_module_is_over_the_size_limit() {
    let krates = every_crate_src();
    for name in [
        "canopy-runtime",
        "canopy-tools",
        "canopy-test-support",
        "canopy-app",
    ] {
        assert!(
            krates.iter().any(|(k, _)| k == name),
            "{name} missing: {krates:?}"
        );
    }
    for (krate, src) in krates {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(
            !files.is_empty(),
            "{krate}: no sources found at {}",
            src.display()
        );
        for file in files {
            let lines = code(&file).lines().count();
            assert!(
                lines <= MAX_CODE_LINES,
                "{} has {lines} lines of code outside its tests (at most {MAX_CODE_LINES}): split it",
                file.display()
            );
        }
    }
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    for krate in ["canopy-runtime", "canopy-tools"] {
        let graph = import_graph(&crate_src(krate));
        assert!(graph.len() > 5, "{krate}: {graph:?}");
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{krate}: import cycle {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("agent")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod agent;\nmod task;\n").unwrap();
    std::fs::write(src.join("agent/mod.rs"), "mod run;\n").unwrap();
    std::fs::write(src.join("agent/run.rs"), "use crate::{task, x};\n").unwrap();
    std::fs::write(
        src.join("task.rs"),
        "fn f() { crate::agent::run::go(); }\n#[cfg(test)]\nmod tests { use crate::lib; }\n",
    )
    .unwrap();
    let graph = import_graph(src);
    assert_eq!(graph["agent::run"], BTreeSet::from(["task".to_string()]));
    assert_eq!(graph["task"], BTreeSet::from(["agent::run".to_string()]));
    let cycle = find_cycle(&graph).unwrap();
    assert_eq!(cycle.first(), cycle.last());
    std::fs::write(src.join("task.rs"), "fn f() {}\n").unwrap();
    assert_eq!(find_cycle(&import_graph(src)), None);
}
