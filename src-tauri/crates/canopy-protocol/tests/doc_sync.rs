//! Keeps `docs/trace-format.md` true to the trace types: every event tag has a section whose table
//! lists exactly the fields the event serialises, every shared type likewise, every enumeration value
//! is mentioned, and the example records parse as real `TraceRecord`s.

// Test code: a panic with a message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use canopy_protocol::*;
use serde::Serialize;
use serde_json::{json, Value};

fn doc() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/trace-format.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `### \`name\`` sections under the `## <chapter>` heading: name → field names of its table.
fn sections(doc: &str, chapter: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    let mut in_chapter = false;
    let mut current: Option<String> = None;
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            in_chapter = h.trim() == chapter;
            current = None;
            continue;
        }
        if !in_chapter {
            continue;
        }
        if let Some(h) = line.strip_prefix("### ") {
            let name = h.trim().trim_matches('`').to_string();
            out.insert(name.clone(), BTreeSet::new());
            current = Some(name);
            continue;
        }
        if let (Some(name), Some(rest)) = (&current, line.strip_prefix("| `")) {
            if let Some((field, _)) = rest.split_once("` |") {
                out.get_mut(name).unwrap().insert(field.to_string());
            }
        }
    }
    assert!(
        !out.is_empty(),
        "no `### ` sections under `## {chapter}` in docs/trace-format.md"
    );
    out
}

fn keys(v: &impl Serialize) -> BTreeSet<String> {
    match serde_json::to_value(v).unwrap() {
        Value::Object(m) => m.keys().filter(|k| *k != "type").cloned().collect(),
        other => panic!("expected an object, got {other}"),
    }
}

fn model() -> ModelInfo {
    ModelInfo {
        slot: ModelSlot::Main,
        requested_slot: ModelSlot::Light,
        fallback: true,
        provider: ProviderKind::Openai,
        model_id: "m".into(),
        base_url: "http://127.0.0.1/v1".into(),
    }
}

fn budgets() -> Budgets {
    Budgets {
        max_steps: 12,
        max_context_tokens: 16_000,
        max_total_tokens: 32_000,
        max_wall_time_ms: 300_000,
    }
}

fn usage() -> Usage {
    Usage {
        input_tokens: 10,
        output_tokens: 2,
        reasoning_tokens: 1,
        estimated: false,
    }
}

fn evidence() -> CheckedEvidence {
    CheckedEvidence {
        raw: "a.rs:1".into(),
        path: "a.rs".into(),
        line: 1,
        end_line: Some(2),
        state: EvidenceState::Valid,
        text: Some("x".into()),
        // Every optional field set, so each row of the doc is checked.
        quote: Some("x".into()),
        quote_matches: Some(true),
        provenance: Some(Provenance::Seen),
        read_stamp: Some(stamp()),
        stale: true,
        seen_text: Some("y".into()),
        trust: Some(EvidenceTrust::Stale),
    }
}

fn stamp() -> FileStamp {
    FileStamp {
        bytes: 10,
        whole: true,
        hash: "0123456789abcdef".into(),
    }
}

fn seen_file() -> SeenFile {
    SeenFile {
        path: "a.rs".into(),
        lines: vec![[1, 2]],
        stamp: Some(stamp()),
        edit: Some(seen_edit()),
    }
}

fn seen_edit() -> SeenEdit {
    SeenEdit {
        base: stamp(),
        regions: vec![line_edit()],
    }
}

fn line_edit() -> LineEdit {
    LineEdit {
        old_start: 2,
        old_count: 1,
        new_start: 2,
        new_count: 3,
    }
}

fn trust() -> TrustSummary {
    TrustSummary::of(&[evidence()]).unwrap()
}

fn result() -> SubagentResult {
    SubagentResult {
        status: ResultStatus::Completed,
        summary: "s".into(),
        findings: vec!["f".into()],
        evidence: vec![evidence()],
        unresolved_questions: vec![],
        verdict: Some(Verdict::Pass),
        reasons: vec![],
        trust: Some(trust()),
        unsupported: Some(Unsupported::NoSeenEvidence),
    }
}

fn tool_call() -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: "Read".into(),
        arguments: "{}".into(),
    }
}

fn link() -> ParentLink {
    ParentLink {
        session_id: "s-1".into(),
        run_id: "r-1".into(),
        tool_call_id: "call_1".into(),
    }
}

fn todo() -> TodoItem {
    TodoItem {
        content: "c".into(),
        status: TodoStatus::InProgress,
    }
}

/// Position of a variant in the list below. The match has no wildcard, so a new variant does not
/// compile until it gets a sample (and, through the test, a section in the doc).
fn index(e: &TraceEvent) -> usize {
    match e {
        TraceEvent::SessionStarted { .. } => 0,
        TraceEvent::RunStarted { .. } => 1,
        TraceEvent::ModelCallBegin { .. } => 2,
        TraceEvent::AssistantDelta { .. } => 3,
        TraceEvent::ModelRetry { .. } => 4,
        TraceEvent::ModelCallEnd { .. } => 5,
        TraceEvent::ToolCallBegin { .. } => 6,
        TraceEvent::PermissionRequested { .. } => 7,
        TraceEvent::PermissionDecided { .. } => 8,
        TraceEvent::ToolCallEnd { .. } => 9,
        TraceEvent::TodoUpdated { .. } => 10,
        TraceEvent::BudgetWarning { .. } => 11,
        TraceEvent::BudgetExhausted { .. } => 12,
        TraceEvent::Compacted { .. } => 13,
        TraceEvent::SubagentRequested { .. } => 14,
        TraceEvent::SubagentStarted { .. } => 15,
        TraceEvent::SubagentCompleted { .. } => 16,
        TraceEvent::SubagentFailed { .. } => 17,
        TraceEvent::SubagentCancelled { .. } => 18,
        TraceEvent::ResultRejected { .. } => 19,
        TraceEvent::ReadonlyViolation { .. } => 20,
        TraceEvent::CancelRequested { .. } => 21,
        TraceEvent::RunEnded { .. } => 22,
        TraceEvent::ProviderAdapted { .. } => 23,
        TraceEvent::AnswerChecked { .. } => 24,
    }
}
const VARIANTS: usize = 25;

fn samples() -> Vec<TraceEvent> {
    let s = String::from;
    vec![
        TraceEvent::SessionStarted {
            agent: AgentKind::Subagent,
            profile: s("explore"),
            description: Some(s("d")),
            model: model(),
            budgets: budgets(),
            project_root: s("/p"),
            parent: Some(link()),
            permission_mode: PermissionMode::ReadonlySubagent,
            tools: vec![s("Read")],
            system_prompt: s("sys"),
            bash_sandbox: Some(SandboxMode::Required),
        },
        TraceEvent::RunStarted { prompt: s("p") },
        TraceEvent::ModelCallBegin {
            model_call_id: s("m-1"),
            step: 1,
            messages: 1,
            estimated_input_tokens: 5,
            tools_offered: true,
        },
        TraceEvent::AssistantDelta {
            model_call_id: s("m-1"),
            text: s("t"),
        },
        TraceEvent::ModelRetry {
            model_call_id: s("m-1"),
            attempt: 1,
            delay_ms: 10,
            error: s("e"),
        },
        TraceEvent::ModelCallEnd {
            model_call_id: s("m-1"),
            step: 1,
            text: s("t"),
            reasoning: s("r"),
            tool_calls: vec![tool_call()],
            finish_reason: Some(FinishReason::ToolCalls),
            usage: usage(),
            model: s("m"),
            latency_ms: 3,
            error: None,
            totals: BudgetUsage {
                steps: 1,
                context_tokens: 10,
                total_tokens: 12,
                wall_time_ms: 3,
            },
        },
        TraceEvent::ToolCallBegin {
            call_id: s("c"),
            tool: s("Read"),
            arguments: json!({"path": "a"}),
            mutates: false,
        },
        TraceEvent::PermissionRequested {
            call_id: s("c"),
            tool: s("Bash"),
            summary: s("ls"),
        },
        TraceEvent::PermissionDecided {
            call_id: s("c"),
            tool: s("Bash"),
            decision: Decision::Allow,
            source: DecisionSource::User,
            scope: Some(ApprovalScope::Once),
            reason: s("r"),
        },
        TraceEvent::ToolCallEnd {
            call_id: s("c"),
            tool: s("Read"),
            status: ToolStatus::Ok,
            output: s("o"),
            output_bytes: 1,
            output_cap_bytes: 16,
            truncated: false,
            duration_ms: 1,
            // `true` so the field is serialised and its row in the doc is checked.
            output_elided: true,
            seen: vec![seen_file()],
        },
        TraceEvent::TodoUpdated {
            items: vec![todo()],
        },
        TraceEvent::BudgetWarning {
            budget: BudgetKind::Steps,
            used: 10,
            limit: 12,
        },
        TraceEvent::BudgetExhausted {
            budget: BudgetKind::WallTime,
            used: 12,
            limit: 12,
        },
        TraceEvent::Compacted {
            messages_before: 9,
            messages_after: 3,
            tokens_before: 100,
            tokens_after: 40,
            summary: s("s"),
        },
        TraceEvent::SubagentRequested {
            tool_call_id: s("c"),
            child_session_id: s("s-2"),
            description: s("d"),
            profile: s("explore"),
            model_slot: ModelSlot::Light,
            prompt: s("p"),
        },
        TraceEvent::SubagentStarted {
            tool_call_id: s("c"),
            child_session_id: s("s-2"),
            profile: s("explore"),
            model: model(),
            budgets: budgets(),
        },
        TraceEvent::SubagentCompleted {
            tool_call_id: s("c"),
            child_session_id: s("s-2"),
            result: result(),
            usage: usage(),
            tool_calls: 1,
            elapsed_ms: 5,
            terminal_reason: TerminalReason::Completed,
        },
        TraceEvent::SubagentFailed {
            tool_call_id: s("c"),
            child_session_id: s("s-2"),
            error: s("e"),
            usage: usage(),
            tool_calls: 1,
            elapsed_ms: 5,
            terminal_reason: TerminalReason::InvalidResult,
        },
        TraceEvent::SubagentCancelled {
            tool_call_id: s("c"),
            child_session_id: s("s-2"),
            usage: usage(),
            tool_calls: 0,
            elapsed_ms: 0,
        },
        TraceEvent::ResultRejected {
            attempt: 1,
            error: s("e"),
        },
        TraceEvent::ReadonlyViolation {
            changed: vec![s("a.rs (modified)")],
        },
        TraceEvent::CancelRequested { reason: s("user") },
        TraceEvent::RunEnded {
            terminal_reason: TerminalReason::Completed,
            final_text: Some(s("t")),
            result: Some(result()),
            error: None,
            usage: usage(),
            usage_with_descendants: usage(),
            totals: BudgetUsage::default(),
            tool_calls: 0,
        },
        TraceEvent::AnswerChecked {
            references: vec![evidence()],
            trust: trust(),
        },
        TraceEvent::ProviderAdapted {
            model_call_id: s("m-1"),
            base_url: s("https://api.openai.com/v1"),
            model: s("o3-mini"),
            change: s("max_tokens -> max_completion_tokens"),
            reason: s("Unsupported parameter"),
        },
    ]
}

#[test]
fn samples_cover_every_variant() {
    let seen: BTreeSet<usize> = samples().iter().map(index).collect();
    assert_eq!(
        seen,
        (0..VARIANTS).collect(),
        "every TraceEvent variant needs exactly one sample"
    );
    assert_eq!(samples().len(), VARIANTS);
}

#[test]
fn every_event_is_documented_with_exactly_its_fields() {
    let doc = doc();
    let documented = sections(&doc, "Events");
    let mut tags = BTreeSet::new();
    for event in samples() {
        let tag = event.kind();
        tags.insert(tag.to_string());
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(value["type"], tag, "kind() and the serde tag disagree");
        let Some(fields) = documented.get(tag) else {
            panic!("docs/trace-format.md has no `### \\`{tag}\\`` section")
        };
        let actual = keys(&event);
        let missing: Vec<_> = actual.difference(fields).collect();
        let stale: Vec<_> = fields.difference(&actual).collect();
        assert!(
            missing.is_empty(),
            "`{tag}`: fields missing from the doc: {missing:?}"
        );
        assert!(
            stale.is_empty(),
            "`{tag}`: the doc lists fields the event does not have: {stale:?}"
        );
    }
    let extra: Vec<_> = documented.keys().filter(|k| !tags.contains(*k)).collect();
    assert!(
        extra.is_empty(),
        "the doc documents events that do not exist: {extra:?}"
    );
}

#[test]
fn envelope_and_shared_types_are_documented_with_exactly_their_fields() {
    let doc = doc();
    let shared = sections(&doc, "Shared types");
    let expected: Vec<(&str, BTreeSet<String>)> = vec![
        ("ModelInfo", keys(&model())),
        ("Budgets", keys(&budgets())),
        ("BudgetUsage", keys(&BudgetUsage::default())),
        ("Usage", keys(&usage())),
        ("ToolCall", keys(&tool_call())),
        ("ParentLink", keys(&link())),
        ("TodoItem", keys(&todo())),
        ("SubagentResult", keys(&result())),
        ("CheckedEvidence", keys(&evidence())),
        ("FileStamp", keys(&stamp())),
        ("SeenFile", keys(&seen_file())),
        ("SeenEdit", keys(&seen_edit())),
        ("LineEdit", keys(&line_edit())),
        ("TrustSummary", keys(&trust())),
    ];
    for (name, fields) in &expected {
        let documented = shared
            .get(*name)
            .unwrap_or_else(|| panic!("docs/trace-format.md has no `### \\`{name}\\`` section"));
        assert_eq!(
            documented, fields,
            "`{name}`: documented fields differ from the type's"
        );
    }
    let record = TraceRecord {
        v: TRACE_SCHEMA_VERSION,
        seq: 0,
        ts_ms: 0,
        session_id: "s".into(),
        run_id: "r".into(),
        parent_session_id: None,
        event: TraceEvent::RunStarted { prompt: "p".into() },
    };
    let envelope = sections(
        &format!("## Envelope\n### `TraceRecord`\n{}", envelope_table(&doc)),
        "Envelope",
    );
    assert_eq!(
        envelope["TraceRecord"],
        keys(&record),
        "the record envelope table differs from TraceRecord"
    );
}

/// The table under `## The record envelope`.
fn envelope_table(doc: &str) -> String {
    let start = doc
        .find("## The record envelope")
        .expect("the doc has a `## The record envelope` section");
    let rest = &doc[start + 3..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end]
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_enumeration_value_is_mentioned() {
    let doc = doc();
    let values: Vec<Value> = [
        serde_json::to_value([AgentKind::Main, AgentKind::Subagent]),
        serde_json::to_value([PermissionMode::Main, PermissionMode::ReadonlySubagent]),
        serde_json::to_value([SandboxMode::Required, SandboxMode::Off]),
        serde_json::to_value([ModelSlot::Main, ModelSlot::Light]),
        serde_json::to_value([ProviderKind::Openai, ProviderKind::Anthropic]),
        serde_json::to_value([
            BudgetKind::Steps,
            BudgetKind::ContextTokens,
            BudgetKind::TotalTokens,
            BudgetKind::WallTime,
        ]),
        serde_json::to_value([
            TerminalReason::Completed,
            TerminalReason::MaxSteps,
            TerminalReason::TokenBudget,
            TerminalReason::ContextOverflow,
            TerminalReason::TimeBudget,
            TerminalReason::Cancelled,
            TerminalReason::ModelError,
            TerminalReason::EmptyResponse,
            TerminalReason::InvalidResult,
            TerminalReason::Interrupted,
        ]),
        serde_json::to_value([Decision::Allow, Decision::Deny]),
        serde_json::to_value([
            DecisionSource::ReadOnly,
            DecisionSource::Policy,
            DecisionSource::SessionRule,
            DecisionSource::User,
            DecisionSource::ReadonlyMode,
            DecisionSource::NotAllowed,
            DecisionSource::NoApprover,
        ]),
        serde_json::to_value([ApprovalScope::Once, ApprovalScope::Session]),
        serde_json::to_value([
            ToolStatus::Ok,
            ToolStatus::Error,
            ToolStatus::Denied,
            ToolStatus::Cancelled,
        ]),
        serde_json::to_value([
            TodoStatus::Pending,
            TodoStatus::InProgress,
            TodoStatus::Completed,
        ]),
        serde_json::to_value([ResultStatus::Completed, ResultStatus::Partial]),
        serde_json::to_value([
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Partial,
            Verdict::Unverified,
        ]),
        serde_json::to_value([
            EvidenceState::Valid,
            EvidenceState::MissingFile,
            EvidenceState::LineOutOfRange,
            EvidenceState::OutsideProject,
            EvidenceState::Unparseable,
        ]),
        serde_json::to_value([Provenance::Seen, Provenance::FileSeen, Provenance::Unseen]),
        serde_json::to_value([
            EvidenceTrust::Grounded,
            EvidenceTrust::FileSeen,
            EvidenceTrust::Unseen,
            EvidenceTrust::QuoteMismatch,
            EvidenceTrust::Stale,
            EvidenceTrust::Invalid,
        ]),
        serde_json::to_value([Unsupported::NoSeenEvidence, Unsupported::NoToolCalls]),
        serde_json::to_value([
            FinishReason::Stop,
            FinishReason::ToolCalls,
            FinishReason::Length,
            FinishReason::ContentFilter,
        ]),
    ]
    .into_iter()
    .map(|v| v.unwrap())
    .collect();
    for list in values {
        for v in list.as_array().unwrap() {
            let word = format!("`{}`", v.as_str().unwrap());
            assert!(
                doc.contains(&word),
                "docs/trace-format.md never mentions {word}"
            );
        }
    }
}

#[test]
fn example_records_parse_and_link_up() {
    let doc = doc();
    let mut records = Vec::new();
    let mut in_block = false;
    for line in doc.lines() {
        match line.trim() {
            "```jsonl" => in_block = true,
            "```" => in_block = false,
            l if in_block && !l.is_empty() => {
                let r: TraceRecord = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("example line is not a TraceRecord ({e}): {l}"));
                records.push(r);
            }
            _ => {}
        }
    }
    assert!(
        records.len() >= 10,
        "the example should show a parent and a child exchange"
    );
    // Per session, seq counts from 0 without gaps, as the doc promises.
    let mut by_session: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for r in &records {
        by_session
            .entry(r.session_id.as_str())
            .or_default()
            .push(r.seq);
        assert!(
            r.event.is_persisted(),
            "the example shows file contents, which never hold live-only events"
        );
    }
    for (session, seqs) in &by_session {
        assert_eq!(
            *seqs,
            (0..seqs.len() as u64).collect::<Vec<_>>(),
            "seq of {session} is not 0.. without gaps"
        );
    }
    // The child's links point at the parent's Task call.
    let child_id = records
        .iter()
        .find_map(|r| match &r.event {
            TraceEvent::SubagentRequested {
                child_session_id, ..
            } => Some(child_session_id.clone()),
            _ => None,
        })
        .expect("the example has a subagent_requested");
    let child_start = records
        .iter()
        .find(|r| r.session_id == child_id && r.seq == 0)
        .expect("the child's file is in the example");
    let TraceEvent::SessionStarted {
        parent: Some(parent),
        ..
    } = &child_start.event
    else {
        panic!("the child's first record is not a linked session_started")
    };
    assert_eq!(
        child_start.parent_session_id.as_deref(),
        Some(parent.session_id.as_str())
    );
    assert!(records.iter().any(|r| r.session_id == parent.session_id
        && matches!(&r.event, TraceEvent::ToolCallBegin { call_id, tool, .. } if *call_id == parent.tool_call_id && tool == "Task")));
}
