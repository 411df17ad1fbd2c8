//! TypeScript declarations for the UI, generated from the Rust types so the two cannot drift.
//! Other crates (settings, app commands) append their own declarations with [`export_decl`]; the app's
//! test writes the concatenation to `ui/src/generated/` and fails when the checked-in file is stale.

use ts_rs::{Config, TS};

/// The ts-rs configuration used for every declaration: 64-bit integers become `number` because they
/// travel as JSON numbers and stay far below 2^53 (token counts, milliseconds, byte sizes).
pub fn config() -> Config {
    Config::new().with_large_int("number")
}

/// `export type … = …;` for one type.
pub fn export_decl<T: TS>() -> String {
    format!("export {}\n", T::decl(&config()))
}

/// Declarations of every protocol type, in dependency-free order (TypeScript hoists types).
pub fn protocol_declarations() -> String {
    use crate::*;
    [
        "export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]?: JsonValue } | null;\n".to_string(),
        export_decl::<Message>(),
        export_decl::<ToolCall>(),
        export_decl::<ToolSpec>(),
        export_decl::<ReasoningBlock>(),
        export_decl::<ReasoningEffort>(),
        export_decl::<Usage>(),
        export_decl::<FinishReason>(),
        export_decl::<ModelSlot>(),
        export_decl::<ProviderKind>(),
        export_decl::<ResultStatus>(),
        export_decl::<Verdict>(),
        export_decl::<EvidenceState>(),
        export_decl::<Provenance>(),
        export_decl::<EvidenceTrust>(),
        export_decl::<FileStamp>(),
        export_decl::<LineEdit>(),
        export_decl::<SeenEdit>(),
        export_decl::<SeenFile>(),
        export_decl::<Unsupported>(),
        export_decl::<TrustSummary>(),
        export_decl::<CheckedEvidence>(),
        export_decl::<SubagentResult>(),
        export_decl::<TraceRecord>(),
        export_decl::<AgentKind>(),
        export_decl::<PermissionMode>(),
        export_decl::<SandboxMode>(),
        export_decl::<ToolKind>(),
        export_decl::<ModelInfo>(),
        export_decl::<Budgets>(),
        export_decl::<BudgetUsage>(),
        export_decl::<BudgetKind>(),
        export_decl::<TerminalReason>(),
        export_decl::<ParentLink>(),
        export_decl::<Decision>(),
        export_decl::<DecisionSource>(),
        export_decl::<ApprovalScope>(),
        export_decl::<ToolStatus>(),
        export_decl::<TodoStatus>(),
        export_decl::<TodoItem>(),
        export_decl::<TraceEvent>(),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_use_number_and_tagged_unions() {
        let ts = protocol_declarations();
        assert!(!ts.contains("bigint"), "{ts}");
        assert!(ts.contains("\"type\": \"session_started\""), "{ts}");
        assert!(ts.contains("export type TraceRecord"), "{ts}");
    }
}
