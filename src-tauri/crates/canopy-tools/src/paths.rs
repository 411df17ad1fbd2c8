//! The one rule that keeps a path inside the open project. Every tool (what the model asks for),
//! the app's file viewer and desktop hand-offs, and the runtime's evidence check go through
//! [`resolve`]; each caller maps the [`ToolError`] it returns into its own vocabulary.
//!
//! The contract of [`resolve`]:
//! - `given` is project-relative or absolute. Empty (or blank) paths and NUL bytes are
//!   [`ToolError::InvalidArguments`]. On Unix `\` is an ordinary file-name character, not a separator.
//! - `.` and `..` are folded and the result compared with the root (canonical, or as the caller
//!   spelled it) *before* the disk is touched, so `../x` or an absolute path elsewhere is
//!   [`ToolError::OutsideProject`] whether or not it exists.
//! - The path is then canonicalised (symlinks followed, the way the OS will follow them when the file
//!   is opened, including `link/..` meaning the parent of the link's target) and must still lie under
//!   the canonical root; a symlink leading out is [`ToolError::OutsideProject`].
//! - [`Access::Read`]: the path must exist; otherwise [`ToolError::NotFound`] (a dangling symlink
//!   into the project counts as missing). [`Access::Write`]: the file and any missing parent folders may not exist yet;
//!   the deepest existing ancestor is canonicalised and must lie inside, a dangling symlink is never
//!   written through, and `.git/` is off limits so the agent cannot corrupt the repository's own
//!   bookkeeping.
//! - In both modes `..` right after a name that does not exist is refused: where it leads cannot be
//!   checked on disk.
//! - A root that cannot be canonicalised, and I/O errors such as permission denied, are
//!   [`ToolError::Failed`].
//!
//! Every message names the path as given and says why it was refused, but never what lies outside
//! the project: a symlink leading out is refused with the same words whether its target exists or
//! not (a dangling symlink counts as missing only when it points inside the project).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::ToolError;

/// Whether the caller will only read the path or may create or change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read, search, list, show: the path must exist.
    Read,
    /// Create or change: the path may not exist yet; `.git/` is off limits.
    Write,
}

/// A path that is known to lie inside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Canonical absolute path (for a file that does not exist yet: its deepest existing ancestor,
    /// canonicalised, joined with the remaining names).
    pub abs: PathBuf,
    /// Project-relative path with `/` separators, as shown to the model and the user (`.` for the
    /// root).
    pub display: String,
}

/// Resolves `given` against `root` under the contract in the module header.
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
    let root_as_given = normalize_lexically(root);
    let root = canonical_root(root)?;
    let given_path = Path::new(given);
    let joined = if given_path.is_absolute() {
        given_path.to_path_buf()
    } else {
        root.join(given_path)
    };

    // Lexical view first: it tells a plain `..`/absolute escape apart from a symlink escape, and
    // calls a missing `../x` what it is (outside) rather than merely missing. An absolute path may
    // spell the root the way it was opened (through a symlink, say) rather than canonically;
    // canonicalisation below still has the last word.
    let lexical = normalize_lexically(&joined);
    let under_root = lexical.starts_with(&root)
        || (given_path.is_absolute()
            && root_as_given.is_absolute()
            && lexical.starts_with(&root_as_given));
    if !under_root {
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

    let (abs, exists) = match locate(&joined) {
        Located::Exists(abs) => (abs, true),
        Located::Missing(abs) => (abs, false),
        Located::Dangling(link) => {
            // Where a dangling link points is only described when that is inside: otherwise
            // "missing" against "outside" would tell whether a file outside exists.
            if !dangling_target_inside(&link, &root) {
                return Err(leads_out(given));
            }
            let link = display_rel(link.strip_prefix(&root).unwrap_or(&link));
            return Err(match access {
                Access::Read => ToolError::NotFound(format!(
                    "`{given}` does not exist: it goes through a dangling symlink ({link})"
                )),
                // Writing through it would land wherever it points.
                Access::Write => ToolError::OutsideProject(format!(
                    "`{given}` goes through a dangling symlink ({link}); refusing to follow it"
                )),
            });
        }
        Located::ParentOfMissing(missing) => {
            // `missing` is spelled lexically; where its existing part really is decides whether
            // it may be described.
            let really_inside = missing
                .ancestors()
                .find_map(|a| a.canonicalize().ok())
                .is_some_and(|a| a.starts_with(&root));
            let (true, Ok(inside)) = (really_inside, missing.strip_prefix(&root)) else {
                return Err(leads_out(given));
            };
            return Err(ToolError::OutsideProject(format!(
                "`{given}` uses `..` after {}, which does not exist, so where it leads cannot be checked",
                display_rel(inside)
            )));
        }
        Located::Failed(err) => {
            return Err(ToolError::Failed(format!(
                "cannot resolve `{given}`: {err}"
            )));
        }
    };
    if !abs.starts_with(&root) {
        return Err(leads_out(given));
    }
    let rel = abs.strip_prefix(&root).unwrap_or(Path::new(""));
    let display = display_rel(rel);
    match access {
        Access::Read if !exists => {
            return Err(ToolError::NotFound(format!("`{display}` does not exist")));
        }
        Access::Write
            if rel
                .components()
                .any(|c| matches!(c, Component::Normal(name) if name == ".git")) =>
        {
            return Err(ToolError::OutsideProject(format!(
                "`{given}` is inside a `.git` directory; the repository's internals are not written by tools"
            )));
        }
        _ => {}
    }
    Ok(Resolved { display, abs })
}

/// The one refusal for a path whose symlinks lead out of the project. It says nothing of what
/// lies outside (no target, no "does not exist"): the answer must be the same whether the place
/// outside exists or not, or refusals become a way to probe folders outside the project.
fn leads_out(given: &str) -> ToolError {
    ToolError::OutsideProject(format!(
        "`{given}` is outside the project: a symlink on the way leads out of the project root"
    ))
}

/// Whether the target a dangling symlink names lies inside the root, judged lexically (it does
/// not exist, so it cannot be canonicalised). A target that cannot be read counts as outside.
fn dangling_target_inside(link: &Path, root: &Path) -> bool {
    let Ok(target) = std::fs::read_link(link) else {
        return false;
    };
    let base = link
        .parent()
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
        .unwrap_or_default();
    normalize_lexically(&base.join(target)).starts_with(root)
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

/// What is on disk at a path.
enum Located {
    /// It exists; the canonical path.
    Exists(PathBuf),
    /// It does not exist; its deepest existing ancestor, canonicalised, joined with the missing
    /// names.
    Missing(PathBuf),
    /// A symlink on the way (this one, not canonicalised) points at nothing.
    Dangling(PathBuf),
    /// `..` follows this name, which does not exist.
    ParentOfMissing(PathBuf),
    /// The file system refused to say (permission denied, a symlink loop, …).
    Failed(std::io::Error),
}

/// Canonicalizes the deepest existing ancestor of `path` and appends the names below it, so a file
/// that does not exist yet still gets a trustworthy location.
fn locate(path: &Path) -> Located {
    let mut existing = path.to_path_buf();
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canonical) => {
                if missing.is_empty() {
                    return Located::Exists(canonical);
                }
                let mut out = canonical;
                for name in missing.iter().rev() {
                    out.push(name);
                }
                return Located::Missing(out);
            }
            // `a_file/x` fails with "not a directory": x is just as missing.
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                if existing.symlink_metadata().is_ok() {
                    // It is there but cannot be canonicalised: a symlink pointing at nothing.
                    return Located::Dangling(existing);
                }
                if matches!(
                    existing.components().next_back(),
                    Some(Component::ParentDir)
                ) {
                    // `missing/..`: the OS would fail here; folding it lexically could hide
                    // where a later-created `missing` symlink would lead.
                    let below = existing.parent().map(Path::to_path_buf).unwrap_or_default();
                    return Located::ParentOfMissing(below);
                }
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        missing.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    // Only `/` has no parent, and it always exists.
                    _ => return Located::Failed(err),
                }
            }
            Err(err) => return Located::Failed(err),
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
        for given in ["", "  "] {
            for access in [Access::Read, Access::Write] {
                let err = resolve(root.path(), given, access).unwrap_err();
                assert!(matches!(err, ToolError::InvalidArguments(_)), "{err}");
                assert!(err.to_string().contains("must not be empty"), "{err}");
            }
        }
        let err = resolve(root.path(), "src/\0main.rs", Access::Read).unwrap_err();
        assert!(err.to_string().contains("NUL"), "{err}");
    }

    #[test]
    fn the_root_itself_resolves_however_it_is_written() {
        let (root, _outside) = setup();
        let canonical = root.path().canonicalize().unwrap();
        let abs_root = root.path().to_str().unwrap().to_string();
        for given in [".", "./", "src/..", abs_root.as_str(), "src/nested/../.."] {
            let r = resolve(root.path(), given, Access::Read).unwrap();
            assert_eq!(r.display, ".", "{given}");
            assert_eq!(r.abs, canonical, "{given}");
        }
    }

    #[test]
    fn absolute_path_inside_the_root_resolves_also_through_a_symlinked_root() {
        let (root, outside) = setup();
        // The project opened through a symlink: the given absolute path uses the link's name.
        let via = outside.path().join("via");
        symlink(root.path(), &via).unwrap();
        let given = via.join("src/main.rs");
        let r = resolve(&via, given.to_str().unwrap(), Access::Read).unwrap();
        assert_eq!(r.display, "src/main.rs");
        assert_eq!(
            r.abs,
            root.path().join("src/main.rs").canonicalize().unwrap()
        );
        let canonical_given = root.path().canonicalize().unwrap().join("src/main.rs");
        let r = resolve(&via, canonical_given.to_str().unwrap(), Access::Read).unwrap();
        assert_eq!(r.display, "src/main.rs");
    }

    #[test]
    fn missing_paths_are_not_found_for_reads_and_creatable_for_writes() {
        let (root, _outside) = setup();
        let err = resolve(root.path(), "./src/nope.rs", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err}");
        assert!(
            err.to_string().contains("`src/nope.rs` does not exist"),
            "{err}"
        );
        let w = resolve(root.path(), "./src/nope.rs", Access::Write).unwrap();
        assert_eq!(w.display, "src/nope.rs");
        // A regular file used as a folder is just as missing.
        let err = resolve(root.path(), "src/main.rs/inner", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err}");
    }

    #[test]
    fn a_missing_path_that_climbs_out_is_outside_not_missing() {
        let (root, outside) = setup();
        for given in ["../no/such/file", "src/../../nope.txt"] {
            let err = resolve(root.path(), given, Access::Read).unwrap_err();
            assert!(
                matches!(err, ToolError::OutsideProject(_)),
                "{given}: {err}"
            );
        }
        let absent = outside.path().join("absent.txt");
        let err = resolve(root.path(), absent.to_str().unwrap(), Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(err.to_string().contains("absolute path outside"), "{err}");
    }

    #[test]
    fn parent_dir_through_a_symlinked_dir_follows_the_link_like_the_os() {
        let (root, outside) = setup();
        std::fs::create_dir(outside.path().join("inner")).unwrap();
        symlink(outside.path().join("inner"), root.path().join("esc")).unwrap();
        // Lexically `esc/../secret.txt` is `secret.txt` inside the root, but opening it reads the
        // secret next to the link's target.
        for access in [Access::Read, Access::Write] {
            let err = resolve(root.path(), "esc/../secret.txt", access).unwrap_err();
            assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
            assert!(err.to_string().contains("symlink"), "{err}");
        }
        let err = resolve(root.path(), "esc/../new/file.txt", Access::Write).unwrap_err();
        assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
        assert!(!outside.path().join("new").exists());

        // Inside the root the same move lands where the OS would land.
        symlink(root.path().join("src/nested"), root.path().join("alias")).unwrap();
        let r = resolve(root.path(), "alias/../main.rs", Access::Read).unwrap();
        assert_eq!(r.display, "src/main.rs");
    }

    #[test]
    fn parent_dir_after_a_missing_name_is_refused() {
        let (root, _outside) = setup();
        for access in [Access::Read, Access::Write] {
            let err = resolve(root.path(), "nope/../src/main.rs", access).unwrap_err();
            assert!(matches!(err, ToolError::OutsideProject(_)), "{err}");
            let msg = err.to_string();
            assert!(
                msg.contains("`nope/../src/main.rs`") && msg.contains("cannot be checked"),
                "{msg}"
            );
        }
    }

    /// Every refusal of a path whose symlinks lead out, for both access modes.
    fn refusals(root: &Path, given: &str) -> Vec<ToolError> {
        [Access::Read, Access::Write]
            .into_iter()
            .map(|a| resolve(root, given, a).unwrap_err())
            .collect()
    }

    #[test]
    fn refusals_never_describe_what_lies_outside() {
        let (root, outside) = setup();
        std::fs::create_dir(outside.path().join("dir")).unwrap();
        symlink(
            outside.path().join("secret.txt"),
            root.path().join("to-file"),
        )
        .unwrap();
        symlink(
            outside.path().join("missing.txt"),
            root.path().join("to-missing"),
        )
        .unwrap();
        symlink(outside.path(), root.path().join("out")).unwrap();
        let hidden = outside.path().display().to_string();
        // Whether the thing outside exists must not change the answer: that would make the
        // refusal a probe of folders outside the project.
        let cases = [
            ("to-file", "to-missing"),
            ("out/dir/x", "out/nodir/x"),
            ("out/dir/../secret.txt", "out/nodir/../secret.txt"),
            ("out/secret.txt", "out/missing.txt"),
        ];
        for (exists, missing) in cases {
            let a = refusals(root.path(), exists);
            let b = refusals(root.path(), missing);
            for (x, y) in a.iter().zip(&b) {
                for e in [x, y] {
                    assert!(matches!(e, ToolError::OutsideProject(_)), "{e}");
                    assert!(!e.to_string().contains(&hidden), "reveals the outside: {e}");
                }
                assert_eq!(
                    x.to_string().replace(exists, "GIVEN"),
                    y.to_string().replace(missing, "GIVEN"),
                    "`{exists}` and `{missing}` are told apart"
                );
            }
        }
    }

    #[test]
    fn dangling_symlink_reads_as_missing() {
        let (root, _outside) = setup();
        // Into the project: one pointing out is refused as outside (see above).
        symlink(root.path().join("gone.txt"), root.path().join("dangling")).unwrap();
        let err = resolve(root.path(), "dangling", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err}");
        assert!(err.to_string().contains("dangling symlink"), "{err}");
    }

    #[test]
    fn backslashes_are_ordinary_characters_on_unix() {
        let (root, _outside) = setup();
        // Not `src/main.rs`: a name in the root that happens to contain a backslash.
        let err = resolve(root.path(), "src\\main.rs", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err}");
        // Not an escape either: `..\..\etc\passwd` is one name.
        let err = resolve(root.path(), "..\\..\\etc\\passwd", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err}");
        let w = resolve(root.path(), "..\\evil.txt", Access::Write).unwrap();
        assert_eq!(w.display, "..\\evil.txt");
        assert_eq!(w.abs.parent().unwrap(), root.path().canonicalize().unwrap());
        std::fs::write(root.path().join("a\\b.txt"), "x").unwrap();
        assert_eq!(
            resolve(root.path(), "a\\b.txt", Access::Read)
                .unwrap()
                .display,
            "a\\b.txt"
        );
    }

    #[test]
    fn an_inaccessible_root_is_named_in_the_error() {
        let (root, _outside) = setup();
        let gone = root.path().join("no-such-project");
        let err = resolve(&gone, "src/main.rs", Access::Read).unwrap_err();
        assert!(matches!(err, ToolError::Failed(_)), "{err}");
        assert!(err.to_string().contains("no-such-project"), "{err}");
    }
}
