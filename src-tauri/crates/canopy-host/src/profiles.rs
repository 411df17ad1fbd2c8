//! The subagent profiles a project offers (built-ins with settings overrides, then the project's
//! `.canopy/agents/*.md`), and the person's trust in the project's own ones, which both hosts ask
//! before a project profile's text may go to a model.

use std::path::Path;
use std::sync::Arc;

use canopy_config::{MemoryStore, Settings};
use canopy_protocol::{Budgets, ModelSlot};
use canopy_runtime::profiles::{load_project_profiles, project_profiles_digest};
use canopy_runtime::{ProfileLoadError, Runtime};
use serde::Serialize;
use ts_rs::TS;

use crate::error::HostResult;
use crate::host::Host;
use crate::models::ConfiguredModels;
use crate::settings::runtime_settings;

/// One subagent profile.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ProfileInfo {
    /// Name the main agent passes to `Task`.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Model slot it runs on (after settings overrides).
    pub model: ModelSlot,
    /// True when it may not change anything.
    pub read_only: bool,
    /// Tools it may use.
    pub tools: Vec<String>,
    /// Its budgets (after settings overrides).
    pub budgets: Budgets,
    /// The project file it came from; `null` for built-ins.
    pub source: Option<String>,
    /// Its system prompt: what a project profile would send to a model, shown before the person
    /// trusts it.
    pub system_prompt: String,
}

/// A project profile file that could not be used as written (or all profiles, when a settings
/// override is bad).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ProfileError {
    /// The file.
    pub path: String,
    /// Why it was rejected, or what was changed when it was loaded anyway.
    pub reason: String,
    /// `true` for a warning: the profile is in use, changed as `reason` says (e.g. budgets lowered
    /// to the ceiling); `false` when the file was rejected.
    pub loaded: bool,
}

impl From<ProfileLoadError> for ProfileError {
    fn from(e: ProfileLoadError) -> Self {
        ProfileError {
            path: e.path.display().to_string(),
            reason: e.reason,
            loaded: e.loaded,
        }
    }
}

/// Whether runs in a project use its own profiles. Their descriptions go into the main agent's
/// tool list and their prompts to subagents, so the person reads them first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProfilesTrust {
    /// The project has no profiles of its own.
    NoProfiles,
    /// Not answered for these files yet: runs use the built-in profiles only until the person has
    /// looked at them.
    Ask,
    /// The person trusted these files: runs use them.
    Trusted,
    /// The person chose the built-in profiles only for these files.
    Declined,
}

/// Profiles of the project at `root`, and the rejected profile files.
pub fn project_profiles(settings: &Settings, root: &Path) -> (Vec<ProfileInfo>, Vec<ProfileError>) {
    // Listing profiles never calls a model, so the resolver gets no keys and the keychain is not asked.
    let models = ConfiguredModels::new(
        settings.clone(),
        Default::default(),
        Arc::new(MemoryStore::new()),
    );
    let runtime = Runtime::new(runtime_settings(settings), Arc::new(models), Vec::new());
    match runtime.profiles_for(root) {
        Ok((profiles, errors)) => (
            profiles
                .iter()
                .map(|p| ProfileInfo {
                    name: p.name().to_string(),
                    description: p.description().to_string(),
                    model: p.model(),
                    read_only: p.read_only(),
                    tools: p.tools().to_vec(),
                    budgets: p.budgets(),
                    source: p.source().map(|s| s.display().to_string()),
                    system_prompt: p.system_prompt().to_string(),
                })
                .collect(),
            errors.into_iter().map(ProfileError::from).collect(),
        ),
        Err(e) => (
            Vec::new(),
            vec![ProfileError {
                path: "settings.json".to_string(),
                reason: e.to_string(),
                loaded: false,
            }],
        ),
    }
}

/// What a headless run found among the project's own profiles and whether it uses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunProfiles {
    /// Names of the valid project profiles.
    pub names: Vec<String>,
    /// Project profile files rejected or changed on loading.
    pub errors: Vec<ProfileError>,
    /// Whether they are used, and why.
    pub decision: RunProfilesDecision,
}

/// Whether a run uses the project's own profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunProfilesDecision {
    /// The project has none.
    NoProfiles,
    /// Trusted now, by the run's own flag (remembered until the files change).
    TrustedNow(String),
    /// Trusted before (here or in the app), and unchanged since.
    TrustedBefore(String),
    /// Not trusted: the run uses the built-ins only.
    NotTrusted,
}

impl RunProfiles {
    /// The digest to put in the runtime settings: set only when the profiles may be used.
    pub fn trusted_digest(&self) -> Option<String> {
        match &self.decision {
            RunProfilesDecision::TrustedNow(d) | RunProfilesDecision::TrustedBefore(d) => {
                Some(d.clone())
            }
            RunProfilesDecision::NoProfiles | RunProfilesDecision::NotTrusted => None,
        }
    }
}

impl Host {
    /// Where the profiles of the project at `root` stand with the person (for the project view).
    pub fn profiles_trust(&self, root: &Path) -> (Option<String>, ProfilesTrust) {
        let digest = project_profiles_digest(root);
        let trust = match (&digest, self.profile_trust().answer(root)) {
            (None, _) => ProfilesTrust::NoProfiles,
            (Some(d), Some(a)) if a.digest == *d && a.trusted => ProfilesTrust::Trusted,
            (Some(d), Some(a)) if a.digest == *d => ProfilesTrust::Declined,
            (Some(_), _) => ProfilesTrust::Ask,
        };
        (digest, trust)
    }

    /// The digest of the project's profiles the person trusted, while the files are unchanged.
    pub fn trusted_profiles(&self, root: &Path) -> Option<String> {
        self.profile_trust().trusted(root)
    }

    /// Records the person's answer about the project's profiles as they are now. Refused when they
    /// changed since `digest` was shown.
    pub fn answer_profiles(&self, root: &Path, digest: &str, trusted: bool) -> HostResult<()> {
        let now = project_profiles_digest(root);
        if now.as_deref() != Some(digest) {
            return Err(crate::HostError::InvalidArgument(
                "the project's profiles changed since they were shown; look at them again before answering"
                    .to_string(),
            ));
        }
        Ok(self.profile_trust().record(root, digest, trusted)?)
    }

    /// For a headless run: whether the project's own profiles may be used. `trust_now` (the
    /// person's flag) trusts them as they are and remembers it.
    pub fn profiles_for_run(&self, root: &Path, trust_now: bool) -> HostResult<RunProfiles> {
        let (found, errors) = load_project_profiles(root);
        let names = found.iter().map(|p| p.name().to_string()).collect();
        let errors = errors.into_iter().map(ProfileError::from).collect();
        let decision = match project_profiles_digest(root) {
            None => RunProfilesDecision::NoProfiles,
            Some(digest) if trust_now => {
                self.profile_trust().trust(root, &digest)?;
                RunProfilesDecision::TrustedNow(digest)
            }
            Some(digest) if self.profile_trust().is_trusted(root, &digest) => {
                RunProfilesDecision::TrustedBefore(digest)
            }
            Some(_) => RunProfilesDecision::NotTrusted,
        };
        Ok(RunProfiles {
            names,
            errors,
            decision,
        })
    }
}
