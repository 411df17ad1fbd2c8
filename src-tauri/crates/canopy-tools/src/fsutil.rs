//! File-system helpers shared by the tools: content hashing for staleness checks and atomic writes
//! (temp file in the same directory, then rename) so a crash never leaves a half-written file.

use std::hash::Hasher;
use std::io::Write;
use std::path::Path;

use crate::ToolError;

/// Hash of a file's content, used to notice that a file changed since the agent read it.
pub(crate) fn content_hash(bytes: &[u8]) -> u64 {
    // SipHash with fixed keys: stable within the process, which is all a session needs.
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

/// Writes `bytes` to `path` atomically. An existing file keeps its permissions.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], display: &str) -> Result<(), ToolError> {
    let dir = path
        .parent()
        .ok_or_else(|| ToolError::Failed(format!("`{display}` has no parent directory")))?;
    let io_err = |what: &str, err: std::io::Error| {
        ToolError::Failed(format!("could not write `{display}` ({what}): {err}"))
    };
    let existing_perms = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| io_err("creating a temporary file", e))?;
    tmp.write_all(bytes)
        .map_err(|e| io_err("writing the temporary file", e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| io_err("syncing the temporary file", e))?;
    let perms = match existing_perms {
        Some(perms) => perms,
        None => {
            // tempfile creates 0600; a new project file should get the usual 0644 (minus umask is
            // not observable without unsafe code, so use the common default).
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    std::fs::set_permissions(tmp.path(), perms).map_err(|e| io_err("setting permissions", e))?;
    tmp.persist(path)
        .map_err(|e| io_err("renaming into place", e.error))?;
    Ok(())
}

/// Files up to this size are scanned to the end on a piecewise read, so the total line count is
/// exact and the read records a stamp Edit and Write accept. Bigger files are read only up to the
/// last requested line: a piece of a multi-GB log costs what the piece costs, not the whole file.
/// Kept here, beside the check Edit and Write make with it, so Read and they share one number.
pub const MAX_FULL_SCAN_BYTES: u64 = 64 * 1024 * 1024;

/// Edit and Write hold the whole file in memory and compare it with what Read saw; Read does not
/// scan files over [`MAX_FULL_SCAN_BYTES`] to the end, so those are refused up front rather than
/// loaded.
pub(crate) fn refuse_too_big_to_change(
    display: &str,
    meta: &std::fs::Metadata,
) -> Result<(), ToolError> {
    let cap = MAX_FULL_SCAN_BYTES;
    if meta.len() > cap {
        return Err(ToolError::Refused(format!(
            "`{display}` is {}, over the {} limit for Edit and Write; change it with Bash (e.g. sed) instead",
            crate::truncate::human_bytes(meta.len()),
            crate::truncate::human_bytes(cap)
        )));
    }
    Ok(())
}

/// Refuses to change a file the agent has not read in this session, or that changed on disk since
/// it last read it, so edits never overwrite work the agent has not seen. Only a change of content
/// counts: a bare `touch` (new mtime, same bytes) loses nothing.
pub(crate) fn check_fresh(
    session: &crate::SessionFiles,
    abs: &Path,
    display: &str,
    current: &[u8],
    meta: &std::fs::Metadata,
) -> Result<(), ToolError> {
    let Some(seen) = session.get(abs) else {
        return Err(ToolError::Refused(format!(
            "`{display}` has not been Read in this session; Read it first so the change is based on its current content"
        )));
    };
    let now = crate::FileStamp::of(current, meta);
    if now.size != seen.size {
        return Err(ToolError::Refused(format!(
            "`{display}` changed since it was last read (size {} → {} bytes); Read it again before changing it",
            seen.size, now.size
        )));
    }
    if now.hash != seen.hash {
        let mtime_note = if now.mtime != seen.mtime {
            "modification time and content differ"
        } else {
            "content differs, same size and modification time"
        };
        return Err(ToolError::Refused(format!(
            "`{display}` changed since it was last read ({mtime_note}); Read it again before changing it"
        )));
    }
    Ok(())
}

/// How the temporary file of an atomic write is named (a random suffix follows).
pub const TEMP_PREFIX: &str = ".canopy-write-";

/// A temporary file older than this is stale: a write holds one for milliseconds, so an older one
/// was left by a process killed mid-write, not by a write still going on in another run.
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Entries the stale-file sweep looks at before it stops: it runs at every session start, so its
/// cost on a huge tree must stay bounded (about a second at most).
pub const STALE_SWEEP_MAX_ENTRIES: usize = 200_000;

/// Removes the temporary files (`.canopy-write-*`) that an atomic write left behind when its
/// process was killed between creating and renaming them, anywhere in the project (ignored folders
/// included, `.git/` excepted, symlinks not followed). Only regular files older than
/// [`STALE_TEMP_AGE`] are removed. Returns the project-relative paths removed, for a notice.
pub fn remove_stale_temp_files(root: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let now = std::time::SystemTime::now();
    for entry in walk.flatten().take(STALE_SWEEP_MAX_ENTRIES) {
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX)
        {
            continue;
        }
        let old = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age >= STALE_TEMP_AGE);
        if old && std::fs::remove_file(entry.path()).is_ok() {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            removed.push(crate::paths::display_rel(rel));
        }
    }
    removed.sort();
    removed
}
