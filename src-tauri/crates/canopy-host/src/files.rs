//! Reading project files for the viewer: windows of lines, and the language each file is
//! highlighted as. Every path is confined to the open project by the same rule the agent's tools obey
//! ([`canopy_tools::paths::resolve`]): canonicalised (resolving `..` and symlinks), it must exist and
//! stay under the project's canonical root. What only the viewer needs (no folders, pipes, binary or
//! huge files) is checked here.

use std::io::Read;
use std::path::Path;

use canopy_tools::paths::{self, Access, Resolved};
use canopy_tools::ToolError;
use serde::Serialize;
use ts_rs::TS;

use crate::error::{HostError, HostResult};

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
/// keeps the kind of refusal a host branches on: outside the project, not found, an invalid
/// argument (empty path) or an I/O failure.
pub fn confine(root: &Path, path: &str) -> HostResult<Resolved> {
    paths::resolve(root, path, Access::Read).map_err(|err| match err {
        ToolError::OutsideProject(message) => HostError::OutsideProject(message),
        ToolError::NotFound(message) => HostError::NotFound(message),
        ToolError::InvalidArguments(message) => HostError::InvalidArgument(message),
        ToolError::Failed(message) => HostError::Io(message),
        other => HostError::Io(other.to_string()),
    })
}

/// Reads lines `start_line..=end_line` (1-based; defaults: from 1, at most [`MAX_WINDOW_LINES`]).
pub fn read_window(
    root: &Path,
    path: &str,
    start_line: Option<u32>,
    end_line: Option<u32>,
) -> HostResult<FileWindow> {
    let Resolved {
        abs: resolved,
        display: shown,
    } = confine(root, path)?;
    let io = |e: std::io::Error| HostError::Io(format!("cannot read {shown}: {e}"));
    let meta = std::fs::metadata(&resolved).map_err(io)?;
    if meta.is_dir() {
        return Err(HostError::InvalidArgument(format!(
            "{shown} is a folder, not a file"
        )));
    }
    // A FIFO or device would block the read forever.
    if !meta.is_file() {
        return Err(HostError::InvalidArgument(format!(
            "{shown} is not a regular file (a pipe, socket or device)"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(HostError::FileTooLarge(format!(
            "{shown} is {} bytes; the viewer reads files up to {MAX_FILE_BYTES} bytes",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&resolved)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(HostError::BinaryFile(format!(
            "{shown} looks like a binary file (it contains NUL bytes)"
        )));
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
        return Err(HostError::InvalidArgument(
            "line numbers start at 1".to_string(),
        ));
    }
    if start > total.max(1) {
        return Err(HostError::InvalidArgument(format!(
            "{shown} has {total} lines; cannot start at line {start}"
        )));
    }
    let end = match end_line {
        Some(e) if (e as usize) < start => {
            return Err(HostError::InvalidArgument(format!(
                "end line {e} is before start line {start}"
            )))
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

/// Language ids of whole file names (lower-cased), tried before the extension.
pub const LANGUAGE_BY_NAME: &[(&str, &str)] = &[
    ("dockerfile", "dockerfile"),
    ("containerfile", "dockerfile"),
    ("makefile", "makefile"),
    ("gnumakefile", "makefile"),
    ("cargo.lock", "toml"),
];

/// Language ids by (lower-cased) extension. The UI highlights each id or shows it plain on purpose;
/// `ui/src/lib/languages.json` lists them for its test (regenerated by `languages_json_is_current`).
pub const LANGUAGE_BY_EXTENSION: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("tsx", "tsx"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "jsx"),
    ("svelte", "svelte"),
    ("vue", "vue"),
    ("py", "python"),
    ("pyi", "python"),
    ("go", "go"),
    ("java", "java"),
    ("kt", "kotlin"),
    ("kts", "kotlin"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("cxx", "cpp"),
    ("hpp", "cpp"),
    ("hh", "cpp"),
    ("hxx", "cpp"),
    ("cs", "csharp"),
    ("rb", "ruby"),
    ("php", "php"),
    ("swift", "swift"),
    ("sh", "shell"),
    ("bash", "shell"),
    ("zsh", "shell"),
    ("json", "json"),
    ("jsonl", "json"),
    ("toml", "toml"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("md", "markdown"),
    ("markdown", "markdown"),
    ("html", "html"),
    ("htm", "html"),
    ("css", "css"),
    ("scss", "scss"),
    ("sql", "sql"),
    ("xml", "xml"),
    ("svg", "xml"),
    ("lua", "lua"),
    ("zig", "zig"),
    ("mk", "makefile"),
    ("dockerfile", "dockerfile"),
];

/// A highlighting language id guessed from the file name.
pub fn language_for(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    if let Some((_, id)) = LANGUAGE_BY_NAME.iter().find(|(n, _)| *n == name) {
        return Some(id);
    }
    let ext = path.extension()?.to_string_lossy().to_lowercase();
    LANGUAGE_BY_EXTENSION
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, id)| *id)
}

/// Every id [`language_for`] can return, sorted, once each.
pub fn language_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = LANGUAGE_BY_NAME
        .iter()
        .chain(LANGUAGE_BY_EXTENSION)
        .map(|(_, id)| *id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
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

    /// The kind of refusal, as the hosts tell them apart.
    fn kind(e: &HostError) -> &'static str {
        match e {
            HostError::OutsideProject(_) => "outside_project",
            HostError::NotFound(_) => "not_found",
            HostError::InvalidArgument(_) => "invalid_argument",
            HostError::BinaryFile(_) => "binary_file",
            HostError::FileTooLarge(_) => "file_too_large",
            HostError::Io(_) => "io",
            other => panic!("not a file error: {other:?}"),
        }
    }

    fn code(root: &Path, path: &str) -> &'static str {
        match read_window(root, path, None, None) {
            Ok(w) => panic!("{path} was read: {w:?}"),
            Err(e) => {
                assert!(!e.to_string().contains("password"), "{e}");
                kind(&e)
            }
        }
    }

    #[test]
    fn the_viewer_uses_the_shared_rule_and_keeps_its_codes() {
        let (_dirs, (root, outside)) = setup();
        symlink(outside.join("inner"), root.join("esc")).unwrap();
        // Into the project: a dangling link pointing out is refused as outside, like any link out.
        symlink(root.join("gone.txt"), root.join("dangling")).unwrap();

        // `..` through a symlinked folder goes where the OS goes: out.
        assert_eq!(code(&root, "esc/../secret.txt"), "outside_project");
        // A missing path that climbs out is outside, not merely missing.
        assert_eq!(code(&root, "../no/such.txt"), "outside_project");
        assert_eq!(code(&root, "dangling"), "not_found");
        assert_eq!(code(&root, "src\\main.rs"), "not_found");
        assert_eq!(code(&root, ""), "invalid_argument");
        // The root itself is confined but is a folder.
        assert_eq!(code(&root, "."), "invalid_argument");

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
        assert_eq!(kind(&err), "outside_project");
        assert!(
            err.to_string().contains("`link.txt`") && err.to_string().contains("symlink"),
            "{}",
            err.to_string()
        );
        let err = confine(&root, "src/missing.rs").unwrap_err();
        assert_eq!(kind(&err), "not_found");
        assert!(
            err.to_string().contains("`src/missing.rs` does not exist"),
            "{}",
            err.to_string()
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
        assert_eq!(code(&root, "pipe"), "invalid_argument");
    }

    #[test]
    fn languages_come_from_names_and_extensions() {
        assert_eq!(language_for(Path::new("app/models/user.RB")), Some("ruby"));
        assert_eq!(language_for(Path::new("db/001_init.sql")), Some("sql"));
        assert_eq!(language_for(Path::new("web/App.vue")), Some("vue"));
        assert_eq!(language_for(Path::new("Dockerfile")), Some("dockerfile"));
        assert_eq!(language_for(Path::new("GNUmakefile")), Some("makefile"));
        assert_eq!(language_for(Path::new("Cargo.lock")), Some("toml"));
        assert_eq!(language_for(Path::new("notes.txt")), None);
        assert_eq!(language_for(Path::new("LICENSE")), None);
        let ids = language_ids();
        assert!(ids.contains(&"kotlin") && ids.contains(&"zig"), "{ids:?}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    }
}
