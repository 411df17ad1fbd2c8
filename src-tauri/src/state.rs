//! The app's managed state (`app.manage(AppState)`, read through `State<'_, AppState>`): where files
//! live, the settings, the key store, the open project and the live runs. Built once in `run()` (or
//! by a test with its own folders and an in-memory key store); there are no globals.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use canopy_config::{IndexedStore, ProfileTrust, SecretStore, Settings, SettingsStore};

use crate::commands::projects::{ProjectInfo, RecentProjects};
use crate::error::{CommandError, CommandResult};
use crate::runs::Runs;

/// How the app reads environment variables. The real app passes the process environment; tests pass a
/// map so parallel tests never see each other's `CANOPY_*` variables.
pub type EnvFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment as an [`EnvFn`].
pub fn process_env() -> EnvFn {
    Arc::new(|name: &str| std::env::var(name).ok())
}

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
        let env = process_env();
        let lookup = |k: &str| env(k);
        Ok(AppSetup {
            config_dir: canopy_config::paths::config_dir_with(&lookup)?,
            data_dir: canopy_config::paths::data_dir_with(&lookup)?,
            env,
            secrets: Arc::new(canopy_config::KeyringStore::new()),
            ollama_base_url: OLLAMA_BASE_URL.to_string(),
        })
    }
}

/// The state every command reads.
pub struct AppState {
    env: EnvFn,
    data_dir: PathBuf,
    settings_store: SettingsStore,
    settings: Mutex<Settings>,
    secrets: Arc<dyn SecretStore>,
    project: Mutex<Option<ProjectInfo>>,
    recent: RecentProjects,
    warnings: Mutex<Vec<String>>,
    ollama_base_url: String,
    runs: Runs,
    /// The page asks the person before the window closes (see [`AppState::set_close_guarded`]).
    close_guarded: AtomicBool,
    /// The person's answers about projects' own profiles (shared with `canopy-cli`).
    profile_trust: ProfileTrust,
}

/// A poisoned lock only means another command panicked mid-update of plain data; the data is still
/// usable and refusing every later command would be worse.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AppState {
    /// Loads settings (an unusable file is moved aside and reported as a startup warning).
    pub fn new(setup: AppSetup) -> Self {
        let settings_store = SettingsStore::new(setup.config_dir.join("settings.json"));
        let (settings, report) = settings_store.load();
        let mut warnings = report.warnings;
        // Overrides are re-applied for every run; they are listed once here so the person knows the
        // settings screen is not the whole story.
        let mut overridden = settings.clone();
        match canopy_config::apply_env_overrides(&mut overridden, &|k: &str| (setup.env)(k)) {
            Ok(lines) => warnings.extend(
                lines
                    .into_iter()
                    .map(|l| format!("{}{l}", canopy_config::ENV_OVERRIDE_WARNING)),
            ),
            Err(e) => warnings.push(format!("Environment overrides cannot be applied, so runs will fail until they are fixed: {e}")),
        }
        AppState {
            env: setup.env,
            recent: RecentProjects::new(setup.data_dir.join("recent-projects.json")),
            data_dir: setup.data_dir,
            settings_store,
            settings: Mutex::new(settings),
            // Through the index, so runs redact (and the key status lists) exactly the stored keys.
            secrets: Arc::new(IndexedStore::new(setup.secrets, &setup.config_dir)),
            project: Mutex::new(None),
            warnings: Mutex::new(warnings),
            ollama_base_url: setup.ollama_base_url,
            runs: Runs::default(),
            close_guarded: AtomicBool::new(false),
            profile_trust: ProfileTrust::in_dir(&setup.config_dir),
        }
    }

    /// The person's answers about projects' own profiles.
    pub fn profile_trust(&self) -> &ProfileTrust {
        &self.profile_trust
    }

    /// Looks up an environment variable.
    pub fn env(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }

    /// The data folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The settings as saved (what the settings screen edits).
    pub fn saved_settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    /// Validates, writes and adopts new settings.
    pub fn save_settings(&self, settings: Settings) -> CommandResult<Settings> {
        self.settings_store.save(&settings)?;
        *lock(&self.settings) = settings.clone();
        Ok(settings)
    }

    /// The settings runs use: the saved ones with the `CANOPY_*` model overrides on top (never saved).
    pub fn effective_settings(&self) -> CommandResult<Settings> {
        let mut settings = self.saved_settings();
        canopy_config::apply_env_overrides(&mut settings, &|k: &str| self.env(k))?;
        Ok(settings)
    }

    /// The key store.
    pub fn secrets(&self) -> &Arc<dyn SecretStore> {
        &self.secrets
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
        Ok(canopy_config::trace_dir_in(
            &self.data_dir,
            Path::new(&project.root),
        ))
    }
}
