//! The subagent profiles a project offers, as the project view lists them.

use std::path::Path;

use canopy_config::Settings;
use canopy_protocol::{Budgets, ModelSlot};
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
}

/// A project profile file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ProfileError {
    /// The file.
    pub path: String,
    /// Why it was rejected.
    pub reason: String,
}

/// Profiles of the project at `root`, and the rejected profile files.
pub fn project_profiles(settings: &Settings, root: &Path) -> (Vec<ProfileInfo>, Vec<ProfileError>) {
    let _ = (settings, root);
    (Vec::new(), Vec::new())
}
