//! Confines model-given paths to the project root. A path may be relative to the root or absolute
//! inside it; `..` escapes, absolute paths elsewhere and symlinks leading out are refused, and writes
//! into `.git/` are refused so the agent cannot corrupt the repository's own bookkeeping.

use std::path::{Component, Path, PathBuf};

use crate::ToolError;

/// Whether the caller will only read the path or may write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read, search, list.
    Read,
    /// Create or change; `.git/` is off limits.
    Write,
}

/// A path that is known to lie inside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Canonical absolute path (for a file that does not exist yet: its canonical parent joined
    /// with the remaining names).
    pub abs: PathBuf,
    /// Project-relative path with `/` separators, as shown to the model (`.` for the root).
    pub display: String,
}

/// Resolves `given` against `root` and refuses anything that ends up outside it.
pub fn resolve(root: &Path, given: &str, access: Access) -> Result<Resolved, ToolError> {
    if given.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "field `path`: must not be empty".to_string(),
        ));
    }
    if given.contains('\0') {
        return Err(ToolError::InvalidArguments(
            "field `path`: contains a NUL byte".to_string(),
        ));
    }
    let root = canonical_root(root)?;
    let given_path = Path::new(given);
    let joined = if given_path.is_absolute() {
        given_path.to_path_buf()
    } else {
        root.join(given_path)
    };

    // Lexical view first: it tells a plain `..`/absolute escape apart from a symlink escape.
    let lexical = normalize_lexically(&joined);
    if !lexical.starts_with(&root) {
        let why = if given_path.is_absolute() {
            "it is an absolute path outside the project root"
        } else {
            "its `..` components climb out of the project root"
        };
        return Err(ToolError::OutsideProject(format!(
            "`{given}` is outside the project: {why} ({})",
            root.display()
        )));
    }

    let abs = canonicalize_existing_prefix(&joined, given)?;
    if !abs.starts_with(&root) {
        return Err(ToolError::OutsideProject(format!(
            "`{given}` is outside the project: a symlink on the way leads to {}, which is not under the project root ({})",
            abs.display(),
            root.display()
        )));
    }
    let rel = abs.strip_prefix(&root).unwrap_or(Path::new(""));
    if access == Access::Write
        && rel
            .components()
            .any(|c| matches!(c, Component::Normal(name) if name == ".git"))
    {
        return Err(ToolError::OutsideProject(format!(
            "`{given}` is inside a `.git` directory; the repository's internals are not written by tools"
        )));
    }
    Ok(Resolved {
        display: display_rel(rel),
        abs,
    })
}

/// The canonical form of the root, with a clear error if the root itself is gone.
pub fn canonical_root(root: &Path) -> Result<PathBuf, ToolError> {
    root.canonicalize().map_err(|err| {
        ToolError::Failed(format!(
            "project root {} is not accessible: {err}",
            root.display()
        ))
    })
}

/// Project-relative display form with `/` separators; `.` for the root itself.
pub fn display_rel(rel: &Path) -> String {
    // Fast path for the common case (walk results are clean and UTF-8): one allocation per path,
    // which matters when Glob lists tens of thousands of files.
    if let Some(text) = rel.to_str() {
        if !text.is_empty()
            && !text.starts_with('/')
            && !text.ends_with('/')
            && rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return text.to_string();
        }
    }
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// Removes `.` and folds `..` without touching the file system.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalizes the deepest existing ancestor of `path` and appends the names below it, so a file
/// that does not exist yet still gets a trustworthy location.
fn canonicalize_existing_prefix(path: &Path, given: &str) -> Result<PathBuf, ToolError> {
    let mut existing = path.to_path_buf();
    let mut missing: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canonical) => {
                let mut out = canonical;
                for name in missing.iter().rev() {
                    out.push(name);
                }
                return Ok(out);
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink must not be treated as "missing, create it": writing through it
                // would land wherever it points.
                if existing.symlink_metadata().is_ok() {
                    return Err(ToolError::OutsideProject(format!(
                        "`{given}` goes through a dangling symlink ({}); refusing to follow it",
                        existing.display()
                    )));
                }
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        if name == ".." {
                            return Err(ToolError::OutsideProject(format!(
                                "`{given}` uses `..` below a directory that does not exist"
                            )));
                        }
                        missing.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    _ => {
                        return Err(ToolError::NotFound(format!("`{given}`")));
                    }
                }
            }
            Err(err) => {
                return Err(ToolError::Failed(format!(
                    "cannot resolve `{given}`: {err}"
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("src/nested")).unwrap();
        std::fs::write(root.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(outside.path().join("secret.txt"), "top secret\n").unwrap();
        (root, outside)
    }

    #[test]
    fn relative_and_absolute_inside_paths_resolve_to_the_same_file() {
        let (root, _outside) = setup();
        let rel = resolve(root.path(), "src/main.rs", Access::Read).unwrap();
        let abs_given = root.path().join("src/main.rs");
        let abs = resolve(root.path(), abs_given.to_str().unwrap(), Access::Read).unwrap();
        assert_eq!(rel, abs);
        assert_eq!(rel.display, "src/main.rs");
        let dotted = resolve(root.path(), "./src/nested/../main.rs", Access::Read).unwrap();
        assert_eq!(dotted.display, "src/main.rs");
        assert_eq!(
            resolve(root.path(), ".", Access::Read).unwrap().display,
            "."
        );
    }

    #[test]
    fn parent_dir_escape_is_refused_with_the_reason() {
        let (root, _outside) = setup();
        let err = resolve(root.path(), "../etc/passwd", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("`../etc/passwd`") && msg.contains("`..`"),
            "{msg}"
        );
        let err = resolve(root.path(), "src/../../x", Access::Write).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
    }

    #[test]
    fn absolute_path_outside_is_refused() {
        let (root, outside) = setup();
        let target = outside.path().join("secret.txt");
        let err = resolve(root.path(), target.to_str().unwrap(), Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(err.to_string().contains("absolute path outside"), "{err}");
    }

    #[test]
    fn file_symlink_leaving_the_root_is_refused() {
        let (root, outside) = setup();
        symlink(
            outside.path().join("secret.txt"),
            root.path().join("link.txt"),
        )
        .unwrap();
        let err = resolve(root.path(), "link.txt", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(err.to_string().contains("symlink"), "{err}");
    }

    #[test]
    fn dir_symlink_leaving_the_root_is_refused_for_reads_and_new_files() {
        let (root, outside) = setup();
        symlink(outside.path(), root.path().join("escape")).unwrap();
        let err = resolve(root.path(), "escape/secret.txt", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        let err = resolve(root.path(), "escape/new/file.txt", Access::Write).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
    }

    #[test]
    fn symlink_staying_inside_is_fine() {
        let (root, _outside) = setup();
        symlink(root.path().join("src"), root.path().join("alias")).unwrap();
        let r = resolve(root.path(), "alias/main.rs", Access::Read).unwrap();
        assert_eq!(r.display, "src/main.rs");
    }

    #[test]
    fn dangling_symlink_is_not_written_through() {
        let (root, outside) = setup();
        symlink(
            outside.path().join("nope.txt"),
            root.path().join("dangling"),
        )
        .unwrap();
        let err = resolve(root.path(), "dangling", Access::Write).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(!outside.path().join("nope.txt").exists());
    }

    #[test]
    fn new_files_resolve_under_their_deepest_existing_parent() {
        let (root, _outside) = setup();
        let r = resolve(root.path(), "src/new/dir/file.rs", Access::Write).unwrap();
        assert_eq!(r.display, "src/new/dir/file.rs");
        assert!(r.abs.starts_with(root.path().canonicalize().unwrap()));
    }

    #[test]
    fn writes_into_git_are_refused_but_reads_are_not() {
        let (root, _outside) = setup();
        std::fs::create_dir_all(root.path().join(".git")).unwrap();
        std::fs::write(root.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let err = resolve(root.path(), ".git/HEAD", Access::Write).unwrap_err();
        assert!(err.to_string().contains(".git"), "{err}");
        let err = resolve(root.path(), ".git/hooks/pre-commit", Access::Write).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(resolve(root.path(), ".git/HEAD", Access::Read).is_ok());
        assert!(resolve(root.path(), ".gitignore", Access::Write).is_ok());
    }

    #[test]
    fn empty_path_is_invalid() {
        let (root, _outside) = setup();
        let err = resolve(root.path(), "  ", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(_)), "{err}");
    }
}
