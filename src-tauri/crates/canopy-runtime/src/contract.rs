//! The subagent result contract: parses and validates a subagent's final answer, and checks each
//! evidence reference against the project on disk.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use canopy_protocol::{CheckedEvidence, EvidenceState, ResultStatus, SubagentResult, Verdict};
use canopy_tools::paths::{self, Access};
use canopy_tools::secrets::SecretFiles;
use canopy_tools::ToolError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::profiles::ResultContract;

/// Longest quoted line kept for display.
const QUOTE_CAP: usize = 300;
/// Most bytes of cited lines kept to compare a quote with.
const QUOTED_TEXT_CAP: usize = 1024 * 1024;
/// Most evidence items one result may carry: each is a file read, and the parent, the trace and
/// every view list them all.
pub const MAX_EVIDENCE_ITEMS: usize = 200;
/// Most bytes read from one cited file.
const EVIDENCE_READ_CAP: u64 = 64 * 1024 * 1024;

/// Validates a final answer against a contract, withholding the default secret files (a session
/// uses [`validate_cancellable`] with its own list). `Err` says exactly what was wrong, in words
/// the model can act on in its corrective turn.
pub fn validate(
    contract: ResultContract,
    text: &str,
    project_root: &Path,
) -> Result<SubagentResult, String> {
    validate_until(
        contract,
        text,
        project_root,
        &SecretFiles::default(),
        &|| false,
    )
    .unwrap_or_else(|| Err("the result check was stopped".into()))
}

/// [`validate`] that gives up (`None`) as soon as `stop` says so: between evidence references and
/// while reading a cited file, since a hundred references into a big file take seconds of disk
/// reads and a cancel must not wait for them.
fn validate_until(
    contract: ResultContract,
    text: &str,
    project_root: &Path,
    secrets: &SecretFiles,
    stop: &dyn Fn() -> bool,
) -> Option<Result<SubagentResult, String>> {
    match parse_and_check(contract, text, project_root, secrets, stop) {
        Err(Stopped::Yes) => None,
        Err(Stopped::No(e)) => Some(Err(e)),
        Ok(v) => Some(Ok(v)),
    }
}

/// Why [`parse_and_check`] returned no result.
enum Stopped {
    /// `stop` fired.
    Yes,
    /// The answer broke the contract (the message for the model).
    No(String),
}

impl From<String> for Stopped {
    fn from(e: String) -> Self {
        Stopped::No(e)
    }
}

impl From<&str> for Stopped {
    fn from(e: &str) -> Self {
        Stopped::No(e.to_string())
    }
}

fn parse_and_check(
    contract: ResultContract,
    text: &str,
    project_root: &Path,
    secrets: &SecretFiles,
    stop: &dyn Fn() -> bool,
) -> Result<SubagentResult, Stopped> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the final answer was empty; reply with exactly one JSON object".into());
    }
    if trimmed.starts_with("```") {
        return Err("the answer is wrapped in a markdown code fence; reply with the bare JSON object only, no ``` lines".into());
    }
    if !trimmed.starts_with('{') {
        return Err("the answer must start with `{`: reply with exactly one JSON object and no text before or after it".into());
    }
    let mut de = serde_json::Deserializer::from_str(trimmed);
    let value: Value = serde::Deserialize::deserialize(&mut de)
        .map_err(|e| format!("the answer is not valid JSON: {e}"))?;
    if de.end().is_err() {
        return Err("there is text after the JSON object; reply with exactly one JSON object and nothing else".into());
    }
    let obj = value
        .as_object()
        .ok_or("the answer must be a JSON object")?;
    let string_list = |key: &str| -> Result<Vec<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Object(o) => o
                        .get("text")
                        .or_else(|| o.get("finding"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| format!("`{key}[{i}]` must be a string")),
                    _ => Err(format!("`{key}[{i}]` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be an array of strings")),
        }
    };
    let summary = obj
        .get("summary")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("");
    if summary.is_empty() {
        return Err("`summary` is missing or empty; it must say what you found".into());
    }
    let findings = string_list("findings")?;
    let evidence_raw = evidence_list(obj.get("evidence"))?;
    let unresolved = string_list("unresolved_questions")?;
    let (status, verdict, reasons) = match contract {
        ResultContract::Explore | ResultContract::Text => {
            let status = match obj.get("status").and_then(Value::as_str) {
                Some("completed") => ResultStatus::Completed,
                Some("partial") => ResultStatus::Partial,
                Some(other) => {
                    return Err(format!(
                        "`status` must be \"completed\" or \"partial\", not {other:?}"
                    )
                    .into())
                }
                None => return Err("`status` is missing; use \"completed\" or \"partial\"".into()),
            };
            (status, None, Vec::new())
        }
        ResultContract::Verify => {
            let verdict = match obj.get("verdict").and_then(Value::as_str) {
                Some("PASS") => Verdict::Pass,
                Some("FAIL") => Verdict::Fail,
                Some("PARTIAL") => Verdict::Partial,
                Some("UNVERIFIED") => Verdict::Unverified,
                other => {
                    return Err(format!(
                        "`verdict` must be one of PASS, FAIL, PARTIAL, UNVERIFIED, not {other:?}"
                    )
                    .into())
                }
            };
            let reasons = string_list("reasons")?;
            if verdict != Verdict::Pass && reasons.is_empty() {
                return Err("`reasons` must say why for a verdict other than PASS".into());
            }
            (ResultStatus::Completed, Some(verdict), reasons)
        }
    };
    Ok(SubagentResult {
        status,
        summary: summary.to_string(),
        findings,
        evidence: evidence_raw
            .iter()
            .map(|(raw, quote)| {
                check_evidence_until(raw, quote.as_deref(), project_root, secrets, stop)
                    .ok_or(Stopped::Yes)
            })
            .collect::<Result<Vec<_>, _>>()?,
        unresolved_questions: unresolved,
        verdict,
        reasons,
        trust: None,
        unsupported: None,
    })
}

/// The `evidence` list: each item a `"path:line"` string, or an object `{"ref": "path:line",
/// "quote": "…"}` (also `{"path": …, "line": …, "end_line": …}`) that may quote the cited code.
fn evidence_list(value: Option<&Value>) -> Result<Vec<(String, Option<String>)>, String> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("`evidence` must be an array of \"path:line\" strings or {\"ref\": \"path:line\", \"quote\": \"…\"} objects".into()),
    };
    if items.len() > MAX_EVIDENCE_ITEMS {
        return Err(format!(
            "`evidence` has {} items; at most {MAX_EVIDENCE_ITEMS} are allowed: keep the citations that back your findings best and drop the rest",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok((s.clone(), None)),
            Value::Object(o) => {
                let quote = o
                    .get("quote")
                    .and_then(Value::as_str)
                    .filter(|q| !q.trim().is_empty())
                    .map(str::to_string);
                let number = |k: &str| o.get(k).and_then(|n| n.as_u64().or_else(|| n.as_str()?.trim().parse().ok()));
                let raw = match (o.get("ref").and_then(Value::as_str), o.get("path").and_then(Value::as_str), number("line")) {
                    (Some(r), _, _) => r.to_string(),
                    (None, Some(path), Some(line)) => match number("end_line").or_else(|| number("end")) {
                        Some(end) => format!("{path}:{line}-{end}"),
                        None => format!("{path}:{line}"),
                    },
                    _ => return Err(format!("`evidence[{i}]` must be a \"path:line\" string or an object with `ref` (\"path:line\") and an optional `quote`")),
                };
                Ok((raw, quote))
            }
            _ => Err(format!("`evidence[{i}]` must be a \"path:line\" string or an object with `ref` and `quote`")),
        })
        .collect()
}

/// [`validate`] off the async workers (the evidence check reads files), abandoned when `cancel`
/// fires: `None` then. The blocking check watches the token too, so it stops soon after.
/// `secrets` is the citing agent's secret-file list: a withheld file's lines are never quoted.
pub async fn validate_cancellable(
    contract: ResultContract,
    text: String,
    project_root: PathBuf,
    secrets: Arc<SecretFiles>,
    cancel: &CancellationToken,
) -> Option<Result<SubagentResult, String>> {
    let stop = cancel.clone();
    let check = tokio::task::spawn_blocking(move || {
        validate_until(contract, &text, &project_root, &secrets, &|| {
            stop.is_cancelled()
        })
    });
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = check => r.unwrap_or_else(|e| Some(Err(format!("the result check failed: {e}")))),
    }
}

/// Parses `path:line` or `path:start-end` (a leading `./` and a trailing `:col` are tolerated).
fn parse_reference(raw: &str) -> Option<(String, u32, Option<u32>)> {
    let s = raw.trim().trim_matches('`');
    let (path, lines) = s.rsplit_once(':')?;
    // `path:12:5` (line:column): drop the column.
    let (path, lines) = match path.rsplit_once(':') {
        Some((p, l))
            if l.chars().all(|c| c.is_ascii_digit())
                && !l.is_empty()
                && lines.chars().all(|c| c.is_ascii_digit()) =>
        {
            (p, l)
        }
        _ => (path, lines),
    };
    let (start, end) = match lines.split_once('-') {
        Some((a, b)) => (a.trim().parse().ok()?, Some(b.trim().parse().ok()?)),
        None => (lines.trim().parse().ok()?, None),
    };
    let path = path.trim().trim_start_matches("./").replace('\\', "/");
    if path.is_empty() || start == 0 {
        return None;
    }
    // `a.rs:10-2` names no range; checking only line 10 would call it valid.
    if end.is_some_and(|end| end < start) {
        return None;
    }
    Some((path, start, end))
}

/// Checks one reference against the project, withholding the default secret files (the list a
/// reopened trace has; a session passes its own to [`check_evidence_until`]).
pub fn check_evidence(raw: &str, project_root: &Path) -> CheckedEvidence {
    check_evidence_until(raw, None, project_root, &SecretFiles::default(), &|| false)
        .unwrap_or_else(|| CheckedEvidence::new(raw, raw, 0, None, EvidenceState::Unparseable))
}

/// A cited line as it is shown: trimmed at the end and capped at [`QUOTE_CAP`] characters.
pub(crate) fn cap_display(line: &str) -> String {
    let l = line.trim_end();
    if l.chars().count() > QUOTE_CAP {
        let mut s: String = l.chars().take(QUOTE_CAP).collect();
        s.push('…');
        s
    } else {
        l.to_string()
    }
}

/// How many lines of a cited file are read between two looks at `stop`.
const STOP_CHECK_LINES: u32 = 4096;

/// [`check_evidence`] that gives up (`None`) when `stop` says so while reading the file.
///
/// A file `secrets` withholds keeps its state (valid, or out of range) but none of its text: no
/// `text`, and no quote comparison, which would tell a model whether a guessed secret is right.
pub(crate) fn check_evidence_until(
    raw: &str,
    quote: Option<&str>,
    project_root: &Path,
    secrets: &SecretFiles,
    stop: &dyn Fn() -> bool,
) -> Option<CheckedEvidence> {
    if stop() {
        return None;
    }
    let Some((path, line, end_line)) = parse_reference(raw) else {
        return Some(CheckedEvidence::new(
            raw,
            raw,
            0,
            None,
            EvidenceState::Unparseable,
        ));
    };
    let mut out = CheckedEvidence::new(raw, path.clone(), line, end_line, EvidenceState::Valid);
    // Compared in full below, kept only as long as a shown line.
    out.quote = quote.map(cap_display);
    // The shared confinement rule; only the mapping onto evidence states is decided here.
    let resolved = match paths::resolve(project_root, &path, Access::Read) {
        Ok(resolved) => resolved,
        Err(ToolError::OutsideProject(_)) => {
            out.state = EvidenceState::OutsideProject;
            return Some(out);
        }
        Err(_) => {
            out.state = EvidenceState::MissingFile;
            return Some(out);
        }
    };
    let withheld = secrets.check(project_root, &path, &resolved.abs).is_err();
    let quote = quote.filter(|_| !withheld);
    out.path = resolved.display;
    let resolved = resolved.abs;
    // Only regular files, read line by line up to the cited range and never past a byte cap: a
    // cited FIFO or a multi-gigabyte file must not hang or bloat the host.
    if !std::fs::metadata(&resolved).is_ok_and(|m| m.is_file()) {
        out.state = EvidenceState::MissingFile;
        return Some(out);
    }
    let Ok(file) = std::fs::File::open(&resolved) else {
        out.state = EvidenceState::MissingFile;
        return Some(out);
    };
    let last = end_line.unwrap_or(line).max(line);
    let mut reader = std::io::BufReader::new(file).take(EVIDENCE_READ_CAP);
    let mut buf = Vec::new();
    let mut number = 0u32;
    let mut until_look = 0u32;
    // The cited lines, for comparing a quote with them.
    let mut cited = String::new();
    while number < last {
        if until_look == 0 {
            if stop() {
                return None;
            }
            until_look = STOP_CHECK_LINES;
        }
        until_look -= 1;
        buf.clear();
        match std::io::BufRead::read_until(&mut reader, b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => number += 1,
        }
        if number == line && !withheld {
            out.text = Some(cap_display(&String::from_utf8_lossy(&buf)));
        }
        if quote.is_some() && number >= line && cited.len() < QUOTED_TEXT_CAP {
            cited.push_str(&String::from_utf8_lossy(&buf));
        }
    }
    if number < last {
        out.state = EvidenceState::LineOutOfRange;
        out.text = None;
    } else if let Some(quote) = quote {
        out.quote_matches = Some(crate::provenance::quote_matches(quote, &cited));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/auth.rs"),
            "fn a() {}\nfn login() {}\nfn c() {}\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn evidence_states() {
        let dir = project();
        let c = |r: &str| check_evidence(r, dir.path());
        let v = c("src/auth.rs:2");
        assert_eq!(v.state, EvidenceState::Valid);
        assert_eq!(v.text.as_deref(), Some("fn login() {}"));
        assert_eq!(c("./src/auth.rs:1-3").state, EvidenceState::Valid);
        assert_eq!(c("src/auth.rs:2:5").line, 2);
        assert_eq!(c("src/auth.rs:40").state, EvidenceState::LineOutOfRange);
        assert_eq!(c("src/auth.rs:2-9").state, EvidenceState::LineOutOfRange);
        assert_eq!(c("src/nope.rs:1").state, EvidenceState::MissingFile);
        assert_eq!(c("../etc/passwd:1").state, EvidenceState::OutsideProject);
        assert_eq!(c("/etc/passwd:1").state, EvidenceState::OutsideProject);
        assert_eq!(c("src/auth.rs").state, EvidenceState::Unparseable);
        assert_eq!(c("src/auth.rs:3-1").state, EvidenceState::Unparseable);
        assert_eq!(c("src/auth.rs:2-2").state, EvidenceState::Valid);
    }

    #[test]
    fn evidence_is_confined_like_the_tools() {
        use std::os::unix::fs::symlink;
        let dir = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("inner")).unwrap();
        std::fs::write(outside.path().join("secret.rs"), "let key = 1;\n").unwrap();
        symlink(outside.path().join("secret.rs"), dir.path().join("link.rs")).unwrap();
        symlink(outside.path().join("inner"), dir.path().join("esc")).unwrap();
        // Into the project: a dangling link pointing out is outside, like any link out.
        symlink(dir.path().join("gone.rs"), dir.path().join("dangling.rs")).unwrap();
        let c = |r: &str| check_evidence(r, dir.path());

        let escaped = c("link.rs:1");
        assert_eq!(escaped.state, EvidenceState::OutsideProject);
        assert_eq!(escaped.text, None, "nothing outside is quoted");
        assert_eq!(c("esc/../secret.rs:1").state, EvidenceState::OutsideProject);
        assert_eq!(c("../no/such.rs:1").state, EvidenceState::OutsideProject);
        assert_eq!(
            c("nope/../src/auth.rs:1").state,
            EvidenceState::OutsideProject
        );
        assert_eq!(c("dangling.rs:1").state, EvidenceState::MissingFile);
        assert_eq!(c(".:1").state, EvidenceState::MissingFile);

        // A citation is parsed with `\` as a separator (models on Windows-minded habits write
        // it); the confinement itself treats it as a character.
        let windows = c("src\\auth.rs:2");
        assert_eq!(windows.state, EvidenceState::Valid);
        assert_eq!(windows.path, "src/auth.rs");

        let abs = dir.path().join("src/auth.rs");
        let inside = c(&format!("{}:2", abs.display()));
        assert_eq!(inside.state, EvidenceState::Valid);
        assert_eq!(inside.path, "src/auth.rs");
        assert_eq!(inside.text.as_deref(), Some("fn login() {}"));
    }

    #[test]
    fn a_withheld_file_keeps_its_state_but_shows_no_text_and_checks_no_quote() {
        let dir = project();
        std::fs::write(
            dir.path().join(".env"),
            "KEY=hunter2
",
        )
        .unwrap();
        let secrets = SecretFiles::default();
        let c = |r: &str, q: Option<&str>| {
            check_evidence_until(r, q, dir.path(), &secrets, &|| false).unwrap()
        };
        let cited = c(".env:1", Some("KEY=hunter2"));
        assert_eq!(cited.state, EvidenceState::Valid);
        assert_eq!((cited.text, cited.quote_matches), (None, None));
        assert_eq!(c("src/../.env:1", None).text, None, "by its name as given");
        assert_eq!(c(".env:2", None).state, EvidenceState::LineOutOfRange);
        let allowed = SecretFiles::new(&[".env*".into(), "!.env".into()]).unwrap();
        let shown = check_evidence_until(".env:1", None, dir.path(), &allowed, &|| false).unwrap();
        assert_eq!(
            shown.text.as_deref(),
            Some("KEY=hunter2"),
            "an exception shows it"
        );
    }

    #[test]
    fn contract_errors_are_specific() {
        let dir = project();
        let v = |t: &str| validate(ResultContract::Explore, t, dir.path());
        assert!(v("```json\n{}\n```").unwrap_err().contains("code fence"));
        assert!(v("Here it is: {}").unwrap_err().contains("start with `{`"));
        assert!(v("{\"status\":\"completed\",\"summary\":\"\"}")
            .unwrap_err()
            .contains("`summary`"));
        assert!(v("{\"status\":\"done\",\"summary\":\"x\"}")
            .unwrap_err()
            .contains("`status`"));
        assert!(v("{\"status\":\"completed\",\"summary\":\"x\"} trailing")
            .unwrap_err()
            .contains("after the JSON"));
        let ok = v(r#"{"status":"completed","summary":"login is in auth.rs","findings":["login"],"evidence":["src/auth.rs:2","src/auth.rs:99"],"unresolved_questions":[]}"#).unwrap();
        assert_eq!(ok.evidence[0].state, EvidenceState::Valid);
        assert_eq!(ok.evidence[1].state, EvidenceState::LineOutOfRange);
        let verdict = validate(
            ResultContract::Verify,
            r#"{"verdict":"FAIL","summary":"no","reasons":[]}"#,
            dir.path(),
        );
        assert!(verdict.unwrap_err().contains("reasons"));
    }

    #[test]
    fn evidence_may_be_an_object_with_a_quote_checked_against_the_cited_lines() {
        let dir = project();
        let ok = validate(
            ResultContract::Explore,
            r#"{"status":"completed","summary":"s","evidence":[
                "src/auth.rs:1",
                {"ref":"src/auth.rs:2","quote":"fn   login()"},
                {"ref":"src/auth.rs:2-3","quote":"fn login() {}\n fn c() {}"},
                {"path":"src/auth.rs","line":3,"quote":"fn login"},
                {"path":"src/auth.rs","line":1,"end_line":2},
                {"ref":"src/auth.rs:1","quote":"  "}
            ]}"#,
            dir.path(),
        )
        .unwrap();
        let e = &ok.evidence;
        assert_eq!((e[0].quote.as_deref(), e[0].quote_matches), (None, None));
        assert_eq!(e[1].quote_matches, Some(true), "whitespace is ignored");
        assert_eq!(e[2].quote_matches, Some(true), "a quote across a range");
        assert_eq!(e[3].raw, "src/auth.rs:3");
        assert_eq!(e[3].quote_matches, Some(false), "line 3 is not login");
        assert_eq!(e[4].raw, "src/auth.rs:1-2");
        assert_eq!(e[4].state, EvidenceState::Valid);
        assert_eq!(e[5].quote, None, "an empty quote is no quote");
        let bad = validate(
            ResultContract::Explore,
            r#"{"status":"completed","summary":"s","evidence":[{"quote":"x"}]}"#,
            dir.path(),
        );
        assert!(bad.unwrap_err().contains("`evidence[0]`"));
    }

    #[test]
    fn too_many_evidence_items_break_the_contract_and_a_long_quote_is_kept_capped() {
        let dir = project();
        let answer = |n: usize| {
            let evidence: Vec<&str> = vec!["src/auth.rs:2"; n];
            serde_json::json!({"status": "completed", "summary": "s", "evidence": evidence})
                .to_string()
        };
        let ok = validate(
            ResultContract::Explore,
            &answer(MAX_EVIDENCE_ITEMS),
            dir.path(),
        );
        assert_eq!(ok.unwrap().evidence.len(), MAX_EVIDENCE_ITEMS);
        let err = validate(ResultContract::Explore, &answer(5000), dir.path()).unwrap_err();
        assert_eq!(
            err,
            "`evidence` has 5000 items; at most 200 are allowed: keep the citations that back your findings best and drop the rest"
        );

        let long = format!("fn login() {{}}{}", " ".repeat(10) + &"x".repeat(100_000));
        std::fs::write(dir.path().join("long.rs"), format!("{long}\n")).unwrap();
        let quoted = serde_json::json!({"status": "completed", "summary": "s",
            "evidence": [{"ref": "long.rs:1", "quote": long}]})
        .to_string();
        let e = &validate(ResultContract::Explore, &quoted, dir.path())
            .unwrap()
            .evidence[0];
        assert_eq!(e.quote_matches, Some(true), "compared in full");
        let kept = e.quote.as_deref().unwrap();
        assert_eq!(kept.chars().count(), QUOTE_CAP + 1);
        assert!(kept.starts_with("fn login() {}") && kept.ends_with('…'));
    }

    #[tokio::test]
    async fn a_cancelled_check_stops_between_references_and_inside_a_file() {
        let dir = project();
        let answer = r#"{"status":"completed","summary":"s","evidence":["src/auth.rs:2"]}"#;
        let token = CancellationToken::new();
        let checked = validate_cancellable(
            ResultContract::Explore,
            answer.into(),
            dir.path().to_path_buf(),
            Arc::new(SecretFiles::default()),
            &token,
        )
        .await;
        assert_eq!(
            checked.unwrap().unwrap().evidence[0].state,
            EvidenceState::Valid
        );
        token.cancel();
        let checked = validate_cancellable(
            ResultContract::Explore,
            answer.into(),
            dir.path().to_path_buf(),
            Arc::new(SecretFiles::default()),
            &token,
        )
        .await;
        assert!(checked.is_none(), "a cancelled check gives no result");
        // The blocking part looks at the token itself, so it does not read on after the cancel.
        let looks = std::cell::Cell::new(0);
        let stop = || {
            looks.set(looks.get() + 1);
            looks.get() > 1
        };
        let secrets = SecretFiles::default();
        assert!(
            validate_until(ResultContract::Explore, answer, dir.path(), &secrets, &stop).is_none()
        );
        assert!(
            check_evidence_until("src/auth.rs:2", None, dir.path(), &secrets, &|| true).is_none()
        );
    }
}
