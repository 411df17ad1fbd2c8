//! Runtime profiles: declarative descriptions of an agent (prompt, tools, budgets, model slot, result
//! contract). Invariants are checked when a profile is built, so a bad profile never reaches a run.
//! Built-ins are `main`, `explore` and `verify`; projects add their own in `.canopy/agents/*.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use canopy_protocol::{Budgets, ModelSlot, ToolKind};
use serde::Serialize;

use crate::{registry, RuntimeError};

/// What a profile's final answer must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultContract {
    /// Free text (the main agent).
    Text,
    /// The explore JSON object: status, summary, findings, evidence, unresolved_questions.
    Explore,
    /// The verify JSON object: verdict, reasons, summary, findings, evidence.
    Verify,
}

/// A validated profile.
#[derive(Debug, Clone, Serialize)]
pub struct RuntimeProfile {
    name: String,
    description: String,
    system_prompt: String,
    tools: Vec<String>,
    budgets: Budgets,
    model: ModelSlot,
    contract: ResultContract,
    read_only: bool,
    source: Option<PathBuf>,
}

/// The fields of a profile before validation.
#[derive(Debug, Clone)]
pub struct ProfileSpec {
    /// Name (`explore`).
    pub name: String,
    /// One line for people and for the main agent's Task description.
    pub description: String,
    /// System prompt.
    pub system_prompt: String,
    /// Tool allowlist.
    pub tools: Vec<String>,
    /// Budgets.
    pub budgets: Budgets,
    /// Model slot.
    pub model: ModelSlot,
    /// Result contract.
    pub contract: ResultContract,
    /// Whether the profile is a read-only subagent (every profile but `main`).
    pub read_only: bool,
    /// The file it came from, for project profiles.
    pub source: Option<PathBuf>,
}

impl RuntimeProfile {
    /// Validates a spec: non-empty name and prompt, budgets > 0, no `Task` in a subagent (no
    /// recursion), no mutating tool in a read-only profile, only known tools.
    pub fn new(spec: ProfileSpec) -> Result<Self, RuntimeError> {
        let fail = |reason: String| RuntimeError::InvalidProfile {
            name: spec
                .source
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| spec.name.clone()),
            reason,
        };
        if spec.name.trim().is_empty()
            || !spec
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(fail(format!(
                "name `{}` must be non-empty and use only letters, digits, `-` and `_`",
                spec.name
            )));
        }
        if spec.system_prompt.trim().is_empty() {
            return Err(fail("the system prompt is empty".into()));
        }
        let b = spec.budgets;
        for (field, value) in [
            ("max_steps", b.max_steps as u64),
            ("max_context_tokens", b.max_context_tokens),
            ("max_total_tokens", b.max_total_tokens),
            ("max_wall_time_ms", b.max_wall_time_ms),
        ] {
            if value == 0 {
                return Err(fail(format!("budget `{field}` must be greater than 0")));
            }
        }
        let known = registry::known_tools();
        for tool in &spec.tools {
            let Some(info) = known.iter().find(|k| &k.name == tool) else {
                let names: Vec<&str> = known.iter().map(|k| k.name.as_str()).collect();
                return Err(fail(format!(
                    "unknown tool `{tool}` (known: {})",
                    names.join(", ")
                )));
            };
            if spec.read_only && info.kind == ToolKind::Delegate {
                return Err(fail(format!(
                    "subagents cannot have the `{tool}` tool (no recursive delegation)"
                )));
            }
            if spec.read_only && !info.read_only {
                return Err(fail(format!(
                    "`{tool}` mutates the project and is not allowed in a read-only profile"
                )));
            }
        }
        if spec.read_only && spec.contract == ResultContract::Text {
            return Err(fail(
                "a subagent profile needs a result contract (explore or verify)".into(),
            ));
        }
        Ok(RuntimeProfile {
            name: spec.name,
            description: spec.description,
            system_prompt: spec.system_prompt,
            tools: spec.tools,
            budgets: spec.budgets,
            model: spec.model,
            contract: spec.contract,
            read_only: spec.read_only,
            source: spec.source,
        })
    }

    /// Name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Description.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// System prompt.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }
    /// Tool allowlist.
    pub fn tools(&self) -> &[String] {
        &self.tools
    }
    /// Budgets.
    pub fn budgets(&self) -> Budgets {
        self.budgets
    }
    /// Model slot.
    pub fn model(&self) -> ModelSlot {
        self.model
    }
    /// Result contract.
    pub fn contract(&self) -> ResultContract {
        self.contract
    }
    /// Read-only subagent profile.
    pub fn read_only(&self) -> bool {
        self.read_only
    }
    /// Source file for project profiles.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The same profile with other budgets and model (settings overrides), re-validated.
    pub fn with_overrides(&self, budgets: Budgets, model: ModelSlot) -> Result<Self, RuntimeError> {
        RuntimeProfile::new(ProfileSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            system_prompt: self.system_prompt.clone(),
            tools: self.tools.clone(),
            budgets,
            model,
            contract: self.contract,
            read_only: self.read_only,
            source: self.source.clone(),
        })
    }
}

/// The explore defaults: 12 steps, 16k context, 128k total tokens (measured: see docs/runtime.md), 5 min.
pub const EXPLORE_BUDGETS: Budgets = Budgets {
    max_steps: 12,
    max_context_tokens: 16_000,
    max_total_tokens: 128_000,
    max_wall_time_ms: 300_000,
};
/// The verify defaults.
pub const VERIFY_BUDGETS: Budgets = Budgets {
    max_steps: 16,
    max_context_tokens: 32_000,
    max_total_tokens: 96_000,
    max_wall_time_ms: 300_000,
};
/// The main agent's defaults (its context budget is also capped by the model's window).
pub const MAIN_BUDGETS: Budgets = Budgets {
    max_steps: 60,
    max_context_tokens: 100_000,
    max_total_tokens: 2_000_000,
    max_wall_time_ms: 1_800_000,
};

const EXPLORE_PROMPT: &str = include_str!("prompts/explore.md");
const VERIFY_PROMPT: &str = include_str!("prompts/verify.md");
const MAIN_PROMPT: &str = include_str!("prompts/main.md");

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The built-in profiles.
pub fn builtin_profiles() -> Result<Vec<RuntimeProfile>, RuntimeError> {
    Ok(vec![
        RuntimeProfile::new(ProfileSpec {
            name: "main".into(),
            description: "The main agent the person talks to.".into(),
            system_prompt: MAIN_PROMPT.into(),
            tools: strings(&["Read", "Grep", "Glob", "Edit", "Write", "Bash", "TodoWrite", "Task"]),
            budgets: MAIN_BUDGETS,
            model: ModelSlot::Main,
            contract: ResultContract::Text,
            read_only: false,
            source: None,
        })?,
        RuntimeProfile::new(ProfileSpec {
            name: "explore".into(),
            description: "Read-only search of the project: finds where and how something is done, with evidence.".into(),
            system_prompt: EXPLORE_PROMPT.into(),
            tools: strings(&["Read", "Grep", "Glob"]),
            budgets: EXPLORE_BUDGETS,
            model: ModelSlot::Light,
            contract: ResultContract::Explore,
            read_only: true,
            source: None,
        })?,
        RuntimeProfile::new(ProfileSpec {
            name: "verify".into(),
            description: "Read-only check of a claim or a finished change: returns PASS/FAIL/PARTIAL/UNVERIFIED with reasons.".into(),
            system_prompt: VERIFY_PROMPT.into(),
            tools: strings(&["Read", "Grep", "Glob"]),
            budgets: VERIFY_BUDGETS,
            model: ModelSlot::Main,
            contract: ResultContract::Verify,
            read_only: true,
            source: None,
        })?,
    ])
}

/// A project profile file that could not be used, or (`loaded: true`) one that is used with a
/// change the person should know about.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileLoadError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
    /// `true` for a warning: the profile was loaded anyway (e.g. with budgets lowered to the
    /// ceiling); `false` when the file was rejected.
    pub loaded: bool,
}

/// The most a project profile may ask for: the built-in main agent's limits. A cloned repository's
/// `.canopy/agents/*.md` must not be able to hand a subagent a budget far beyond the main agent's.
pub const PROJECT_BUDGET_CEILING: Budgets = MAIN_BUDGETS;

/// Lowers each budget above the ceiling to it; returns what was lowered, for the load warning.
fn clamp_to_ceiling(b: &mut Budgets) -> Vec<String> {
    let c = PROJECT_BUDGET_CEILING;
    let mut lowered = Vec::new();
    if b.max_steps > c.max_steps {
        lowered.push(format!("max_steps {} -> {}", b.max_steps, c.max_steps));
        b.max_steps = c.max_steps;
    }
    for (name, value, ceiling) in [
        (
            "max_context_tokens",
            &mut b.max_context_tokens,
            c.max_context_tokens,
        ),
        (
            "max_total_tokens",
            &mut b.max_total_tokens,
            c.max_total_tokens,
        ),
        (
            "max_wall_time_ms",
            &mut b.max_wall_time_ms,
            c.max_wall_time_ms,
        ),
    ] {
        if *value > ceiling {
            lowered.push(format!("{name} {value} -> {ceiling}"));
            *value = ceiling;
        }
    }
    lowered
}

/// Loads `.canopy/agents/*.md` from a project. Each file has a front matter block between `---` lines
/// (`name`, `description`, `tools` (comma-separated or `[a, b]`), `model` (`light`/`main`),
/// `max_steps`, `max_context_tokens`, `max_total_tokens`, `max_wall_time_ms`, `contract`
/// (`explore`/`verify`)); the body is the system prompt. Bad files are returned as errors beside the
/// good profiles, never fatal. Only regular files inside the project are read: a profile that is a
/// symlink, or an `agents` folder that leads out of the project, is reported and not loaded (a
/// cloned repository must not pull text from elsewhere on the machine into a model's prompt).
///
/// Loading is not using: hosts pass a profile set's [`project_profiles_digest`] in
/// `RuntimeSettings::trusted_project_profiles` once the person has seen and trusted it.
pub fn load_project_profiles(project_root: &Path) -> (Vec<RuntimeProfile>, Vec<ProfileLoadError>) {
    let mut profiles = Vec::new();
    let mut errors = Vec::new();
    let paths = match profile_files(project_root) {
        Ok(paths) => paths,
        Err(e) => {
            errors.push(e);
            return (profiles, errors);
        }
    };
    for path in paths {
        let kind = std::fs::symlink_metadata(&path).map(|m| m.file_type());
        let refused = match kind {
            Ok(t) if t.is_symlink() => Some(
                "it is a symlink; project profiles are loaded only from regular files inside the project",
            ),
            Ok(t) if !t.is_file() => Some("it is not a regular file"),
            Ok(_) => None,
            Err(_) => Some("it cannot be read"),
        };
        if let Some(reason) = refused {
            errors.push(ProfileLoadError {
                path,
                reason: reason.to_string(),
                loaded: false,
            });
            continue;
        }
        match parse_profile_file(&path) {
            Ok((p, lowered)) => {
                if !lowered.is_empty() {
                    errors.push(ProfileLoadError {
                        path,
                        reason: format!(
                            "profile `{}` is used with lower budgets: {} (project profiles may not exceed the main agent's limits)",
                            p.name(),
                            lowered.join(", ")
                        ),
                        loaded: true,
                    });
                }
                profiles.push(p);
            }
            Err(reason) => errors.push(ProfileLoadError {
                path,
                reason,
                loaded: false,
            }),
        }
    }
    (profiles, errors)
}

/// The `.canopy/agents/*.md` paths of a project, sorted; an error when the folder leads out of it.
fn profile_files(project_root: &Path) -> Result<Vec<PathBuf>, ProfileLoadError> {
    let dir = project_root.join(".canopy").join("agents");
    let Ok(real) = dir.canonicalize() else {
        return Ok(Vec::new());
    };
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    if !real.starts_with(&root) {
        return Err(ProfileLoadError {
            path: dir,
            reason: "the folder leads outside the project (a symlink); its profiles are not loaded"
                .into(),
            loaded: false,
        });
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// A digest of the project's profile files (names and bytes of the regular `.canopy/agents/*.md`
/// files), `None` when there are none. It is what a person's trust is recorded against: any
/// change to a profile, an added or a removed one, gives another digest, so changed profiles are
/// shown again before they are used.
pub fn project_profiles_digest(project_root: &Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    let paths = profile_files(project_root).ok()?;
    let mut hasher = Sha256::new();
    let mut any = false;
    for path in paths {
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
        let Some(name) = path.file_name() else {
            continue;
        };
        if !regular {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        any = true;
        // Lengths first, so no two different file sets hash the same bytes.
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_encoded_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    any.then(|| {
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    })
}

/// A parsed profile and the budgets that were lowered to the ceiling.
fn parse_profile_file(path: &Path) -> Result<(RuntimeProfile, Vec<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let text = text.replace("\r\n", "\n");
    let rest = text
        .strip_prefix("---\n")
        .ok_or("missing front matter: the file must start with a `---` line")?;
    let (front, body) = rest
        .split_once("\n---")
        .ok_or("front matter is not closed by a `---` line")?;
    let body = body.trim_start_matches('-').trim();
    let mut fields = BTreeMap::new();
    for (n, line) in front.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("front matter line {}: expected `key: value`", n + 2))?;
        fields.insert(k.trim().to_string(), v.trim().trim_matches('"').to_string());
    }
    let known = [
        "name",
        "description",
        "tools",
        "model",
        "max_steps",
        "max_context_tokens",
        "max_total_tokens",
        "max_wall_time_ms",
        "contract",
    ];
    if let Some(k) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!(
            "unknown front matter key `{k}` (known: {})",
            known.join(", ")
        ));
    }
    let name = fields
        .get("name")
        .cloned()
        .or_else(|| {
            path.file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
        })
        .unwrap_or_default();
    let tools: Vec<String> = fields
        .get("tools")
        .map(|t| {
            t.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|s| s.trim().trim_matches('"').to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_else(|| strings(&["Read", "Grep", "Glob"]));
    let model = match fields.get("model").map(String::as_str) {
        None | Some("light") => ModelSlot::Light,
        Some("main") => ModelSlot::Main,
        Some(other) => return Err(format!("model must be `light` or `main`, not `{other}`")),
    };
    let contract = match fields.get("contract").map(String::as_str) {
        None | Some("explore") => ResultContract::Explore,
        Some("verify") => ResultContract::Verify,
        Some(other) => {
            return Err(format!(
                "contract must be `explore` or `verify`, not `{other}`"
            ))
        }
    };
    let num = |key: &str, default: u64| -> Result<u64, String> {
        match fields.get(key) {
            None => Ok(default),
            Some(v) => v
                .replace('_', "")
                .parse::<u64>()
                .map_err(|_| format!("`{key}` must be a whole number, not `{v}`")),
        }
    };
    let mut budgets = Budgets {
        max_steps: num("max_steps", EXPLORE_BUDGETS.max_steps as u64)?.min(u32::MAX as u64) as u32,
        max_context_tokens: num("max_context_tokens", EXPLORE_BUDGETS.max_context_tokens)?,
        max_total_tokens: num("max_total_tokens", EXPLORE_BUDGETS.max_total_tokens)?,
        max_wall_time_ms: num("max_wall_time_ms", EXPLORE_BUDGETS.max_wall_time_ms)?,
    };
    if ["main", "explore", "verify"].contains(&name.as_str()) {
        return Err(format!(
            "`{name}` is a built-in profile name; choose another"
        ));
    }
    let lowered = clamp_to_ceiling(&mut budgets);
    RuntimeProfile::new(ProfileSpec {
        name,
        description: fields.get("description").cloned().unwrap_or_default(),
        system_prompt: body.to_string(),
        tools,
        budgets,
        model,
        contract,
        read_only: true,
        source: Some(path.to_path_buf()),
    })
    .map(|p| (p, lowered))
    .map_err(|e| match e {
        RuntimeError::InvalidProfile { reason, .. } => reason,
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_valid() {
        let p = builtin_profiles().unwrap();
        assert_eq!(
            p.iter().map(|p| p.name()).collect::<Vec<_>>(),
            ["main", "explore", "verify"]
        );
        assert_eq!(p[1].budgets(), EXPLORE_BUDGETS);
    }

    #[test]
    fn invariants_are_checked_at_construction() {
        let spec = |tools: &[&str], budgets: Budgets, prompt: &str| ProfileSpec {
            name: "x".into(),
            description: String::new(),
            system_prompt: prompt.into(),
            tools: strings(tools),
            budgets,
            model: ModelSlot::Light,
            contract: ResultContract::Explore,
            read_only: true,
            source: None,
        };
        let err = |s| RuntimeProfile::new(s).unwrap_err().to_string();
        assert!(err(spec(&["Read", "Task"], EXPLORE_BUDGETS, "p")).contains("Task"));
        assert!(err(spec(&["Bash"], EXPLORE_BUDGETS, "p")).contains("`Bash` mutates"));
        assert!(err(spec(
            &["Read"],
            Budgets {
                max_steps: 0,
                ..EXPLORE_BUDGETS
            },
            "p"
        ))
        .contains("max_steps"));
        assert!(err(spec(&["Read"], EXPLORE_BUDGETS, "  ")).contains("prompt is empty"));
        assert!(RuntimeProfile::new(spec(&["Read", "Grep"], EXPLORE_BUDGETS, "p")).is_ok());
    }

    #[test]
    fn project_profiles_load_and_bad_ones_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join(".canopy/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("docs.md"), "---\nname: docs\ndescription: Reads docs\ntools: [Read, Grep]\nmodel: light\nmax_steps: 5\n---\nYou read documentation.\n").unwrap();
        std::fs::write(
            agents.join("evil.md"),
            "---\nname: evil\ntools: Read, Bash\n---\nDo things.\n",
        )
        .unwrap();
        let (ok, bad) = load_project_profiles(dir.path());
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].name(), "docs");
        assert_eq!(ok[0].budgets().max_steps, 5);
        assert_eq!(bad.len(), 1);
        assert!(!bad[0].loaded);
        assert!(bad[0].path.ends_with("evil.md"));
        assert!(
            bad[0].reason.contains("`Bash` mutates the project"),
            "{}",
            bad[0].reason
        );
    }

    #[cfg(unix)]
    #[test]
    fn profile_files_that_are_symlinks_or_lie_outside_the_project_are_not_loaded() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let profile = "---\nname: NAME\ndescription: from outside\n---\nOutside text.\n";
        std::fs::write(outside.path().join("a.md"), profile.replace("NAME", "a")).unwrap();
        let agents = dir.path().join(".canopy/agents");
        std::fs::create_dir_all(&agents).unwrap();
        symlink(outside.path().join("a.md"), agents.join("linked.md")).unwrap();
        std::fs::write(agents.join("real.md"), profile.replace("NAME", "real")).unwrap();
        let (ok, bad) = load_project_profiles(dir.path());
        assert_eq!(ok.iter().map(|p| p.name()).collect::<Vec<_>>(), ["real"]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].path.ends_with("linked.md"));
        assert!(bad[0].reason.contains("symlink"), "{}", bad[0].reason);

        // The whole folder linked out of the project.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join(".canopy")).unwrap();
        let linked_dir = outside.path().join("agents");
        std::fs::create_dir_all(&linked_dir).unwrap();
        std::fs::write(linked_dir.join("b.md"), profile.replace("NAME", "b")).unwrap();
        symlink(&linked_dir, other.path().join(".canopy/agents")).unwrap();
        let (ok, bad) = load_project_profiles(other.path());
        assert!(ok.is_empty(), "loaded from outside the project");
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(
            bad[0].reason.contains("outside the project"),
            "{}",
            bad[0].reason
        );
    }

    #[test]
    fn project_budgets_above_the_main_agents_are_lowered_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join(".canopy/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(
            agents.join("greedy.md"),
            "---\nname: greedy\nmax_steps: 500\nmax_total_tokens: 100_000_000\nmax_wall_time_ms: 1000\n---\nSearch everything.\n",
        )
        .unwrap();
        let (ok, warnings) = load_project_profiles(dir.path());
        assert_eq!(ok.len(), 1, "the profile is still used");
        let b = ok[0].budgets();
        assert_eq!(
            (b.max_steps, b.max_total_tokens, b.max_wall_time_ms),
            (MAIN_BUDGETS.max_steps, MAIN_BUDGETS.max_total_tokens, 1000),
            "only the budgets above the ceiling are lowered"
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].loaded);
        assert!(
            warnings[0].reason.contains("max_steps 500 -> 60")
                && warnings[0]
                    .reason
                    .contains("max_total_tokens 100000000 -> 2000000")
                && !warnings[0].reason.contains("max_wall_time_ms"),
            "{}",
            warnings[0].reason
        );
    }
}
