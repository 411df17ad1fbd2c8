//! The subagent profiles a project offers, as the project view lists them (the runtime's own list:
//! built-ins with settings overrides, then the project's `.canopy/agents/*.md`).

use std::path::Path;
use std::sync::Arc;

use canopy_config::{MemoryStore, Settings};
use canopy_protocol::{Budgets, ModelSlot};
use canopy_runtime::configured::{runtime_settings, ConfiguredModels};
use canopy_runtime::Runtime;
use serde::Serialize;
use ts_rs::TS;

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
            errors
                .into_iter()
                .map(|e| ProfileError {
                    path: e.path.display().to_string(),
                    reason: e.reason,
                    loaded: e.loaded,
                })
                .collect(),
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
