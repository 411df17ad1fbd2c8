//! `canopy [FOLDER]`: starts the desktop app, opening FOLDER as the project when given.
//! `canopy --version` / `canopy --help` answer without starting it.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Before single-instance: `canopy --version` with the app already open must answer here, not hand
    // its arguments to the running app.
    let args: Vec<String> = std::env::args().collect();
    if let Some(answer) = canopy_app::cli_answer(&args) {
        println!("{answer}");
        return;
    }
    // Before GTK starts: WebKit reads its compositing switch once, at start-up.
    if let Some(warning) = canopy_app::render::apply() {
        eprintln!("canopy: {warning}");
    }
    if let Err(e) = canopy_app::run() {
        if canopy_app::instance_was_closing(&e.to_string()) {
            restart_after_closing_instance(&args);
        }
        eprintln!("canopy: {e}");
        std::process::exit(1);
    }
}

/// A launch in the instant another Canopy is closing finds its D-Bus name still taken, but nobody
/// answers the hand-over (`NoReply`), and the single-instance plugin gives up. Left alone, the app
/// would not open at all (a person who closes and at once reopens it from the menu sees nothing), so
/// it starts itself again a little later, when the old instance has let go of the name: by then the
/// launch either becomes the running instance or hands its folder to a new one. At most 20 tries
/// (about 5 s); the process keeps its id, so whatever waits on it is not confused.
#[cfg(unix)]
fn restart_after_closing_instance(args: &[String]) {
    use std::os::unix::process::CommandExt;
    const TRIES: &str = "CANOPY_START_RETRY";
    let tried: u32 = std::env::var(TRIES)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if tried >= 20 {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    std::thread::sleep(std::time::Duration::from_millis(250));
    let err = std::process::Command::new(exe)
        .args(args.iter().skip(1))
        .env(TRIES, (tried + 1).to_string())
        .exec();
    eprintln!("canopy: could not start again after another instance closed: {err}");
}

#[cfg(not(unix))]
fn restart_after_closing_instance(_args: &[String]) {}
