//! Which projects' own subagent profiles (`.canopy/agents/*.md`) the person has trusted or turned
//! down: `trusted-profiles.json` in the config folder maps a project's canonical path to the digest
//! of the profile files they were shown and their answer. A profile set that changed since has
//! another digest and is shown again before it is used. The CLI and the app share the file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// The person's answer about one project's profile set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustAnswer {
    /// The digest of the profile files they were shown.
    pub digest: String,
    /// `true`: use them; `false`: run with the built-in profiles only.
    pub trusted: bool,
}

/// The file's name in the config folder.
pub const PROFILE_TRUST_FILE: &str = "trusted-profiles.json";

/// The trust file of one config folder.
#[derive(Debug, Clone)]
pub struct ProfileTrust {
    path: PathBuf,
}

impl ProfileTrust {
    /// The trust file in `config_dir`.
    pub fn in_dir(config_dir: &Path) -> Self {
        ProfileTrust {
            path: config_dir.join(PROFILE_TRUST_FILE),
        }
    }

    /// The trust file in the user's config folder ([`crate::config_dir`]).
    pub fn at_default_location() -> Result<Self, ConfigError> {
        Ok(ProfileTrust::in_dir(&crate::config_dir()?))
    }

    fn key(project: &Path) -> String {
        project
            .canonicalize()
            .unwrap_or_else(|_| project.to_path_buf())
            .to_string_lossy()
            .into_owned()
    }

    fn load(&self) -> BTreeMap<String, TrustAnswer> {
        // A missing or damaged file trusts nothing, which only means being asked again.
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// The person's last answer for `project`, if any.
    pub fn answer(&self, project: &Path) -> Option<TrustAnswer> {
        self.load().remove(&ProfileTrust::key(project))
    }

    /// The digest the person trusted for `project`, if their last answer was "use them".
    pub fn trusted(&self, project: &Path) -> Option<String> {
        self.answer(project).filter(|a| a.trusted).map(|a| a.digest)
    }

    /// Whether `digest` is the trusted one for `project`.
    pub fn is_trusted(&self, project: &Path, digest: &str) -> bool {
        self.trusted(project).as_deref() == Some(digest)
    }

    /// Records that the person trusts the profile set with `digest` in `project`.
    pub fn trust(&self, project: &Path, digest: &str) -> Result<(), ConfigError> {
        self.record(project, digest, true)
    }

    /// Records the person's answer for the profile set with `digest` in `project` (replacing an
    /// earlier one). Written whole to a temporary file and renamed, readable by the user only.
    pub fn record(&self, project: &Path, digest: &str, trusted: bool) -> Result<(), ConfigError> {
        let mut all = self.load();
        all.insert(
            ProfileTrust::key(project),
            TrustAnswer {
                digest: digest.to_string(),
                trusted,
            },
        );
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let io = |action: &'static str, path: &Path, source: std::io::Error| ConfigError::Io {
            action,
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|e| io("create directory", dir, e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io("write", dir, e))?;
        tmp.write_all(&serde_json::to_vec_pretty(&all)?)
            .map_err(|e| io("write", &self.path, e))?;
        tmp.persist(&self.path)
            .map_err(|e| io("write", &self.path, e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_project_and_per_digest() {
        let config = tempfile::tempdir().unwrap();
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let trust = ProfileTrust::in_dir(config.path());
        assert_eq!(trust.trusted(a.path()), None);
        trust.trust(a.path(), "d1").unwrap();
        assert!(trust.is_trusted(a.path(), "d1"));
        assert!(
            !trust.is_trusted(a.path(), "d2"),
            "changed profiles are not trusted"
        );
        assert!(!trust.is_trusted(b.path(), "d1"), "another project is not");
        trust.trust(a.path(), "d2").unwrap();
        assert_eq!(
            ProfileTrust::in_dir(config.path())
                .trusted(a.path())
                .as_deref(),
            Some("d2")
        );
        // Turned down: remembered as an answer, never as trust.
        trust.record(a.path(), "d3", false).unwrap();
        assert_eq!(trust.trusted(a.path()), None);
        assert_eq!(
            trust.answer(a.path()),
            Some(TrustAnswer {
                digest: "d3".into(),
                trusted: false
            })
        );
    }
}
