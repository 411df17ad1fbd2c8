//! Live runs, for a host that keeps sessions open across prompts (the app's window): starting a
//! main session in a project and running a prompt in the background, follow-ups, cancelling a
//! session or one subagent, and the approvals waiting for the person. The runtime does the work;
//! this keeps the handles and routes each run's events to the sink the host gave for it
//! ([`crate::bridge`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use canopy_runtime::{ApprovalAnswer, ApprovalRequest, Approver, MainSession, Runtime};
use serde::Serialize;
use tokio::sync::oneshot;
use ts_rs::TS;

use crate::bridge::{self, Sink, SinkFn, SinkQueue};
use crate::error::{HostError, HostResult};
use crate::host::{Host, SessionStart, StartedSession};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Identifies a run that has started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct RunHandle {
    /// Root session id (for follow-ups, cancel and approvals).
    pub session_id: String,
    /// This run's id (as in the records' `run_id`).
    pub run_id: String,
    /// What the person should be told about the session's start, e.g. temporary files of an
    /// interrupted edit that were removed from the project. Empty for follow-ups.
    pub notices: Vec<String>,
}

/// Refuses an empty prompt.
pub fn check_prompt(prompt: &str) -> HostResult<()> {
    if prompt.trim().is_empty() {
        return Err(HostError::InvalidArgument(
            "the prompt is empty".to_string(),
        ));
    }
    Ok(())
}

/// The person's answer to an approval, from its wire word (`allow_once`, `allow_session`, `deny`).
pub fn parse_answer(answer: &str) -> HostResult<ApprovalAnswer> {
    serde_json::from_value(serde_json::Value::String(answer.to_string())).map_err(|_| {
        HostError::InvalidArgument(format!(
            "unknown answer `{answer}`; use allow_once, allow_session or deny"
        ))
    })
}

/// A main session started by the host and kept for follow-ups.
pub struct LiveSession {
    /// The runtime the session belongs to (built from the settings in force when it started).
    pub runtime: Arc<Runtime>,
    /// The session.
    pub session: Arc<MainSession>,
    /// Channels of the session's runs, in order.
    pub sinks: SinkQueue,
    running: AtomicBool,
}

impl LiveSession {
    /// A session that is not running yet.
    pub fn new(runtime: Arc<Runtime>, session: Arc<MainSession>, sinks: SinkQueue) -> Self {
        LiveSession {
            runtime,
            session,
            sinks,
            running: AtomicBool::new(false),
        }
    }

    /// Marks the session running; false when it already was (one prompt at a time).
    pub fn try_begin(&self) -> bool {
        self.running
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Marks the run finished.
    pub fn end(&self) {
        self.running.store(false, Ordering::SeqCst);
    }

    /// True while a prompt runs.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }
}

/// Approvals waiting for an answer, keyed by (session id, tool-call id).
#[derive(Default)]
pub struct Approvals {
    pending: Mutex<HashMap<(String, String), oneshot::Sender<ApprovalAnswer>>>,
}

impl Approvals {
    /// Delivers the person's answer; false when nothing waits under that key.
    pub fn answer(&self, session_id: &str, call_id: &str, answer: ApprovalAnswer) -> bool {
        let waiting = lock(&self.pending).remove(&(session_id.to_string(), call_id.to_string()));
        waiting.is_some_and(|tx| tx.send(answer).is_ok())
    }

    /// How many approvals are waiting.
    pub fn pending(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// Removes a pending approval when its waiter goes away (answered, or the run was cancelled and the
/// runtime stopped waiting), so a late answer finds nothing instead of a stale entry.
struct PendingGuard {
    approvals: Arc<Approvals>,
    key: (String, String),
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        lock(&self.approvals.pending).remove(&self.key);
    }
}

/// The approver of live runs. It emits nothing itself (the runtime already put
/// `permission_requested` on the stream the person watches) and waits for [`LiveRuns::answer`].
pub struct WaitingApprover {
    approvals: Arc<Approvals>,
}

impl WaitingApprover {
    /// An approver answering through `approvals`.
    pub fn new(approvals: Arc<Approvals>) -> Self {
        WaitingApprover { approvals }
    }
}

#[async_trait]
impl Approver for WaitingApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalAnswer {
        let (tx, rx) = oneshot::channel();
        let key = (request.session_id, request.call_id);
        lock(&self.approvals.pending).insert(key.clone(), tx);
        let _guard = PendingGuard {
            approvals: self.approvals.clone(),
            key,
        };
        // A dropped sender means the host is going away: refusing is the safe answer.
        rx.await.unwrap_or(ApprovalAnswer::Deny)
    }
}

/// Live sessions and pending approvals.
#[derive(Default)]
pub struct LiveRuns {
    sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
    approvals: Arc<Approvals>,
}

impl LiveRuns {
    /// Starts a new main session in the project at `root` and runs `prompt` in it; its events go
    /// to `sink` in batches. The project's own profiles are used only while their files are the
    /// ones the person trusted (the runtime checks the digest again just before the session
    /// starts). A missing main key is the config crate's `MissingKey`, so a host can send the
    /// person to the settings.
    pub async fn start(
        &self,
        host: &Host,
        root: &Path,
        prompt: String,
        sink: SinkFn,
    ) -> HostResult<RunHandle> {
        check_prompt(&prompt)?;
        let (events, received) = tokio::sync::mpsc::unbounded_channel();
        let StartedSession {
            runtime, session, ..
        } = host
            .start_session(
                root,
                SessionStart {
                    trace_dir: None,
                    trusted_profiles: host.trusted_profiles(root),
                    approver: Some(Arc::new(WaitingApprover::new(self.approvals.clone()))),
                    events,
                },
            )
            .await?;
        let sinks = SinkQueue::default();
        tokio::spawn(bridge::forward(received, sinks.clone()));
        let notices = session.notices().to_vec();
        let live = Arc::new(LiveSession::new(runtime, session, sinks));
        self.insert(live.clone());
        launch(live, prompt, sink, notices).await
    }

    /// Runs a follow-up prompt in a session started here; its events go to `sink`.
    pub async fn send(
        &self,
        session_id: &str,
        prompt: String,
        sink: SinkFn,
    ) -> HostResult<RunHandle> {
        check_prompt(&prompt)?;
        let live = self.get(session_id).ok_or_else(|| {
            HostError::NotFound(format!(
                "no live session {session_id}; sessions from history are read-only"
            ))
        })?;
        launch(live, prompt, sink, Vec::new()).await
    }

    /// Cancels a session's running prompt and every subagent under it. False when nothing was
    /// running.
    pub fn cancel(&self, session_id: &str) -> HostResult<bool> {
        let live = self
            .get(session_id)
            .ok_or_else(|| HostError::NotFound(format!("no live session {session_id}")))?;
        if !live.is_running() {
            return Ok(false);
        }
        Ok(live.runtime.cancel(session_id, "user"))
    }

    /// Cancels one subagent (by its session id) and its descendants; its parent goes on. False
    /// when it is not running.
    pub fn cancel_node(&self, session_id: &str) -> bool {
        self.all()
            .iter()
            .any(|live| live.runtime.cancel(session_id, "user"))
    }

    /// Answers a pending approval with its wire word (`allow_once`, `allow_session` or `deny`).
    pub fn answer(&self, session_id: &str, call_id: &str, answer: &str) -> HostResult<()> {
        let answer = parse_answer(answer)?;
        if self.approvals.answer(session_id, call_id, answer) {
            return Ok(());
        }
        Err(HostError::NoSuchApproval(format!(
            "no approval is waiting for call {call_id} of session {session_id} (answered already, or the run ended)"
        )))
    }

    /// Keeps a session for follow-ups and cancellation.
    pub fn insert(&self, live: Arc<LiveSession>) {
        lock(&self.sessions).insert(live.session.session_id().to_string(), live);
    }

    /// A session by root id.
    pub fn get(&self, session_id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.sessions).get(session_id).cloned()
    }

    /// Whether the session `session_id` was started here and is running a prompt now.
    pub fn is_running(&self, session_id: &str) -> bool {
        self.get(session_id).is_some_and(|l| l.is_running())
    }

    /// Every session.
    pub fn all(&self) -> Vec<Arc<LiveSession>> {
        lock(&self.sessions).values().cloned().collect()
    }

    /// Forgets a session (after its trace was deleted).
    pub fn remove(&self, session_id: &str) {
        lock(&self.sessions).remove(session_id);
    }

    /// The pending approvals.
    pub fn approvals(&self) -> &Arc<Approvals> {
        &self.approvals
    }

    /// True while any session runs.
    pub fn any_running(&self) -> bool {
        self.all().iter().any(|l| l.is_running())
    }

    /// Cancels every running session with `reason`; returns how many were running.
    pub fn cancel_all(&self, reason: &str) -> usize {
        let running: Vec<_> = self.all().into_iter().filter(|l| l.is_running()).collect();
        for live in &running {
            live.session.cancel(reason);
        }
        running.len()
    }

    /// Waits until no session runs, at most `timeout`; true when all stopped.
    pub async fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.any_running() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }
}

/// Ends the session's "running" state even if the run panics, so follow-ups and history do not see
/// it running forever.
struct EndOnDrop(Arc<LiveSession>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// Runs `prompt` in `live` in the background and answers once the run has started (with its id).
async fn launch(
    live: Arc<LiveSession>,
    prompt: String,
    sink: SinkFn,
    notices: Vec<String>,
) -> HostResult<RunHandle> {
    let session_id = live.session.session_id().to_string();
    if !live.try_begin() {
        return Err(HostError::Busy(format!(
            "session {session_id} is still running; wait for it or cancel it first"
        )));
    }
    let (started_tx, started_rx) = oneshot::channel();
    live.sinks.push(Sink::new(sink, started_tx));
    let (failed_tx, failed_rx) = oneshot::channel();
    // Cancellable from now on, before the task below is first polled.
    live.session.begin_run();
    let guard = EndOnDrop(live);
    tokio::spawn(async move {
        let result = guard.0.session.run(prompt).await;
        drop(guard);
        if let Err(e) = result {
            let _ = failed_tx.send(HostError::from(e));
        }
    });
    tokio::select! {
        Ok(run_id) = started_rx => Ok(RunHandle { session_id, run_id, notices }),
        Ok(error) = failed_rx => Err(error),
        else => Err(HostError::RunNotStarted("the run ended before it started".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use canopy_config::MemoryStore;
    use canopy_protocol::{TerminalReason, TraceEvent, TraceRecord};
    use canopy_test_support::{call, MockServer, Rule, Script, Turn};

    use super::*;
    use crate::host::HostSetup;

    fn host(dir: &Path, env: HashMap<String, String>) -> Host {
        Host::new(HostSetup {
            config_dir: dir.join("config"),
            data_dir: dir.join("data"),
            env: Arc::new(move |k: &str| env.get(k).cloned()),
            secrets: Arc::new(MemoryStore::new()),
        })
    }

    /// A host whose main slot is the loopback mock model playing `rule`, and a project folder.
    async fn with_model(dir: &Path, rule: Rule) -> (Host, MockServer, std::path::PathBuf) {
        let server = MockServer::start(Script::new().rule(rule.system_contains("You are Canopy")))
            .await
            .unwrap();
        let env = HashMap::from([
            ("CANOPY_MAIN_PROVIDER".to_string(), "openai".to_string()),
            ("CANOPY_MAIN_BASE_URL".to_string(), server.openai_base_url()),
            ("CANOPY_MAIN_MODEL".to_string(), "mock-model".to_string()),
        ]);
        let project = dir.join("proj");
        std::fs::create_dir(&project).unwrap();
        (host(dir, env), server, project.canonicalize().unwrap())
    }

    type Log = Arc<Mutex<Vec<TraceRecord>>>;

    fn collecting() -> (Log, SinkFn) {
        let log: Log = Arc::default();
        let l = log.clone();
        (log, Box::new(move |batch| l.lock().unwrap().extend(batch)))
    }

    /// Waits (at most 20 s) for a record of the root session matching `pred` in `log`.
    async fn wait_for(log: &Log, pred: impl Fn(&TraceEvent) -> bool) -> TraceRecord {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let found = log
                .lock()
                .unwrap()
                .iter()
                .find(|r| r.parent_session_id.is_none() && pred(&r.event))
                .cloned();
            if let Some(found) = found {
                return found;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not seen: {:?}",
                log.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn run_ended(e: &TraceEvent) -> Option<TerminalReason> {
        match e {
            TraceEvent::RunEnded {
                terminal_reason, ..
            } => Some(*terminal_reason),
            _ => None,
        }
    }

    #[test]
    fn approval_answers_are_the_three_wire_words() {
        assert_eq!(
            parse_answer("allow_once").unwrap(),
            ApprovalAnswer::AllowOnce
        );
        assert_eq!(parse_answer("deny").unwrap(), ApprovalAnswer::Deny);
        let err = parse_answer("yes").unwrap_err();
        assert!(matches!(err, HostError::InvalidArgument(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "unknown answer `yes`; use allow_once, allow_session or deny"
        );
    }

    #[tokio::test]
    async fn an_empty_prompt_and_an_unknown_session_are_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path(), HashMap::new());
        let runs = LiveRuns::default();
        let err = runs
            .start(&host, dir.path(), "  \n".into(), collecting().1)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "the prompt is empty");
        assert!(
            !dir.path().join("data").exists(),
            "no trace for a refused prompt"
        );
        let err = runs
            .send("nope", "hi".into(), collecting().1)
            .await
            .unwrap_err();
        assert!(matches!(err, HostError::NotFound(_)), "{err:?}");
        assert!(matches!(runs.cancel("nope"), Err(HostError::NotFound(_))));
        assert!(!runs.cancel_node("nope"));
        let err = runs.answer("s", "c", "deny").unwrap_err();
        assert!(matches!(err, HostError::NoSuchApproval(_)), "{err:?}");
    }

    #[tokio::test]
    async fn a_run_and_its_follow_up_stream_to_their_own_sinks_and_leave_a_trace() {
        let dir = tempfile::tempdir().unwrap();
        let rule = Rule::new("main")
            .turn(Turn::text("Hello from the mock model.").chunk_bytes(2))
            .turn(Turn::text("Second answer."));
        let (host, _server, project) = with_model(dir.path(), rule).await;
        let runs = LiveRuns::default();
        let (log, sink) = collecting();
        let first = runs
            .start(&host, &project, "hello".into(), sink)
            .await
            .unwrap();
        let end = wait_for(&log, |e| run_ended(e).is_some()).await;
        assert_eq!(run_ended(&end.event), Some(TerminalReason::Completed));
        assert_eq!(end.run_id, first.run_id);
        let records = log.lock().unwrap().clone();
        assert!(
            matches!(records[0].event, TraceEvent::SessionStarted { .. }),
            "the session's start goes to the first run's sink: {:?}",
            records[0]
        );
        assert!(runs.wait_idle(Duration::from_secs(5)).await);
        assert!(!runs.is_running(&first.session_id));
        assert!(
            !runs.cancel(&first.session_id).unwrap(),
            "nothing to cancel"
        );
        let trace = host
            .trace_dir(&project)
            .join(format!("{}.jsonl", first.session_id));
        assert!(trace.is_file(), "{}", trace.display());

        let (log2, sink2) = collecting();
        let again = runs
            .send(&first.session_id, "again".into(), sink2)
            .await
            .unwrap();
        assert_eq!(again.session_id, first.session_id);
        assert_ne!(again.run_id, first.run_id);
        assert!(again.notices.is_empty());
        let end = wait_for(&log2, |e| run_ended(e).is_some()).await;
        assert_eq!(end.run_id, again.run_id);
        assert!(log2
            .lock()
            .unwrap()
            .iter()
            .all(|r| r.run_id == again.run_id));
        assert!(
            log.lock().unwrap().iter().all(|r| r.run_id != again.run_id),
            "the first sink saw nothing of the follow-up"
        );
    }

    #[tokio::test]
    async fn an_approval_waits_for_its_answer_and_a_running_session_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let rule = Rule::new("main")
            .turn(Turn::tools(vec![call(
                "Write",
                serde_json::json!({"path": "notes.txt", "content": "from the agent\n"}),
            )]))
            .turn(Turn::text("Done."));
        let (host, _server, project) = with_model(dir.path(), rule).await;
        let runs = LiveRuns::default();
        let (log, sink) = collecting();
        let run = runs
            .start(&host, &project, "write".into(), sink)
            .await
            .unwrap();
        let asked = wait_for(&log, |e| {
            matches!(e, TraceEvent::PermissionRequested { .. })
        })
        .await;
        let TraceEvent::PermissionRequested { call_id, .. } = asked.event else {
            unreachable!()
        };
        assert_eq!(runs.approvals().pending(), 1);
        assert!(runs.is_running(&run.session_id));
        assert!(
            !project.join("notes.txt").exists(),
            "nothing written before the answer"
        );
        let busy = runs
            .send(&run.session_id, "more".into(), collecting().1)
            .await
            .unwrap_err();
        assert!(matches!(busy, HostError::Busy(_)), "{busy:?}");
        runs.answer(&run.session_id, &call_id, "allow_once")
            .unwrap();
        let end = wait_for(&log, |e| run_ended(e).is_some()).await;
        assert_eq!(run_ended(&end.event), Some(TerminalReason::Completed));
        assert_eq!(
            std::fs::read_to_string(project.join("notes.txt")).unwrap(),
            "from the agent\n"
        );
        assert_eq!(runs.approvals().pending(), 0);
        let again = runs.answer(&run.session_id, &call_id, "deny").unwrap_err();
        assert!(matches!(again, HostError::NoSuchApproval(_)), "{again:?}");
    }
}
