//! Projects, for a host with one open project (the app's window): opening a folder as the project
//! with its subagent profiles and where the person stands on the project's own ones, answering
//! that trust question, and the recent-projects list (a small JSON file in the data folder).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{HostError, HostResult};
use crate::host::Host;
use crate::profiles::{project_profiles, ProfileError, ProfileInfo, ProfilesTrust};

/// An open project.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ProjectInfo {
    /// Canonical absolute path of the project folder.
    pub root: String,
    /// The folder's name.
    pub name: String,
    /// Subagent profiles available in this project (built-ins, then `.canopy/agents/*.md`).
    pub profiles: Vec<ProfileInfo>,
    /// Project profile files that could not be used, and why.
    pub profile_errors: Vec<ProfileError>,
    /// Digest of the project's own profile files (`.canopy/agents/*.md`); `null` when it has none.
    /// An answer to the trust question is given for exactly this digest.
    pub profiles_digest: Option<String>,
    /// Whether runs use the project's own profiles.
    pub profiles_trust: ProfilesTrust,
}

/// One entry of the recent-projects list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RecentProject {
    /// Canonical absolute path.
    pub root: String,
    /// The folder's name.
    pub name: String,
    /// When it was last opened, ms since the Unix epoch.
    pub last_opened_ms: u64,
}

/// How many projects the recent list keeps.
pub const MAX_RECENT: usize = 20;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The recent-projects file.
#[derive(Debug)]
pub struct RecentProjects {
    path: PathBuf,
}

impl RecentProjects {
    /// The list stored at `path`.
    pub fn new(path: PathBuf) -> Self {
        RecentProjects { path }
    }

    /// The list, newest first. A missing or unreadable file is an empty list: losing the list of recent
    /// folders must not stop the app.
    pub fn list(&self) -> Vec<RecentProject> {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return Vec::new();
        };
        let mut list: Vec<RecentProject> = serde_json::from_str(&text).unwrap_or_default();
        list.sort_by_key(|p| std::cmp::Reverse(p.last_opened_ms));
        list
    }

    /// Records that `root` was opened now.
    pub fn touch(&self, root: &str, name: &str) -> HostResult<()> {
        let mut list = self.list();
        list.retain(|p| p.root != root);
        list.insert(
            0,
            RecentProject {
                root: root.to_string(),
                name: name.to_string(),
                last_opened_ms: now_ms(),
            },
        );
        list.truncate(MAX_RECENT);
        self.write(&list)
    }

    /// Removes `root` from the list (no error when it was not there).
    pub fn forget(&self, root: &str) -> HostResult<()> {
        let mut list = self.list();
        let before = list.len();
        list.retain(|p| p.root != root);
        if list.len() == before {
            return Ok(());
        }
        self.write(&list)
    }

    fn write(&self, list: &[RecentProject]) -> HostResult<()> {
        let io = |what: &str, e: std::io::Error| {
            HostError::Io(format!("could not {what} {}: {e}", self.path.display()))
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io("create the folder of", e))?;
        }
        let json = serde_json::to_string_pretty(list).map_err(|e| HostError::Io(e.to_string()))?;
        // Write beside and rename, so a crash never leaves half a list.
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, json).map_err(|e| io("write", e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| io("replace", e))
    }
}

/// The canonical folder a person picked (or passed on the command line): `not_found` when it does
/// not exist, `not_a_directory` for a file.
pub fn project_root(path: impl AsRef<Path>) -> HostResult<PathBuf> {
    let path = path.as_ref();
    if path.to_string_lossy().trim().is_empty() {
        return Err(HostError::InvalidArgument("no folder given".to_string()));
    }
    let root = std::fs::canonicalize(path).map_err(|e| {
        let message = format!("cannot open folder {}: {e}", path.display());
        if e.kind() == std::io::ErrorKind::NotFound {
            HostError::NotFound(message)
        } else {
            HostError::Io(message)
        }
    })?;
    if !root.is_dir() {
        return Err(HostError::NotADirectory(format!(
            "{} is a file, not a folder",
            root.display()
        )));
    }
    Ok(root)
}

impl Host {
    /// The folder at `path` as a project: its profiles under the saved settings, and where the
    /// person stands on the project's own ones.
    pub fn project_info(&self, path: &str) -> HostResult<ProjectInfo> {
        let root = project_root(path)?;
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string());
        let (profiles, profile_errors) = project_profiles(&self.saved_settings(), &root);
        let (profiles_digest, profiles_trust) = self.profiles_trust(&root);
        Ok(ProjectInfo {
            root: root.display().to_string(),
            name,
            profiles,
            profile_errors,
            profiles_digest,
            profiles_trust,
        })
    }
}

/// A project that was opened, and what could not be recorded about it.
#[derive(Debug)]
pub struct Opened {
    /// The project, now the open one.
    pub info: ProjectInfo,
    /// Why the recent list could not be updated; the project is open all the same.
    pub warning: Option<String>,
}

/// The open project and the recent list.
#[derive(Debug)]
pub struct Projects {
    open: Mutex<Option<ProjectInfo>>,
    recent: RecentProjects,
}

impl Projects {
    /// No project open; the recent list in `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Projects {
            open: Mutex::new(None),
            recent: RecentProjects::new(data_dir.join("recent-projects.json")),
        }
    }

    /// The open project, if any.
    pub fn current(&self) -> Option<ProjectInfo> {
        lock(&self.open).clone()
    }

    /// The open project, or [`HostError::NoProject`].
    pub fn require(&self) -> HostResult<ProjectInfo> {
        self.current().ok_or(HostError::NoProject)
    }

    /// Opens `path` as the project and puts it first in the recent list.
    pub fn open(&self, host: &Host, path: &str) -> HostResult<Opened> {
        let info = host.project_info(path)?;
        *lock(&self.open) = Some(info.clone());
        // The project is open even if the list cannot be written; the list is a convenience.
        let warning = self
            .recent
            .touch(&info.root, &info.name)
            .err()
            .map(|e| e.to_string());
        Ok(Opened { info, warning })
    }

    /// Records the person's answer about the open project's own profiles as shown to them
    /// (`digest`): `trusted` uses them in runs from now on, false keeps to the built-ins. Refused
    /// with `InvalidArgument` when the files changed since they were shown. The project as it
    /// stands after the answer.
    pub fn answer_profiles(
        &self,
        host: &Host,
        digest: &str,
        trusted: bool,
    ) -> HostResult<ProjectInfo> {
        let project = self.require()?;
        host.answer_profiles(Path::new(&project.root), digest, trusted)?;
        let info = host.project_info(&project.root)?;
        *lock(&self.open) = Some(info.clone());
        Ok(info)
    }

    /// Recently opened projects, newest first.
    pub fn recent(&self) -> Vec<RecentProject> {
        self.recent.list()
    }

    /// Removes a project from the recent list (its files and traces are untouched), by the stored
    /// (canonical) path and by the canonical form of `path`, so a folder deleted since can still be
    /// forgotten.
    pub fn forget(&self, path: &str) -> HostResult<()> {
        self.recent.forget(path)?;
        if let Ok(canonical) = std::fs::canonicalize(Path::new(path)) {
            self.recent.forget(&canonical.display().to_string())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    use crate::host::test_host as host;

    #[test]
    fn a_folder_opens_as_the_project_and_heads_the_recent_list() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let projects = Projects::new(host.data_dir());
        assert!(matches!(projects.require(), Err(HostError::NoProject)));
        let a = dir.path().join("alpha");
        let b = dir.path().join("beta");
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let opened = projects.open(&host, &a.display().to_string()).unwrap();
        assert_eq!(opened.warning, None);
        assert_eq!(opened.info.name, "alpha");
        assert_eq!(opened.info.profiles_trust, ProfilesTrust::NoProfiles);
        assert!(
            opened.info.profiles.iter().any(|p| p.source.is_none()),
            "built-ins listed"
        );
        // A relative-looking path with `..` is stored canonical.
        let b_indirect = a.join("..").join("beta");
        projects
            .open(&host, &b_indirect.display().to_string())
            .unwrap();
        assert_eq!(projects.current().unwrap().name, "beta");
        let recent: Vec<String> = projects.recent().into_iter().map(|p| p.name).collect();
        assert_eq!(recent, ["beta", "alpha"]);
        // Forgetting a folder deleted since works by its stored path.
        let stored_alpha = projects.recent()[1].root.clone();
        std::fs::remove_dir(&a).unwrap();
        projects.forget(&stored_alpha).unwrap();
        let recent: Vec<String> = projects.recent().into_iter().map(|p| p.name).collect();
        assert_eq!(recent, ["beta"]);
    }

    #[test]
    fn what_is_not_a_folder_is_refused_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        let err = host.project_info(&file.display().to_string()).unwrap_err();
        assert!(matches!(err, HostError::NotADirectory(_)), "{err:?}");
        let err = host.project_info("/no/such/folder").unwrap_err();
        assert!(matches!(err, HostError::NotFound(_)), "{err:?}");
        assert!(err.to_string().contains("/no/such/folder"), "{err}");
        let err = host.project_info(" ").unwrap_err();
        assert_eq!(err.to_string(), "no folder given");
    }

    #[test]
    fn an_unwritable_recent_list_still_opens_the_project_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        // The data "folder" is a file: the list cannot be written.
        std::fs::write(dir.path().join("data"), "not a folder").unwrap();
        let projects = Projects::new(host.data_dir());
        let opened = projects
            .open(&host, &dir.path().display().to_string())
            .unwrap();
        let warning = opened.warning.expect("a warning");
        assert!(warning.contains("recent-projects.json"), "{warning}");
        assert_eq!(projects.current(), Some(opened.info));
        assert!(projects.recent().is_empty());
    }

    #[test]
    fn trusting_the_projects_profiles_is_for_the_files_as_shown() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let projects = Projects::new(host.data_dir());
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".canopy/agents")).unwrap();
        let agent = root.join(".canopy/agents/reviewer.md");
        std::fs::write(
            &agent,
            "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read\n---\nReview carefully.\n",
        )
        .unwrap();
        assert!(matches!(
            projects.answer_profiles(&host, "x", true),
            Err(HostError::NoProject)
        ));
        let shown = projects
            .open(&host, &root.display().to_string())
            .unwrap()
            .info;
        assert_eq!(shown.profiles_trust, ProfilesTrust::Ask);
        let digest = shown.profiles_digest.clone().unwrap();
        std::fs::write(&agent, "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read\n---\nSomething else now.\n").unwrap();
        let err = projects.answer_profiles(&host, &digest, true).unwrap_err();
        assert!(matches!(err, HostError::InvalidArgument(_)), "{err:?}");
        let now = host.project_info(&shown.root).unwrap();
        let answered = projects
            .answer_profiles(&host, now.profiles_digest.as_deref().unwrap(), true)
            .unwrap();
        assert_eq!(answered.profiles_trust, ProfilesTrust::Trusted);
        assert_eq!(projects.current(), Some(answered.clone()));
        assert_eq!(
            host.trusted_profiles(Path::new(&answered.root)),
            answered.profiles_digest
        );
    }
}
