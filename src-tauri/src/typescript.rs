//! The one TypeScript file the UI imports (`ui/src/generated/types.ts`): protocol types, settings
//! types and this crate's command types, all generated from Rust so UI and app cannot drift.

use canopy_protocol::typescript::export_decl;

use crate::commands::{files, history, models, projects, runs};
use crate::{error, profiles};

/// Where the generated file lives, relative to this crate's folder.
pub const GENERATED_PATH: &str = "../ui/src/generated/types.ts";

/// Declarations of the app's own command types.
pub fn app_declarations() -> String {
    [
        export_decl::<error::ErrorCode>(),
        export_decl::<error::CommandError>(),
        export_decl::<projects::ProjectInfo>(),
        export_decl::<projects::RecentProject>(),
        export_decl::<profiles::ProfileInfo>(),
        export_decl::<profiles::ProfileError>(),
        export_decl::<files::FileWindow>(),
        export_decl::<files::EditorOpened>(),
        export_decl::<models::ConnectionTest>(),
        export_decl::<models::OllamaStatus>(),
        export_decl::<runs::RunHandle>(),
        // The runtime's answer type has no TypeScript derive; its wire form is these three strings.
        "export type ApprovalAnswer = \"allow_once\" | \"allow_session\" | \"deny\";\n".to_string(),
        export_decl::<history::SessionSummary>(),
        export_decl::<history::SessionState>(),
    ]
    .concat()
}

/// The whole generated file.
pub fn generated_file() -> String {
    format!(
        "// Generated from the Rust types by the canopy-app test `generated_types_are_current`.\n\
         // Do not edit: change the Rust types and run `CANOPY_BLESS=1 cargo test -p canopy-app generated_types`.\n\n\
         // ---- canopy-protocol ----\n{}\n// ---- canopy-config ----\n{}\n// ---- canopy-app commands ----\n{}",
        canopy_protocol::typescript::protocol_declarations(),
        canopy_config::settings_declarations(),
        app_declarations()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_types_are_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GENERATED_PATH);
        let expected = generated_file();
        if std::env::var_os("CANOPY_BLESS").is_some() {
            std::fs::write(&path, &expected).unwrap();
            return;
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            actual == expected,
            "{} is stale: the Rust types changed. Regenerate it with \
             `CANOPY_BLESS=1 cargo test -p canopy-app generated_types` and commit the result.",
            path.display()
        );
    }

    #[test]
    fn declarations_name_every_command_type() {
        let ts = generated_file();
        for name in [
            "export type CommandError",
            "export type ProjectInfo",
            "export type FileWindow",
            "export type Settings",
            "export type KeyStatus",
            "export type TraceRecord",
            "export type ConnectionTest",
        ] {
            assert!(ts.contains(name), "missing {name}");
        }
        assert!(!ts.contains("bigint"));
    }
}
