//! Reading project files for the viewer, and handing them to the desktop (file manager, editor).
//! Every path is confined to the open project by the same rule the agent's tools obey
//! ([`canopy_tools::paths::resolve`]): canonicalised (resolving `..` and symlinks), it must exist and
//! stay under the project's canonical root. What only the viewer needs (no folders, pipes, binary or
//! huge files) is checked here.

use std::io::Read;
use std::path::Path;

use canopy_tools::paths::{self, Access, Resolved};
use canopy_tools::ToolError;
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_opener::OpenerExt;
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, ErrorCode};
use crate::state::AppState;

/// Largest file the viewer reads.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Most lines one call returns.
pub const MAX_WINDOW_LINES: usize = 5000;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A window of lines of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FileWindow {
    /// Project-relative path with `/` separators.
    pub path: String,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// 1-based number of the first returned line.
    pub start_line: u32,
    /// The lines, without line endings.
    pub lines: Vec<String>,
    /// Language id for highlighting (`rust`, `typescript`, …), `null` when unknown.
    pub language: Option<String>,
}

/// Confines `path` (project-relative or absolute) to the project at `root` with the shared rule
/// ([`canopy_tools::paths::resolve`], read access: it must exist, symlinks may not lead out) and
/// turns a refusal into the code the UI branches on: `outside_project`, `not_found`,
/// `invalid_argument` (empty path) or `io`.
pub fn confine(root: &Path, path: &str) -> CommandResult<Resolved> {
    paths::resolve(root, path, Access::Read).map_err(|err| match err {
        ToolError::OutsideProject(message) => CommandError::new(ErrorCode::OutsideProject, message),
        ToolError::NotFound(message) => CommandError::new(ErrorCode::NotFound, message),
        ToolError::InvalidArguments(message) => {
            CommandError::new(ErrorCode::InvalidArgument, message)
        }
        ToolError::Failed(message) => CommandError::new(ErrorCode::Io, message),
        other => CommandError::new(ErrorCode::Io, other.to_string()),
    })
}

/// Reads lines `start_line..=end_line` (1-based; defaults: from 1, at most [`MAX_WINDOW_LINES`]).
pub fn read_window(
    root: &Path,
    path: &str,
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> CommandResult<FileWindow> {
    let Resolved {
        abs: resolved,
        display: shown,
    } = confine(root, path)?;
    let io =
        |e: std::io::Error| CommandError::new(ErrorCode::Io, format!("cannot read {shown}: {e}"));
    let meta = std::fs::metadata(&resolved).map_err(io)?;
    if meta.is_dir() {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{shown} is a folder, not a file"),
        ));
    }
    // A FIFO or device would block the read forever.
    if !meta.is_file() {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{shown} is not a regular file (a pipe, socket or device)"),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(CommandError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{shown} is {} bytes; the viewer reads files up to {MAX_FILE_BYTES} bytes",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&resolved)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(CommandError::new(
            ErrorCode::BinaryFile,
            format!("{shown} looks like a binary file (it contains NUL bytes)"),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.strip_suffix('\n')
            .unwrap_or(&text)
            .split('\n')
            .collect()
    };
    let total = all.len();
    let start = start_line.unwrap_or(1) as usize;
    if start == 0 {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            "line numbers start at 1",
        ));
    }
    if start > total.max(1) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{shown} has {total} lines; cannot start at line {start}"),
        ));
    }
    let end = match end_line {
        Some(e) if (e as usize) < start => {
            return Err(CommandError::new(
                ErrorCode::InvalidArgument,
                format!("end line {e} is before start line {start}"),
            ))
        }
        Some(e) => e as usize,
        None => usize::MAX,
    }
    .min(total)
    .min(start + MAX_WINDOW_LINES - 1);
    let lines = all
        .get(start - 1..end)
        .unwrap_or_default()
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    Ok(FileWindow {
        language: language_for(&resolved).map(str::to_string),
        path: shown,
        total_lines: u32::try_from(total).unwrap_or(u32::MAX),
        start_line: u32::try_from(start).unwrap_or(u32::MAX),
        lines,
    })
}

/// A highlighting language id guessed from the file name.
pub fn language_for(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    match name.as_str() {
        "dockerfile" => return Some("dockerfile"),
        "makefile" | "gnumakefile" => return Some("makefile"),
        "cargo.lock" => return Some("toml"),
        _ => {}
    }
    let ext = path.extension()?.to_string_lossy().to_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "svelte" => "svelte",
        "vue" => "vue",
        "py" | "pyi" => "python",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "swift" => "swift",
        "sh" | "bash" | "zsh" => "shell",
        "json" | "jsonl" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "markdown",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "sql" => "sql",
        "xml" | "svg" => "xml",
        "lua" => "lua",
        "zig" => "zig",
        _ => return None,
    })
}

/// Reads a window of lines of a text file in the open project.
#[tauri::command]
pub async fn read_project_file(
    state: State<'_, AppState>,
    path: String,
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> CommandResult<FileWindow> {
    let project = state.require_project()?;
    read_window(Path::new(&project.root), &path, start_line, end_line)
}

/// Shows a project file in the desktop's file manager.
#[tauri::command]
pub async fn reveal_file<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<()> {
    let project = state.require_project()?;
    let resolved = confine(Path::new(&project.root), &path)?;
    app.opener()
        .reveal_item_in_dir(&resolved.abs)
        .map_err(|e| CommandError::new(ErrorCode::Platform, format!("cannot show {path}: {e}")))
}

/// Opens a project file with the desktop's default application for it.
#[tauri::command]
pub async fn open_in_editor<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<()> {
    let project = state.require_project()?;
    let resolved = confine(Path::new(&project.root), &path)?;
    app.opener()
        .open_path(resolved.abs.display().to_string(), None::<&str>)
        .map_err(|e| CommandError::new(ErrorCode::Platform, format!("cannot open {path}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// A project with `src/main.rs` and, beside it, an outside folder holding a secret.
    fn setup() -> (tempfile::TempDir, (PathBuf, PathBuf)) {
        let dirs = tempfile::tempdir().unwrap();
        let root = dirs.path().join("project");
        let outside = dirs.path().join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(outside.join("inner")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(outside.join("secret.txt"), "password\n").unwrap();
        (dirs, (root, outside))
    }

    fn code(root: &Path, path: &str) -> ErrorCode {
        match read_window(root, path, None, None) {
            Ok(w) => panic!("{path} was read: {w:?}"),
            Err(e) => {
                assert!(!e.message.contains("password"), "{}", e.message);
                e.code
            }
        }
    }

    #[test]
    fn the_viewer_uses_the_shared_rule_and_keeps_its_codes() {
        let (_dirs, (root, outside)) = setup();
        symlink(outside.join("inner"), root.join("esc")).unwrap();
        symlink(outside.join("gone.txt"), root.join("dangling")).unwrap();

        // `..` through a symlinked folder goes where the OS goes: out.
        assert_eq!(code(&root, "esc/../secret.txt"), ErrorCode::OutsideProject);
        // A missing path that climbs out is outside, not merely missing.
        assert_eq!(code(&root, "../no/such.txt"), ErrorCode::OutsideProject);
        assert_eq!(code(&root, "dangling"), ErrorCode::NotFound);
        assert_eq!(code(&root, "src\\main.rs"), ErrorCode::NotFound);
        assert_eq!(code(&root, ""), ErrorCode::InvalidArgument);
        // The root itself is confined but is a folder.
        assert_eq!(code(&root, "."), ErrorCode::InvalidArgument);

        let abs = root.join("src/main.rs");
        let window = read_window(&root, abs.to_str().unwrap(), None, None).unwrap();
        assert_eq!(window.path, "src/main.rs");
        assert_eq!(window.lines, ["fn main() {}"]);
    }

    #[test]
    fn refusals_name_the_path_and_the_reason() {
        let (_dirs, (root, outside)) = setup();
        symlink(outside.join("secret.txt"), root.join("link.txt")).unwrap();
        let err = confine(&root, "link.txt").unwrap_err();
        assert_eq!(err.code, ErrorCode::OutsideProject);
        assert!(
            err.message.contains("`link.txt`") && err.message.contains("symlink"),
            "{}",
            err.message
        );
        let err = confine(&root, "src/missing.rs").unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert!(
            err.message.contains("`src/missing.rs` does not exist"),
            "{}",
            err.message
        );
    }

    #[test]
    fn pipes_are_refused_by_the_viewer_not_by_confinement() {
        let (_dirs, (root, _outside)) = setup();
        let fifo = root.join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert!(confine(&root, "pipe").is_ok());
        assert_eq!(code(&root, "pipe"), ErrorCode::InvalidArgument);
    }
}
