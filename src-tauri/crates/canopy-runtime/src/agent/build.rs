//! Building a session's context: the runtime's tools its profile allows, plus its own `Task` tool
//! when the profile has it (the one place the loop's modules meet the subagent launcher).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use canopy_protocol::Usage;
use canopy_tools::{SessionFiles, Tool};

use crate::gate::Gate;
use crate::provenance::Tracker;
use crate::registry;
use crate::task::TaskTool;

use super::session::{AgentCtx, AgentCtxParts, CancelRecord};

impl AgentCtx {
    /// The context of a new session: the runtime's tools its profile allows, `Task` when the profile
    /// names it, and a gate for its mode.
    pub fn build(p: AgentCtxParts) -> Arc<AgentCtx> {
        Arc::new_cyclic(|weak| {
            let allow: HashSet<&str> = p.profile.tools().iter().map(String::as_str).collect();
            let mut tools: Vec<Arc<dyn Tool>> = p
                .runtime
                .tools
                .iter()
                .filter(|t| allow.contains(t.name()))
                .cloned()
                .collect();
            if allow.contains(registry::TASK) {
                tools.push(Arc::new(TaskTool::new(weak.clone(), p.profiles.clone())));
            }
            let tool_specs = tools.iter().map(|t| t.spec()).collect();
            let gate = Gate::new(
                p.mode,
                p.runtime.settings.policy,
                p.profile.tools().iter().cloned(),
                p.approver,
            );
            AgentCtx {
                runtime: p.runtime,
                session_id: p.session_id,
                agent: p.agent,
                parent: p.parent,
                description: p.description,
                profile: p.profile,
                model: p.model,
                trace: p.trace,
                gate,
                tools,
                tool_specs,
                project_root: p.project_root,
                files: Arc::new(SessionFiles::default()),
                profiles: p.profiles,
                task_slots: p.task_slots,
                descendants: Mutex::new(Usage::default()),
                reserved_tokens: Mutex::new(0),
                budget_caps: p.budget_caps,
                run_limits: Mutex::new(None),
                cancel_record: Mutex::new(CancelRecord::default()),
                seen: Mutex::new(Tracker::new()),
                run_seen: p.run_seen.unwrap_or_default(),
            }
        })
    }
}
