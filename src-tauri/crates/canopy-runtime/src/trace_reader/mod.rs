//! Reads trace folders back: one session file, a whole session tree (root + descendants, linked by
//! `parent_session_id`), summaries of root sessions for history, and one tool call's recorded output.
//! A truncated last line (a crash mid-write) is skipped, never fatal. History reads only the head and
//! tail of each file and replay can leave big tool outputs out, so both stay fast on large traces.

mod file;
mod history;
mod links;
mod replay;
mod tree;

pub use file::*;
pub use history::*;
pub use replay::*;
pub use tree::*;

#[cfg(test)]
mod tests {
    use super::file::*;
    use super::history::*;

    use super::replay::*;
    use super::tree::*;
    use super::*;
    use crate::RuntimeError;
    use canopy_protocol::TraceRecord;
    use canopy_protocol::{
        AgentKind, BudgetUsage, Budgets, ModelInfo, ModelSlot, PermissionMode, ProviderKind,
        TerminalReason, ToolStatus, TraceEvent, Usage, TRACE_SCHEMA_VERSION,
    };
    use serde_json::{json, Value};
    use std::fs;
    use std::path::{Path, PathBuf};

    /// Writes trace files the way the runtime does: one compact JSON record per line.
    struct Trace {
        dir: tempfile::TempDir,
    }

    impl Trace {
        fn new() -> Self {
            Trace {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }

        fn write(&self, id: &str, events: Vec<TraceEvent>, parent: Option<&str>) -> Vec<String> {
            self.write_at(id, events, parent, 1_000)
        }

        /// Like `write`, with the first record at `ts0` ms.
        fn write_at(
            &self,
            id: &str,
            events: Vec<TraceEvent>,
            parent: Option<&str>,
            ts0: u64,
        ) -> Vec<String> {
            let lines: Vec<String> = events
                .into_iter()
                .enumerate()
                .map(|(i, event)| {
                    serde_json::to_string(&TraceRecord {
                        v: TRACE_SCHEMA_VERSION,
                        seq: i as u64,
                        ts_ms: ts0 + i as u64,
                        session_id: id.into(),
                        run_id: "r-1".into(),
                        parent_session_id: parent.map(str::to_string),
                        event,
                    })
                    .unwrap()
                })
                .collect();
            fs::write(self.file(id), lines.join("\n") + "\n").unwrap();
            lines
        }

        fn append(&self, id: &str, text: &str) {
            let mut bytes = fs::read(self.file(id)).unwrap();
            bytes.extend_from_slice(text.as_bytes());
            fs::write(self.file(id), bytes).unwrap();
        }

        fn file(&self, id: &str) -> PathBuf {
            self.path().join(format!("{id}.jsonl"))
        }
    }

    fn started(agent: AgentKind, system_prompt: &str) -> TraceEvent {
        TraceEvent::SessionStarted {
            agent,
            profile: "main".into(),
            description: None,
            model: ModelInfo {
                slot: ModelSlot::Main,
                requested_slot: ModelSlot::Main,
                fallback: false,
                provider: ProviderKind::Openai,
                model_id: "m".into(),
                base_url: "http://127.0.0.1:1/v1".into(),
            },
            budgets: Budgets {
                max_steps: 10,
                max_context_tokens: 1_000,
                max_total_tokens: 10_000,
                max_wall_time_ms: 60_000,
            },
            project_root: "/p".into(),
            parent: None,
            permission_mode: PermissionMode::Main,
            tools: vec!["Read".into()],
            system_prompt: system_prompt.into(),
            bash_sandbox: None,
        }
    }

    fn run(prompt: &str) -> TraceEvent {
        TraceEvent::RunStarted {
            prompt: prompt.into(),
        }
    }

    fn model_end(total_tokens: u64) -> TraceEvent {
        TraceEvent::ModelCallEnd {
            model_call_id: "m-1".into(),
            step: 1,
            text: "thinking".into(),
            reasoning: String::new(),
            tool_calls: vec![],
            finish_reason: None,
            usage: Usage {
                input_tokens: total_tokens,
                output_tokens: 0,
                reasoning_tokens: 0,
                estimated: false,
            },
            model: "m".into(),
            latency_ms: 1,
            error: None,
            totals: BudgetUsage {
                total_tokens,
                ..BudgetUsage::default()
            },
        }
    }

    fn ended(reason: TerminalReason, tokens_with_descendants: u64) -> TraceEvent {
        TraceEvent::RunEnded {
            terminal_reason: reason,
            final_text: None,
            result: None,
            error: None,
            usage: Usage::default(),
            usage_with_descendants: Usage {
                input_tokens: tokens_with_descendants,
                output_tokens: 0,
                reasoning_tokens: 0,
                estimated: false,
            },
            totals: BudgetUsage::default(),
            tool_calls: 0,
        }
    }

    fn begin(call_id: &str, arguments: Value) -> TraceEvent {
        TraceEvent::ToolCallBegin {
            call_id: call_id.into(),
            tool: "Read".into(),
            arguments,
            mutates: false,
        }
    }

    fn end(call_id: &str, output: &str) -> TraceEvent {
        TraceEvent::ToolCallEnd {
            call_id: call_id.into(),
            tool: "Read".into(),
            status: ToolStatus::Ok,
            output: output.into(),
            output_bytes: output.len() as u64,
            output_cap_bytes: 16_384,
            truncated: false,
            duration_ms: 3,
            output_elided: false,
            seen: Vec::new(),
        }
    }

    const ELIDE: LoadOptions = LoadOptions {
        elide_outputs_over: Some(256),
    };

    /// Outputs that exercise the splice: plain, at and past the limit, escapes, unicode, and text that
    /// looks like the field it sits in.
    fn tricky_outputs() -> Vec<(&'static str, String)> {
        vec![
            ("c-short", "fn main() {}".to_string()),
            ("c-at-limit", "a".repeat(256)),
            ("c-over-limit", "a".repeat(257)),
            (
                "c-escapes",
                format!(
                    "line \"one\"\n\ttab\\slash \u{1}ctl \"output\":\"fake\" {}",
                    "x".repeat(300)
                ),
            ),
            (
                "c-unicode",
                "caf\u{e9} \u{1F333} \u{65e5}\u{672c}".repeat(40),
            ),
            // 200 bytes decoded, over 256 as JSON: stays inline.
            ("c-escaped-short", "\"".repeat(200)),
            ("c-empty", String::new()),
            // Long enough as JSON to be over the limit without decoding.
            ("c-many-escapes", "\"".repeat(2_000)),
            // 1,500 bytes of JSON (`\u0001` each) for 250 decoded: stays inline.
            ("c-controls", "\u{1}".repeat(250)),
        ]
    }

    /// A root with one child; both make tool calls with the outputs above. The child's file ends in
    /// a line cut mid-write.
    fn tree_with_outputs(t: &Trace) -> Vec<(String, Vec<String>)> {
        let mut root = vec![started(AgentKind::Main, "sys"), run("map the code")];
        let mut child = vec![started(AgentKind::Subagent, "child sys"), run("look")];
        for (i, (id, output)) in tricky_outputs().into_iter().enumerate() {
            let events = if i % 2 == 0 { &mut root } else { &mut child };
            let call = format!("{id}-{i}");
            // Arguments holding an object tagged like the event must not be touched.
            events.push(begin(
                &call,
                json!({"type": "tool_call_end", "output": "y".repeat(400)}),
            ));
            events.push(end(&call, &output));
        }
        child.push(end("child-call", &"z".repeat(1_000)));
        root.push(begin("c-pending", json!({})));
        child.push(ended(TerminalReason::Completed, 5));
        root.push(ended(TerminalReason::Completed, 50));
        let root_lines = t.write("s-root", root, None);
        let child_lines = t.write("s-child", child, Some("s-root"));
        t.append(
            "s-child",
            "{\"v\":1,\"seq\":99,\"event\":{\"type\":\"tool_call_end\",\"output\":\"cut mid-wri",
        );
        vec![
            ("s-root".to_string(), root_lines),
            ("s-child".to_string(), child_lines),
        ]
    }

    #[test]
    fn elision_changes_only_big_outputs_and_they_can_be_fetched_back() {
        let t = Trace::new();
        let files = tree_with_outputs(&t);
        let full = load_session_tree(t.path(), "s-root").unwrap();
        let lazy = load_session_tree_json_with(t.path(), "s-root", &ELIDE).unwrap();

        // Byte for byte: each line as written, except the big outputs, replaced the slow and obvious
        // way (the writer serialises `output` exactly as `to_string` does).
        let mut expected = Vec::new();
        for (_, lines) in &files {
            for line in lines {
                let value: Value = serde_json::from_str(line).unwrap();
                let mut line = line.clone();
                if value["event"]["type"] == "tool_call_end" {
                    let output = value["event"]["output"].as_str().unwrap();
                    if output.len() > 256 {
                        let raw = format!("\"output\":{}", serde_json::to_string(output).unwrap());
                        assert!(line.contains(&raw));
                        line = line.replacen(&raw, "\"output\":\"\",\"output_elided\":true", 1);
                    }
                }
                expected.push(line);
            }
        }
        assert_eq!(lazy, format!("[{}]", expected.join(",")));

        // Parsed: the same records once each elided output is fetched back.
        let mut parsed: Vec<TraceRecord> = serde_json::from_str(&lazy).unwrap();
        let mut elided = Vec::new();
        for r in &mut parsed {
            if let TraceEvent::ToolCallEnd {
                call_id,
                output,
                output_elided,
                ..
            } = &mut r.event
            {
                if *output_elided {
                    assert_eq!(output, "", "{call_id}");
                    *output = read_tool_output(t.path(), &r.session_id, call_id).unwrap();
                    *output_elided = false;
                    elided.push(call_id.clone());
                }
            }
        }
        assert_eq!(parsed, full);
        elided.sort();
        assert_eq!(
            elided,
            [
                "c-escapes-3",
                "c-many-escapes-7",
                "c-over-limit-2",
                "c-unicode-4",
                "child-call"
            ]
        );

        // Without the option nothing changes.
        let plain: Vec<TraceRecord> =
            serde_json::from_str(&load_session_tree_json(t.path(), "s-root").unwrap()).unwrap();
        assert_eq!(plain, full);
    }

    #[test]
    fn a_cut_last_line_is_dropped_with_or_without_elision() {
        let t = Trace::new();
        tree_with_outputs(&t);
        let records = load_session_tree(t.path(), "s-root").unwrap();
        for options in [LoadOptions::default(), ELIDE] {
            let json = load_session_tree_json_with(t.path(), "s-root", &options).unwrap();
            let parsed: Vec<Value> = serde_json::from_str(&json).unwrap();
            assert_eq!(parsed.len(), records.len(), "{options:?}");
            assert!(!json.contains("cut mid-wri"));
        }
        assert_eq!(
            read_session_file(&t.file("s-child")).unwrap().skipped_lines,
            1
        );
    }

    #[test]
    fn read_tool_output_finds_calls_in_any_session_and_names_what_is_missing() {
        let t = Trace::new();
        tree_with_outputs(&t);
        assert_eq!(
            read_tool_output(t.path(), "s-child", "child-call").unwrap(),
            "z".repeat(1_000)
        );
        assert_eq!(
            read_tool_output(t.path(), "s-child", "c-escapes-3").unwrap(),
            tricky_outputs()[3].1
        );
        assert_eq!(
            read_tool_output(t.path(), "s-root", "c-unicode-4").unwrap(),
            tricky_outputs()[4].1
        );
        // The call exists, but in another session's file.
        let e = read_tool_output(t.path(), "s-root", "child-call").unwrap_err();
        assert!(
            matches!(&e, RuntimeError::UnknownToolCall { session_id, call_id }
                if session_id == "s-root" && call_id == "child-call"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "no tool call `child-call` in session `s-root`"
        );
        // Begun but never ended: nothing recorded.
        assert!(matches!(
            read_tool_output(t.path(), "s-root", "c-pending"),
            Err(RuntimeError::UnknownToolCall { .. })
        ));
        assert!(matches!(
            read_tool_output(t.path(), "s-nope", "child-call"),
            Err(RuntimeError::UnknownSession(id)) if id == "s-nope"
        ));
        for bad in ["", "../s-root", "a/b", "a\\b", "..", "s-root\0"] {
            let e = read_tool_output(t.path(), bad, "child-call").unwrap_err();
            assert!(
                matches!(e, RuntimeError::InvalidSessionId { .. }),
                "{bad:?}: {e:?}"
            );
        }
    }

    fn summary(t: &Trace, id: &str) -> SessionSummary {
        list_root_sessions(t.path())
            .into_iter()
            .find(|s| s.session_id == id)
            .unwrap_or_else(|| panic!("{id} not listed"))
    }

    #[test]
    fn history_lists_roots_with_the_last_runs_outcome_and_tree_size() {
        let t = Trace::new();
        t.write(
            "s-a",
            vec![
                started(AgentKind::Main, "sys"),
                run("first question\nwith a second line"),
                model_end(10),
                ended(TerminalReason::MaxSteps, 40),
                run("second question"),
                model_end(7),
                ended(TerminalReason::Completed, 90),
            ],
            None,
        );
        t.write(
            "s-a1",
            vec![started(AgentKind::Subagent, "c"), run("sub")],
            Some("s-a"),
        );
        t.write(
            "s-a2",
            vec![started(AgentKind::Subagent, "c"), run("sub")],
            Some("s-a1"),
        );
        // Newer, and its second run was cancelled after a completed first one.
        t.write_at(
            "s-b",
            vec![
                started(AgentKind::Main, "sys"),
                run("b"),
                ended(TerminalReason::Completed, 5),
                run("again"),
                ended(TerminalReason::Cancelled, 8),
            ],
            None,
            9_000,
        );

        let list = list_root_sessions(t.path());
        let ids: Vec<&str> = list.iter().map(|s| s.session_id.as_str()).collect();
        assert_eq!(ids, ["s-b", "s-a"], "roots only, newest first");
        let a = &list[1];
        assert_eq!(a.title, "first question");
        assert_eq!(a.started_ms, 1_000);
        assert_eq!(
            (a.status, a.terminal_reason, a.total_tokens, a.sessions),
            (
                SessionStatus::Completed,
                Some(TerminalReason::Completed),
                90,
                3
            )
        );
        let b = &list[0];
        assert_eq!(
            (b.status, b.terminal_reason, b.total_tokens, b.sessions),
            (
                SessionStatus::Cancelled,
                Some(TerminalReason::Cancelled),
                8,
                1
            )
        );
        // The same outcome the full parse derives.
        let trees = read_trees(t.path());
        let full = trees.iter().find(|n| n.session_id == "s-a").unwrap();
        assert_eq!(
            (
                full.status,
                full.usage_with_descendants.total(),
                count(full)
            ),
            (a.status, a.total_tokens, a.sessions)
        );
    }

    #[test]
    fn read_tree_reads_one_session_and_its_descendants_only() {
        let t = Trace::new();
        let sub = |p: &str| {
            vec![
                started(AgentKind::Subagent, p),
                run(p),
                ended(TerminalReason::Completed, 5),
            ]
        };
        t.write(
            "s-a",
            vec![
                started(AgentKind::Main, "a"),
                run("a"),
                ended(TerminalReason::Completed, 30),
            ],
            None,
        );
        t.write_at("s-b", sub("b"), Some("s-a"), 2_000);
        t.write_at("s-c", sub("c"), Some("s-b"), 3_000);
        t.write_at("s-d", sub("d"), Some("s-a"), 2_500);
        // Another root whose file is not even valid JSON: showing s-a must not need it.
        fs::write(t.file("s-other"), "{ not json\n").unwrap();

        let a = read_tree(t.path(), "s-a").unwrap();
        let ids = |n: &SessionNode| {
            n.children
                .iter()
                .map(|c| c.session_id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&a), ["s-b", "s-d"], "children in start order");
        assert_eq!(ids(&a.children[0]), ["s-c"]);
        assert_eq!(count(&a), 4);

        // A child shows as the root of its own subtree.
        let b = read_tree(t.path(), "s-b").unwrap();
        assert_eq!((b.session_id.as_str(), count(&b)), ("s-b", 2));

        assert!(
            matches!(read_tree(t.path(), "s-nope"), Err(RuntimeError::UnknownSession(id)) if id == "s-nope")
        );
        assert!(matches!(
            read_tree(t.path(), "../s-a"),
            Err(RuntimeError::InvalidSessionId { .. })
        ));
    }

    fn count(node: &SessionNode) -> u32 {
        1 + node.children.iter().map(count).sum::<u32>()
    }

    /// Every session id in the trees, depth-first, without recursion (a chain can be deep).
    fn all_ids(trees: &[SessionNode]) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack: Vec<&SessionNode> = trees.iter().collect();
        while let Some(n) = stack.pop() {
            out.push(n.session_id.clone());
            stack.extend(n.children.iter());
        }
        out.sort();
        out
    }

    /// Runs `f` on a thread with the main thread's usual stack and fails if it has not returned in
    /// `secs`: a reader that loops on a cycle must fail the test, not hang the suite.
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                let _ = tx.send(f());
            })
            .unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .expect("the reader did not finish: it loops")
    }

    fn sub(p: &str) -> Vec<TraceEvent> {
        vec![
            started(AgentKind::Subagent, p),
            run(p),
            ended(TerminalReason::Completed, 5),
        ]
    }

    /// s-a and s-b name each other as parent, s-c names itself, s-e hangs off s-a, and s-r is an
    /// ordinary root: what a hand-edited or corrupted trace folder can hold.
    fn cyclic(t: &Trace) {
        t.write_at("s-a", sub("a"), Some("s-b"), 1_000);
        t.write_at("s-b", sub("b"), Some("s-a"), 2_000);
        t.write_at(
            "s-c",
            vec![
                started(AgentKind::Main, "c"),
                run("c"),
                ended(TerminalReason::Completed, 5),
            ],
            Some("s-c"),
            3_000,
        );
        t.write_at("s-e", sub("e"), Some("s-a"), 4_000);
        t.write_at(
            "s-r",
            vec![
                started(AgentKind::Main, "r"),
                run("r"),
                ended(TerminalReason::Completed, 5),
            ],
            None,
            5_000,
        );
    }

    #[test]
    fn parent_cycles_end_and_every_file_is_still_shown() {
        let t = Trace::new();
        cyclic(&t);
        let dir = t.path().to_path_buf();
        let trees = within(5, move || read_trees(&dir));
        assert_eq!(all_ids(&trees), ["s-a", "s-b", "s-c", "s-e", "s-r"]);
        let broken = |id: &str| {
            trees
                .iter()
                .find(|t| t.session_id == id)
                .map(|t| t.broken_parent.clone())
        };
        // Each session of a cycle is a root that shows the link it could not follow.
        assert_eq!(broken("s-a"), Some(Some("s-b".into())));
        assert_eq!(broken("s-b"), Some(Some("s-a".into())));
        assert_eq!(broken("s-c"), Some(Some("s-c".into())));
        assert_eq!(broken("s-r"), Some(None));
        let a = trees.iter().find(|t| t.session_id == "s-a").unwrap();
        assert_eq!(
            a.children[0].session_id, "s-e",
            "what hangs off a cycle stays under it"
        );
        for id in ["s-a", "s-b", "s-c"] {
            let dir = t.path().to_path_buf();
            let tree = within(5, move || read_tree(&dir, id).unwrap());
            assert_eq!(tree.session_id, id);
            assert!(
                tree.broken_parent.is_some(),
                "{id} shows its broken link alone too"
            );
            let dir = t.path().to_path_buf();
            let records = within(5, move || load_session_tree(&dir, id).unwrap());
            assert!(records.iter().any(|r| r.session_id == id));
            let dir = t.path().to_path_buf();
            let json = within(5, move || load_session_tree_json(&dir, id).unwrap());
            assert!(json.contains(id));
        }
        let dir = t.path().to_path_buf();
        let listed = within(5, move || list_root_sessions(&dir));
        let mut ids: Vec<&str> = listed.iter().map(|s| s.session_id.as_str()).collect();
        ids.sort();
        // The subagent sessions in the cycle are listed too: nothing recorded is hidden.
        assert_eq!(ids, ["s-a", "s-b", "s-c", "s-r"]);
        let a = listed.iter().find(|s| s.session_id == "s-a").unwrap();
        assert_eq!((a.sessions, a.broken_parent.as_deref()), (2, Some("s-b")));
        let dir = t.path().to_path_buf();
        within(5, move || delete_session_tree(&dir, "s-c").unwrap());
        assert!(!t.file("s-c").exists());
        assert!(t.file("s-a").exists() && t.file("s-r").exists());
    }

    #[test]
    fn a_3000_deep_parent_chain_does_not_overflow_the_stack() {
        let t = Trace::new();
        t.write(
            "s-0",
            vec![
                started(AgentKind::Main, "root"),
                run("root"),
                ended(TerminalReason::Completed, 5),
            ],
            None,
        );
        for i in 1..=3000u64 {
            t.write_at(
                &format!("s-{i}"),
                sub("deep"),
                Some(&format!("s-{}", i - 1)),
                1_000 + i * 10,
            );
        }
        let dir = t.path().to_path_buf();
        let trees = within(30, move || {
            let trees = read_trees(&dir);
            let ids = all_ids(&trees);
            // Dropped here, on the big stack, like the CLI drops it.
            (ids.len(), trees.len())
        });
        assert_eq!(trees, (3001, 1));
        let dir = t.path().to_path_buf();
        let one = within(30, move || {
            all_ids(&[read_tree(&dir, "s-0").unwrap()]).len()
        });
        assert_eq!(one, 3001);
        let dir = t.path().to_path_buf();
        let records = within(30, move || load_session_tree(&dir, "s-0").unwrap().len());
        assert_eq!(records, 3001 * 3);
        let dir = t.path().to_path_buf();
        let listed = within(30, move || list_root_sessions(&dir));
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].sessions, 3001);
    }

    #[test]
    fn a_root_without_run_ended_is_interrupted_with_its_runs_tokens_so_far() {
        let t = Trace::new();
        t.write(
            "s-crash",
            vec![
                started(AgentKind::Main, "sys"),
                run("one"),
                model_end(30),
                ended(TerminalReason::Completed, 100),
                run("two"),
                model_end(12),
                model_end(25),
                end("c-1", "out"),
            ],
            None,
        );
        let s = summary(&t, "s-crash");
        assert_eq!(
            (
                s.status,
                s.terminal_reason,
                s.total_tokens,
                s.title.as_str()
            ),
            (
                SessionStatus::Interrupted,
                Some(TerminalReason::Interrupted),
                25,
                "one"
            )
        );
        // Killed before any model call, and before any run.
        t.write(
            "s-early",
            vec![started(AgentKind::Main, "sys"), run("early")],
            None,
        );
        t.write("s-bare", vec![started(AgentKind::Main, "sys")], None);
        for id in ["s-early", "s-bare"] {
            let s = summary(&t, id);
            assert_eq!(
                (s.status, s.total_tokens),
                (SessionStatus::Interrupted, 0),
                "{id}"
            );
        }
        assert_eq!(summary(&t, "s-bare").title, "");
    }

    #[test]
    fn an_interrupted_run_far_from_the_end_is_found_past_the_tail_window() {
        let t = Trace::new();
        let mut events = vec![
            started(AgentKind::Main, "sys"),
            run("one"),
            ended(TerminalReason::Completed, 100),
            run("two"),
            model_end(9),
        ];
        // More than the first tail window of outputs after the last run started.
        for i in 0..40 {
            events.push(end(&format!("c-{i}"), &"o".repeat(4_000)));
        }
        t.write("s-long", events, None);
        assert!(fs::metadata(t.file("s-long")).unwrap().len() > 2 * TAIL_WINDOW);
        let s = summary(&t, "s-long");
        assert_eq!((s.status, s.total_tokens), (SessionStatus::Interrupted, 9));
    }

    #[test]
    fn the_title_is_found_when_run_started_is_far_from_the_first_line() {
        let t = Trace::new();
        // A first line larger than any window, then other records before the run starts.
        t.write(
            "s-big",
            vec![
                started(AgentKind::Main, &"p".repeat(300_000)),
                end("c-0", "stray"),
                run("the real title"),
                ended(TerminalReason::Completed, 3),
            ],
            None,
        );
        let s = summary(&t, "s-big");
        assert_eq!(
            (s.title.as_str(), s.status, s.total_tokens),
            ("the real title", SessionStatus::Completed, 3)
        );
    }

    #[test]
    fn a_truncated_last_line_does_not_change_the_outcome() {
        let t = Trace::new();
        t.write(
            "s-cut",
            vec![
                started(AgentKind::Main, "sys"),
                run("q"),
                ended(TerminalReason::Completed, 44),
            ],
            None,
        );
        // A cut `run_started` (a new run the crash interrupted before it reached the disk whole),
        // ending inside a multi-byte character.
        t.append(
            "s-cut",
            "{\"v\":1,\"seq\":3,\"ts_ms\":5,\"session_id\":\"s-cut\",\"run_id\":\"r\",\"parent_session_id\":null,\"event\":{\"type\":\"run_started\",\"prompt\":\"caf\u{e9}",
        );
        let mut bytes = fs::read(t.file("s-cut")).unwrap();
        bytes.pop();
        fs::write(t.file("s-cut"), bytes).unwrap();
        let s = summary(&t, "s-cut");
        assert_eq!(
            (s.status, s.total_tokens, s.sessions),
            (SessionStatus::Completed, 44, 1)
        );
    }
}
