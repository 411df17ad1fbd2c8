//! Forwards a live session's trace events to a host's viewer (the app's webview) in batches. Token
//! deltas arrive by the hundred per second; sending each as its own IPC message floods the webview,
//! so events are coalesced into batches flushed every [`FLUSH_INTERVAL`] or at [`MAX_BATCH`]
//! events, and never reordered.
//!
//! One forwarder serves a main session for its whole life (the runtime's event sender is fixed when the
//! session starts), while each run (`start_run`, then every `send_message`) brings its own channel. The
//! forwarder moves to the next queued sink when it sees the next root `run_started`, so every event of
//! a run, up to its `run_ended`, goes to that run's channel.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use canopy_protocol::{TraceEvent, TraceRecord};
use tokio::sync::{mpsc::UnboundedReceiver, oneshot};
use tokio::time::Instant;

/// Longest an event waits before it is sent.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(33);
/// Most events in one batch.
pub const MAX_BATCH: usize = 512;

/// Where one run's batches go (the run's Tauri `Channel` in the app).
pub type SinkFn = Box<dyn Fn(Vec<TraceRecord>) + Send>;

/// One run's destination, and who to tell its run id once it starts.
pub struct Sink {
    send: SinkFn,
    started: Option<oneshot::Sender<String>>,
}

impl Sink {
    /// A sink that calls `send` with each batch and reports the run id through `started`.
    pub fn new(send: SinkFn, started: oneshot::Sender<String>) -> Self {
        Sink {
            send,
            started: Some(started),
        }
    }
}

/// Sinks of runs that have been asked for but whose `run_started` has not been forwarded yet.
#[derive(Default, Clone)]
pub struct SinkQueue(Arc<Mutex<VecDeque<Sink>>>);

impl SinkQueue {
    /// Queues the sink of the next run.
    pub fn push(&self, sink: Sink) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(sink);
    }

    fn pop(&self) -> Option<Sink> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
    }
}

fn is_root(record: &TraceRecord) -> bool {
    record.parent_session_id.is_none()
}

struct Forwarder {
    queue: SinkQueue,
    current: Option<Sink>,
    current_has_run: bool,
    batch: Vec<TraceRecord>,
}

impl Forwarder {
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if self.current.is_none() {
            self.current = self.queue.pop();
        }
        // Until a run's channel exists (the forwarder can see `session_started` before the command
        // queues the sink), events wait here instead of being dropped.
        if let Some(sink) = &self.current {
            (sink.send)(std::mem::take(&mut self.batch));
        }
    }

    fn take(&mut self, record: TraceRecord) {
        let root_run_started =
            is_root(&record) && matches!(record.event, TraceEvent::RunStarted { .. });
        let root_run_ended =
            is_root(&record) && matches!(record.event, TraceEvent::RunEnded { .. });
        if root_run_started {
            if self.current.is_none() {
                // The first run: what is held (`session_started`) goes to its channel too.
                self.current = self.queue.pop();
            } else if self.current_has_run {
                // Everything so far belongs to the previous run's channel.
                self.flush();
                if let Some(next) = self.queue.pop() {
                    self.current = Some(next);
                }
            }
            self.current_has_run = true;
            if let Some(started) = self.current.as_mut().and_then(|s| s.started.take()) {
                let _ = started.send(record.run_id.clone());
            }
        } else if self.current.is_none() {
            // `session_started` comes before the first run: it belongs to the first run's channel.
            self.current = self.queue.pop();
        }
        self.batch.push(record);
        // The end of a run is what the person waits for: do not hold it back for the timer.
        if root_run_ended || self.batch.len() >= MAX_BATCH {
            self.flush();
        }
    }
}

/// Forwards everything `events` yields until it closes. Returns when the session is gone.
pub async fn forward(mut events: UnboundedReceiver<TraceRecord>, queue: SinkQueue) {
    let mut f = Forwarder {
        queue,
        current: None,
        current_has_run: false,
        batch: Vec::new(),
    };
    while let Some(first) = events.recv().await {
        f.take(first);
        let deadline = Instant::now() + FLUSH_INTERVAL;
        loop {
            tokio::select! {
                biased;
                next = events.recv() => match next {
                    Some(record) => f.take(record),
                    None => {
                        f.flush();
                        return;
                    }
                },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        f.flush();
    }
    f.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_protocol::{TerminalReason, Usage};
    use tokio::sync::mpsc::unbounded_channel;

    fn record(seq: u64, run: &str, parent: Option<&str>, event: TraceEvent) -> TraceRecord {
        TraceRecord {
            v: 1,
            seq,
            ts_ms: 0,
            session_id: parent.map_or("root", |_| "child").to_string(),
            run_id: run.to_string(),
            parent_session_id: parent.map(str::to_string),
            event,
        }
    }

    fn delta(seq: u64, run: &str) -> TraceRecord {
        record(
            seq,
            run,
            None,
            TraceEvent::AssistantDelta {
                model_call_id: "m".into(),
                text: format!("t{seq}"),
            },
        )
    }

    fn run_started(seq: u64, run: &str) -> TraceRecord {
        record(
            seq,
            run,
            None,
            TraceEvent::RunStarted { prompt: "p".into() },
        )
    }

    fn collecting() -> (Arc<Mutex<Vec<Vec<TraceRecord>>>>, SinkFn) {
        let log: Arc<Mutex<Vec<Vec<TraceRecord>>>> = Arc::default();
        let l = log.clone();
        (log, Box::new(move |batch| l.lock().unwrap().push(batch)))
    }

    #[tokio::test]
    async fn bursts_are_coalesced_in_order_and_capped() {
        let (tx, rx) = unbounded_channel();
        let queue = SinkQueue::default();
        let (log, send) = collecting();
        let (started_tx, started_rx) = oneshot::channel();
        queue.push(Sink::new(send, started_tx));
        tx.send(run_started(0, "r1")).unwrap();
        for seq in 1..=1200 {
            tx.send(delta(seq, "r1")).unwrap();
        }
        drop(tx);
        forward(rx, queue).await;
        assert_eq!(started_rx.await.unwrap(), "r1");
        let batches = log.lock().unwrap();
        let seqs: Vec<u64> = batches.iter().flatten().map(|r| r.seq).collect();
        assert_eq!(
            seqs,
            (0..=1200).collect::<Vec<_>>(),
            "every event once, in order"
        );
        assert!(batches.iter().all(|b| b.len() <= MAX_BATCH));
        assert!(
            batches.len() <= 4,
            "1201 queued events took {} batches",
            batches.len()
        );
    }

    #[tokio::test]
    async fn a_lone_event_is_sent_within_the_interval() {
        let (tx, rx) = unbounded_channel();
        let queue = SinkQueue::default();
        let (log, send) = collecting();
        queue.push(Sink::new(send, oneshot::channel().0));
        let task = tokio::spawn(forward(rx, queue));
        tx.send(run_started(0, "r1")).unwrap();
        tokio::time::sleep(FLUSH_INTERVAL * 4).await;
        assert_eq!(
            log.lock().unwrap().len(),
            1,
            "flushed by the timer, not by the close"
        );
        drop(tx);
        task.await.unwrap();
    }

    #[tokio::test]
    async fn events_seen_before_the_run_channel_exists_are_held_not_dropped() {
        let (tx, rx) = unbounded_channel();
        let queue = SinkQueue::default();
        let task = tokio::spawn(forward(rx, queue.clone()));
        // The runtime emits `session_started` as the session is created, before the command has
        // queued the run's channel; the forwarder may see it first.
        tx.send(record(
            0,
            "",
            None,
            TraceEvent::TodoUpdated { items: vec![] },
        ))
        .unwrap();
        tokio::time::sleep(FLUSH_INTERVAL * 3).await;
        let (log, send) = collecting();
        queue.push(Sink::new(send, oneshot::channel().0));
        tx.send(run_started(1, "r1")).unwrap();
        tokio::time::sleep(FLUSH_INTERVAL * 3).await;
        drop(tx);
        task.await.unwrap();
        let seqs: Vec<u64> = log
            .lock()
            .unwrap()
            .iter()
            .flatten()
            .map(|r| r.seq)
            .collect();
        assert_eq!(seqs, [0, 1]);
    }

    #[tokio::test]
    async fn each_run_goes_to_its_own_sink() {
        let (tx, rx) = unbounded_channel();
        let queue = SinkQueue::default();
        let (first, send1) = collecting();
        let (second, send2) = collecting();
        queue.push(Sink::new(send1, oneshot::channel().0));
        queue.push(Sink::new(send2, oneshot::channel().0));
        // Before the first run, as `session_started` is.
        let started = record(0, "", None, TraceEvent::TodoUpdated { items: vec![] });
        let ended = |seq, run: &str| {
            record(
                seq,
                run,
                None,
                TraceEvent::RunEnded {
                    terminal_reason: TerminalReason::Completed,
                    final_text: None,
                    result: None,
                    error: None,
                    usage: Usage::default(),
                    usage_with_descendants: Usage::default(),
                    totals: canopy_protocol::BudgetUsage::default(),
                    tool_calls: 0,
                },
            )
        };
        for r in [
            started,
            run_started(1, "r1"),
            delta(2, "r1"),
            ended(3, "r1"),
            run_started(4, "r2"),
            delta(5, "r2"),
        ] {
            tx.send(r).unwrap();
        }
        tx.send(record(
            6,
            "r2",
            Some("root"),
            TraceEvent::RunStarted {
                prompt: "sub".into(),
            },
        ))
        .unwrap();
        drop(tx);
        forward(rx, queue).await;
        let seqs = |log: &Arc<Mutex<Vec<Vec<TraceRecord>>>>| -> Vec<u64> {
            log.lock()
                .unwrap()
                .iter()
                .flatten()
                .map(|r| r.seq)
                .collect()
        };
        assert_eq!(seqs(&first), [0, 1, 2, 3]);
        assert_eq!(
            seqs(&second),
            [4, 5, 6],
            "a subagent's run_started does not switch channels"
        );
    }
}
