//! `canopy [FOLDER]`: starts the desktop app, opening FOLDER as the project when given.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Before GTK starts: WebKit reads its compositing switch once, at start-up.
    if let Some(warning) = canopy_app::render::apply() {
        eprintln!("canopy: {warning}");
    }
    if let Err(e) = canopy_app::run() {
        eprintln!("canopy: {e}");
        std::process::exit(1);
    }
}
