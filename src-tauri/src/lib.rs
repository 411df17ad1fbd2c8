//! Canopy's desktop shell: a thin Tauri v2 layer that exposes the runtime, settings, keys and project
//! files to the webview as commands (contract: `docs/commands.md`) and streams trace events to it.
//! No agent logic lives here.

pub mod commands;
pub mod error;
pub mod render;
pub mod state;
pub mod typescript;

use tauri::{Emitter, Manager, Runtime};

pub use error::{CommandError, CommandResult, ErrorCode};
pub use state::{AppSetup, AppState};

/// Event emitted to the webview when a second `canopy FOLDER` opens a folder in the running app;
/// the payload is the `ProjectInfo`.
pub const PROJECT_OPENED_EVENT: &str = "project_opened";
/// Emitted with a message when something the person asked for outside the window failed (a second
/// `canopy FOLDER` naming a folder that cannot be opened).
pub const APP_WARNING_EVENT: &str = "app_warning";

/// The command handler, shared by the app and the tests.
pub fn invoke_handler<R: Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![
        commands::projects::open_project,
        commands::projects::current_project,
        commands::projects::list_recent_projects,
        commands::projects::forget_project,
        commands::projects::startup_warnings,
        commands::projects::answer_project_profiles,
        commands::files::read_project_file,
        commands::files::reveal_file,
        commands::files::open_in_editor,
        commands::files::recheck_evidence,
        commands::settings::get_settings,
        commands::settings::save_settings,
        commands::keys::set_api_key,
        commands::keys::delete_api_key,
        commands::keys::api_key_status,
        commands::models::test_connection,
        commands::models::list_models,
        commands::models::detect_ollama,
        commands::runs::start_run,
        commands::runs::send_message,
        commands::runs::cancel_run,
        commands::runs::cancel_node,
        commands::runs::answer_approval,
        commands::runs::guard_close,
        commands::history::list_sessions,
        commands::history::load_session,
        commands::history::load_tool_output,
        commands::history::delete_session,
    ]
}

/// Adds the state, the plugins commands rely on, and the commands to `builder`. `run()` passes a
/// builder that already holds the desktop-only plugins; tests pass `tauri::test::mock_builder()`.
pub fn setup<R: Runtime>(builder: tauri::Builder<R>, state: AppState) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_opener::init())
        .manage(state)
        .invoke_handler(invoke_handler())
        .on_page_load(|webview, payload| {
            // A new page has no close-requested listener until it registers one again.
            if payload.event() == tauri::webview::PageLoadEvent::Started {
                webview.state::<AppState>().set_close_guarded(false);
            }
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                // The page closed the window itself (after asking). A run it did not stop, or that did
                // not end within the page's wait, is cancelled here and given the same grace, so its
                // trace ends `cancelled`, not `interrupted`, before the process exits.
                let state = window.state::<AppState>();
                if state.runs().cancel_all("window_closed") > 0 {
                    tauri::async_runtime::block_on(state.runs().wait_idle(CLOSE_GRACE));
                }
                return;
            }
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                let state = window.state::<AppState>();
                // The page's close-requested listener already kept the window open (Tauri prevents
                // the close when one is registered); it asks the person and closes it itself.
                if state.close_guarded() {
                    return;
                }
                if state.runs().cancel_all("window_closed") == 0 {
                    return;
                }
                // Keep the window (and the process) alive until the runs have written their
                // `cancel_requested` / `run_ended`, so their traces do not read as interrupted.
                api.prevent_close();
                let window = window.clone();
                tauri::async_runtime::spawn(async move {
                    let state = window.state::<AppState>();
                    state.runs().wait_idle(CLOSE_GRACE).await;
                    let _ = window.destroy();
                });
            }
        })
}

/// How long closing the window waits for cancelled runs to finish their traces.
pub const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// What `canopy --version` prints: the name and the version the package was built as.
pub const VERSION_LINE: &str = concat!("canopy ", env!("CARGO_PKG_VERSION"));

/// The answer to `canopy --version` / `--help` (printed without starting the app), or `None` to start.
pub fn cli_answer(args: &[String]) -> Option<String> {
    let flag = args.iter().skip(1).find(|a| a.starts_with('-'))?;
    match flag.as_str() {
        "--version" | "-V" => Some(VERSION_LINE.to_string()),
        "--help" | "-h" => Some(format!(
            "{VERSION_LINE}\nUsage: canopy [FOLDER]\n\nOpens the Canopy window; FOLDER (if given) is opened as the project. \
             With Canopy already open, the folder opens in that window instead.\n\
             \n  -V, --version  print the version and exit\n  -h, --help     print this help and exit"
        )),
        _ => None,
    }
}

/// Whether a start-up error is the single-instance plugin failing to hand this launch to an instance
/// that was closing (its D-Bus name still taken, no answer): such a launch should simply start again.
pub fn instance_was_closing(error: &str) -> bool {
    error.contains("single-instance")
        && error.contains("failed to forward arguments to the running instance")
        && (error.contains("NoReply")
            || error.contains("ServiceUnknown")
            || error.contains("UnknownObject"))
}

/// The folder given on the command line (`canopy [FOLDER]`), ignoring flags.
fn folder_argument(args: &[String]) -> Option<&str> {
    args.iter()
        .skip(1)
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

/// Opens the command-line folder, turning failure into a startup warning: the app should still start.
pub fn open_initial_project(state: &AppState, args: &[String]) {
    if let Some(folder) = folder_argument(args) {
        if let Err(e) = commands::projects::open(state, folder) {
            state.warn(format!("Could not open {folder}: {}", e.message));
        }
    }
}

/// Starts the desktop app.
pub fn run() -> Result<(), Box<dyn std::error::Error>> {
    let state = AppState::new(AppSetup::from_environment()?);
    let args: Vec<String> = std::env::args().collect();
    open_initial_project(&state, &args);

    // Single-instance must be registered first so a second launch exits before doing anything.
    let builder =
        tauri::Builder::default().plugin(tauri_plugin_single_instance::init(|app, argv, cwd| {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.set_focus();
            }
            let Some(folder) = folder_argument(&argv) else {
                return;
            };
            // A relative folder is relative to where the second `canopy` was started.
            let folder = std::path::Path::new(&cwd).join(folder);
            let state = app.state::<AppState>();
            match commands::projects::open(&state, &folder.display().to_string()) {
                Ok(info) => {
                    let _ = app.emit(PROJECT_OPENED_EVENT, info);
                }
                Err(e) => {
                    let message = format!("Could not open {}: {}", folder.display(), e.message);
                    let _ = app.emit(APP_WARNING_EVENT, message.clone());
                    state.warn(message);
                }
            }
        }));
    setup(builder, state)
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .run(tauri::generate_context!())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::instance_was_closing;

    fn source(path: &str) -> String {
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
            .unwrap()
    }

    /// A command registered in the handler but missing from `build.rs` or the capability answers the
    /// webview with "not allowed"; one granted but not registered is a dead permission.
    #[test]
    fn handler_manifest_and_capability_list_the_same_commands() {
        let lib = source("src/lib.rs");
        let handler = &lib[lib.find("generate_handler![").unwrap()..];
        let handler: BTreeSet<String> = handler[..handler.find(']').unwrap()]
            .split(',')
            .filter_map(|entry| entry.trim().rsplit("::").next())
            .filter(|name| !name.is_empty() && !name.contains('!') && !name.contains('['))
            .map(str::to_string)
            .collect();
        let build = source("build.rs");
        let manifest: BTreeSet<String> = build
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.strip_suffix("\","))
            .map(str::to_string)
            .collect();
        let capability: serde_json::Value =
            serde_json::from_str(&source("capabilities/main.json")).unwrap();
        let granted: BTreeSet<String> = capability["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
            .map(|p| p.replace('-', "_"))
            .collect();
        assert_eq!(handler.len(), 28, "{handler:?}");
        assert_eq!(
            handler, manifest,
            "build.rs COMMANDS differs from the handler"
        );
        assert_eq!(
            handler, granted,
            "capabilities/main.json differs from the handler"
        );
        let others: Vec<&str> = capability["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str())
            .filter(|p| !p.starts_with("allow-"))
            .collect();
        assert_eq!(
            others,
            [
                "core:event:default",
                "dialog:allow-open",
                // The page closes its own window after asking (closing with a run going or unsaved
                // settings); `close` raises the same close request as the title bar.
                "core:window:allow-destroy",
                "core:window:allow-close",
                // About shows the version the package was built as.
                "core:app:allow-version"
            ],
            "no fs or shell access"
        );
    }

    #[test]
    fn a_launch_racing_a_closing_instance_is_told_apart_from_other_start_up_errors() {
        // The words the single-instance plugin (2.5) fails with when the old instance is closing.
        assert!(instance_was_closing(
            "failed to initialize plugin `single-instance`: failed to forward arguments to the running \
             instance: org.freedesktop.DBus.Error.NoReply: Message recipient disconnected from message \
             bus without replying"
        ));
        assert!(!instance_was_closing(
            "failed to initialize plugin `single-instance`: failed to forward arguments to the running \
             instance: org.freedesktop.DBus.Error.AccessDenied: denied"
        ));
        assert!(!instance_was_closing("the settings file is not valid JSON"));
    }

    #[test]
    fn version_and_help_answer_without_starting_the_app() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let version = format!("canopy {}", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            super::cli_answer(&args(&["canopy", "--version"])),
            Some(version.clone())
        );
        assert_eq!(super::cli_answer(&args(&["canopy", "-V"])), Some(version));
        let help = super::cli_answer(&args(&["canopy", "--help"])).unwrap();
        assert!(help.contains("Usage: canopy [FOLDER]"), "{help}");
        assert_eq!(super::cli_answer(&args(&["canopy"])), None);
        assert_eq!(super::cli_answer(&args(&["canopy", "/some/project"])), None);
        // Flags the app does not know (e.g. ones a desktop environment adds) still start it.
        assert_eq!(
            super::cli_answer(&args(&["canopy", "--unknown", "proj"])),
            None
        );
    }

    /// The packages and the release workflow (tauri-action) take the version from tauri.conf.json,
    /// `canopy --version` and About from Cargo.toml: a release must not carry two.
    #[test]
    fn the_package_version_is_the_crate_version() {
        let conf: serde_json::Value = serde_json::from_str(&source("tauri.conf.json")).unwrap();
        assert_eq!(conf["version"], env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn the_folder_argument_skips_flags() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(super::folder_argument(&args(&["canopy"])), None);
        assert_eq!(
            super::folder_argument(&args(&["canopy", "--verbose", "proj"])),
            Some("proj")
        );
    }
}
