//! The `#[tauri::command]` functions, one module per area (see `docs/commands.md`).

pub mod files;
pub mod history;
pub mod keys;
pub mod models;
pub mod projects;
pub mod runs;
pub mod settings;
