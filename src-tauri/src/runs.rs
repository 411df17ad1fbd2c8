//! Live runs: the main sessions started from the UI (kept for follow-ups), whether each is running, and
//! the approvals waiting for the person. The runtime does the work; this only keeps handles.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use canopy_runtime::{ApprovalAnswer, ApprovalRequest, Approver, MainSession, Runtime};
use tokio::sync::oneshot;

use crate::bridge::SinkQueue;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A main session started from the UI.
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

/// The app's approver. It emits nothing itself (the runtime already put `permission_requested` on the
/// stream the UI watches) and waits for `answer_approval`.
pub struct AppApprover {
    approvals: Arc<Approvals>,
}

impl AppApprover {
    /// An approver answering through `approvals`.
    pub fn new(approvals: Arc<Approvals>) -> Self {
        AppApprover { approvals }
    }
}

#[async_trait]
impl Approver for AppApprover {
    async fn approve(&self, request: ApprovalRequest) -> ApprovalAnswer {
        let (tx, rx) = oneshot::channel();
        let key = (request.session_id, request.call_id);
        lock(&self.approvals.pending).insert(key.clone(), tx);
        let _guard = PendingGuard {
            approvals: self.approvals.clone(),
            key,
        };
        // A dropped sender means the app is going away: refusing is the safe answer.
        rx.await.unwrap_or(ApprovalAnswer::Deny)
    }
}

/// Live sessions and pending approvals.
#[derive(Default)]
pub struct Runs {
    sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
    approvals: Arc<Approvals>,
}

impl Runs {
    /// Keeps a session for follow-ups and cancellation.
    pub fn insert(&self, live: Arc<LiveSession>) {
        lock(&self.sessions).insert(live.session.session_id().to_string(), live);
    }

    /// A session by root id.
    pub fn get(&self, session_id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.sessions).get(session_id).cloned()
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
