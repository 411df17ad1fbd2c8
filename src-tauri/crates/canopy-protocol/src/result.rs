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

/// Whether the agent that cited a line was shown it by its own tool results (never the task
/// prompt, never a sibling's results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// The cited line, or every line of the cited range, was in one of this agent's tool results.
    Seen,
    /// The agent opened, matched or listed the file, but was never shown the cited line(s).
    FileSeen,
    /// None of the agent's tool results showed the file.
    Unseen,
}

/// One word for how far a citation can be trusted: the worst thing the host found about it.
/// Precedence, worst first: `invalid`, `stale`, `quote_mismatch`, `unseen`, `file_seen`, `grounded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceTrust {
    /// Valid on disk, seen by the agent, unchanged since, and its quote (if any) matches.
    Grounded,
    /// Valid on disk, but the agent only opened, matched or listed the file, not the cited line.
    FileSeen,
    /// Valid on disk, but the agent never saw the file.
    Unseen,
    /// The quoted code differs from the cited line(s) on disk.
    QuoteMismatch,
    /// The file changed on disk since the agent read it.
    Stale,
    /// Not a valid reference on disk (missing file, line out of range, outside the project,
    /// unparseable).
    Invalid,
}

/// What a file held when an agent read it: compact enough to keep for every file an agent saw,
/// and enough to tell later whether the part it read has changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileStamp {
    /// How many leading bytes of the file the hash covers: the whole file, unless a Read of a huge
    /// file stopped after the lines it asked for.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Whether `bytes` was the whole file, so a file that has grown since counts as changed.
    pub whole: bool,
    /// XXH3-64 of those bytes, 16 lower-case hex digits.
    pub hash: String,
}

/// What one tool result showed its agent of one file: the record provenance is judged from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SeenFile {
    /// Project-relative path, `/`-separated.
    pub path: String,
    /// Line ranges shown, 1-based and inclusive; empty when only the file's name was shown (a
    /// listing).
    pub lines: Vec<[u32; 2]>,
    /// The file as it was read; absent for a listing that did not read it. After an Edit or a
    /// Write, the file as the tool left it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stamp: Option<FileStamp>,
    /// For an Edit: what it changed, so lines the agent saw before the edit stay seen at their
    /// new numbers. Absent for every other tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub edit: Option<SeenEdit>,
}

/// What one Edit changed in a file, in lines: enough to carry what its agent had seen of the file
/// across the edit. Applies only to lines seen under `base`; lines seen under other content say
/// nothing about the file the edit left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SeenEdit {
    /// The file as the edit found it (the content it was applied to).
    pub base: FileStamp,
    /// The replaced regions, in file order and disjoint (one per replacement; replacements that
    /// share a line are joined).
    pub regions: Vec<LineEdit>,
}

/// One replaced region of an [`SeenEdit`], like a unified diff's hunk header: the lines before it
/// keep their numbers, the lines after it move by `new_count - old_count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LineEdit {
    /// First line the region replaced, in the file as the edit found it (1-based).
    pub old_start: u32,
    /// Lines it replaced (at least 1).
    pub old_count: u32,
    /// First line of what replaced them, in the file as the edit left it (1-based); when
    /// `new_count` is 0, the line that now follows the removed ones.
    pub new_start: u32,
    /// Lines that replaced them (0 when whole lines were removed).
    pub new_count: u32,
}

/// Why a subagent result is marked unsupported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Unsupported {
    /// It has findings but no citation that is both valid on disk and seen by the agent.
    NoSeenEvidence,
    /// It was written after zero tool calls: nothing was looked at.
    NoToolCalls,
}

/// The words [`TrustSummary::line`] counts the citations that are not grounded with, in its order
/// (the app's summary line uses the same, generated into its constants).
pub const TRUST_LINE_WORDS: [(EvidenceTrust, &str); 5] = [
    (EvidenceTrust::FileSeen, "file seen, line not"),
    (EvidenceTrust::Unseen, "unseen"),
    (EvidenceTrust::QuoteMismatch, "quote mismatch"),
    (EvidenceTrust::Stale, "stale"),
    (EvidenceTrust::Invalid, "invalid"),
];

/// Counts of a result's citations by [`EvidenceTrust`]; they add up to `total`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TrustSummary {
    /// Citations checked.
    pub total: u32,
    /// Valid, seen, unchanged, quote matching.
    pub grounded: u32,
    /// Valid, but only the file was seen.
    pub file_seen: u32,
    /// Valid, but the file was never seen.
    pub unseen: u32,
    /// Quote differs from the lines on disk.
    pub quote_mismatch: u32,
    /// File changed since the agent read it.
    pub stale: u32,
    /// Not valid on disk.
    pub invalid: u32,
}

impl TrustSummary {
    /// Counts `evidence` by trust; `None` when no item has provenance (a trace written before it was
    /// recorded).
    pub fn of(evidence: &[CheckedEvidence]) -> Option<TrustSummary> {
        let mut s = TrustSummary::default();
        let mut recorded = evidence.is_empty();
        for e in evidence {
            let Some(t) = e.trust else { continue };
            recorded = true;
            s.total += 1;
            match t {
                EvidenceTrust::Grounded => s.grounded += 1,
                EvidenceTrust::FileSeen => s.file_seen += 1,
                EvidenceTrust::Unseen => s.unseen += 1,
                EvidenceTrust::QuoteMismatch => s.quote_mismatch += 1,
                EvidenceTrust::Stale => s.stale += 1,
                EvidenceTrust::Invalid => s.invalid += 1,
            }
        }
        recorded.then_some(s)
    }

    /// How many citations have `trust`.
    pub fn count(&self, trust: EvidenceTrust) -> u32 {
        match trust {
            EvidenceTrust::Grounded => self.grounded,
            EvidenceTrust::FileSeen => self.file_seen,
            EvidenceTrust::Unseen => self.unseen,
            EvidenceTrust::QuoteMismatch => self.quote_mismatch,
            EvidenceTrust::Stale => self.stale,
            EvidenceTrust::Invalid => self.invalid,
        }
    }

    /// One line for people: `5 of 6 citations seen and valid · 1 unseen`.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{} of {} citation{} seen and valid",
            self.grounded,
            self.total,
            if self.total == 1 { "" } else { "s" }
        );
        for (trust, word) in TRUST_LINE_WORDS {
            let n = self.count(trust);
            if n > 0 {
                out.push_str(&format!(" · {n} {word}"));
            }
        }
        out
    }
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
    /// The code the result quoted for this reference, if it quoted any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub quote: Option<String>,
    /// Whether `quote` matches the cited line(s) on disk, ignoring whitespace; absent without a
    /// quote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub quote_matches: Option<bool>,
    /// Whether the citing agent's own tool results showed the line; absent in traces written
    /// before provenance was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provenance: Option<Provenance>,
    /// The file as the agent last read it, which staleness is judged against; absent when the
    /// agent never read its content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub read_stamp: Option<FileStamp>,
    /// Whether the file had changed on disk since the agent read it, when this check ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub stale: bool,
    /// The first cited line as the agent's tool results showed it (capped like `text`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seen_text: Option<String>,
    /// The worst the host found about this citation; absent without provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trust: Option<EvidenceTrust>,
}

impl CheckedEvidence {
    /// A reference in `state`, with no text, quote or provenance yet.
    pub fn new(
        raw: impl Into<String>,
        path: impl Into<String>,
        line: u32,
        end_line: Option<u32>,
        state: EvidenceState,
    ) -> Self {
        CheckedEvidence {
            raw: raw.into(),
            path: path.into(),
            line,
            end_line,
            state,
            text: None,
            quote: None,
            quote_matches: None,
            provenance: None,
            read_stamp: None,
            stale: false,
            seen_text: None,
            trust: None,
        }
    }

    /// Derives [`EvidenceTrust`] from the other fields (`None` without provenance).
    pub fn derive_trust(&self) -> Option<EvidenceTrust> {
        let provenance = self.provenance?;
        Some(if self.state != EvidenceState::Valid {
            EvidenceTrust::Invalid
        } else if self.stale {
            EvidenceTrust::Stale
        } else if self.quote_matches == Some(false) {
            EvidenceTrust::QuoteMismatch
        } else {
            match provenance {
                Provenance::Unseen => EvidenceTrust::Unseen,
                Provenance::FileSeen => EvidenceTrust::FileSeen,
                Provenance::Seen => EvidenceTrust::Grounded,
            }
        })
    }
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
    /// The citations counted by trust; absent in traces written before provenance was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trust: Option<TrustSummary>,
    /// Set when the result is not backed by what the agent looked at; the parent model is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unsupported: Option<Unsupported>,
}
