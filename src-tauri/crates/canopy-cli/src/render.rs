//! Text rendering for the terminal: live progress lines from trace records, and session trees.
//! Everything printed that a model, a project or a trace file chose (tool names, descriptions,
//! model ids, answers) goes through [`one_line`] or [`text`], so it cannot carry terminal control
//! sequences or start a fake line of its own.

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
            eprintln!("[{}] {}", one_line(&who), one_line(&line));
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

/// `s` as one printable line: control characters (line breaks, escape sequences, bells, C1
/// controls) and the bidirectional overrides that reorder what a terminal shows become visible
/// escapes like `\x1b` and `\u{202e}`.
pub fn one_line(s: &str) -> String {
    escape(s, false)
}

/// Like [`one_line`], but keeps line breaks and tabs: for an answer printed as a text block.
pub fn text(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' if keep_lines => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Levels of indentation drawn; deeper sessions (a damaged or hostile trace folder can chain
/// thousands) say their depth instead, so each line stays short.
const MAX_INDENT: usize = 32;

/// The tree of a session and its descendants, one agent per line with budgets used/limit.
pub fn tree(root: &SessionNode, notes: &crate::evidence::Notes) -> String {
    let mut out = String::new();
    // Without recursion: a chain of sessions can be thousands deep. Each entry is a node and, per
    // level above it, whether that ancestor was the last of its siblings.
    let mut stack: Vec<(&SessionNode, Vec<bool>)> = vec![(root, Vec::new())];
    while let Some((n, lasts)) = stack.pop() {
        write_node(&mut out, n, &lasts, notes.get(&n.session_id));
        let count = n.children.len();
        for (i, c) in n.children.iter().enumerate().rev() {
            let mut l = lasts.clone();
            l.push(i + 1 == count);
            stack.push((c, l));
        }
    }
    out
}

/// The drawing before a node's line (`branch`) and before its continuation lines (`cont`).
fn prefixes(lasts: &[bool]) -> (String, String) {
    let Some((last, above)) = lasts.split_last() else {
        return (String::new(), String::new());
    };
    let mut prefix = String::new();
    for l in above.iter().take(MAX_INDENT) {
        prefix.push_str(if *l { "   " } else { "│  " });
    }
    if above.len() > MAX_INDENT {
        let _ = write!(prefix, "[depth {}] ", lasts.len());
    }
    let branch = if *last { "└─ " } else { "├─ " };
    let cont = format!("{prefix}{}", if *last { "   " } else { "│  " });
    (format!("{prefix}{branch}"), cont)
}

fn write_node(out: &mut String, n: &SessionNode, lasts: &[bool], notes: Option<&Vec<String>>) {
    let (lead, child_prefix) = prefixes(lasts);
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
    let broken = n
        .broken_parent
        .as_ref()
        .map(|p| format!(" — parent link to {p} broken (a cycle); shown as a root"))
        .unwrap_or_default();
    let line = format!(
        "{label} — {status} ({terminal}) — {model} — {}{broken}",
        n.session_id
    );
    let _ = writeln!(out, "{lead}{}", one_line(&line));
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
    let bar = if n.children.is_empty() { " " } else { "│" };
    for note in notes.into_iter().flatten() {
        let _ = writeln!(out, "{child_prefix}{bar}   {}", one_line(note));
    }
}
