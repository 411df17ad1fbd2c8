//! The permission policy: what the gate does when an agent asks for a guarded tool. Stored in
//! `settings.json` by canopy-config and enforced by the runtime's gate, so it lives here, below both.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What to do when an agent asks for a guarded action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PolicyAction {
    /// Run without asking.
    Allow,
    /// Ask the person first.
    Ask,
    /// Refuse; the model is told it was denied.
    Deny,
}

/// The policy per guarded tool family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PermissionPolicy {
    /// Changing an existing file.
    pub edit: PolicyAction,
    /// Creating or overwriting a file.
    pub write: PolicyAction,
    /// Running a shell command.
    pub bash: PolicyAction,
    /// Starting a subagent.
    pub task: PolicyAction,
}

impl Default for PermissionPolicy {
    fn default() -> Self {
        PermissionPolicy {
            edit: PolicyAction::Ask,
            write: PolicyAction::Ask,
            bash: PolicyAction::Ask,
            task: PolicyAction::Allow,
        }
    }
}

/// The secret-file list (`.gitignore` patterns) a new settings file starts with, and what subagents are
/// always denied whatever the settings: Read refuses these files, Grep and Glob skip them. One list
/// for the settings and the tools, so the two cannot drift.
pub const DEFAULT_SECRET_FILES: &[&str] = &[
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh",
    ".gnupg",
    ".aws/credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    "secrets.*",
    "credentials.json",
];
