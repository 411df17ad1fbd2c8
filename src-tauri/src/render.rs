//! How WebKitGTK draws the window. Its GL compositing is the fast path on a real GPU, but without one
//! (a VM, a remote desktop, Xvfb) Mesa runs that GL on the CPU (llvmpipe): every changed frame then
//! costs about 55 ms of CPU and a live run of 500 subagents drops to ~20 fps, while drawing without
//! compositing costs about 6 ms a frame (docs/benchmarks.md, "Live stream"). So compositing is turned
//! off when the machine has no GPU render node, unless the person chose otherwise.

use std::path::Path;

/// The variable a person sets to choose: `auto` (the default), `on` (WebKit's own default) or `off`.
pub const CHOICE_VAR: &str = "CANOPY_WEBKIT_COMPOSITING";
/// WebKitGTK's own switch; when it is already set, it is left exactly as the person set it.
pub const WEBKIT_VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Whether to turn WebKit's compositing off, from the person's choice (`CANOPY_WEBKIT_COMPOSITING`),
/// whether they set WebKit's own variable, and whether a GPU render node exists. An unknown choice is
/// an error naming the accepted values; the caller falls back to `auto`.
pub fn disable_compositing(
    choice: Option<&str>,
    webkit_var_set: bool,
    has_render_node: bool,
) -> Result<bool, String> {
    if webkit_var_set {
        return Ok(false);
    }
    match choice.map(str::trim).unwrap_or("") {
        "" | "auto" => Ok(!has_render_node),
        "on" => Ok(false),
        "off" => Ok(true),
        other => Err(format!(
            "{CHOICE_VAR}={other:?} is not one of auto, on, off; using auto"
        )),
    }
}

/// True when `dri` (normally `/dev/dri`) holds a render node (`renderD*`): a GPU WebKit can composite on.
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Applies the decision to this process's environment before GTK and WebKit start (they read it once,
/// and the web process inherits it). Returns a warning to print when the choice was not understood.
pub fn apply() -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let choice = std::env::var(CHOICE_VAR).ok();
    let webkit_set = std::env::var_os(WEBKIT_VAR).is_some();
    let gpu = has_render_node(Path::new("/dev/dri"));
    let (off, warning) = match disable_compositing(choice.as_deref(), webkit_set, gpu) {
        Ok(off) => (off, None),
        Err(w) => (
            disable_compositing(None, webkit_set, gpu).unwrap_or(false),
            Some(w),
        ),
    };
    if off {
        // Called from `main` before any thread exists, so nothing reads the environment concurrently.
        std::env::set_var(WEBKIT_VAR, "1");
    }
    warning
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_turns_compositing_off_only_without_a_gpu() {
        assert_eq!(disable_compositing(None, false, false), Ok(true));
        assert_eq!(disable_compositing(None, false, true), Ok(false));
        assert_eq!(disable_compositing(Some("auto"), false, false), Ok(true));
        assert_eq!(disable_compositing(Some(" auto "), false, true), Ok(false));
    }

    #[test]
    fn an_explicit_choice_wins_over_the_gpu_check() {
        assert_eq!(disable_compositing(Some("on"), false, false), Ok(false));
        assert_eq!(disable_compositing(Some("off"), false, true), Ok(true));
    }

    #[test]
    fn webkits_own_variable_is_left_alone() {
        for choice in [None, Some("off"), Some("on"), Some("bogus")] {
            assert_eq!(
                disable_compositing(choice, true, false),
                Ok(false),
                "{choice:?}"
            );
        }
    }

    #[test]
    fn an_unknown_choice_names_the_accepted_values() {
        let err = disable_compositing(Some("fast"), false, false).unwrap_err();
        assert!(err.contains("CANOPY_WEBKIT_COMPOSITING=\"fast\""), "{err}");
        assert!(err.contains("auto, on, off"), "{err}");
    }

    #[test]
    fn render_nodes_are_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_render_node(dir.path()));
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(
            !has_render_node(dir.path()),
            "a card node alone is not a render node"
        );
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(has_render_node(dir.path()));
        assert!(!has_render_node(&dir.path().join("missing")));
    }
}
