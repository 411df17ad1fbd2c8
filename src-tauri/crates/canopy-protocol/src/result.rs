//! The validated result a subagent hands back to its parent, and the host's check of its evidence.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether a subagent finished its task or stopped early with what it had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    /// The task was done.
    Completed,
    /// Stopped early (budget, or the model said so); the result holds what was found so far.
    Partial,
}

/// The `verify` profile's verdict on a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// The claim holds.
    Pass,
    /// The claim does not hold.
    Fail,
    /// Parts hold, parts do not.
    Partial,
    /// Could not be checked.
    Unverified,
}

/// The host's check of one evidence reference against the project on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceState {
    /// The file exists in the project and the line (range) is inside it.
    Valid,
    /// No such file in the project.
    MissingFile,
    /// The file exists but has fewer lines than cited.
    LineOutOfRange,
    /// The path resolves outside the project root.
    OutsideProject,
    /// The reference is not of the form `path:line` or `path:start-end`.
    Unparseable,
}

/// One evidence reference after the host checked it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CheckedEvidence {
    /// The reference exactly as the model wrote it.
    pub raw: String,
    /// Project-relative path (as written, normalised to `/`).
    pub path: String,
    /// First cited line, 1-based (0 when unparseable).
    pub line: u32,
    /// Last cited line for a range.
    pub end_line: Option<u32>,
    /// What the check found.
    pub state: EvidenceState,
    /// The text of the first cited line when `state` is `valid` (capped for display).
    pub text: Option<String>,
}

/// The structured result of a subagent, validated against its profile's contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SubagentResult {
    /// Completed or partial.
    pub status: ResultStatus,
    /// Non-empty prose summary; this is what the parent model reads first.
    pub summary: String,
    /// Individual findings.
    pub findings: Vec<String>,
    /// Evidence references, checked by the host.
    pub evidence: Vec<CheckedEvidence>,
    /// Questions the subagent could not settle.
    pub unresolved_questions: Vec<String>,
    /// Verdict, for the `verify` contract only.
    pub verdict: Option<Verdict>,
    /// Reasons for the verdict, for the `verify` contract only.
    #[serde(default)]
    pub reasons: Vec<String>,
}
