//! Records a session's events: one JSONL file per session (flushed line by line so a crash leaves a
//! readable file) and the same records on the runtime's live stream, in order per session.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use canopy_protocol::{TraceEvent, TraceRecord, TRACE_SCHEMA_VERSION};
use tokio::sync::mpsc::UnboundedSender;

use crate::redact::Redactor;
use crate::RuntimeError;

/// Where every session of one run tree publishes.
#[derive(Clone)]
pub struct EventBus {
    tx: UnboundedSender<TraceRecord>,
    redactor: Arc<Redactor>,
    trace_dir: PathBuf,
}

impl EventBus {
    /// A bus publishing to `tx` and writing files under `trace_dir`.
    pub fn new(
        tx: UnboundedSender<TraceRecord>,
        redactor: Arc<Redactor>,
        trace_dir: PathBuf,
    ) -> Self {
        EventBus {
            tx,
            redactor,
            trace_dir,
        }
    }

    /// The folder trace files go to.
    pub fn trace_dir(&self) -> &Path {
        &self.trace_dir
    }
}

struct WriterState {
    seq: u64,
    file: Option<File>,
    run_id: String,
    write_error: Option<String>,
}

/// One session's recorder.
pub struct SessionTrace {
    session_id: String,
    parent_session_id: Option<String>,
    path: PathBuf,
    bus: EventBus,
    state: Mutex<WriterState>,
}

/// Creates `dir` and any missing parents readable by the user only (0700 on Unix). Folders that
/// already exist keep their permissions: a `--trace-dir` may be one the person shares on purpose.
fn private_dir_all(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl SessionTrace {
    /// Creates the session's trace file (`<trace_dir>/<session_id>.jsonl`).
    pub fn create(
        bus: EventBus,
        session_id: String,
        parent_session_id: Option<String>,
        run_id: String,
    ) -> Result<Arc<Self>, RuntimeError> {
        private_dir_all(&bus.trace_dir).map_err(|e| RuntimeError::Trace {
            path: bus.trace_dir.clone(),
            reason: e.to_string(),
        })?;
        let path = bus.trace_dir.join(format!("{session_id}.jsonl"));
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        // Traces hold tool outputs (file contents, command output): readable by the user only.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|e| RuntimeError::Trace {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        Ok(Arc::new(SessionTrace {
            session_id,
            parent_session_id,
            path,
            bus,
            state: Mutex::new(WriterState {
                seq: 0,
                file: Some(file),
                run_id,
                write_error: None,
            }),
        }))
    }

    /// This session's id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The parent session's id.
    pub fn parent_session_id(&self) -> Option<&str> {
        self.parent_session_id.as_deref()
    }

    /// The trace file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bus this session publishes on (children share it).
    pub fn bus(&self) -> &EventBus {
        &self.bus
    }

    /// The current run id.
    pub fn run_id(&self) -> String {
        self.state
            .lock()
            .map(|s| s.run_id.clone())
            .unwrap_or_default()
    }

    /// Starts a new run (a follow-up prompt of the same session).
    pub fn set_run_id(&self, run_id: String) {
        if let Ok(mut s) = self.state.lock() {
            s.run_id = run_id;
        }
    }

    /// The first write error, if writing the file ever failed (the live stream keeps going).
    pub fn write_error(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.write_error.clone())
    }

    /// Records one event: redacts it, writes it (if persisted) and publishes it. The lock makes the
    /// sequence numbers, the file order and the stream order the same.
    pub fn emit(&self, event: TraceEvent) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let persisted = event.is_persisted();
        let mut record = TraceRecord {
            v: TRACE_SCHEMA_VERSION,
            seq: state.seq,
            ts_ms: now_ms(),
            session_id: self.session_id.clone(),
            run_id: state.run_id.clone(),
            parent_session_id: self.parent_session_id.clone(),
            event,
        };
        let mut line = match serde_json::to_string(&record) {
            Ok(line) => line,
            Err(e) => {
                state.write_error.get_or_insert_with(|| e.to_string());
                return;
            }
        };
        if let Some(clean) = self.bus.redactor.redact(&line) {
            match serde_json::from_str::<TraceRecord>(&clean) {
                Ok(r) => {
                    record = r;
                    line = clean;
                }
                Err(_) => return, // never publish an unredacted record
            }
        }
        if persisted {
            state.seq += 1;
            if let Some(file) = state.file.as_mut() {
                line.push('\n');
                if let Err(e) = file.write_all(line.as_bytes()) {
                    state.write_error.get_or_insert_with(|| e.to_string());
                    state.file = None;
                }
            }
        }
        let _ = self.bus.tx.send(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn trace_files_and_their_folder_are_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let traces = dir.path().join("data").join("traces");
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let bus = EventBus::new(tx, Arc::new(Redactor::new(Vec::new())), traces.clone());
        let trace = SessionTrace::create(bus, "s-1".into(), None, "r-1".into()).unwrap();
        trace.emit(TraceEvent::RunStarted {
            prompt: "tool outputs follow".into(),
        });
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(trace.path()), 0o600, "the trace file");
        assert_eq!(mode(&traces), 0o700, "the trace folder");
        assert_eq!(mode(traces.parent().unwrap()), 0o700, "folders it created");
    }
}
