//! Build script: compiles the Tauri context (config, capabilities, icons) into the binary.
//!
//! `tauri.conf.json` lives at the repository root so people find it next to `ui/` and `icons/`;
//! `src-tauri/tauri.conf.json` is a committed symlink to it. tauri-build and `generate_context!()` read
//! the config from this crate's folder, and the tauri CLI (run with `TAURI_APP_PATH=src-tauri`) needs the
//! config next to a `[package]` manifest, so the symlink serves cargo, `tauri dev`/`build` and bundling
//! alike, where a `config_path("../tauri.conf.json")` override would lock out the CLI.

/// Every command the webview may call. Listing them makes tauri-build generate `allow-<command>`
/// permissions, and turns off Tauri's default of allowing every app command: the capability file then
/// grants exactly these.
const COMMANDS: &[&str] = &[
    "open_project",
    "current_project",
    "list_recent_projects",
    "forget_project",
    "startup_warnings",
    "answer_project_profiles",
    "start_run",
    "send_message",
    "cancel_run",
    "cancel_node",
    "answer_approval",
    "guard_close",
    "list_sessions",
    "load_session",
    "load_tool_output",
    "delete_session",
    "read_project_file",
    "reveal_file",
    "open_in_editor",
    "recheck_evidence",
    "get_settings",
    "save_settings",
    "test_connection",
    "list_models",
    "detect_ollama",
    "set_api_key",
    "delete_api_key",
    "api_key_status",
];

fn main() {
    println!("cargo:rerun-if-changed=../tauri.conf.json");
    println!("cargo:rerun-if-changed=capabilities");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .unwrap_or_else(|e| panic!("tauri build step failed: {e:#}"));
}
