//! The TypeScript the UI imports from Rust, so UI and app cannot drift: `ui/src/generated/types.ts`
//! (protocol types, settings types and this crate's command types) and `ui/src/generated/constants.ts`
//! (the values the UI shows or checks against: presets, built-in profile budgets, limits, the
//! wrap-up threshold, the language table).

use canopy_protocol::typescript::export_decl;

use crate::commands::{files, history, models, projects, runs};
use crate::error;

/// Where the generated file lives, relative to this crate's folder.
pub const GENERATED_PATH: &str = "../ui/src/generated/types.ts";

/// Where the generated constants live, relative to this crate's folder.
pub const CONSTANTS_PATH: &str = "../ui/src/generated/constants.ts";

/// Declarations of the app's own command types.
pub fn app_declarations() -> String {
    [
        export_decl::<error::ErrorCode>(),
        export_decl::<error::CommandError>(),
        export_decl::<projects::ProjectInfo>(),
        export_decl::<projects::ProfilesTrust>(),
        export_decl::<projects::RecentProject>(),
        export_decl::<projects::ProfileInfo>(),
        export_decl::<projects::ProfileError>(),
        export_decl::<files::FileWindow>(),
        export_decl::<files::EditorOpened>(),
        export_decl::<files::RecheckedEvidence>(),
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

/// A value as a TypeScript literal (JSON is one).
fn literal(value: &impl serde::Serialize) -> String {
    // Serialising plain data (strings, numbers, derived structs) cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("null /* {e} */"))
}

/// `(key, value)` pairs as an object literal, keys in the table's order.
fn table(pairs: &[(&str, &str)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), serde_json::Value::from(*v)))
        .collect();
    literal(&map)
}

/// The generated constants file. Fails only if the built-in profiles do not validate, which their
/// own tests rule out.
pub fn constants_file() -> Result<String, canopy_runtime::RuntimeError> {
    let profiles = canopy_runtime::profiles::builtin_profiles()?;
    let names: Vec<String> = profiles.iter().map(|p| format!("{:?}", p.name())).collect();
    let builtins: serde_json::Map<String, serde_json::Value> = profiles
        .iter()
        .map(|p| {
            (
                p.name().to_string(),
                serde_json::json!({ "model": p.model(), "budgets": p.budgets() }),
            )
        })
        .collect();
    let wrap_up = canopy_runtime::RuntimeSettings::default().wrap_up_ratio;
    Ok(format!(
        "// Generated from Rust by the canopy-app test `generated_constants_are_current`.\n\
         // Do not edit: change the Rust values and run `CANOPY_BLESS=1 cargo test -p canopy-app generated_constants`.\n\n\
         import type {{ Budgets, EvidenceTrust, ModelSlot, Preset }} from './types';\n\n\
         /** The endpoints the settings screen offers to fill a model slot with (canopy-config `presets()`). */\n\
         export const PRESETS: readonly Preset[] = {presets};\n\n\
         /** Most subagents a run may have going at once: `parallelism` is 1 to this (canopy-config). */\n\
         export const MAX_PARALLELISM = {max_parallelism};\n\n\
         /** Fraction of a budget at which the runtime tells the agent to wrap up (canopy-runtime). */\n\
         export const WRAP_UP_THRESHOLD = {wrap_up};\n\n\
         /** A built-in profile's model slot and budgets before settings overrides (canopy-runtime). */\n\
         export interface BuiltinProfile {{\n  model: ModelSlot;\n  budgets: Budgets;\n}}\n\n\
         /** The built-in profiles: the main agent first, then its subagents. */\n\
         export const BUILTIN_PROFILE_NAMES = [{names}] as const;\n\n\
         export type BuiltinProfileName = (typeof BUILTIN_PROFILE_NAMES)[number];\n\n\
         export const BUILTIN_PROFILES: Readonly<Record<BuiltinProfileName, BuiltinProfile>> = {builtins};\n\n\
         /** Most lines one `read_project_file` call returns (the file viewer loads more as it scrolls). */\n\
         export const MAX_WINDOW_LINES = {max_window_lines};\n\n\
         /** Replay (`load_session`) sends tool outputs up to this many bytes inline; longer ones come as `output_elided`. */\n\
         export const REPLAY_INLINE_OUTPUT_BYTES = {replay_inline};\n\n\
         /** How the app prefixes each `CANOPY_*` override line among its startup warnings (canopy-config). */\n\
         export const ENV_OVERRIDE_WARNING = {env_override};\n\n\
         /** Language ids of whole (lower-cased) file names, tried before the extension (the file viewer's table). */\n\
         export const LANGUAGE_BY_NAME: Readonly<Record<string, string>> = {by_name};\n\n\
         /** Language ids by (lower-cased) extension (the file viewer's table). */\n\
         export const LANGUAGE_BY_EXTENSION: Readonly<Record<string, string>> = {by_ext};\n\n\
         /** What a trust summary line counts the citations that are not grounded as, in order (canopy-protocol `TRUST_LINE_WORDS`). */\n\
         export const TRUST_LINE_WORDS: readonly (readonly [EvidenceTrust, string])[] = {trust_words};\n",
        presets = literal(&canopy_config::presets()),
        max_parallelism = canopy_config::MAX_PARALLELISM,
        wrap_up = literal(&wrap_up),
        names = names.join(", "),
        builtins = literal(&builtins),
        env_override = literal(&canopy_config::ENV_OVERRIDE_WARNING),
        max_window_lines = files::MAX_WINDOW_LINES,
        replay_inline = history::REPLAY_INLINE_OUTPUT_BYTES,
        by_name = table(files::LANGUAGE_BY_NAME),
        by_ext = table(files::LANGUAGE_BY_EXTENSION),
        trust_words = literal(&canopy_protocol::TRUST_LINE_WORDS.to_vec()),
    ))
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
    fn generated_constants_are_current() {
        assert_generated_current(
            CONSTANTS_PATH,
            &constants_file().unwrap(),
            "a preset, built-in budget, limit, threshold or language changed",
            "generated_constants",
        );
    }

    #[test]
    fn constants_carry_the_values_rust_uses() {
        let ts = constants_file().unwrap();
        assert!(ts.contains("export const MAX_PARALLELISM = 16;"), "{ts}");
        assert!(ts.contains("export const WRAP_UP_THRESHOLD = 0.8;"), "{ts}");
        assert!(
            ts.contains(
                r#"export const BUILTIN_PROFILE_NAMES = ["main", "explore", "verify"] as const;"#
            ),
            "{ts}"
        );
        let explore = &canopy_runtime::profiles::EXPLORE_BUDGETS;
        assert!(
            ts.contains(&format!(
                "\"max_total_tokens\": {}",
                explore.max_total_tokens
            )),
            "{ts}"
        );
        assert!(ts.contains(r#""rs": "rust""#), "{ts}");
        assert!(ts.contains("export const MAX_WINDOW_LINES = 5000;"), "{ts}");
        assert!(
            ts.contains("export const REPLAY_INLINE_OUTPUT_BYTES = 256;"),
            "{ts}"
        );
        assert!(
            ts.contains(r#""base_url": "https://api.anthropic.com""#),
            "{ts}"
        );
        assert!(
            ts.contains(
                r#"export const ENV_OVERRIDE_WARNING = "Environment override in effect: ";"#
            ),
            "{ts}"
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
