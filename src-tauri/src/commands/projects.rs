//! Projects: opening a folder as the project, the command-line project, and the recent-projects list
//! (a small JSON file in the data folder).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tauri::State;
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::profiles::{project_profiles, ProfileError, ProfileInfo};
use crate::state::AppState;

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

pub use canopy_host::profiles::ProfilesTrust;

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
const MAX_RECENT: usize = 20;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
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
    pub fn touch(&self, root: &str, name: &str) -> CommandResult<()> {
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
    pub fn forget(&self, root: &str) -> CommandResult<()> {
        let mut list = self.list();
        let before = list.len();
        list.retain(|p| p.root != root);
        if list.len() == before {
            return Ok(());
        }
        self.write(&list)
    }

    fn write(&self, list: &[RecentProject]) -> CommandResult<()> {
        let io = |what: &str, e: std::io::Error| {
            CommandError::new(
                ErrorCode::Io,
                format!("could not {what} {}: {e}", self.path.display()),
            )
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io("create the folder of", e))?;
        }
        let json = serde_json::to_string_pretty(list)
            .map_err(|e| CommandError::new(ErrorCode::Io, e.to_string()))?;
        // Write beside and rename, so a crash never leaves half a list.
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, json).map_err(|e| io("write", e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| io("replace", e))
    }
}

/// Resolves a folder the person picked (or passed on the command line) and loads its profiles.
pub fn load_project(state: &AppState, path: &str) -> CommandResult<ProjectInfo> {
    if path.trim().is_empty() {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            "no folder given",
        ));
    }
    let root = std::fs::canonicalize(path).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::NotFound
        } else {
            ErrorCode::Io
        };
        CommandError::new(code, format!("cannot open folder {path}: {e}"))
    })?;
    if !root.is_dir() {
        return Err(CommandError::new(
            ErrorCode::NotADirectory,
            format!("{} is a file, not a folder", root.display()),
        ));
    }
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    let (profiles, profile_errors) = project_profiles(&state.saved_settings(), &root);
    let (profiles_digest, profiles_trust) = state.host().profiles_trust(&root);
    Ok(ProjectInfo {
        root: root.display().to_string(),
        name,
        profiles,
        profile_errors,
        profiles_digest,
        profiles_trust,
    })
}

/// Opens `path` as the project and puts it first in the recent list.
pub fn open(state: &AppState, path: &str) -> CommandResult<ProjectInfo> {
    let info = load_project(state, path)?;
    state.set_project(info.clone());
    // The project is open even if the list cannot be written; the list is a convenience.
    if let Err(e) = state.recent().touch(&info.root, &info.name) {
        state.warn(e.message);
    }
    Ok(info)
}

/// Records the person's answer about the open project's own profiles, as shown to them (`digest`
/// from its `ProjectInfo`): `trusted` true uses them in runs from now on, false keeps to the
/// built-in profiles. Remembered per project and digest. `invalid_argument` when the files changed
/// since they were shown (they must be read again).
#[tauri::command]
pub async fn answer_project_profiles(
    state: State<'_, AppState>,
    digest: String,
    trusted: bool,
) -> CommandResult<ProjectInfo> {
    let project = state.require_project()?;
    state
        .host()
        .answer_profiles(Path::new(&project.root), &digest, trusted)?;
    let info = load_project(&state, &project.root)?;
    state.set_project(info.clone());
    Ok(info)
}

/// Opens a folder as the project.
#[tauri::command]
pub async fn open_project(state: State<'_, AppState>, path: String) -> CommandResult<ProjectInfo> {
    open(&state, &path)
}

/// The open project (initially the one from `canopy FOLDER`), or `null`.
#[tauri::command]
pub async fn current_project(state: State<'_, AppState>) -> CommandResult<Option<ProjectInfo>> {
    Ok(state.project())
}

/// Recently opened projects, newest first.
#[tauri::command]
pub async fn list_recent_projects(state: State<'_, AppState>) -> CommandResult<Vec<RecentProject>> {
    Ok(state.recent().list())
}

/// Removes a project from the recent list (its files and traces are untouched).
#[tauri::command]
pub async fn forget_project(state: State<'_, AppState>, path: String) -> CommandResult<()> {
    // Forget by the stored (canonical) path, and by the canonical form of what was passed, so a folder
    // that has since been deleted can still be forgotten.
    state.recent().forget(&path)?;
    if let Ok(canonical) = std::fs::canonicalize(Path::new(&path)) {
        state.recent().forget(&canonical.display().to_string())?;
    }
    Ok(())
}

/// Warnings collected since start (a settings file that was moved aside, an unusable command-line
/// folder), for the UI to show once.
#[tauri::command]
pub async fn startup_warnings(state: State<'_, AppState>) -> CommandResult<Vec<String>> {
    Ok(state.warnings())
}
