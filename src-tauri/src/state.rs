//! The app's managed state (`app.manage(AppState)`, read through `State<'_, AppState>`): the shared
//! [`Host`] (settings, environment, keys, profile trust, trace folders) and what only the window
//! has: the open project, the recent list, startup warnings and the live runs. Built once in
//! `run()` (or by a test with its own folders and an in-memory key store); there are no globals.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use canopy_config::{ProfileTrust, SecretStore, Settings};
use canopy_host::{Host, HostSetup};

use crate::commands::projects::{ProjectInfo, RecentProjects};
use crate::error::{CommandError, CommandResult};
use crate::runs::Runs;

pub use canopy_host::{process_env, EnvFn};

/// Where the default Ollama endpoint is probed.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434/v1";

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
    project: Mutex<Option<ProjectInfo>>,
    recent: RecentProjects,
    warnings: Mutex<Vec<String>>,
    ollama_base_url: String,
    runs: Runs,
    /// The page asks the person before the window closes (see [`AppState::set_close_guarded`]).
    close_guarded: AtomicBool,
}

/// A poisoned lock only means another command panicked mid-update of plain data; the data is still
/// usable and refusing every later command would be worse.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AppState {
    /// Loads settings (an unusable file is moved aside and reported as a startup warning).
    pub fn new(setup: AppSetup) -> Self {
        let host = Host::new(HostSetup {
            config_dir: setup.config_dir,
            data_dir: setup.data_dir.clone(),
            env: setup.env,
            secrets: setup.secrets,
        });
        let mut warnings = host.load_warnings().to_vec();
        // Overrides are re-applied for every run; they are listed once here so the person knows the
        // settings screen is not the whole story.
        match host.env_overrides() {
            Ok(lines) => warnings.extend(
                lines
                    .into_iter()
                    .map(|l| format!("{}{l}", canopy_config::ENV_OVERRIDE_WARNING)),
            ),
            Err(e) => warnings.push(format!("Environment overrides cannot be applied, so runs will fail until they are fixed: {e}")),
        }
        AppState {
            host,
            recent: RecentProjects::new(setup.data_dir.join("recent-projects.json")),
            project: Mutex::new(None),
            warnings: Mutex::new(warnings),
            ollama_base_url: setup.ollama_base_url,
            runs: Runs::default(),
            close_guarded: AtomicBool::new(false),
        }
    }

    /// The host layer shared with `canopy-cli`.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The person's answers about projects' own profiles.
    pub fn profile_trust(&self) -> &ProfileTrust {
        self.host.profile_trust()
    }

    /// Looks up an environment variable.
    pub fn env(&self, name: &str) -> Option<String> {
        self.host.env(name)
    }

    /// The data folder.
    pub fn data_dir(&self) -> &Path {
        self.host.data_dir()
    }

    /// The settings as saved (what the settings screen edits).
    pub fn saved_settings(&self) -> Settings {
        self.host.saved_settings()
    }

    /// Validates, writes and adopts new settings.
    pub fn save_settings(&self, settings: Settings) -> CommandResult<Settings> {
        Ok(self.host.save_settings(settings)?)
    }

    /// The settings runs use: the saved ones with the `CANOPY_*` model overrides on top (never saved).
    pub fn effective_settings(&self) -> CommandResult<Settings> {
        Ok(self.host.effective_settings()?)
    }

    /// The key store.
    pub fn secrets(&self) -> &Arc<dyn SecretStore> {
        self.host.secrets()
    }

    /// The open project, if any.
    pub fn project(&self) -> Option<ProjectInfo> {
        lock(&self.project).clone()
    }

    /// The open project or `no_project`.
    pub fn require_project(&self) -> CommandResult<ProjectInfo> {
        self.project().ok_or_else(CommandError::no_project)
    }

    /// Makes `project` the open project.
    pub fn set_project(&self, project: ProjectInfo) {
        *lock(&self.project) = Some(project);
    }

    /// The recent-projects list.
    pub fn recent(&self) -> &RecentProjects {
        &self.recent
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
    pub fn runs(&self) -> &Runs {
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
