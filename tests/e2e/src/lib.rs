//! Shared set-up for the end-to-end tests: a fixture project on disk, settings pointing both model
//! slots at the scripted loopback server, and a runner that collects every live trace record.

// A test-only crate: a failed expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use canopy_config::{KeyOrigin, MemoryStore, ModelSlotConfig, SecretStore, Settings};
use canopy_host::{runtime_settings, ConfiguredModels};
use canopy_protocol::{
    Budgets, ModelSlot, ProviderKind, SecretString, SubagentResult, TerminalReason, ToolStatus,
    TraceEvent, TraceRecord,
};
use canopy_runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunOutcome, Runtime, RuntimeSettings, SessionOptions,
};
use canopy_test_support::{MockServer, Rule, Script, ScriptedCall, Turn};

/// The API key the scripted server demands in these tests.
pub const TEST_KEY: &str = "sk-test-e2e-0123456789abcdefSECRET";

/// A small project: an auth module, a config file, a README and an ignored build folder.
pub fn fixture_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(
        root.join("src/auth.rs"),
        "use crate::config::Config;\n\npub fn login(user: &str, password: &str) -> bool {\n    check_password(user, password)\n}\n\nfn check_password(_user: &str, password: &str) -> bool {\n    !password.is_empty()\n}\n",
    )
    .expect("write");
    std::fs::write(
        root.join("src/config.rs"),
        "pub struct Config {\n    pub session_timeout_secs: u64,\n}\n",
    )
    .expect("write");
    std::fs::write(
        root.join("README.md"),
        "# Fixture\n\nA tiny project with a login function.\n",
    )
    .expect("write");
    std::fs::write(root.join(".gitignore"), "target/\n").expect("write");
    std::fs::create_dir_all(root.join("target")).expect("mkdir");
    std::fs::write(
        root.join("target/junk.rs"),
        "pub fn login_in_build_output() {}\n",
    )
    .expect("write");
    dir
}

/// Settings with the main slot (and optionally a light slot) on the scripted server.
pub fn settings_for(server: &MockServer, provider: ProviderKind, with_light: bool) -> Settings {
    let base = match provider {
        ProviderKind::Openai => server.openai_base_url(),
        ProviderKind::Anthropic => server.anthropic_base_url(),
    };
    let slot = |model: &str| ModelSlotConfig {
        provider,
        base_url: base.clone(),
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
        light: with_light.then(|| slot("mock-light")),
        ..Settings::default()
    }
}

/// A key store holding the test key for each configured slot, stored for that slot's endpoint (keys
/// are bound to the origin of the base URL they were entered for).
pub fn key_store(settings: &Settings) -> Arc<dyn SecretStore> {
    let store = MemoryStore::new();
    let slots = [
        (ModelSlot::Main, Some(&settings.main)),
        (ModelSlot::Light, settings.light.as_ref()),
    ];
    for (slot, config) in slots {
        let Some(config) = config else { continue };
        let origin = KeyOrigin::of(&config.base_url).expect("a valid base URL");
        store
            .set(slot, &origin, &SecretString::new(TEST_KEY))
            .expect("set key");
    }
    Arc::new(store)
}

/// A runtime over `settings`, with `adjust` applied to the runtime settings.
pub fn runtime(settings: &Settings, adjust: impl FnOnce(&mut RuntimeSettings)) -> Arc<Runtime> {
    runtime_with_tools(settings, adjust, Vec::new())
}

/// Answers approvals from a fixed list per tool and remembers what it was asked.
#[derive(Default)]
pub struct ScriptedApprover {
    answers: Vec<(String, ApprovalAnswer)>,
    /// Requests seen, in order.
    pub asked: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    /// Answers `answer` for `tool`; anything else is denied.
    pub fn new(answers: &[(&str, ApprovalAnswer)]) -> Arc<Self> {
        Arc::new(ScriptedApprover {
            answers: answers.iter().map(|(t, a)| (t.to_string(), *a)).collect(),
            asked: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl Approver for ScriptedApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalAnswer {
        let answer = self
            .answers
            .iter()
            .find(|(t, _)| *t == request.tool)
            .map(|(_, a)| *a)
            .unwrap_or(ApprovalAnswer::Deny);
        self.asked.lock().expect("lock").push(request);
        answer
    }
}

/// What a run left behind.
pub struct Ran {
    /// The run's outcome.
    pub outcome: RunOutcome,
    /// Every live record, in arrival order.
    pub records: Vec<TraceRecord>,
    /// The root session id.
    pub root: String,
    /// The trace folder.
    pub trace_dir: PathBuf,
}

impl Ran {
    /// Records of one session.
    pub fn of(&self, session: &str) -> Vec<&TraceRecord> {
        self.records
            .iter()
            .filter(|r| r.session_id == session)
            .collect()
    }

    /// Events of one session.
    pub fn events(&self, session: &str) -> Vec<&TraceEvent> {
        self.of(session).into_iter().map(|r| &r.event).collect()
    }

    /// The first thing `f` picks out of one session's events.
    pub fn find<T>(&self, session: &str, f: impl FnMut(&TraceEvent) -> Option<T>) -> Option<T> {
        self.events(session).into_iter().find_map(f)
    }

    /// Child session ids in the order they were requested.
    pub fn children(&self) -> Vec<String> {
        self.records
            .iter()
            .filter_map(|r| match &r.event {
                TraceEvent::SubagentRequested {
                    child_session_id, ..
                } if r.session_id == self.root => Some(child_session_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// How many model calls one session began.
    pub fn model_calls(&self, session: &str) -> usize {
        self.events(session)
            .iter()
            .filter(|e| matches!(e, TraceEvent::ModelCallBegin { .. }))
            .count()
    }

    /// Every tool call one session finished, in order: its tool, status and output.
    pub fn tool_ends(&self, session: &str) -> Vec<(String, ToolStatus, String)> {
        self.events(session)
            .into_iter()
            .filter_map(|e| match e {
                TraceEvent::ToolCallEnd {
                    tool,
                    status,
                    output,
                    ..
                } => Some((tool.clone(), *status, output.clone())),
                _ => None,
            })
            .collect()
    }

    /// The budgets one session started with.
    pub fn session_budgets(&self, session: &str) -> Option<Budgets> {
        self.find(session, |e| match e {
            TraceEvent::SessionStarted { budgets, .. } => Some(*budgets),
            _ => None,
        })
    }

    /// How one session's run ended, when its last record is `run_ended` (`None` otherwise).
    pub fn ended_as(&self, session: &str) -> Option<TerminalReason> {
        match self.events(session).last() {
            Some(TraceEvent::RunEnded {
                terminal_reason, ..
            }) => Some(*terminal_reason),
            _ => None,
        }
    }

    /// The first child the root saw complete: how it ended and the result it handed in.
    pub fn child_completed(&self) -> Option<(TerminalReason, SubagentResult)> {
        self.find(&self.root, |e| match e {
            TraceEvent::SubagentCompleted {
                terminal_reason,
                result,
                ..
            } => Some((*terminal_reason, result.clone())),
            _ => None,
        })
    }

    /// The first child the root saw fail: how it ended and why.
    pub fn child_failed(&self) -> Option<(TerminalReason, String)> {
        self.find(&self.root, |e| match e {
            TraceEvent::SubagentFailed {
                terminal_reason,
                error,
                ..
            } => Some((*terminal_reason, error.clone())),
            _ => None,
        })
    }
}

/// Starts a session in `project`, runs `prompt`, and collects the live stream. `on_record` sees each
/// record as it arrives (tests use it to cancel a node mid-run).
pub async fn run_prompt(
    runtime: &Arc<Runtime>,
    project: &Path,
    trace_dir: &Path,
    approver: Option<Arc<dyn Approver>>,
    prompt: &str,
    on_record: impl Fn(&TraceRecord, &Arc<Runtime>) + Send + 'static,
) -> Ran {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let session = runtime
        .start_session(SessionOptions {
            project_root: project.to_path_buf(),
            trace_dir: trace_dir.to_path_buf(),
            approver,
            events: tx,
        })
        .expect("start session");
    let root = session.session_id().to_string();
    let rt = runtime.clone();
    let collector = tokio::spawn(async move {
        let mut out = Vec::new();
        while let Some(r) = rx.recv().await {
            on_record(&r, &rt);
            out.push(r);
        }
        out
    });
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        session.run(prompt.to_string()),
    )
    .await
    .expect("run finished in time")
    .expect("run");
    drop(session);
    let records = tokio::time::timeout(std::time::Duration::from_secs(10), collector)
        .await
        .expect("stream closed")
        .expect("collector");
    Ran {
        outcome,
        records,
        root,
        trace_dir: trace_dir.to_path_buf(),
    }
}

/// What every test starts from: the scripted server, a fresh fixture project and a trace folder.
pub struct Scenario {
    /// The scripted model server.
    pub server: MockServer,
    project: tempfile::TempDir,
    traces: tempfile::TempDir,
}

impl Scenario {
    /// Starts the server with `script` and lays out a fresh project.
    pub async fn start(script: Script) -> Scenario {
        Scenario {
            server: MockServer::start(script).await.expect("server"),
            project: fixture_project(),
            traces: tempfile::tempdir().expect("tmp"),
        }
    }

    /// The fixture project's root.
    pub fn project(&self) -> &Path {
        self.project.path()
    }

    /// Where this scenario's traces go.
    pub fn traces(&self) -> &Path {
        self.traces.path()
    }

    /// Settings with the main slot (and, `with_light`, a light slot) on this scenario's server.
    pub fn settings(&self, provider: ProviderKind, with_light: bool) -> Settings {
        settings_for(&self.server, provider, with_light)
    }

    /// A runtime over [`Scenario::settings`], with `adjust` applied to the runtime settings.
    pub fn runtime(
        &self,
        provider: ProviderKind,
        with_light: bool,
        adjust: impl FnOnce(&mut RuntimeSettings),
    ) -> Arc<Runtime> {
        runtime(&self.settings(provider, with_light), adjust)
    }

    /// Options for a session in this project and trace folder, with no approver, publishing to
    /// `events`.
    pub fn session_options(
        &self,
        events: tokio::sync::mpsc::UnboundedSender<TraceRecord>,
    ) -> SessionOptions {
        SessionOptions {
            project_root: self.project().to_path_buf(),
            trace_dir: self.traces().to_path_buf(),
            approver: None,
            events,
        }
    }

    /// Runs `prompt` in a new session in the project, with no approver (asks are denied).
    pub async fn run(&self, runtime: &Arc<Runtime>, prompt: &str) -> Ran {
        run_prompt(
            runtime,
            self.project(),
            self.traces(),
            None,
            prompt,
            |_, _| {},
        )
        .await
    }

    /// [`run_prompt`] in the project and trace folder of this scenario.
    pub async fn run_with(
        &self,
        runtime: &Arc<Runtime>,
        approver: Option<Arc<dyn Approver>>,
        prompt: &str,
        on_record: impl Fn(&TraceRecord, &Arc<Runtime>) + Send + 'static,
    ) -> Ran {
        run_prompt(
            runtime,
            self.project(),
            self.traces(),
            approver,
            prompt,
            on_record,
        )
        .await
    }

    /// The body of the last request the model server received.
    #[track_caller]
    pub fn last_request(&self) -> String {
        self.server
            .requests()
            .last()
            .expect("the model server got a request")
            .body
            .to_string()
    }

    /// The text of every file in the trace folder.
    #[track_caller]
    pub fn trace_file_texts(&self) -> Vec<String> {
        std::fs::read_dir(self.traces())
            .expect("read the trace folder")
            .map(|entry| std::fs::read_to_string(entry.expect("trace entry").path()).expect("read"))
            .collect()
    }
}

/// The rule that answers the main agent.
pub fn main_agent_rule() -> Rule {
    Rule::new("main").system_contains("You are Canopy")
}

/// The main agent's rule for a run of one tool turn: it makes `calls`, then gives `answer`.
pub fn main_agent_calls(calls: Vec<ScriptedCall>, answer: &str) -> Rule {
    main_agent_rule()
        .turn(Turn::tools(calls))
        .turn(Turn::text(answer))
}

/// The rule that answers every explore subagent alike.
pub fn any_explore_rule() -> Rule {
    Rule::new("child").system_contains("explore subagent")
}

/// The rule that answers a verify subagent.
pub fn verify_rule() -> Rule {
    Rule::new("verify").system_contains("verify subagent")
}

/// The rule that answers an agent's last, tool-less call once its budget is used up.
pub fn budget_exhausted_rule() -> Rule {
    Rule::new("final").system_contains("your budget is exhausted")
}

/// Budgets for the explore profile (16k context, light model): at most `steps` steps, `tokens`
/// tokens in all and `wall_ms` of wall time.
pub fn explore_budgets(steps: u32, tokens: u64, wall_ms: u64) -> (Budgets, ModelSlot) {
    (
        profile_budgets(16_000, steps, tokens, wall_ms),
        ModelSlot::Light,
    )
}

/// Budgets for the main profile (100k context, main model) with the same limits as
/// [`explore_budgets`].
pub fn main_budgets(steps: u32, tokens: u64, wall_ms: u64) -> (Budgets, ModelSlot) {
    (
        profile_budgets(100_000, steps, tokens, wall_ms),
        ModelSlot::Main,
    )
}

fn profile_budgets(max_context_tokens: u64, steps: u32, tokens: u64, wall_ms: u64) -> Budgets {
    Budgets {
        max_steps: steps,
        max_context_tokens,
        max_total_tokens: tokens,
        max_wall_time_ms: wall_ms,
    }
}

/// Copies a run's trace files into `$CANOPY_FIXTURES_DIR/<name>/` when that variable is set, so the
/// UI's reducer tests can be fed traces the real runtime wrote (`tests/fixtures/traces/`). Regenerate
/// them all with `CANOPY_FIXTURES_DIR=$PWD/tests/fixtures/traces cargo test -p canopy-e2e`.
pub fn export_fixture(traces: &Path, name: &str) {
    let Ok(base) = std::env::var("CANOPY_FIXTURES_DIR") else {
        return;
    };
    let out = Path::new(&base).join(name);
    // Old files of an earlier run would be read as sessions of this one.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("create the fixture folder");
    for entry in std::fs::read_dir(traces).expect("read the trace folder") {
        let path = entry.expect("trace entry").path();
        if path.extension().is_some_and(|x| x == "jsonl") {
            let name = path.file_name().expect("file name");
            std::fs::copy(&path, out.join(name)).expect("copy a trace file");
        }
    }
}

/// A runtime over `settings` whose built-in tools are replaced by `replacements` of the same name
/// (tests inject misbehaving tools this way: one that blocks, one that leaks a key…).
pub fn runtime_with_tools(
    settings: &Settings,
    adjust: impl FnOnce(&mut RuntimeSettings),
    replacements: Vec<Arc<dyn canopy_tools::Tool>>,
) -> Arc<Runtime> {
    let models = ConfiguredModels::new(settings.clone(), Default::default(), key_store(settings));
    let secrets = models.secrets();
    let mut rs = runtime_settings(settings);
    adjust(&mut rs);
    let mut tools: Vec<Arc<dyn canopy_tools::Tool>> = canopy_tools::builtin_tools()
        .into_iter()
        .filter(|t| !replacements.iter().any(|r| r.name() == t.name()))
        .collect();
    tools.extend(replacements);
    Runtime::with_tools(rs, Arc::new(models), secrets, tools)
}

/// A `Task` call that asks for an `explore` subagent.
pub fn task(description: &str, prompt: &str) -> canopy_test_support::ScriptedCall {
    canopy_test_support::call(
        "Task",
        serde_json::json!({"description": description, "prompt": prompt, "subagent_type": "explore"}),
    )
}

/// A valid explore result whose one finding is its summary.
pub fn explore_result(summary: &str, evidence: &[&str]) -> String {
    serde_json::json!({"status": "completed", "summary": summary, "findings": [summary], "evidence": evidence, "unresolved_questions": []}).to_string()
}

/// The rule that answers the explore subagent whose task prompt contains `marker`.
pub fn explore_rule(marker: &str) -> Rule {
    Rule::new(marker)
        .system_contains("explore subagent")
        .first_user_contains(marker)
}

/// A stand-in for a real tool that misbehaves on purpose: it waits `delay` without watching its
/// cancel token (a Read blocked on a FIFO), then returns what `output` makes of the project root
/// (which may also write to it, like a tool lying about being read-only). It claims to be read-only.
pub struct ScriptedTool {
    name: &'static str,
    delay: std::time::Duration,
    output: Box<dyn Fn(&Path) -> String + Send + Sync>,
}

impl ScriptedTool {
    /// A read-only-looking tool called `name`.
    pub fn new(
        name: &'static str,
        delay: std::time::Duration,
        output: impl Fn(&Path) -> String + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            name,
            delay,
            output: Box::new(output),
        })
    }
}

#[async_trait]
impl canopy_tools::Tool for ScriptedTool {
    fn name(&self) -> &str {
        self.name
    }
    fn spec(&self) -> canopy_protocol::ToolSpec {
        canopy_protocol::ToolSpec {
            name: self.name.into(),
            description: format!("{} (scripted for a test)", self.name),
            parameters: serde_json::json!({"type": "object"}),
        }
    }
    fn kind(&self) -> canopy_protocol::ToolKind {
        canopy_protocol::ToolKind::Read
    }
    fn read_only(&self) -> bool {
        true
    }
    fn summarize(&self, _args: &serde_json::Value) -> String {
        self.name.into()
    }
    async fn run(
        &self,
        _args: serde_json::Value,
        ctx: &canopy_tools::ToolContext,
    ) -> Result<canopy_tools::ToolOutput, canopy_tools::ToolError> {
        tokio::time::sleep(self.delay).await;
        Ok(canopy_tools::ToolOutput::text((self.output)(&ctx.root)))
    }
}

/// Milliseconds from the root's `cancel_requested` to `session`'s `run_ended`, by the trace's own
/// clock (what a person reading the trace would measure). Panics when either is missing.
#[track_caller]
pub fn cancel_to_end_ms(ran: &Ran, session: &str) -> u64 {
    let asked = ran
        .of(&ran.root)
        .into_iter()
        .find(|r| matches!(r.event, TraceEvent::CancelRequested { .. }))
        .expect("the root recorded cancel_requested")
        .ts_ms;
    let ended = ran
        .of(session)
        .into_iter()
        .rev()
        .find(|r| matches!(r.event, TraceEvent::RunEnded { .. }))
        .expect("the session recorded run_ended")
        .ts_ms;
    ended.saturating_sub(asked)
}

/// Asserts that `session`'s trace ends `run_ended` `cancelled` within 2 s of the root's cancel, in
/// the live stream and in its file on disk.
#[track_caller]
pub fn assert_cancelled_within_2s(ran: &Ran, session: &str) {
    assert_eq!(
        ran.ended_as(session),
        Some(TerminalReason::Cancelled),
        "{session} did not end cancelled: {:?}",
        ran.events(session).last()
    );
    let took = cancel_to_end_ms(ran, session);
    assert!(took < 2_000, "{session} ended {took} ms after the cancel");
    let file = ran.trace_dir.join(format!("{session}.jsonl"));
    let text = std::fs::read_to_string(&file).expect("read the trace file");
    let last: TraceRecord = serde_json::from_str(text.lines().last().expect("a record"))
        .expect("the last line is a record");
    assert!(
        matches!(
            last.event,
            TraceEvent::RunEnded {
                terminal_reason: TerminalReason::Cancelled,
                ..
            }
        ),
        "{} ends with {:?}",
        file.display(),
        last.event
    );
}
