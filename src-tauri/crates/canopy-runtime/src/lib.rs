//! The Canopy agent runtime: one ReAct loop for every agent, the permission gate, host-enforced
//! budgets, profiles, the subagent launcher behind the `Task` tool, and the trace recorder. It never
//! depends on tauri: the desktop app and `canopy-cli` are both thin hosts over [`Runtime`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use canopy_protocol::{
    AgentKind, Budgets, Message, ModelInfo, ModelSlot, PermissionMode, SandboxMode, SecretString,
    TerminalReason, TraceRecord, Usage,
};
use canopy_providers::ModelClient;
use canopy_tools::sandbox::Sandbox;
use canopy_tools::secrets::SecretFiles;
use canopy_tools::Tool;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

mod agent;
mod allowance;
mod compaction;
pub mod contract;
mod error;
pub mod gate;
mod launcher;
pub mod profiles;
pub mod provenance;
pub mod readonly_check;
pub mod redact;
pub mod registry;
mod task;
pub mod tool_args;
pub mod trace_reader;
pub mod trace_writer;

pub use agent::AgentOutcome;
pub use error::RuntimeError;
pub use gate::{ApprovalAnswer, ApprovalRequest, Approver, FlagApprover, Policy, PolicyAction};
pub use profiles::{ProfileLoadError, RuntimeProfile};

use crate::redact::Redactor;
use crate::trace_writer::{EventBus, SessionTrace};

/// A model slot resolved to a client.
#[derive(Clone)]
pub struct ResolvedModel {
    /// The client.
    pub client: Arc<dyn ModelClient>,
    /// What the trace records (slot used, fallback, provider, model id, base URL).
    pub info: ModelInfo,
    /// The model's context window in tokens (caps the context budget).
    pub context_window: u64,
    /// `max_tokens` for each call.
    pub max_output_tokens: u32,
}

/// Turns a requested slot into a client. When `light` is not configured it returns the main model
/// with `info.fallback = true`.
pub trait ModelResolver: Send + Sync {
    /// Resolves a slot.
    fn resolve(&self, slot: ModelSlot) -> Result<ResolvedModel, RuntimeError>;
}

/// Host settings the runtime needs (the desktop app and CLI build them from the settings file).
#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// Permission policy for the main agent.
    pub policy: Policy,
    /// How many subagents may run at once in one run tree.
    pub parallelism: usize,
    /// Run the `verify` profile on the main agent's final answer before completing.
    pub verification_gate: bool,
    /// Fraction of a budget at which the agent is told to wrap up.
    pub wrap_up_ratio: f64,
    /// Per-result cap of tool output kept in trace files, bytes.
    pub trace_output_cap: usize,
    /// Extra time the last tool-less call gets after the wall-time budget ran out, ms.
    pub final_call_grace_ms: u64,
    /// Budgets and model slot per profile name, replacing the profile's own.
    pub profile_overrides: HashMap<String, (Budgets, ModelSlot)>,
    /// Environment variables never passed to Bash (API keys).
    pub env_denylist: Vec<String>,
    /// Whether Bash must run in the OS sandbox (the default) or runs without one.
    pub sandbox_mode: SandboxMode,
    /// Variables passed to Bash on top of the built-in allowlist.
    pub sandbox_env: Vec<String>,
    /// Folders hidden from Bash besides the built-in credential list (Canopy's settings and traces).
    pub sandbox_hidden: Vec<PathBuf>,
    /// Secret-file patterns for the main agent; subagents get these (without exceptions) and the
    /// defaults whatever they say.
    pub withheld_files: Vec<String>,
    /// The [`profiles::project_profiles_digest`] of the project profiles the person has seen and
    /// trusted. Sessions use a project's `.canopy/agents/*.md` only while their digest is this one;
    /// otherwise only the built-in profiles reach a model.
    pub trusted_project_profiles: Option<String>,
    /// Whether tools report what they showed and the host tracks it per agent for evidence
    /// provenance. Always on in the hosts; the provenance bench turns it off to measure its cost.
    pub track_provenance: bool,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            policy: Policy::default(),
            parallelism: 4,
            verification_gate: false,
            wrap_up_ratio: 0.8,
            trace_output_cap: 16 * 1024,
            final_call_grace_ms: 60_000,
            profile_overrides: HashMap::new(),
            env_denylist: vec!["CANOPY_MAIN_API_KEY".into(), "CANOPY_LIGHT_API_KEY".into()],
            sandbox_mode: SandboxMode::Required,
            sandbox_env: Vec::new(),
            sandbox_hidden: Vec::new(),
            withheld_files: canopy_tools::secrets::DEFAULT_PATTERNS
                .iter()
                .map(|p| p.to_string())
                .collect(),
            trusted_project_profiles: None,
            track_provenance: true,
        }
    }
}

/// A cancellable session: its token, and its context once it runs (a subagent waiting for a slot
/// has none yet).
type LiveEntry = (CancellationToken, Option<Arc<agent::AgentCtx>>);

/// The shared runtime: settings, model resolution, tools, and the registry of live sessions (for
/// cancellation). Cheap to share as `Arc<Runtime>`.
pub struct Runtime {
    settings: RuntimeSettings,
    models: Arc<dyn ModelResolver>,
    tools: Vec<Arc<dyn Tool>>,
    redactor: Arc<Redactor>,
    /// How Bash runs; shared so bubblewrap is probed once per runtime.
    sandbox: Arc<Sandbox>,
    /// The main agent's secret files, and the stricter list every subagent gets.
    withheld: Arc<SecretFiles>,
    withheld_for_subagents: Arc<SecretFiles>,
    /// Sessions that can be cancelled by id. A subagent still waiting for a parallelism slot has
    /// a token but no context yet.
    live: Mutex<HashMap<String, LiveEntry>>,
    /// Subagent runs on their own tasks, with the id of the run they belong to, kept so a session
    /// can wait for their trace ends after a parent stopped waiting for them.
    detached: Mutex<Vec<(String, tokio::task::JoinHandle<()>)>>,
}

/// How long [`MainSession::run`] waits, after its run ended, for subagents it stopped waiting for
/// to record their own ends (each ends its stuck tools within the tool grace).
const DETACHED_SETTLE: Duration = Duration::from_secs(5);

/// How a main session is started.
pub struct SessionOptions {
    /// The project folder.
    pub project_root: PathBuf,
    /// Where trace files go.
    pub trace_dir: PathBuf,
    /// Who answers approval requests (`None`: asks are denied).
    pub approver: Option<Arc<dyn Approver>>,
    /// The live event stream for this session and every subagent under it.
    pub events: UnboundedSender<TraceRecord>,
}

/// What a run ended with.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The run id.
    pub run_id: String,
    /// Why it ended.
    pub terminal_reason: TerminalReason,
    /// Final answer text.
    pub final_text: Option<String>,
    /// Error message for failures.
    pub error: Option<String>,
    /// Usage including descendants.
    pub usage: Usage,
}

impl Runtime {
    /// A runtime with the built-in tools. `secrets` are the configured API keys, redacted from traces.
    pub fn new(
        settings: RuntimeSettings,
        models: Arc<dyn ModelResolver>,
        secrets: Vec<SecretString>,
    ) -> Arc<Runtime> {
        Runtime::with_tools(settings, models, secrets, canopy_tools::builtin_tools())
    }

    /// A runtime with an explicit tool list (tests register extra tools this way).
    pub fn with_tools(
        settings: RuntimeSettings,
        models: Arc<dyn ModelResolver>,
        secrets: Vec<SecretString>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Arc<Runtime> {
        let sandbox = Arc::new(
            Sandbox::new(settings.sandbox_mode, settings.sandbox_env.clone())
                .with_hidden(settings.sandbox_hidden.clone()),
        );
        // Settings are validated on save; a list that still does not compile falls back to the
        // defaults rather than to withholding nothing.
        let withheld = Arc::new(SecretFiles::new(&settings.withheld_files).unwrap_or_default());
        let withheld_for_subagents = Arc::new(SecretFiles::for_subagents(&settings.withheld_files));
        Arc::new(Runtime {
            settings,
            models,
            tools,
            redactor: Arc::new(Redactor::new(secrets)),
            sandbox,
            withheld,
            withheld_for_subagents,
            live: Mutex::new(HashMap::new()),
            detached: Mutex::new(Vec::new()),
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &RuntimeSettings {
        &self.settings
    }

    /// `text` with the configured keys and key-shaped strings replaced by `[REDACTED]`, for anything
    /// a host shows or prints outside the (already redacted) trace.
    pub fn redact(&self, text: &str) -> String {
        self.redactor
            .redact(text)
            .unwrap_or_else(|| text.to_string())
    }

    /// Profiles available in a project (built-ins with settings overrides, plus project profiles) and
    /// the project profile files that were rejected.
    pub fn profiles_for(
        &self,
        project_root: &std::path::Path,
    ) -> Result<(Vec<RuntimeProfile>, Vec<ProfileLoadError>), RuntimeError> {
        let mut profiles = profiles::builtin_profiles()?;
        let (project, errors) = profiles::load_project_profiles(project_root);
        profiles.extend(project);
        let profiles = profiles
            .into_iter()
            .map(|p| match self.settings.profile_overrides.get(p.name()) {
                Some((budgets, model)) => p.with_overrides(*budgets, *model),
                None => Ok(p),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((profiles, errors))
    }

    /// The profiles a session in the project may use: the built-ins, plus the project's own only
    /// when their digest is the trusted one (checked before and after reading them, so a file
    /// changed in between is not used on the strength of the earlier trust).
    fn session_profiles(
        &self,
        project_root: &std::path::Path,
    ) -> Result<Vec<RuntimeProfile>, RuntimeError> {
        let trusted = |digest: Option<String>| {
            digest.is_some() && digest == self.settings.trusted_project_profiles
        };
        if !trusted(profiles::project_profiles_digest(project_root)) {
            let builtins = profiles::builtin_profiles()?;
            return builtins
                .into_iter()
                .map(|p| match self.settings.profile_overrides.get(p.name()) {
                    Some((budgets, model)) => p.with_overrides(*budgets, *model),
                    None => Ok(p),
                })
                .collect();
        }
        let (all, _errors) = self.profiles_for(project_root)?;
        if !trusted(profiles::project_profiles_digest(project_root)) {
            return Ok(all.into_iter().filter(|p| p.source().is_none()).collect());
        }
        Ok(all)
    }

    /// Starts a main-agent session. Nothing is sent to a model until [`MainSession::run`].
    pub fn start_session(
        self: &Arc<Self>,
        opts: SessionOptions,
    ) -> Result<Arc<MainSession>, RuntimeError> {
        let root = opts
            .project_root
            .canonicalize()
            .map_err(|_| RuntimeError::BadProject(opts.project_root.clone()))?;
        if !root.is_dir() {
            return Err(RuntimeError::BadProject(root));
        }
        let profiles = self.session_profiles(&root)?;
        // A kill -9 during an Edit or Write leaves its temporary file behind; the next session in
        // the project clears those and says so.
        let notices = canopy_tools::remove_stale_temp_files(&root)
            .into_iter()
            .map(|p| {
                format!(
                    "removed {p}: a temporary file left by an edit or write that was interrupted"
                )
            })
            .collect();
        let main = profiles
            .iter()
            .find(|p| p.name() == "main")
            .cloned()
            .ok_or_else(|| RuntimeError::InvalidProfile {
                name: "main".into(),
                reason: "missing".into(),
            })?;
        let model = self.models.resolve(main.model())?;
        let session_id = new_id("s");
        let bus = EventBus::new(opts.events, self.redactor.clone(), opts.trace_dir);
        let trace = SessionTrace::create(bus, session_id.clone(), None, String::new())?;
        let ctx = agent::AgentCtx::build(agent::AgentCtxParts {
            runtime: self.clone(),
            session_id: session_id.clone(),
            agent: AgentKind::Main,
            parent: None,
            description: None,
            profile: main,
            model,
            trace,
            mode: PermissionMode::Main,
            approver: opts.approver,
            project_root: root,
            profiles: Arc::new(profiles),
            task_slots: Arc::new(Semaphore::new(self.settings.parallelism.max(1))),
            budget_caps: None,
            run_seen: None,
        });
        ctx.emit_session_started();
        Ok(Arc::new(MainSession {
            ctx,
            history: tokio::sync::Mutex::new(Vec::new()),
            cancel: Mutex::new(CancellationToken::new()),
            prepared: Mutex::new(None),
            notices,
        }))
    }

    /// Cancels a session (root or subagent) and, through its token, every descendant. Returns false
    /// when no live session has that id.
    pub fn cancel(&self, session_id: &str, reason: &str) -> bool {
        let entry = self
            .live
            .lock()
            .ok()
            .and_then(|m| m.get(session_id).cloned());
        match entry {
            Some((token, ctx)) => {
                // A child still waiting for a slot has no trace yet; its parent records
                // `subagent_cancelled` for it.
                if let Some(ctx) = ctx {
                    ctx.record_cancel(reason);
                }
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Ids of sessions currently running.
    pub fn live_sessions(&self) -> Vec<String> {
        self.live
            .lock()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn register(&self, ctx: &Arc<agent::AgentCtx>, token: CancellationToken) {
        if let Ok(mut m) = self.live.lock() {
            m.insert(ctx.session_id.clone(), (token, Some(ctx.clone())));
        }
    }

    /// Keeps a subagent's task of run `run_id` until it ends (finished ones are dropped as new
    /// ones come).
    fn keep_detached(&self, run_id: String, handle: tokio::task::JoinHandle<()>) {
        if let Ok(mut d) = self.detached.lock() {
            d.retain(|(_, h)| !h.is_finished());
            d.push((run_id, handle));
        }
    }

    /// Waits up to `limit` for the subagent tasks of run `run_id` still running to end, so a host
    /// that exits after a run does not cut off a child's trace end. Other sessions' children
    /// (sharing this runtime) are not waited for.
    async fn settle_detached(&self, run_id: &str, limit: Duration) {
        let pending: Vec<_> = match self.detached.lock() {
            Ok(mut d) => {
                let (mine, rest): (Vec<_>, Vec<_>) = d.drain(..).partition(|(r, _)| r == run_id);
                *d = rest;
                mine.into_iter()
                    .map(|(_, h)| h)
                    .filter(|h| !h.is_finished())
                    .collect()
            }
            Err(_) => return,
        };
        if pending.is_empty() {
            return;
        }
        let _ = tokio::time::timeout(limit, futures::future::join_all(pending)).await;
    }

    /// Makes a subagent that is not running yet (waiting for a slot) cancellable by its id.
    fn register_pending(&self, session_id: &str, token: CancellationToken) {
        if let Ok(mut m) = self.live.lock() {
            m.insert(session_id.to_string(), (token, None));
        }
    }

    fn unregister(&self, session_id: &str) {
        if let Ok(mut m) = self.live.lock() {
            m.remove(session_id);
        }
    }
}

/// The person's conversation with the main agent in one project.
pub struct MainSession {
    ctx: Arc<agent::AgentCtx>,
    history: tokio::sync::Mutex<Vec<Message>>,
    cancel: Mutex<CancellationToken>,
    /// The cancel token and run id of a run announced with [`MainSession::begin_run`] but not
    /// started yet.
    prepared: Mutex<Option<(CancellationToken, String)>>,
    /// What the host should tell the person about the session's start (stale files removed).
    notices: Vec<String>,
}

impl MainSession {
    /// The root session id (also its trace file stem).
    pub fn session_id(&self) -> &str {
        &self.ctx.session_id
    }

    /// Things the person should be told about the start of this session, such as temporary files
    /// of an interrupted edit that were removed.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The trace file of the root session.
    pub fn trace_path(&self) -> PathBuf {
        self.ctx.trace.path().to_path_buf()
    }

    /// Runs one prompt to its end. Follow-ups call this again and keep the history.
    pub async fn run(&self, prompt: String) -> Result<RunOutcome, RuntimeError> {
        let mut history = self
            .history
            .try_lock()
            .map_err(|_| RuntimeError::Busy(self.ctx.session_id.clone()))?;
        let prepared = self.prepared.lock().ok().and_then(|mut p| p.take());
        let (token, run_id) = match prepared {
            Some(prepared) => prepared,
            None => self.prepare(),
        };
        let runtime = self.ctx.runtime.clone();
        let outcome = agent::run_main(&self.ctx, &mut history, prompt, token).await;
        runtime.unregister(&self.ctx.session_id);
        // The run has ended (its trace says so); a child it stopped waiting for after a cancel
        // may still be writing its own end.
        runtime.settle_detached(&run_id, DETACHED_SETTLE).await;
        // Hosts print these (the CLI to stdout, into CI logs): a key the model quoted must not
        // reach them any more than it reaches the trace.
        Ok(RunOutcome {
            run_id,
            terminal_reason: outcome.terminal_reason,
            final_text: outcome.final_text.map(|t| runtime.redact(&t)),
            error: outcome.error.map(|e| runtime.redact(&e)),
            usage: outcome.usage_with_descendants,
        })
    }

    /// Makes the next run cancellable before it starts: a host that starts `run` on another task
    /// calls this first, so a cancel arriving before that task is polled is not lost. Call it only
    /// when no run of this session is in progress (hosts already refuse a second concurrent run).
    pub fn begin_run(&self) {
        let prepared = self.prepare();
        if let Ok(mut p) = self.prepared.lock() {
            *p = Some(prepared);
        }
    }

    /// A new run id, set on the trace before the run can be cancelled so a `cancel_requested`
    /// carries the id of the run it cancels, and the run's cancel token.
    fn prepare(&self) -> (CancellationToken, String) {
        let run_id = new_id("r");
        self.ctx.trace.set_run_id(run_id.clone());
        (self.install_token(), run_id)
    }

    /// A fresh cancel token for the next run (a cancelled token stays cancelled), registered so
    /// [`Runtime::cancel`] reaches it.
    fn install_token(&self) -> CancellationToken {
        let token = CancellationToken::new();
        self.ctx.reset_cancel_record();
        if let Ok(mut c) = self.cancel.lock() {
            *c = token.clone();
        }
        self.ctx.runtime.register(&self.ctx, token.clone());
        token
    }

    /// Cancels the running prompt (and every subagent under it).
    pub fn cancel(&self, reason: &str) {
        if let Ok(c) = self.cancel.lock() {
            self.ctx.record_cancel(reason);
            c.cancel();
        }
    }
}

/// A fresh id with a readable prefix (`s-…` sessions, `r-…` runs).
pub(crate) fn new_id(prefix: &str) -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &u[..16])
}
