//! The main agent's answer: the `path:line` and `path:start-end` references in its text, checked
//! like a subagent's evidence — on disk, and against what any agent of the run was shown.
//!
//! A reference is a file path whose last part has an extension starting with a letter (`a.rs`,
//! `src/lib.rs`, `.env`, `/abs/path/x.py`), then `:line` or `:start-end`, bare or in backticks,
//! quotes or brackets. It must start the text or follow whitespace or one of `` ` ' " ( [ { < * ``,
//! so a URL (`https://host/a.rs:12`, `host.com:8080`) and a time (`10:30`) are not references;
//! a host name (`example.com:443`) is skipped too. Files without an extension (`Makefile:3`) are
//! not recognised: the cost of missing one is a reference left unchecked, never a false alarm.

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use canopy_protocol::{CheckedEvidence, TrustSummary};
use regex::Regex;

use canopy_tools::secrets::SecretFiles;

use super::{judge_found, lookups, Tracker};
use crate::contract::check_evidence_until;

/// Most references checked in one answer.
const MAX_REFERENCES: usize = 200;
/// Extensions that make `name.ext:port` a host rather than a file.
const HOST_SUFFIXES: &[&str] = &[
    "com",
    "org",
    "net",
    "io",
    "dev",
    "app",
    "co",
    "edu",
    "gov",
    "local",
    "internal",
    "localhost",
];

fn pattern() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"(?:^|[\s`'"(\[{<*])(/?(?:[\w.\-]+/)*[\w\-]*(?:\.[\w\-]+)*\.[A-Za-z][\w]*):(\d+)(?:-(\d+))?"#,
        )
        .ok()
    })
    .as_ref()
}

/// The references in `text`, each once, in the order they first appear.
pub fn references(text: &str) -> Vec<String> {
    let Some(re) = pattern() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(text) {
        let (Some(path), Some(start)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let path = path.as_str();
        if !path.contains('/') {
            let ext = path.rsplit('.').next().unwrap_or("");
            if HOST_SUFFIXES.contains(&ext.to_ascii_lowercase().as_str()) {
                continue;
            }
        }
        let raw = match c.get(3) {
            Some(end) => format!("{path}:{}-{}", start.as_str(), end.as_str()),
            None => format!("{path}:{}", start.as_str()),
        };
        if !out.contains(&raw) {
            out.push(raw);
        }
        if out.len() == MAX_REFERENCES {
            break;
        }
    }
    out
}

/// What checking an answer's references came to.
#[derive(Debug)]
pub enum AnswerCheck {
    /// The answer cites nothing: nothing is recorded.
    NothingCited,
    /// `stop` fired (or the run's tracker could not be read): nothing is recorded.
    Stopped,
    /// The references, checked and judged, with their trust counted.
    Checked(Vec<CheckedEvidence>, TrustSummary),
}

/// The answer's references checked on disk and against `seen` (the run-wide record). The files are
/// read before `seen` is locked, and it is locked only to look the references up, so the run's
/// tracker is never held while up to 200 cited files are read. `stop` is watched while reading, as
/// for a subagent's evidence. A file `secrets` withholds is never quoted.
pub fn check_answer(
    text: &str,
    seen: &Mutex<Tracker>,
    project_root: &Path,
    secrets: &SecretFiles,
    stop: &dyn Fn() -> bool,
) -> AnswerCheck {
    let refs = references(text);
    if refs.is_empty() {
        return AnswerCheck::NothingCited;
    }
    let mut checked = Vec::with_capacity(refs.len());
    for r in &refs {
        match check_evidence_until(r, None, project_root, secrets, stop) {
            Some(c) => checked.push(c),
            None => return AnswerCheck::Stopped,
        }
    }
    let found = match seen.lock() {
        Ok(seen) => lookups(&checked, &seen),
        Err(_) => return AnswerCheck::Stopped,
    };
    if !judge_found(&mut checked, found, project_root, stop) {
        return AnswerCheck::Stopped;
    }
    let trust = TrustSummary::of(&checked).unwrap_or_default();
    AnswerCheck::Checked(checked, trust)
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_protocol::{EvidenceState, EvidenceTrust, SeenFile};

    #[test]
    fn references_are_found_bare_and_backticked_but_not_in_urls_or_times() {
        let text = "Login is in `src/auth.rs:3` and the config at src/config.rs:1-2.\n\
            See (README.md:1), \"lib/a_b-c.test.ts:40\" and .env:2; also src/auth.rs:3 again.\n\
            Docs: https://example.com/src/auth.rs:12 and http://localhost:8080/x, \
            host example.com:443, api.internal:80, at 10:30 or 9:05, v1.2:3, ratio 3:4, \
            path/without_ext:5, Makefile:3, ./rel/x.py:7:3, /abs/p/y.go:9.";
        assert_eq!(
            references(text),
            [
                "src/auth.rs:3",
                "src/config.rs:1-2",
                "README.md:1",
                "lib/a_b-c.test.ts:40",
                ".env:2",
                "./rel/x.py:7",
                "/abs/p/y.go:9",
            ]
        );
        assert!(references("No code cited here: 12:00, a:1, x.1:2.").is_empty());
    }

    #[test]
    fn the_answer_is_checked_against_what_any_agent_of_the_run_saw() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "one\ntwo\n").unwrap();
        let mut seen = Tracker::new();
        seen.record(&[SeenFile {
            path: "a.rs".into(),
            lines: vec![[1, 1]],
            stamp: Some(canopy_tools::stamp::stamp_file(&root.join("a.rs")).unwrap()),
            edit: None,
        }]);
        let seen = Mutex::new(seen);
        let check = |text: &str, stop: &dyn Fn() -> bool| {
            check_answer(text, &seen, &root, &SecretFiles::default(), stop)
        };
        let AnswerCheck::Checked(refs, trust) =
            check("`a.rs:1` and a.rs:2 and a.rs:9 and b.rs:1", &|| false)
        else {
            panic!("references were cited");
        };
        let got: Vec<_> = refs.iter().map(|r| (r.raw.as_str(), r.trust)).collect();
        assert_eq!(
            got,
            [
                ("a.rs:1", Some(EvidenceTrust::Grounded)),
                ("a.rs:2", Some(EvidenceTrust::FileSeen)),
                ("a.rs:9", Some(EvidenceTrust::Invalid)),
                ("b.rs:1", Some(EvidenceTrust::Invalid)),
            ]
        );
        assert_eq!(refs[3].state, EvidenceState::MissingFile);
        assert_eq!((trust.total, trust.grounded, trust.invalid), (4, 1, 2));
        assert!(matches!(
            check("nothing cited", &|| false),
            AnswerCheck::NothingCited
        ));
        assert!(matches!(check("a.rs:1", &|| true), AnswerCheck::Stopped));
        // The tracker is not held while the cited files are read.
        let guard = seen.lock().unwrap();
        let looks = std::cell::Cell::new(0);
        let stop = || {
            looks.set(looks.get() + 1);
            looks.get() > 2
        };
        assert!(matches!(
            check("a.rs:1 and a.rs:2", &stop),
            AnswerCheck::Stopped
        ));
        drop(guard);
    }
}
