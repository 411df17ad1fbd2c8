//! [`Host`]: what the CLI and the app share between a person's settings and a running agent. It owns
//! the settings file, the environment (model overrides and API keys), the key store behind its key
//! index, the answers about projects' own profiles and where traces go, and turns them into a
//! [`Runtime`] for a project.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use canopy_config::{
    apply_env_overrides, ConfigError, IndexedStore, KeyringStore, ProfileTrust, SecretStore,
    Settings, SettingsStore,
};
use canopy_protocol::{ModelSlot, TraceRecord};
use canopy_runtime::{Approver, MainSession, Runtime, SessionOptions};
use tokio::sync::mpsc::UnboundedSender;

use crate::error::{HostError, HostResult};
use crate::models::{key_env, ConfiguredModels};
use crate::settings::runtime_settings;

/// How the host reads environment variables. The real hosts pass the process environment; tests
/// pass a map so parallel tests never see each other's `CANOPY_*` variables.
pub type EnvFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment as an [`EnvFn`].
pub fn process_env() -> EnvFn {
    Arc::new(|name: &str| std::env::var(name).ok())
}

/// Everything [`Host::new`] needs to know.
pub struct HostSetup {
    /// Settings folder (`settings.json`, the key index, profile trust).
    pub config_dir: PathBuf,
    /// Data folder (traces).
    pub data_dir: PathBuf,
    /// Environment lookup (model overrides, API keys from the environment).
    pub env: EnvFn,
    /// Where API keys are stored (the OS keychain outside tests). The host reads it through the key
    /// index in `config_dir` (see `canopy_config::IndexedStore`).
    pub secrets: Arc<dyn SecretStore>,
}

impl HostSetup {
    /// The real setup: folders from `CANOPY_CONFIG_DIR` / `CANOPY_DATA_DIR` or the platform
    /// defaults, the process environment, and the OS keychain.
    pub fn from_environment() -> HostResult<Self> {
        let env = process_env();
        let lookup = |k: &str| env(k);
        Ok(HostSetup {
            config_dir: canopy_config::paths::config_dir_with(&lookup)?,
            data_dir: canopy_config::paths::data_dir_with(&lookup)?,
            env,
            secrets: Arc::new(KeyringStore::new()),
        })
    }
}

/// The shared host state. Cheap to read from several threads; the settings are behind a lock only
/// because the app's settings screen replaces them.
pub struct Host {
    env: EnvFn,
    config_dir: PathBuf,
    data_dir: PathBuf,
    settings_store: SettingsStore,
    settings: Mutex<Settings>,
    secrets: Arc<dyn SecretStore>,
    profile_trust: ProfileTrust,
    load_warnings: Vec<String>,
}

/// A poisoned lock only means another thread panicked mid-update of plain data; the data is still
/// usable and refusing everything later would be worse.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Host {
    /// Loads the settings (an unusable file is moved aside and reported in [`Host::load_warnings`]).
    pub fn new(setup: HostSetup) -> Host {
        let settings_store = SettingsStore::new(setup.config_dir.join("settings.json"));
        let (settings, report) = settings_store.load();
        Host {
            env: setup.env,
            settings_store,
            settings: Mutex::new(settings),
            // Through the index, so runs redact (and the key status lists) exactly the stored keys.
            secrets: Arc::new(IndexedStore::new(setup.secrets, &setup.config_dir)),
            profile_trust: ProfileTrust::in_dir(&setup.config_dir),
            config_dir: setup.config_dir,
            data_dir: setup.data_dir,
            load_warnings: report.warnings,
        }
    }

    /// The real host: [`HostSetup::from_environment`].
    pub fn from_environment() -> HostResult<Host> {
        Ok(Host::new(HostSetup::from_environment()?))
    }

    /// What was wrong with the settings file when it was loaded.
    pub fn load_warnings(&self) -> &[String] {
        &self.load_warnings
    }

    /// Looks up an environment variable.
    pub fn env(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }

    /// The settings folder.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
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
    pub fn save_settings(&self, settings: Settings) -> Result<Settings, ConfigError> {
        self.settings_store.save(&settings)?;
        *lock(&self.settings) = settings.clone();
        Ok(settings)
    }

    /// The `CANOPY_*` overrides in effect, one line each (`main.model = …`): the settings screen
    /// is not the whole story while there are any.
    pub fn env_overrides(&self) -> Result<Vec<String>, ConfigError> {
        let mut settings = self.saved_settings();
        apply_env_overrides(&mut settings, &|k: &str| self.env(k))
    }

    /// What a person should be told once at start: problems with the settings file, and each
    /// `CANOPY_*` override in effect (prefixed with `canopy_config::ENV_OVERRIDE_WARNING`), since
    /// the settings screen is not the whole story while there are any.
    pub fn startup_warnings(&self) -> Vec<String> {
        let mut warnings = self.load_warnings.clone();
        match self.env_overrides() {
            Ok(lines) => warnings.extend(
                lines
                    .into_iter()
                    .map(|l| format!("{}{l}", canopy_config::ENV_OVERRIDE_WARNING)),
            ),
            Err(e) => warnings.push(format!("Environment overrides cannot be applied, so runs will fail until they are fixed: {e}")),
        }
        warnings
    }

    /// The settings runs use: the saved ones with the `CANOPY_*` overrides on top (never saved).
    pub fn effective_settings(&self) -> Result<Settings, ConfigError> {
        let mut settings = self.saved_settings();
        apply_env_overrides(&mut settings, &|k: &str| self.env(k))?;
        Ok(settings)
    }

    /// The key store (through its key index).
    pub fn secrets(&self) -> &Arc<dyn SecretStore> {
        &self.secrets
    }

    /// The person's answers about projects' own profiles (shared by the CLI and the app).
    pub fn profile_trust(&self) -> &ProfileTrust {
        &self.profile_trust
    }

    /// Where the traces of the project at `root` go.
    pub fn trace_dir(&self, root: &Path) -> PathBuf {
        canopy_config::trace_dir_in(&self.data_dir, root)
    }

    /// Model resolution for runs: the effective settings' endpoints, with the keys stored for the
    /// saved ones redacted too (they differ when a `CANOPY_*_BASE_URL` override points runs
    /// elsewhere).
    pub fn models(&self) -> Result<ConfiguredModels, ConfigError> {
        let env = key_env(&|k: &str| self.env(k));
        Ok(
            ConfiguredModels::new(self.effective_settings()?, env, self.secrets.clone())
                .with_saved_settings(self.saved_settings()),
        )
    }

    /// A runtime for the settings in force now. The project's own profiles are used only while
    /// their digest is `trusted_profiles` (the runtime checks it again just before a session
    /// starts). A missing main key is the config crate's `MissingKey`, which names both ways to
    /// provide one. Reading the keys to redact may wait on the keychain (an unlock prompt), so it
    /// runs off the async workers.
    pub async fn runtime(&self, trusted_profiles: Option<String>) -> HostResult<Arc<Runtime>> {
        let settings = self.effective_settings()?;
        let models = self.models()?;
        let secrets = self.secrets.clone();
        let env = key_env(&|k: &str| self.env(k));
        tokio::task::spawn_blocking(move || {
            canopy_config::require_api_key(
                &settings,
                ModelSlot::Main,
                &|k: &str| env.get(k).cloned(),
                secrets.as_ref(),
            )?;
            let keys = models.secrets();
            let mut rs = runtime_settings(&settings);
            rs.trusted_project_profiles = trusted_profiles;
            Ok(Runtime::new(rs, Arc::new(models), keys))
        })
        .await
        .map_err(|e| HostError::Blocking(format!("could not prepare the run: {e}")))?
    }
}

/// How a host starts a main session in a project.
pub struct SessionStart {
    /// Where trace files go; `None`: the project's folder under the data folder.
    pub trace_dir: Option<PathBuf>,
    /// The digest of the project's own profiles the person trusted (`None`: built-ins only).
    pub trusted_profiles: Option<String>,
    /// Who answers approval requests (`None`: asks are denied).
    pub approver: Option<Arc<dyn Approver>>,
    /// The live event stream of the session and every subagent under it.
    pub events: UnboundedSender<TraceRecord>,
}

/// A main session that has started, with the runtime that cancels it.
pub struct StartedSession {
    /// The runtime (settings, keys and redaction as they were at the start).
    pub runtime: Arc<Runtime>,
    /// The session.
    pub session: Arc<MainSession>,
    /// Where its traces go.
    pub trace_dir: PathBuf,
}

impl Host {
    /// Starts a main session in the project at `root` with a runtime for the settings in force now
    /// ([`Host::runtime`]). Nothing is sent to a model until the host runs a prompt.
    pub async fn start_session(
        &self,
        root: &Path,
        start: SessionStart,
    ) -> HostResult<StartedSession> {
        let trace_dir = start.trace_dir.unwrap_or_else(|| self.trace_dir(root));
        let runtime = self.runtime(start.trusted_profiles).await?;
        let session = runtime.start_session(SessionOptions {
            project_root: root.to_path_buf(),
            trace_dir: trace_dir.clone(),
            approver: start.approver,
            events: start.events,
        })?;
        Ok(StartedSession {
            runtime,
            session,
            trace_dir,
        })
    }
}

/// A host on `dir` (config and data folders inside it) with no environment and an in-memory key
/// store: what the other modules' tests start from.
#[cfg(test)]
pub(crate) fn test_host(dir: &Path) -> Host {
    Host::new(HostSetup {
        config_dir: dir.join("config"),
        data_dir: dir.join("data"),
        env: Arc::new(|_: &str| None),
        secrets: Arc::new(canopy_config::MemoryStore::new()),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use canopy_config::{KeyOrigin, MemoryStore};
    use canopy_protocol::SecretString;
    use canopy_runtime::ModelResolver;

    use super::*;

    fn host_with(
        config: &Path,
        env: HashMap<String, String>,
        secrets: Arc<dyn SecretStore>,
    ) -> Host {
        Host::new(HostSetup {
            config_dir: config.to_path_buf(),
            data_dir: config.join("data"),
            env: Arc::new(move |k: &str| env.get(k).cloned()),
            secrets,
        })
    }

    #[test]
    fn a_run_redirected_by_an_environment_override_still_redacts_the_saved_endpoints_key() {
        const SAVED_KEY: &str = "savedendpointkey0123456789";
        let config = tempfile::tempdir().unwrap();
        let mut saved = Settings::default();
        saved.main.base_url = "https://models.internal.example/v1".into();
        SettingsStore::new(config.path().join("settings.json"))
            .save(&saved)
            .unwrap();
        let store = Arc::new(MemoryStore::new());
        let env = HashMap::from([(
            "CANOPY_MAIN_BASE_URL".to_string(),
            "http://127.0.0.1:9/v1".to_string(),
        )]);
        let host = host_with(config.path(), env, store.clone());
        host.secrets()
            .set(
                ModelSlot::Main,
                &KeyOrigin::of(&saved.main.base_url).unwrap(),
                &SecretString::new(SAVED_KEY),
            )
            .unwrap();
        assert_eq!(host.saved_settings(), saved);
        assert_eq!(
            host.effective_settings().unwrap().main.base_url,
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(host.env_overrides().unwrap().len(), 1);
        let models = host.models().unwrap();
        let secrets = models.secrets();
        let exposed: Vec<&str> = secrets.iter().map(SecretString::expose).collect();
        assert_eq!(exposed, [SAVED_KEY]);
        // The run itself talks to the override's loopback endpoint, which needs no key.
        let resolved = models.resolve(ModelSlot::Main).unwrap();
        assert_eq!(resolved.info.base_url, "http://127.0.0.1:9/v1");
    }

    #[tokio::test]
    async fn a_runtime_for_a_remote_endpoint_without_a_key_is_refused_as_missing_key() {
        let config = tempfile::tempdir().unwrap();
        let host = host_with(config.path(), HashMap::new(), Arc::new(MemoryStore::new()));
        let err = host.runtime(None).await.err().expect("no key, no runtime");
        assert!(
            matches!(err, HostError::Config(ConfigError::MissingKey { .. })),
            "{err:?}"
        );
        assert!(err.to_string().contains("CANOPY_MAIN_API_KEY"), "{err}");
    }
}
