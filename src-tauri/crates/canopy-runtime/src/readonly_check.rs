//! After-the-fact proof that a read-only subagent changed nothing: a snapshot of the project's files
//! (size and modification time) before the child runs, compared with one taken after.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Size and mtime of every file the walk sees (`.git/` excluded; ignored files included only if they
/// are not under an ignored directory, to keep the walk cheap on large trees).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot(BTreeMap<String, (u64, Option<SystemTime>)>);

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
        let mut files = BTreeMap::new();
        let exclude = exclude.map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
        let walk = ignore::WalkBuilder::new(root)
            .hidden(false)
            .git_ignore(true)
            .require_git(false)
            .filter_entry(move |e| {
                e.file_name() != ".git"
                    && exclude.as_deref().is_none_or(|x| !e.path().starts_with(x))
            })
            .build();
        for entry in walk.flatten() {
            if stop() {
                return None;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
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
        Some(Snapshot(files))
    }

    /// Paths added, removed or modified between `self` (before) and `after`.
    pub fn changes(&self, after: &Snapshot) -> Vec<String> {
        let mut out = Vec::new();
        for (path, meta) in &self.0 {
            match after.0.get(path) {
                None => out.push(format!("{path} (removed)")),
                Some(m) if m != meta => out.push(format!("{path} (modified)")),
                _ => {}
            }
        }
        for path in after.0.keys() {
            if !self.0.contains_key(path) {
                out.push(format!("{path} (added)"));
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
    fn a_stopped_walk_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        assert_eq!(Snapshot::take_cancellable(dir.path(), None, &|| true), None);
        let full = Snapshot::take_cancellable(dir.path(), None, &|| false).unwrap();
        assert_eq!(full, Snapshot::take(dir.path()));
        assert!(!full.0.is_empty());
    }
}
