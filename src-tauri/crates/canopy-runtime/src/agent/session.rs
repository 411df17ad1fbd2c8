//! One agent session: its context (profile, model, gate, tools, trace), the history it runs on,
//! the state of its current run, and how a run ended ([`AgentOutcome`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use canopy_protocol::{
    AgentKind, BudgetUsage, Budgets, ParentLink, PermissionMode, SubagentResult, TerminalReason,
    ToolSpec, TraceEvent, Usage,
};
use canopy_tools::secrets::SecretFiles;
use canopy_tools::{SessionFiles, Tool};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::gate::{Approver, Gate};
use crate::profiles::RuntimeProfile;
use crate::provenance::Tracker;
use crate::trace_writer::SessionTrace;
use crate::{ResolvedModel, Runtime};

use super::budget::LoopState;

/// Everything one agent session needs. Built once per session; shared with its Task tool.
pub(crate) struct AgentCtx {
    pub runtime: Arc<Runtime>,
    pub session_id: String,
    pub agent: AgentKind,
    pub parent: Option<ParentLink>,
    pub description: Option<String>,
    pub profile: RuntimeProfile,
    pub model: ResolvedModel,
    pub trace: Arc<SessionTrace>,
    pub gate: Gate,
    pub tools: Vec<Arc<dyn Tool>>,
    pub tool_specs: Vec<ToolSpec>,
    pub project_root: PathBuf,
    pub files: Arc<SessionFiles>,
    pub profiles: Arc<Vec<RuntimeProfile>>,
    pub task_slots: Arc<Semaphore>,
    pub descendants: Mutex<Usage>,
    /// Tokens set aside for this agent's subagents that are still running (each one's
    /// `max_total_tokens`), so siblings started together cannot together overspend its budget.
    pub(crate) reserved_tokens: Mutex<u64>,
    /// Lower limits than the profile's, set by the parent (its remaining time and tree tokens).
    pub budget_caps: Option<Budgets>,
    /// The current run's deadline and own usage, for the subagents it launches.
    pub(crate) run_limits: Mutex<Option<RunLimits>>,
    pub(crate) cancel_record: Mutex<CancelRecord>,
    /// What this agent's own tool results showed it (evidence provenance).
    pub(crate) seen: Mutex<Tracker>,
    /// What any agent of the current run was shown: shared by the main agent and every subagent
    /// of one run, for the main agent's answer.
    pub(crate) run_seen: Arc<Mutex<Tracker>>,
}

/// What a subagent launched now must respect: when the launching run's wall time ends, and how
/// many tokens that agent has spent on its own calls (its children's come from `descendants`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunLimits {
    pub deadline: Instant,
    pub own_usage: Usage,
}

/// Whether `cancel_requested` was written for the current run. A cancel that arrives while no run
/// is active (announced but not started, or already ended) is held until `run_started` or dropped,
/// so the record always lands inside the run it cancels.
#[derive(Debug, Default)]
pub(crate) struct CancelRecord {
    active: bool,
    recorded: bool,
    pending: Option<String>,
}

pub(crate) struct AgentCtxParts {
    pub runtime: Arc<Runtime>,
    pub session_id: String,
    pub agent: AgentKind,
    pub parent: Option<ParentLink>,
    pub description: Option<String>,
    pub profile: RuntimeProfile,
    pub model: ResolvedModel,
    pub trace: Arc<SessionTrace>,
    pub mode: PermissionMode,
    pub approver: Option<Arc<dyn Approver>>,
    pub project_root: PathBuf,
    pub profiles: Arc<Vec<RuntimeProfile>>,
    pub task_slots: Arc<Semaphore>,
    pub budget_caps: Option<Budgets>,
    /// The run-wide record of what was seen, shared with the parent (`None`: a new one).
    pub run_seen: Option<Arc<Mutex<Tracker>>>,
}

impl AgentCtx {
    /// The profile's budgets, with the context budget capped by the model's window (less the output
    /// reserve), so a request the host allows is one the provider accepts.
    pub fn budgets(&self) -> Budgets {
        let mut b = self.profile.budgets();
        let window = self
            .model
            .context_window
            .saturating_sub(self.model.max_output_tokens as u64);
        if window > 0 {
            b.max_context_tokens = b.max_context_tokens.min(window);
        }
        if let Some(c) = self.budget_caps {
            b.max_steps = b.max_steps.min(c.max_steps);
            b.max_context_tokens = b.max_context_tokens.min(c.max_context_tokens);
            b.max_total_tokens = b.max_total_tokens.min(c.max_total_tokens);
            b.max_wall_time_ms = b.max_wall_time_ms.min(c.max_wall_time_ms);
        }
        b
    }

    /// The secret-file list this agent's tools apply (a subagent's has no exceptions); evidence
    /// checks apply the same, so a citation never shows what a Read would refuse.
    pub fn secret_files(&self) -> Arc<SecretFiles> {
        match self.agent {
            AgentKind::Main => self.runtime.withheld.clone(),
            AgentKind::Subagent => self.runtime.withheld_for_subagents.clone(),
        }
    }

    /// Publishes the run's deadline and own usage for subagents launched from now on.
    pub fn set_run_limits(&self, st: &LoopState) {
        if let Ok(mut l) = self.run_limits.lock() {
            *l = Some(RunLimits {
                deadline: st.deadline(),
                own_usage: st.usage,
            });
        }
    }

    pub fn run_limits(&self) -> Option<RunLimits> {
        self.run_limits.lock().ok().and_then(|l| *l)
    }

    /// Tokens set aside for subagents still running.
    pub fn reserved_tokens(&self) -> u64 {
        self.reserved_tokens.lock().map(|r| *r).unwrap_or(0)
    }

    /// Usage of finished subagents of the current run.
    pub fn descendant_usage(&self) -> Usage {
        self.descendants.lock().map(|d| *d).unwrap_or_default()
    }

    pub fn emit_session_started(&self) {
        self.trace.emit(TraceEvent::SessionStarted {
            agent: self.agent,
            profile: self.profile.name().to_string(),
            description: self.description.clone(),
            model: self.model.info.clone(),
            budgets: self.budgets(),
            project_root: self.project_root.display().to_string(),
            parent: self.parent.clone(),
            permission_mode: self.gate.mode(),
            tools: self.tools.iter().map(|t| t.name().to_string()).collect(),
            system_prompt: self.profile.system_prompt().to_string(),
            bash_sandbox: Some(self.runtime.settings.sandbox_mode),
        });
    }

    /// Forgets the previous run's cancellation (a new run is about to start).
    pub fn reset_cancel_record(&self) {
        if let Ok(mut c) = self.cancel_record.lock() {
            *c = CancelRecord::default();
        }
    }

    /// Records who cancelled, once per run, inside that run: before `run_started` it is held
    /// and written right after it; after `run_ended` it is dropped.
    pub fn record_cancel(&self, reason: &str) {
        let Ok(mut c) = self.cancel_record.lock() else {
            return;
        };
        if c.recorded {
            return;
        }
        if c.active {
            c.recorded = true;
            self.trace.emit(TraceEvent::CancelRequested {
                reason: reason.to_string(),
            });
        } else {
            c.pending.get_or_insert_with(|| reason.to_string());
        }
    }

    /// Writes `run_started` and any cancel that arrived before it.
    pub(crate) fn start_run(&self, prompt: String) {
        let Ok(mut c) = self.cancel_record.lock() else {
            return;
        };
        self.trace.emit(TraceEvent::RunStarted { prompt });
        c.active = true;
        if let Some(reason) = c.pending.take() {
            c.recorded = true;
            self.trace.emit(TraceEvent::CancelRequested { reason });
        }
    }

    /// Closes the run for cancel records: a cancel arriving after `run_ended` is not written.
    pub(crate) fn end_run(&self) {
        if let Ok(mut c) = self.cancel_record.lock() {
            c.active = false;
            c.recorded = true;
        }
    }

    pub fn add_descendant_usage(&self, usage: &Usage) {
        if let Ok(mut d) = self.descendants.lock() {
            d.add(usage);
        }
    }

    pub(crate) fn find_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// How an agent's run ended.
#[derive(Debug, Clone)]
pub struct AgentOutcome {
    /// Why.
    pub terminal_reason: TerminalReason,
    /// Final answer text.
    pub final_text: Option<String>,
    /// Validated result (subagents).
    pub result: Option<SubagentResult>,
    /// Error message for failures.
    pub error: Option<String>,
    /// Own usage.
    pub usage: Usage,
    /// Usage including descendants.
    pub usage_with_descendants: Usage,
    /// Budget usage at the end.
    pub totals: BudgetUsage,
    /// Tool calls made.
    pub tool_calls: u32,
}
