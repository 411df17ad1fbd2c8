//! What the runtime's benches share: a runtime whose two model slots are served by the loopback
//! scripted model (keys stored for its origin, as a person's would be), a started main session with
//! its event stream, and planning a scripted run by really searching a tree. Each bench uses a
//! part of it, hence the `dead_code` allowance on the module where it is included.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use canopy_config::{KeyOrigin, MemoryStore, ModelSlotConfig, SecretStore, Settings};
use canopy_host::{runtime_settings, ConfiguredModels};
use canopy_protocol::{ModelSlot, ProviderKind, SecretString, TraceRecord};
use canopy_runtime::{MainSession, Runtime, RuntimeSettings, SessionOptions};
use canopy_test_support::{call, MockServer, ScriptedCall};
use canopy_tools::{GrepTool, Tool, ToolContext};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

pub type BenchResult<T> = Result<T, Box<dyn Error>>;

/// The key stored for both slots (never sent anywhere but the loopback server).
pub const KEY: &str = "sk-bench-0123456789abcdefghij";

pub fn fail(msg: impl Into<String>) -> Box<dyn Error> {
    msg.into().into()
}

/// Settings with both slots on `server` (`mock-main`, `mock-light`) and `parallelism` subagents.
pub fn mock_settings(server: &MockServer, parallelism: u32) -> Settings {
    let slot = |model: &str| ModelSlotConfig {
        provider: ProviderKind::Openai,
        base_url: server.openai_base_url(),
        model: model.to_string(),
        context_window: 200_000,
        input_price_per_mtok: None,
        output_price_per_mtok: None,
        max_output_tokens: 4_096,
        reasoning_effort: None,
        thinking_budget_tokens: None,
    };
    Settings {
        main: slot("mock-main"),
        light: Some(slot("mock-light")),
        parallelism,
        ..Settings::default()
    }
}

/// A runtime over `settings` (served by `server`), with keys stored for the server's origin;
/// `tune` adjusts the runtime settings (profile budgets, switches) before it is built.
pub fn mock_runtime(
    server: &MockServer,
    settings: &Settings,
    tune: impl FnOnce(&mut RuntimeSettings),
) -> BenchResult<Arc<Runtime>> {
    let store = MemoryStore::new();
    // Keys are bound to the endpoint's origin: store them for the mock server's.
    let origin = KeyOrigin::of(&server.openai_base_url())?;
    store.set(ModelSlot::Main, &origin, &SecretString::new(KEY))?;
    store.set(ModelSlot::Light, &origin, &SecretString::new(KEY))?;
    let store: Arc<dyn SecretStore> = Arc::new(store);
    let models = ConfiguredModels::new(settings.clone(), Default::default(), store);
    let secrets = models.secrets();
    let mut rs = runtime_settings(settings);
    tune(&mut rs);
    Ok(Runtime::new(rs, Arc::new(models), secrets))
}

/// A started main session on `root`, its events, and the folder its traces go to (kept alive by
/// the caller for as long as the session writes).
pub struct Started {
    pub session: Arc<MainSession>,
    pub events: UnboundedReceiver<TraceRecord>,
    pub traces: tempfile::TempDir,
}

pub fn start(runtime: &Arc<Runtime>, root: &Path) -> BenchResult<Started> {
    let traces = tempfile::tempdir()?;
    let (tx, events) = tokio::sync::mpsc::unbounded_channel::<TraceRecord>();
    let session = runtime.start_session(SessionOptions {
        project_root: root.to_path_buf(),
        trace_dir: traces.path().to_path_buf(),
        approver: None,
        events: tx,
    })?;
    Ok(Started {
        session,
        events,
        traces,
    })
}

/// `(file, matching lines)` for `pattern` under `root`, most matches first.
pub async fn files_by_matches(root: &Path, pattern: &str) -> BenchResult<Vec<(String, u64)>> {
    let out = GrepTool
        .run(
            json!({"pattern": pattern, "output_mode": "count", "max_results": 100000}),
            &ToolContext::new(root),
        )
        .await
        .map_err(|e| fail(format!("grep {pattern}: {e}")))?;
    let mut files: Vec<(String, u64)> = out
        .content
        .lines()
        .filter_map(|l| {
            let (path, n) = l.rsplit_once(':')?;
            Some((path.to_string(), n.parse().ok()?))
        })
        .collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(files)
}

/// An explore subagent's calls for "where is `first` used, and how does it relate to `second`",
/// found by really searching the tree: what the explore benches script.
pub struct ExplorePlan {
    /// The file with the most matches of `first`, and the first matching line in it.
    pub f1: String,
    pub line1: u64,
    /// The file with the second most matches of `first`, and its first matching line.
    pub f2: String,
    pub line2: u64,
    /// One model turn per entry: two Greps, Reads of the top files (one with offset/limit around
    /// `line1`), a Grep for `second`, a Glob of `f1`'s folder, one more Read.
    pub turns: Vec<Vec<ScriptedCall>>,
}

/// The plan for `first` and `second` under `root`; `None` when either matches too little.
pub async fn explore_plan(
    root: &Path,
    first: &str,
    second: &str,
) -> BenchResult<Option<ExplorePlan>> {
    let a = files_by_matches(root, first).await?;
    let b = files_by_matches(root, second).await?;
    if a.len() < 2 || b.is_empty() {
        return Ok(None);
    }
    let (f1, f2) = (&a[0].0, &a[1].0);
    let f3 = &b[0].0;
    let f4 = a.get(2).map_or(f3, |f| &f.0);
    let line1 = first_match(root, f1, first)?;
    let line2 = first_match(root, f2, first)?;
    let dir = Path::new(f1)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| ".".into());
    let ext = Path::new(f1)
        .extension()
        .map_or("*".into(), |e| e.to_string_lossy().into_owned());
    let turns = vec![
        vec![call(
            "Grep",
            json!({"pattern": first, "output_mode": "files_with_matches"}),
        )],
        vec![call(
            "Grep",
            json!({"pattern": first, "output_mode": "content", "max_results": 50}),
        )],
        vec![call("Read", json!({"path": f1}))],
        vec![call("Read", json!({"path": f2}))],
        vec![call(
            "Read",
            json!({"path": f1, "offset": line1.saturating_sub(20).max(1), "limit": 120}),
        )],
        vec![call(
            "Grep",
            json!({"pattern": second, "output_mode": "content", "max_results": 50}),
        )],
        vec![call("Read", json!({"path": f3}))],
        vec![call(
            "Glob",
            json!({"pattern": format!("*.{ext}"), "path": dir}),
        )],
        vec![call("Read", json!({"path": f4}))],
    ];
    Ok(Some(ExplorePlan {
        f1: f1.clone(),
        line1,
        f2: f2.clone(),
        line2,
        turns,
    }))
}

/// 1-based number of the first line of `file` that matches `pattern`.
pub fn first_match(root: &Path, file: &str, pattern: &str) -> BenchResult<u64> {
    let re = regex::Regex::new(pattern)?;
    let text = std::fs::read(root.join(file))?;
    let text = String::from_utf8_lossy(&text);
    Ok(text
        .lines()
        .position(|l| re.is_match(l))
        .map_or(1, |i| i as u64 + 1))
}

/// A small generated project for quick mode: modules that mention the generated topics.
pub fn generated_tree() -> BenchResult<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    for m in 0..40 {
        let folder = dir.path().join(format!("src/mod{}", m % 5));
        std::fs::create_dir_all(&folder)?;
        let mut text = String::new();
        for i in 0..(60 + m * 10) {
            let line = match i % 9 {
                0 => format!("pub fn handle_request_{m}_{i}(req: &Request) -> Result<(), RequestError> {{ retry(Backoff::default(), || req.send()) }}\n"),
                1 => format!("pub struct Config{m}_{i} {{ pub timeout_ms: u64 }}\n"),
                2 => format!("fn load_config_{i}() -> Config {{ Config::default() }}\n"),
                3 => format!("fn retry_{i}(token: &CancellationToken) {{ if token.is_cancelled() {{ return; }} }}\n"),
                4 => format!("fn cancel_{i}(token: CancellationToken) {{ token.cancel() }}\n"),
                _ => format!("// line {i} of module {m}: plain commentary padding the file to a realistic size\n"),
            };
            text.push_str(&line);
        }
        std::fs::write(folder.join(format!("file{m}.rs")), text)?;
    }
    Ok(dir)
}

/// The median of `v` (the upper one of an even count; 0 for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or_default()
}
