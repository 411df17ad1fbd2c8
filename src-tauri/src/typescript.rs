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
        export_decl::<projects::ProfilesTrust>(),
        export_decl::<projects::RecentProject>(),
        export_decl::<profiles::ProfileInfo>(),
        export_decl::<profiles::ProfileError>(),
        export_decl::<files::FileWindow>(),
        export_decl::<files::EditorOpened>(),
        export_decl::<models::ConnectionTest>(),
        export_decl::<canopy_providers::ModelListing>(),
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
         // ---- canopy-protocol ----\n{}\n// ---- canopy-config ----\n{}\n// ---- canopy-runtime ----\n{}\n// ---- canopy-app commands ----\n{}",
        canopy_protocol::typescript::protocol_declarations(),
        canopy_config::settings_declarations(),
        canopy_runtime::registry::typescript_declarations(),
        app_declarations()
    )
}

/// Checks that a file the UI reads, generated from Rust (`relative` to this crate's folder), holds
/// `expected`; with `CANOPY_BLESS` set it writes it instead. `why` says what changed and `test` names
/// the test to re-run, for the failure message.
#[cfg(test)]
pub(crate) fn assert_generated_current(relative: &str, expected: &str, why: &str, test: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var_os("CANOPY_BLESS").is_some() {
        if let Err(e) = std::fs::write(&path, expected) {
            panic!("cannot write {}: {e}", path.display());
        }
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is stale: {why}. Regenerate it with `CANOPY_BLESS=1 cargo test -p canopy-app {test}` \
         and commit the result.",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_types_are_current() {
        assert_generated_current(
            GENERATED_PATH,
            &generated_file(),
            "the Rust types changed",
            "generated_types",
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
