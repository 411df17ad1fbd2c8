//! After-the-fact proof that a read-only subagent changed nothing: a snapshot of the project's files
//! (size and modification time) before the child runs, compared with one taken after.
//!
//! The walk covers everything a child could touch in the project: ignored files (`.env`, `build/`,
//! `target/`) and `.git/` included, symlinks not followed, the trace folder left out. Its cost is
//! bounded: it stops after [`MAX_SNAPSHOT_FILES`] files (in file-name order, so both walks stop at
//! the same place on an unchanged tree); past that, only files present in both snapshots are
//! compared, and the snapshot says it is partial.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Files recorded per snapshot at most. A walk of this many takes well under a second on a local
/// disk; trees bigger than that (a `node_modules` or `target/` of hundreds of thousands of files)
/// are covered up to it.
pub const MAX_SNAPSHOT_FILES: usize = 200_000;

/// Size and mtime of every file in the project, and whether the walk saw all of them (`false` when
/// it stopped at [`MAX_SNAPSHOT_FILES`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(BTreeMap<String, (u64, Option<SystemTime>)>, bool);

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot(BTreeMap::new(), true)
    }
}

impl Snapshot {
    /// Walks the project.
    pub fn take(root: &Path) -> Snapshot {
        Snapshot::take_excluding(root, None)
    }

    /// Walks the project, leaving out `exclude` (the trace folder, when it lies inside the project:
    /// traces grow while a child runs, which is not the child's doing).
    pub fn take_excluding(root: &Path, exclude: Option<&Path>) -> Snapshot {
        Snapshot::take_cancellable(root, exclude, &|| false).unwrap_or_default()
    }

    /// Like [`Snapshot::take_excluding`], but gives up (`None`) as soon as `stop` says so: a walk
    /// of a big tree takes seconds, which a cancel must not wait for.
    pub fn take_cancellable(
        root: &Path,
        exclude: Option<&Path>,
        stop: &dyn Fn() -> bool,
    ) -> Option<Snapshot> {
        Snapshot::take_limited(root, exclude, stop, MAX_SNAPSHOT_FILES)
    }

    fn take_limited(
        root: &Path,
        exclude: Option<&Path>,
        stop: &dyn Fn() -> bool,
        limit: usize,
    ) -> Option<Snapshot> {
        let mut files = BTreeMap::new();
        let exclude = exclude.map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |e| exclude.as_deref().is_none_or(|x| !e.path().starts_with(x)))
            .build();
        let mut complete = true;
        for entry in walk.flatten() {
            if stop() {
                return None;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if files.len() >= limit {
                complete = false;
                break;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .replace('\\', "/");
            files.insert(rel, (meta.len(), meta.modified().ok()));
        }
        Some(Snapshot(files, complete))
    }

    /// Whether the walk saw every file (it stops at [`MAX_SNAPSHOT_FILES`]).
    pub fn complete(&self) -> bool {
        self.1
    }

    /// Paths added, removed or modified between `self` (before) and `after`. When either walk
    /// stopped at the limit, a path seen by only one of them proves nothing, so only modifications
    /// are reported.
    pub fn changes(&self, after: &Snapshot) -> Vec<String> {
        let both_complete = self.1 && after.1;
        let mut out = Vec::new();
        for (path, meta) in &self.0 {
            match after.0.get(path) {
                None if both_complete => out.push(format!("{path} (removed)")),
                Some(m) if m != meta => out.push(format!("{path} (modified)")),
                _ => {}
            }
        }
        if both_complete {
            for path in after.0.keys() {
                if !self.0.contains_key(path) {
                    out.push(format!("{path} (added)"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_added_modified_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("b.txt"), "b").unwrap();
        let before = Snapshot::take(dir.path());
        assert!(before.changes(&Snapshot::take(dir.path())).is_empty());
        std::fs::write(dir.path().join("a.txt"), "changed").unwrap();
        std::fs::remove_file(dir.path().join("b.txt")).unwrap();
        std::fs::write(dir.path().join("c.txt"), "c").unwrap();
        let mut changes = before.changes(&Snapshot::take(dir.path()));
        changes.sort();
        assert_eq!(
            changes,
            ["a.txt (modified)", "b.txt (removed)", "c.txt (added)"]
        );
    }

    #[test]
    fn ignored_files_and_git_are_covered_and_a_partial_walk_reports_only_modifications() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("build")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n.env\n").unwrap();
        std::fs::write(dir.path().join(".env"), "A=1").unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        std::fs::write(dir.path().join("build/out.o"), "o").unwrap();
        let before = Snapshot::take(dir.path());
        assert!(before.complete());
        std::fs::write(dir.path().join(".env"), "A=changed").unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "evil ref").unwrap();
        std::fs::write(dir.path().join("build/new.o"), "n").unwrap();
        let mut changes = before.changes(&Snapshot::take(dir.path()));
        changes.sort();
        assert_eq!(
            changes,
            [
                ".env (modified)",
                ".git/HEAD (modified)",
                "build/new.o (added)"
            ]
        );

        // Two files of four: the walk stops in name order, so both stop at the same place.
        let small = |d: &Path| Snapshot::take_limited(d, None, &|| false, 2).unwrap();
        let before = small(dir.path());
        assert!(!before.complete());
        std::fs::write(dir.path().join(".env"), "A=changed again").unwrap();
        std::fs::write(dir.path().join("build/newer.o"), "n").unwrap();
        assert_eq!(before.changes(&small(dir.path())), [".env (modified)"]);
    }

    #[test]
    fn a_stopped_walk_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        assert_eq!(Snapshot::take_cancellable(dir.path(), None, &|| true), None);
        let full = Snapshot::take_cancellable(dir.path(), None, &|| false).unwrap();
        assert_eq!(full, Snapshot::take(dir.path()));
        assert!(!full.0.is_empty());
    }
}
