//! The app's managed state (`app.manage(AppState)`, read through `State<'_, AppState>`): the shared
//! [`Host`] (settings, environment, keys, profile trust, trace folders), the host layer's open
//! project and recent list ([`Projects`]) and live runs ([`LiveRuns`]), and what only the window
//! has: startup warnings, where `detect_ollama` looks and whether the page guards its own close.
//! Built once in `run()` (or by a test with its own folders and an in-memory key store); there are
//! no globals.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use canopy_config::SecretStore;
use canopy_host::projects::{ProjectInfo, Projects};
use canopy_host::runs::LiveRuns;
use canopy_host::{Host, HostError, HostSetup};

use crate::error::CommandResult;

pub use canopy_host::screen::OLLAMA_BASE_URL;
pub use canopy_host::{process_env, EnvFn};

/// Everything `AppState::new` needs to know.
pub struct AppSetup {
    /// Settings folder (`settings.json`).
    pub config_dir: PathBuf,
    /// Data folder (traces, recent projects).
    pub data_dir: PathBuf,
    /// Environment lookup (model overrides, API keys from the environment).
    pub env: EnvFn,
    /// Where API keys are stored (the OS keychain in the app). The state keeps the key index of
    /// this store in `config_dir` (see `canopy_config::IndexedStore`).
    pub secrets: Arc<dyn SecretStore>,
    /// OpenAI-compatible base URL `detect_ollama` probes.
    pub ollama_base_url: String,
}

impl AppSetup {
    /// The real app's setup: folders from `CANOPY_CONFIG_DIR` / `CANOPY_DATA_DIR` or the platform
    /// defaults, the process environment, and the OS keychain.
    pub fn from_environment() -> CommandResult<Self> {
        let host = HostSetup::from_environment()?;
        Ok(AppSetup {
            config_dir: host.config_dir,
            data_dir: host.data_dir,
            env: host.env,
            secrets: host.secrets,
            ollama_base_url: OLLAMA_BASE_URL.to_string(),
        })
    }
}

/// The state every command reads.
pub struct AppState {
    host: Host,
    projects: Projects,
    warnings: Mutex<Vec<String>>,
    ollama_base_url: String,
    runs: LiveRuns,
    /// The page asks the person before the window closes (see [`AppState::set_close_guarded`]).
    close_guarded: AtomicBool,
}

/// A poisoned lock only means another command panicked mid-update of plain data; the data is still
/// usable and refusing every later command would be worse.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AppState {
    /// Loads settings (an unusable file is moved aside and reported as a startup warning, as are
    /// the `CANOPY_*` overrides in effect).
    pub fn new(setup: AppSetup) -> Self {
        let host = Host::new(HostSetup {
            config_dir: setup.config_dir,
            data_dir: setup.data_dir.clone(),
            env: setup.env,
            secrets: setup.secrets,
        });
        AppState {
            warnings: Mutex::new(host.startup_warnings()),
            projects: Projects::new(&setup.data_dir),
            host,
            ollama_base_url: setup.ollama_base_url,
            runs: LiveRuns::default(),
            close_guarded: AtomicBool::new(false),
        }
    }

    /// The host layer shared with `canopy-cli`.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The open project and the recent list.
    pub fn projects(&self) -> &Projects {
        &self.projects
    }

    /// The open project, if any.
    pub fn project(&self) -> Option<ProjectInfo> {
        self.projects.current()
    }

    /// The open project or `no_project`.
    pub fn require_project(&self) -> CommandResult<ProjectInfo> {
        Ok(self.projects.require()?)
    }

    /// The open project's folder or `no_project`.
    pub fn project_root(&self) -> CommandResult<PathBuf> {
        Ok(PathBuf::from(self.require_project()?.root))
    }

    /// Opens `path` as the project (first in the recent list; a list that cannot be written is a
    /// warning, not a failure).
    pub fn open_project(&self, path: &str) -> Result<ProjectInfo, HostError> {
        let opened = self.projects.open(&self.host, path)?;
        if let Some(warning) = opened.warning {
            self.warn(warning);
        }
        Ok(opened.info)
    }

    /// Adds a warning to show the person (bad settings file, unusable command-line folder).
    pub fn warn(&self, warning: impl Into<String>) {
        lock(&self.warnings).push(warning.into());
    }

    /// Warnings collected since start.
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.warnings).clone()
    }

    /// Where `detect_ollama` looks.
    pub fn ollama_base_url(&self) -> &str {
        &self.ollama_base_url
    }

    /// Live runs and pending approvals.
    pub fn runs(&self) -> &LiveRuns {
        &self.runs
    }

    /// Whether the page decides what a close request does (asks, cancels the runs itself, then
    /// destroys the window). While it does, the window's close handler must not cancel runs on its own:
    /// the person may answer "Keep working".
    pub fn close_guarded(&self) -> bool {
        self.close_guarded.load(Ordering::SeqCst)
    }

    /// Set by the page once its close-requested listener is in place; cleared when a page starts
    /// loading (a reload drops that listener, so the handler's own cancel-and-wait applies again).
    pub fn set_close_guarded(&self, on: bool) {
        self.close_guarded.store(on, Ordering::SeqCst);
    }

    /// The trace folder of the open project.
    pub fn trace_dir(&self) -> CommandResult<PathBuf> {
        let project = self.require_project()?;
        Ok(self.host.trace_dir(Path::new(&project.root)))
    }
}
