//! The project walk shared by Grep and Glob: one `ignore` configuration (so both tools agree on
//! which files exist), one parallel file visitor that stops when the call is cancelled, and one way
//! to run the blocking walk off the async runtime while answering a cancel at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use crate::secrets::SecretFiles;
use crate::{ToolContext, ToolError, ToolOutput};

/// Gitignore rules apply even outside a git repository, hidden files are skipped, `glob` (if
/// any) whitelists file names like `rg -g`, and secret files (relative to `root`) are never
/// visited; a search started on one is refused.
pub(crate) fn walk_builder(
    start: &Path,
    glob: Option<&str>,
    root: &Path,
    secrets: &Arc<SecretFiles>,
) -> Result<WalkBuilder, ToolError> {
    if let Ok(rel) = start.strip_prefix(root) {
        if let Some(pattern) = secrets.withheld(rel) {
            return Err(ToolError::Refused(crate::secrets::refusal(
                &crate::paths::display_rel(rel),
                pattern,
            )));
        }
    }
    let mut builder = WalkBuilder::new(start);
    let (root_owned, skip) = (root.to_path_buf(), Arc::clone(secrets));
    builder.filter_entry(move |entry| !skip.withheld_abs(&root_owned, entry.path()));
    builder
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .threads(threads());
    if let Some(glob) = glob {
        let mut overrides = ignore::overrides::OverrideBuilder::new(start);
        overrides
            .add(glob)
            .map_err(|e| ToolError::InvalidArguments(format!("field `glob`: {e}")))?;
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::InvalidArguments(format!("field `glob`: {e}")))?;
        builder.overrides(overrides);
    }
    Ok(builder)
}

/// Same thread count ripgrep picks: one per core, at most 12.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(12)
}

/// Walks in parallel and hands every regular file to a visitor; `new_visitor` runs once per walker
/// thread, so per-thread state (a searcher, a local result buffer) lives in the visitor and is
/// dropped when that thread finishes. Unreadable entries are skipped, as `rg` does.
pub(crate) fn visit_files<'s, F, V>(
    builder: &WalkBuilder,
    cancel: &'s CancellationToken,
    mut new_visitor: F,
) where
    F: FnMut() -> V,
    V: FnMut(&DirEntry) + Send + 's,
{
    builder.build_parallel().run(|| {
        let mut visit = new_visitor();
        Box::new(move |entry| {
            // The caller stops waiting on cancel; this stops the walk itself soon after.
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            visit(&entry);
            WalkState::Continue
        })
    });
}

/// Runs `search(root, cancel)` on the blocking pool. A cancel returns `Cancelled` at once; the
/// search sees the same token and winds down on its own.
pub(crate) async fn run_cancellable<F>(
    ctx: &ToolContext,
    what: &str,
    search: F,
) -> Result<ToolOutput, ToolError>
where
    F: FnOnce(&Path, &CancellationToken) -> Result<ToolOutput, ToolError> + Send + 'static,
{
    // Already cancelled: say so, rather than race a search that quits at once with "no matches".
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let root: PathBuf = ctx.root.clone();
    let cancel = ctx.cancel.clone();
    let stop = cancel.clone();
    let task = tokio::task::spawn_blocking(move || search(&root, &stop));
    tokio::select! {
        res = task => res.map_err(|e| ToolError::Failed(format!("{what} task failed: {e}")))?,
        _ = cancel.cancelled() => Err(ToolError::Cancelled),
    }
}
