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
        eprintln!("canopy: {e}");
        std::process::exit(1);
    }
}
