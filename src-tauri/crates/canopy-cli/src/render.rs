//! Text rendering for the terminal: live progress lines from trace records, and session trees.

use std::collections::HashMap;
use std::fmt::Write;

use canopy_protocol::{AgentKind, TraceEvent, TraceRecord};
use canopy_runtime::trace_reader::SessionNode;

/// Prints one line per interesting event to stderr, labelled by agent.
pub struct Progress {
    root: String,
    labels: HashMap<String, String>,
}

impl Progress {
    pub fn new(root: String) -> Self {
        Progress {
            root,
            labels: HashMap::new(),
        }
    }

    fn label(&self, session: &str) -> String {
        if session == self.root {
            "main".to_string()
        } else {
            self.labels
                .get(session)
                .cloned()
                .unwrap_or_else(|| session.to_string())
        }
    }

    pub fn print(&mut self, r: &TraceRecord) {
        if let TraceEvent::SubagentRequested {
            child_session_id,
            description,
            profile,
            ..
        } = &r.event
        {
            self.labels.insert(
                child_session_id.clone(),
                format!("{profile}: {description}"),
            );
        }
        let who = self.label(&r.session_id);
        let line = match &r.event {
            TraceEvent::SessionStarted { model, budgets, agent, .. } => Some(format!(
                "started on {} ({}{}) — budgets: {} steps, {} context, {} total tokens, {}s{}",
                model.model_id,
                model.slot.as_str(),
                if model.fallback { ", light not configured: fell back to main" } else { "" },
                budgets.max_steps,
                budgets.max_context_tokens,
                budgets.max_total_tokens,
                budgets.max_wall_time_ms / 1000,
                if *agent == AgentKind::Subagent { ", read-only" } else { "" }
            )),
            TraceEvent::ModelRetry { attempt, delay_ms, error, .. } => Some(format!("retry {attempt} in {delay_ms} ms: {error}")),
            TraceEvent::ModelCallEnd { error: Some(e), .. } => Some(format!("model call failed: {e}")),
            TraceEvent::ToolCallBegin { tool, arguments, .. } => Some(format!("{tool} {}", short(&arguments.to_string(), 100))),
            TraceEvent::PermissionRequested { summary, .. } => Some(format!("needs approval: {summary}")),
            TraceEvent::PermissionDecided { decision, reason, tool, .. } if *decision == canopy_protocol::Decision::Deny => {
                Some(format!("{tool} denied: {reason}"))
            }
            TraceEvent::ToolCallEnd { tool, status, output_bytes, duration_ms, .. } => {
                Some(format!("{tool} → {} ({} bytes, {} ms)", serde_json::to_string(status).unwrap_or_default().trim_matches('"'), output_bytes, duration_ms))
            }
            TraceEvent::BudgetWarning { budget, used, limit } => Some(format!("budget warning: {budget:?} {used}/{limit}")),
            TraceEvent::BudgetExhausted { budget, used, limit } => Some(format!("budget exhausted: {budget:?} {used}/{limit} — asking for a final answer")),
            TraceEvent::Compacted { messages_before, messages_after, tokens_before, tokens_after, .. } => {
                Some(format!("compacted history: {messages_before} → {messages_after} messages, ~{tokens_before} → ~{tokens_after} tokens"))
            }
            TraceEvent::ResultRejected { attempt, error } => Some(format!("result rejected (attempt {attempt}): {error}")),
            TraceEvent::ReadonlyViolation { changed } => Some(format!("READ-ONLY VIOLATION: {}", changed.join(", "))),
            TraceEvent::CancelRequested { reason } => Some(format!("cancel requested by {reason}")),
            TraceEvent::RunEnded { terminal_reason, usage_with_descendants, totals, .. } => Some(format!(
                "ended: {} — {} steps, {} tokens (incl. subagents), {:.1}s",
                reason(terminal_reason),
                totals.steps,
                usage_with_descendants.total(),
                totals.wall_time_ms as f64 / 1000.0
            )),
            _ => None,
        };
        if let Some(line) = line {
            eprintln!("[{who}] {line}");
        }
    }
}

fn reason<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v)
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// The tree of a session and its descendants, one agent per line with budgets used/limit.
pub fn tree(root: &SessionNode) -> String {
    let mut out = String::new();
    write_node(&mut out, root, "", true, true);
    out
}

fn write_node(out: &mut String, n: &SessionNode, prefix: &str, last: bool, is_root: bool) {
    let branch = if is_root {
        ""
    } else if last {
        "└─ "
    } else {
        "├─ "
    };
    let label = match (&n.description, n.agent) {
        (Some(d), _) => format!("{} \"{}\"", n.profile, d),
        (None, AgentKind::Main) => "main".to_string(),
        (None, _) => n.profile.clone(),
    };
    let model = n
        .model
        .as_ref()
        .map(|m| {
            format!(
                "{} [{}{}]",
                m.model_id,
                m.slot.as_str(),
                if m.fallback {
                    ", fallback from light"
                } else {
                    ""
                }
            )
        })
        .unwrap_or_else(|| "?".into());
    let status = reason(&n.status);
    let terminal = n.terminal_reason.as_ref().map(reason).unwrap_or_default();
    let _ = writeln!(
        out,
        "{prefix}{branch}{label} — {status} ({terminal}) — {model} — {}",
        n.session_id
    );
    let child_prefix = if is_root {
        String::new()
    } else {
        format!("{prefix}{}", if last { "   " } else { "│  " })
    };
    if let Some(b) = &n.budgets {
        let t = &n.totals;
        let _ = writeln!(
            out,
            "{child_prefix}{}   steps {}/{} · context {}/{} · total tokens {}/{} · wall {:.1}s/{:.0}s · tool calls {} · tokens incl. subagents {}",
            if n.children.is_empty() { " " } else { "│" },
            t.steps,
            b.max_steps,
            t.context_tokens,
            b.max_context_tokens,
            t.total_tokens,
            b.max_total_tokens,
            t.wall_time_ms as f64 / 1000.0,
            b.max_wall_time_ms as f64 / 1000.0,
            n.tool_calls,
            n.usage_with_descendants.total()
        );
    }
    let count = n.children.len();
    for (i, c) in n.children.iter().enumerate() {
        write_node(out, c, &child_prefix, i + 1 == count, false);
    }
}
