//! The permission gate every tool call passes before it runs; it goes by the tool's kind, never its
//! name. Read-only tools of the read kind in the profile's allowlist pass; everything else (edit,
//! execute, delegate, external) is decided by the policy (allow / ask / deny), and "ask" goes to an
//! [`Approver`]. A read-only subagent's gate denies everything but read-only reading, whatever the
//! policy says, so a mis-registered tool is still refused. A call that wants the
//! network (Bash with `network: true`) is asked about even when the policy allows the tool, unless
//! the person allowed network for the session.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use canopy_protocol::{ApprovalScope, Decision, DecisionSource, PermissionMode, ToolKind};
use serde::{Deserialize, Serialize};

use crate::registry::{self, PolicyRow};

pub use canopy_protocol::{PermissionPolicy as Policy, PolicyAction};

/// What the policy says about a call of `tool` (of `kind`); a call with no row is asked about.
fn action_for(policy: &Policy, tool: &str, kind: ToolKind) -> PolicyAction {
    match registry::policy_row(tool, kind) {
        Some(PolicyRow::Edit) => policy.edit,
        Some(PolicyRow::Write) => policy.write,
        Some(PolicyRow::Bash) => policy.bash,
        Some(PolicyRow::Task) => policy.task,
        None => PolicyAction::Ask,
    }
}

/// A question for the person.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    /// Session asking.
    pub session_id: String,
    /// Tool-call id.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// One-line summary of the call.
    pub summary: String,
    /// The call's arguments.
    pub arguments: serde_json::Value,
    /// The call asks for network access (the card says so; "allow for session" covers it too).
    pub network: bool,
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this call and every later call of the same tool in this session.
    AllowSession,
    /// Refuse this call.
    Deny,
}

/// Answers approval requests (a dialog in the app, flags in the CLI).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Waits for an answer. Implementations must return when the run is cancelled (the caller also
    /// stops waiting on cancel).
    async fn approve(&self, request: ApprovalRequest) -> ApprovalAnswer;
}

/// The name `FlagApprover` takes for "calls that want the network may have it" (`--allow network`).
pub const NETWORK: &str = "network";

/// An approver for headless use: allows the named tools, denies the rest; a call that wants the
/// network also needs [`NETWORK`] among the names.
pub struct FlagApprover {
    allowed: HashSet<String>,
}

impl FlagApprover {
    /// Allows exactly these tool names (`Edit`, `Write`, `Bash`, …).
    pub fn new(allowed: impl IntoIterator<Item = String>) -> Self {
        FlagApprover {
            allowed: allowed.into_iter().collect(),
        }
    }
}

#[async_trait]
impl Approver for FlagApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalAnswer {
        if request.network && !self.allowed.contains(NETWORK) {
            return ApprovalAnswer::Deny;
        }
        if self.allowed.contains(&request.tool) {
            ApprovalAnswer::AllowOnce
        } else {
            ApprovalAnswer::Deny
        }
    }
}

/// What the gate decided before any approver was asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Precheck {
    /// Decided.
    Decided {
        /// Allow or deny.
        decision: Decision,
        /// Why.
        source: DecisionSource,
        /// Human-readable reason.
        reason: String,
    },
    /// The approver must be asked.
    Ask,
}

/// One session's gate.
pub struct Gate {
    mode: PermissionMode,
    policy: Policy,
    allowlist: HashSet<String>,
    session_rules: Mutex<HashSet<String>>,
    approver: Option<Arc<dyn Approver>>,
}

impl Gate {
    /// A gate for a session in `mode`, offering only `allowlist`.
    pub fn new(
        mode: PermissionMode,
        policy: Policy,
        allowlist: impl IntoIterator<Item = String>,
        approver: Option<Arc<dyn Approver>>,
    ) -> Self {
        Gate {
            mode,
            policy,
            allowlist: allowlist.into_iter().collect(),
            session_rules: Mutex::new(HashSet::new()),
            approver,
        }
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Decides what it can without asking anyone. Only a read-only tool of the read kind passes
    /// without the policy; what the policy says depends on the kind.
    pub fn precheck(&self, tool: &str, kind: ToolKind, read_only: bool) -> Precheck {
        let needs_policy = !read_only || kind != ToolKind::Read;
        // The read-only check comes first so it holds even for a tool that was wrongly allowlisted.
        if self.mode == PermissionMode::ReadonlySubagent && needs_policy {
            return Precheck::Decided {
                decision: Decision::Deny,
                source: DecisionSource::ReadonlyMode,
                reason: format!("`{tool}` is not allowed: this subagent is read-only and cannot modify files, run commands or delegate"),
            };
        }
        if !self.allowlist.contains(tool) {
            return Precheck::Decided {
                decision: Decision::Deny,
                source: DecisionSource::NotAllowed,
                reason: format!("`{tool}` is not available to this agent"),
            };
        }
        if !needs_policy {
            return Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::ReadOnly,
                reason: "read-only tool".into(),
            };
        }
        if self
            .session_rules
            .lock()
            .map(|r| r.contains(tool))
            .unwrap_or(false)
        {
            return Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::SessionRule,
                reason: format!("`{tool}` was allowed for this session"),
            };
        }
        match action_for(&self.policy, tool, kind) {
            PolicyAction::Allow => Precheck::Decided { decision: Decision::Allow, source: DecisionSource::Policy, reason: format!("policy allows `{tool}`") },
            PolicyAction::Deny => Precheck::Decided {
                decision: Decision::Deny,
                source: DecisionSource::Policy,
                reason: format!("policy denies `{tool}`; ask the person to change the permission policy in Settings"),
            },
            PolicyAction::Ask if self.approver.is_none() => Precheck::Decided {
                decision: Decision::Deny,
                source: DecisionSource::NoApprover,
                reason: format!("`{tool}` needs approval and nobody can answer (headless: pass --allow {})", tool.to_lowercase()),
            },
            PolicyAction::Ask => Precheck::Ask,
        }
    }

    /// [`Gate::precheck`] for a call that may want the network: such a call is asked about unless
    /// the person allowed network for this tool in the session, whatever the policy says.
    pub fn precheck_call(
        &self,
        tool: &str,
        kind: ToolKind,
        read_only: bool,
        network: bool,
    ) -> Precheck {
        let base = self.precheck(tool, kind, read_only);
        if !network {
            return base;
        }
        match base {
            Precheck::Decided {
                decision: Decision::Deny,
                ..
            } => base,
            _ if self.has_rule(&network_rule(tool)) => Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::SessionRule,
                reason: format!("`{tool}` with network was allowed for this session"),
            },
            _ if self.approver.is_none() => Precheck::Decided {
                decision: Decision::Deny,
                source: DecisionSource::NoApprover,
                reason: format!("`{tool}` wants network access, which needs the person's approval, and nobody can answer (headless: pass --allow {},network)", tool.to_lowercase()),
            },
            _ => Precheck::Ask,
        }
    }

    fn has_rule(&self, rule: &str) -> bool {
        self.session_rules
            .lock()
            .map(|r| r.contains(rule))
            .unwrap_or(false)
    }

    /// Asks the approver and records a session rule for "allow for session".
    pub async fn ask(
        &self,
        request: ApprovalRequest,
    ) -> (Decision, DecisionSource, Option<ApprovalScope>, String) {
        let Some(approver) = self.approver.clone() else {
            return (
                Decision::Deny,
                DecisionSource::NoApprover,
                None,
                "nobody can answer".into(),
            );
        };
        let tool = request.tool.clone();
        let network = request.network;
        match approver.approve(request).await {
            ApprovalAnswer::AllowOnce => (
                Decision::Allow,
                DecisionSource::User,
                Some(ApprovalScope::Once),
                "approved once".into(),
            ),
            ApprovalAnswer::AllowSession => {
                if let Ok(mut rules) = self.session_rules.lock() {
                    rules.insert(tool.clone());
                    if network {
                        rules.insert(network_rule(&tool));
                    }
                }
                let what = if network { " with network" } else { "" };
                (
                    Decision::Allow,
                    DecisionSource::User,
                    Some(ApprovalScope::Session),
                    format!("`{tool}`{what} approved for this session"),
                )
            }
            ApprovalAnswer::Deny => (
                Decision::Deny,
                DecisionSource::User,
                None,
                "the person denied this call".into(),
            ),
        }
    }
}

/// The session rule that lets `tool` use the network without asking again.
fn network_rule(tool: &str) -> String {
    format!("{tool}+{NETWORK}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<String> {
        ["Read", "Edit", "Bash", "Task"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn readonly_mode_denies_mutation_and_task_even_when_allowlisted() {
        let gate = Gate::new(
            PermissionMode::ReadonlySubagent,
            Policy {
                edit: PolicyAction::Allow,
                write: PolicyAction::Allow,
                bash: PolicyAction::Allow,
                task: PolicyAction::Allow,
            },
            all(),
            None,
        );
        for (tool, kind, read_only) in [
            ("Edit", ToolKind::Edit, false),
            ("Bash", ToolKind::Execute, false),
            ("Task", ToolKind::Delegate, true),
            ("Lookup", ToolKind::External, true),
        ] {
            match gate.precheck(tool, kind, read_only) {
                Precheck::Decided {
                    decision, source, ..
                } => {
                    assert_eq!(decision, Decision::Deny);
                    assert_eq!(source, DecisionSource::ReadonlyMode);
                }
                other => panic!("{tool}: {other:?}"),
            }
        }
        assert!(matches!(
            gate.precheck("Read", ToolKind::Read, true),
            Precheck::Decided {
                decision: Decision::Allow,
                ..
            }
        ));
    }

    #[test]
    fn the_kind_not_the_name_decides() {
        let allow_all = Policy {
            edit: PolicyAction::Allow,
            write: PolicyAction::Allow,
            bash: PolicyAction::Allow,
            task: PolicyAction::Allow,
        };
        let names = ["Read", "Lookup"].map(String::from);
        let gate = Gate::new(PermissionMode::Main, allow_all, names, None);
        // An external tool is never let through as a reader, even one that says it only reads and
        // a policy that allows every built-in row: nobody can answer here, so it is denied.
        match gate.precheck("Lookup", ToolKind::External, true) {
            Precheck::Decided {
                decision, source, ..
            } => {
                assert_eq!(decision, Decision::Deny);
                assert_eq!(source, DecisionSource::NoApprover);
            }
            other => panic!("{other:?}"),
        }
        // A tool named like a reader but declared as an edit goes to the policy's edit row.
        assert_eq!(
            gate.precheck("Read", ToolKind::Edit, false),
            Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::Policy,
                reason: "policy allows `Read`".into()
            }
        );
    }

    #[tokio::test]
    async fn ask_then_session_rule() {
        let gate = Gate::new(
            PermissionMode::Main,
            Policy::default(),
            all(),
            Some(Arc::new(AlwaysSession)),
        );
        assert_eq!(gate.precheck("Edit", ToolKind::Edit, false), Precheck::Ask);
        assert_eq!(
            gate.precheck("Task", ToolKind::Delegate, true),
            Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::Policy,
                reason: "policy allows `Task`".into()
            }
        );
        let (d, s, scope, _) = gate
            .ask(ApprovalRequest {
                session_id: "s".into(),
                call_id: "c".into(),
                tool: "Edit".into(),
                summary: String::new(),
                arguments: serde_json::Value::Null,
                network: false,
            })
            .await;
        assert_eq!(
            (d, s, scope),
            (
                Decision::Allow,
                DecisionSource::User,
                Some(ApprovalScope::Session)
            )
        );
        assert!(matches!(
            gate.precheck("Edit", ToolKind::Edit, false),
            Precheck::Decided {
                source: DecisionSource::SessionRule,
                ..
            }
        ));
        assert_eq!(
            gate.precheck("Bash", ToolKind::Execute, false),
            Precheck::Ask
        );
    }

    #[tokio::test]
    async fn network_is_asked_for_even_when_the_policy_allows_the_tool() {
        let allow_all = Policy {
            edit: PolicyAction::Allow,
            write: PolicyAction::Allow,
            bash: PolicyAction::Allow,
            task: PolicyAction::Allow,
        };
        let gate = Gate::new(
            PermissionMode::Main,
            allow_all,
            all(),
            Some(Arc::new(AlwaysSession)),
        );
        assert!(matches!(
            gate.precheck_call("Bash", ToolKind::Execute, false, false),
            Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::Policy,
                ..
            }
        ));
        assert_eq!(
            gate.precheck_call("Bash", ToolKind::Execute, false, true),
            Precheck::Ask
        );
        let request = |network| ApprovalRequest {
            session_id: "s".into(),
            call_id: "c".into(),
            tool: "Bash".into(),
            summary: String::new(),
            arguments: serde_json::Value::Null,
            network,
        };
        // Allowing plain Bash for the session does not allow network.
        gate.ask(request(false)).await;
        assert_eq!(
            gate.precheck_call("Bash", ToolKind::Execute, false, true),
            Precheck::Ask
        );
        let (_, _, _, reason) = gate.ask(request(true)).await;
        assert_eq!(reason, "`Bash` with network approved for this session");
        assert!(matches!(
            gate.precheck_call("Bash", ToolKind::Execute, false, true),
            Precheck::Decided {
                decision: Decision::Allow,
                source: DecisionSource::SessionRule,
                ..
            }
        ));

        // Headless without an approver: refused, saying which flag allows it.
        let headless = Gate::new(PermissionMode::Main, allow_all, all(), None);
        match headless.precheck_call("Bash", ToolKind::Execute, false, true) {
            Precheck::Decided {
                decision: Decision::Deny,
                source: DecisionSource::NoApprover,
                reason,
            } => {
                assert!(reason.contains("--allow bash,network"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        // The flag approver needs `network` as well as the tool.
        let flags = FlagApprover::new(["Bash".to_string()]);
        assert_eq!(flags.approve(request(true)).await, ApprovalAnswer::Deny);
        assert_eq!(
            flags.approve(request(false)).await,
            ApprovalAnswer::AllowOnce
        );
        let flags = FlagApprover::new(["Bash".to_string(), NETWORK.to_string()]);
        assert_eq!(
            flags.approve(request(true)).await,
            ApprovalAnswer::AllowOnce
        );
    }

    struct AlwaysSession;
    #[async_trait]
    impl Approver for AlwaysSession {
        async fn approve(&self, _r: ApprovalRequest) -> ApprovalAnswer {
            ApprovalAnswer::AllowSession
        }
    }
}
