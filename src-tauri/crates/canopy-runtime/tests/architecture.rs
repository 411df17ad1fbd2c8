//! The shape the crates keep (issue #9), checked for every crate of the workspace (the app's
//! `src-tauri/src` included): no module over ~600 lines of code outside its tests, no module
//! importing one that imports it back, so each piece can be read and changed on its own; and every
//! Tauri command and every `canopy-cli` subcommand handler a short call into the host layer, so the
//! wiring stays in `canopy-host` where both hosts share it. Read from the sources, as a newcomer
//! would.

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
    // `src/bin/*.rs` are crate roots of their own, not modules of this crate.
    files.retain(|f| !f.starts_with(src.join("bin")));
    let modules: BTreeSet<String> = files.iter().map(|f| module_path(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_path(src, file);
        if me.is_empty() {
            continue;
        }
        let parent = me.rsplit_once("::").map_or("", |(p, _)| p).to_string();
        // A doc link or a comment naming a module is no import.
        let text: String = code(file)
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
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

/// The workspace's root folder.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The `src` folder of every crate of the workspace (the root manifest's `members`), by package
/// name: the app's included, and any crate added later.
fn every_crate_src() -> Vec<(String, PathBuf)> {
    let root = workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = &manifest[manifest.find("members = [").unwrap()..];
    let members = &members[..members.find(']').unwrap()];
    let mut dirs: Vec<(String, PathBuf)> = members
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|member| {
            let dir = root.join(member);
            let package = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            let name = package
                .lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .unwrap()
                .trim_end_matches('"')
                .to_string();
            (name, dir.join("src"))
        })
        .collect();
    dirs.sort();
    dirs
}

/// The crates the checks must find, so a moved folder cannot make them pass by checking nothing.
const EXPECTED_CRATES: [&str; 10] = [
    "canopy-app",
    "canopy-cli",
    "canopy-config",
    "canopy-e2e",
    "canopy-host",
    "canopy-protocol",
    "canopy-providers",
    "canopy-runtime",
    "canopy-test-support",
    "canopy-tools",
];

#[test]
fn no_module_is_over_the_size_limit() {
    let krates = every_crate_src();
    let names: Vec<&str> = krates.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, EXPECTED_CRATES, "{krates:?}");
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
    let krates = every_crate_src();
    let names: Vec<&str> = krates.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, EXPECTED_CRATES, "{krates:?}");
    let mut cycles = Vec::new();
    for (krate, src) in krates {
        let graph = import_graph(&src);
        // A crate of one file has no module besides its root; the bigger ones must be seen.
        if [
            "canopy-runtime",
            "canopy-tools",
            "canopy-host",
            "canopy-app",
        ]
        .contains(&krate.as_str())
        {
            assert!(graph.len() > 5, "{krate}: {graph:?}");
        }
        if let Some(cycle) = find_cycle(&graph) {
            cycles.push(format!("{krate}: {}", cycle.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_finder_sees_a_planted_cycle_in_a_module_graph() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
            g.entry(to.to_string()).or_default();
        }
        g
    };
    // The app's old shape: state -> commands::projects -> state.
    let acyclic = graph(&[
        ("commands::projects", "state"),
        ("commands::runs", "state"),
        ("commands::runs", "error"),
        ("state", "error"),
        ("typescript", "commands::projects"),
    ]);
    assert_eq!(find_cycle(&acyclic), None);
    let mut planted = acyclic.clone();
    planted
        .get_mut("state")
        .unwrap()
        .insert("commands::projects".to_string());
    let cycle = find_cycle(&planted).expect("the planted cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&"state".to_string()), "{cycle:?}");
    assert!(
        cycle.contains(&"commands::projects".to_string()),
        "{cycle:?}"
    );
    // A longer loop through three modules is found as well.
    let three = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]);
    let cycle = find_cycle(&three).expect("a -> b -> c -> a");
    assert_eq!(cycle.len(), 4, "{cycle:?}");
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
    // Naming the other module in a doc link is no import.
    std::fs::write(
        src.join("task.rs"),
        "/// Unlike [`crate::agent::run::go`].\nfn f() {}\n",
    )
    .unwrap();
    assert_eq!(import_graph(src)["task"], BTreeSet::new());
    assert_eq!(find_cycle(&import_graph(src)), None);
}

/// Lines of a body a Tauri command or a CLI subcommand handler may have (blank and comment lines
/// not counted): enough for its arguments, `State`, a call into `canopy-host` and forwarding a
/// channel; anything longer is wiring that belongs in the host layer, shared by both hosts.
const MAX_HANDLER_LINES: usize = 15;

/// The body of the function whose `fn NAME` starts at `at` in `text`: the lines between its opening
/// brace and the matching closing one, without blank and comment lines.
fn body_lines(text: &str, at: usize) -> Vec<String> {
    // The signature's parentheses and `->` hold no braces in this code base's handlers; the first
    // `{` after the name opens the body.
    let open = at + text[at..].find('{').unwrap();
    let mut depth = 0usize;
    let mut end = open;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
            _ => {}
        }
    }
    text[open + 1..end]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .map(str::to_string)
        .collect()
}

/// `(name, body lines)` of each `#[tauri::command]` function in `text` (the attribute at the start
/// of a line, not one a comment mentions).
fn tauri_commands(text: &str) -> Vec<(String, Vec<String>)> {
    text.match_indices("\n#[tauri::command]")
        .map(|(at, _)| {
            let fn_at = at + text[at..].find("fn ").unwrap();
            let name: String = text[fn_at + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (name, body_lines(text, fn_at))
        })
        .collect()
}

/// The functions `main()` of `canopy-cli` dispatches its subcommands to (`run::run`,
/// `trace_show`, …), one per arm of `match cli.command`.
fn cli_handlers(main: &str) -> Vec<String> {
    let at = main.find("match cli.command {").unwrap();
    let arms = &main[at..];
    let arms = &arms[..arms.find("\n    });").unwrap()];
    arms.split("=>")
        .skip(1)
        .map(|arm| {
            arm.trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect()
        })
        .collect()
}

/// The body lines of `fn name` in the crate at `src`, where `path` is `module::name` or `name` (in
/// the crate root `main.rs`).
fn function_body(src: &Path, path: &str) -> Vec<String> {
    let (file, name) = match path.rsplit_once("::") {
        Some((module, name)) => (src.join(format!("{}.rs", module.replace("::", "/"))), name),
        None => (src.join("main.rs"), path),
    };
    let text = code(&file);
    let at = [format!("fn {name}("), format!("fn {name}<")]
        .iter()
        .find_map(|pat| text.find(pat.as_str()))
        .unwrap_or_else(|| panic!("no fn {name} in {}", file.display()));
    body_lines(&text, at)
}

#[test]
fn every_tauri_command_and_cli_subcommand_is_a_short_call_into_the_host() {
    let root = workspace_root();
    let mut commands = Vec::new();
    let mut files = Vec::new();
    rust_files(&root.join("src-tauri/src"), &mut files);
    for file in &files {
        commands.extend(tauri_commands(&code(file)));
    }
    // The handler's list in lib.rs names every command; all of them are found here.
    assert!(commands.len() >= 27, "{commands:?}");
    let cli_src = root.join("src-tauri/crates/canopy-cli/src");
    let handlers = cli_handlers(&code(&cli_src.join("main.rs")));
    // run, trace show, models check — and any subcommand added later.
    assert!(handlers.len() >= 3, "{handlers:?}");
    for handler in &handlers {
        commands.push((
            format!("canopy-cli {handler}"),
            function_body(&cli_src, handler),
        ));
    }
    let long: Vec<String> = commands
        .iter()
        .filter(|(_, body)| body.len() > MAX_HANDLER_LINES)
        .map(|(name, body)| format!("{name}: {} lines", body.len()))
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_HANDLER_LINES} lines; move the logic into canopy-host: {long:?}"
    );
}

#[test]
fn the_handler_check_counts_a_long_command_body() {
    let source = "use x;\n\n/// Doc.\n#[tauri::command]\npub async fn short(state: State<'_, AppState>) -> CommandResult<()> {\n    // Why.\n    Ok(state.host().thing()?)\n}\n\n#[tauri::command]\npub async fn long<R: Runtime>(app: AppHandle<R>) -> CommandResult<()> {\n    if a {\n        b();\n    }\n\n    c();\n}\n";
    let found = tauri_commands(source);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].0, "short");
    assert_eq!(found[0].1, ["Ok(state.host().thing()?)"]);
    assert_eq!(found[1].0, "long");
    assert_eq!(found[1].1, ["if a {", "b();", "}", "c();"]);
    let main = "fn main() {\n    let result = rt.block_on(async {\n        match cli.command {\n            Command::Run(args) => run::run(args).await,\n            Command::Trace {\n                command: TraceCommand::Show { path },\n            } => trace_show(&path),\n        }\n    });\n}\n";
    assert_eq!(cli_handlers(main), ["run::run", "trace_show"]);
}
