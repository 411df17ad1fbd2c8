//! The settings model: model slots, per-profile budget overrides, permission policy, the presets
//! offered in the UI, and validation with field-specific messages. There is deliberately no place for
//! an API key in any of these types.

use std::collections::BTreeMap;

use canopy_protocol::{Budgets, ModelSlot, ProviderKind, ReasoningEffort, SandboxMode};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ConfigError;

/// Version written in `settings.json`. A file with another version is set aside, not guessed at.
pub const SETTINGS_VERSION: u32 = 1;

/// Most subagents a run may have going at once (`parallelism` is 1..=this).
pub const MAX_PARALLELISM: u32 = 16;

/// Everything a person can configure, as stored in `settings.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Settings {
    /// Schema version ([`SETTINGS_VERSION`]).
    pub version: u32,
    /// The main (stronger) model.
    pub main: ModelSlotConfig,
    /// The light (cheaper) model; when absent, light requests run on `main`.
    #[serde(default)]
    pub light: Option<ModelSlotConfig>,
    /// Budget and model overrides per agent profile, keyed by profile name.
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileOverrides>,
    /// How many subagents may run at the same time.
    #[serde(default = "default_parallelism")]
    pub parallelism: u32,
    /// What happens when an agent wants to edit, write, run a command or start a subagent.
    #[serde(default)]
    pub permissions: PermissionPolicy,
    /// When true, the `verify` subagent checks the main agent's final answer before the run counts as
    /// completed; a FAIL sends its reasons back to the main agent once.
    #[serde(default)]
    pub verification_gate: bool,
    /// How Bash commands are confined, and which extra environment variables they get.
    #[serde(default)]
    pub sandbox: SandboxSettings,
    /// Files withheld from the agents: `.gitignore`-style patterns, `!pattern` for an exception.
    /// Subagents always get the defaults and never the exceptions.
    #[serde(default = "default_withheld_files")]
    pub withheld_files: Vec<String>,
}

/// The Bash sandbox settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SandboxSettings {
    /// `required` (the default): Bash runs in the OS sandbox or is refused. `off`: Bash runs with
    /// the person's full rights, marked on every Bash card.
    #[serde(default)]
    pub mode: SandboxMode,
    /// Environment variable names passed to commands on top of the built-in allowlist (PATH, HOME,
    /// LANG, TERM, …). The model API key variables are never passed.
    #[serde(default)]
    pub env_allowlist: Vec<String>,
}

/// The secret-file list a new settings file starts with (the tools' built-in list).
pub use canopy_protocol::DEFAULT_SECRET_FILES;

fn default_withheld_files() -> Vec<String> {
    DEFAULT_SECRET_FILES.iter().map(|s| s.to_string()).collect()
}

fn default_parallelism() -> u32 {
    4
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: SETTINGS_VERSION,
            main: ModelSlotConfig::default(),
            light: None,
            profiles: BTreeMap::new(),
            parallelism: default_parallelism(),
            permissions: PermissionPolicy::default(),
            verification_gate: false,
            sandbox: SandboxSettings::default(),
            withheld_files: default_withheld_files(),
        }
    }
}

/// One model endpoint: which wire protocol, where, which model, and its limits and prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ModelSlotConfig {
    /// Wire protocol.
    pub provider: ProviderKind,
    /// Endpoint base URL (OpenAI-compatible: including `/v1`; Anthropic: without it).
    pub base_url: String,
    /// Model id sent to the provider.
    pub model: String,
    /// Context window of the model, tokens.
    pub context_window: u64,
    /// USD per million input tokens, when known (for cost display).
    #[serde(default)]
    pub input_price_per_mtok: Option<f64>,
    /// USD per million output tokens, when known.
    #[serde(default)]
    pub output_price_per_mtok: Option<f64>,
    /// `max_tokens` sent with each request.
    pub max_output_tokens: u32,
    /// OpenAI reasoning models (o-series, gpt-5 family): the `reasoning_effort` sent with each
    /// request; `null` leaves the model's default. Ignored by models that take none.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Anthropic extended thinking: the thinking budget in tokens (at least 1024); `null` leaves
    /// thinking off. Thinking comes on top of Max output tokens.
    #[serde(default)]
    pub thinking_budget_tokens: Option<u32>,
}

impl Default for ModelSlotConfig {
    fn default() -> Self {
        ModelSlotConfig {
            provider: ProviderKind::Openai,
            base_url: ProviderKind::Openai.default_base_url().to_string(),
            model: "gpt-4.1".to_string(),
            context_window: 128_000,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
            max_output_tokens: 8_192,
            reasoning_effort: None,
            thinking_budget_tokens: None,
        }
    }
}

/// Per-profile overrides; `None` keeps the profile's own value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProfileOverrides {
    /// Model slot the profile runs on.
    #[serde(default)]
    pub model: Option<ModelSlot>,
    /// Model calls allowed.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// Input tokens allowed in one request.
    #[serde(default)]
    pub max_context_tokens: Option<u64>,
    /// Input + output tokens allowed across the run.
    #[serde(default)]
    pub max_total_tokens: Option<u64>,
    /// Wall time allowed, milliseconds.
    #[serde(default)]
    pub max_wall_time_ms: Option<u64>,
}

impl ProfileOverrides {
    /// The profile's budgets with these overrides applied.
    pub fn apply_to(&self, budgets: Budgets) -> Budgets {
        Budgets {
            max_steps: self.max_steps.unwrap_or(budgets.max_steps),
            max_context_tokens: self
                .max_context_tokens
                .unwrap_or(budgets.max_context_tokens),
            max_total_tokens: self.max_total_tokens.unwrap_or(budgets.max_total_tokens),
            max_wall_time_ms: self.max_wall_time_ms.unwrap_or(budgets.max_wall_time_ms),
        }
    }
}

// The policy types live in canopy-protocol: the runtime's gate reads them without depending on
// this crate (and so on the keychain).
pub use canopy_protocol::{PermissionPolicy, PolicyAction};

/// A named starting point for a model slot, offered by the settings screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Preset {
    /// Stable identifier (`openai`, `ollama`, …).
    pub id: String,
    /// Name shown to people.
    pub label: String,
    /// Wire protocol.
    pub provider: ProviderKind,
    /// Base URL; empty for the custom preset, where the person must enter one.
    pub base_url: String,
    /// Whether the endpoint normally requires an API key.
    pub needs_key: bool,
    /// A model id to prefill; empty when there is no sensible guess.
    pub suggested_model: String,
    /// Context window to prefill, tokens.
    pub context_window: u64,
}

impl Preset {
    /// A slot configuration prefilled from this preset.
    pub fn slot_config(&self) -> ModelSlotConfig {
        ModelSlotConfig {
            provider: self.provider,
            base_url: self.base_url.clone(),
            model: self.suggested_model.clone(),
            context_window: self.context_window,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
            max_output_tokens: 8_192,
            reasoning_effort: None,
            thinking_budget_tokens: None,
        }
    }
}

/// The presets, in the order the settings screen lists them.
pub fn presets() -> Vec<Preset> {
    let p = |id: &str,
             label: &str,
             provider: ProviderKind,
             base_url: &str,
             needs_key: bool,
             model: &str,
             context_window: u64| Preset {
        id: id.to_string(),
        label: label.to_string(),
        provider,
        base_url: base_url.to_string(),
        needs_key,
        suggested_model: model.to_string(),
        context_window,
    };
    vec![
        p(
            "openai",
            "OpenAI",
            ProviderKind::Openai,
            ProviderKind::Openai.default_base_url(),
            true,
            "gpt-4.1",
            128_000,
        ),
        p(
            "anthropic",
            "Anthropic",
            ProviderKind::Anthropic,
            ProviderKind::Anthropic.default_base_url(),
            true,
            "claude-sonnet-4-5",
            200_000,
        ),
        p(
            "ollama",
            "Ollama (local)",
            ProviderKind::Openai,
            "http://127.0.0.1:11434/v1",
            false,
            "qwen2.5-coder:7b",
            32_768,
        ),
        p(
            "lmstudio",
            "LM Studio (local)",
            ProviderKind::Openai,
            "http://127.0.0.1:1234/v1",
            false,
            "",
            32_768,
        ),
        p(
            "deepseek",
            "DeepSeek",
            ProviderKind::Openai,
            "https://api.deepseek.com/v1",
            true,
            "deepseek-chat",
            64_000,
        ),
        p(
            "openrouter",
            "OpenRouter",
            ProviderKind::Openai,
            "https://openrouter.ai/api/v1",
            true,
            "openai/gpt-4.1",
            128_000,
        ),
        p(
            "custom",
            "Custom OpenAI-compatible",
            ProviderKind::Openai,
            "",
            true,
            "",
            32_768,
        ),
    ]
}

impl Settings {
    /// The configuration a request for `requested` runs on: `(slot used, its config, fell back)`.
    /// Light falls back to main when no light slot is configured.
    pub fn resolve_slot(&self, requested: ModelSlot) -> (ModelSlot, &ModelSlotConfig, bool) {
        match (requested, &self.light) {
            (ModelSlot::Light, Some(light)) => (ModelSlot::Light, light, false),
            (ModelSlot::Light, None) => (ModelSlot::Main, &self.main, true),
            (ModelSlot::Main, _) => (ModelSlot::Main, &self.main, false),
        }
    }

    /// Checks every value; the error names the first offending field and says what is wrong.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.version != SETTINGS_VERSION {
            return Err(ConfigError::invalid(
                "version",
                format!("must be {SETTINGS_VERSION}, found {}", self.version),
            ));
        }
        self.main.validate("main")?;
        if let Some(light) = &self.light {
            light.validate("light")?;
        }
        if !(1..=MAX_PARALLELISM).contains(&self.parallelism) {
            return Err(ConfigError::invalid(
                "parallelism",
                format!("must be 1..={MAX_PARALLELISM}, found {}", self.parallelism),
            ));
        }
        for (name, overrides) in &self.profiles {
            validate_profile(name, overrides)?;
        }
        for (i, name) in self.sandbox.env_allowlist.iter().enumerate() {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(ConfigError::invalid(
                    format!("sandbox.env_allowlist[{i}]"),
                    format!("`{name}` is not a variable name (letters, digits and `_`, not starting with a digit)"),
                ));
            }
        }
        for (i, pattern) in self.withheld_files.iter().enumerate() {
            validate_secret_pattern(pattern)
                .map_err(|reason| ConfigError::invalid(format!("withheld_files[{i}]"), reason))?;
        }
        Ok(())
    }
}

/// `Ok` for a pattern the tools can compile (the same glob syntax, `!` for an exception).
fn validate_secret_pattern(raw: &str) -> Result<(), String> {
    let pat = raw.trim();
    let pat = pat.strip_prefix('!').unwrap_or(pat).trim();
    let pat = pat.strip_prefix('/').unwrap_or(pat).trim_end_matches('/');
    if pat.is_empty() {
        return Err(format!(
            "`{raw}` is empty; remove the line or write a pattern such as `.env*`"
        ));
    }
    globset::GlobBuilder::new(pat)
        .literal_separator(true)
        .build()
        .map(|_| ())
        .map_err(|e| format!("`{raw}` is not a valid pattern: {e}"))
}

impl ModelSlotConfig {
    /// Checks this slot's values as saving would; `slot` (`main` / `light`) prefixes the field in
    /// the error (`main.base_url: …`). The settings screen's Test connection and List models use
    /// it on the unsaved configuration.
    pub fn validate(&self, slot: &str) -> Result<(), ConfigError> {
        validate_base_url(&self.base_url)
            .map_err(|reason| ConfigError::invalid(format!("{slot}.base_url"), reason))?;
        if self.model.trim().is_empty() {
            return Err(ConfigError::invalid(
                format!("{slot}.model"),
                "must not be empty",
            ));
        }
        if self.model.trim() != self.model {
            return Err(ConfigError::invalid(
                format!("{slot}.model"),
                "must not start or end with whitespace",
            ));
        }
        if self.context_window == 0 {
            return Err(ConfigError::invalid(
                format!("{slot}.context_window"),
                "must be > 0",
            ));
        }
        if self.max_output_tokens == 0 {
            return Err(ConfigError::invalid(
                format!("{slot}.max_output_tokens"),
                "must be > 0",
            ));
        }
        // Reported on the context window, the number usually typed (a local model's 8192), naming the
        // "Max output tokens" field beside it on the settings screen, either of which fixes it.
        if u64::from(self.max_output_tokens) >= self.context_window {
            return Err(ConfigError::invalid(
                format!("{slot}.context_window"),
                format!(
                    "{} is too small: it must be larger than Max output tokens ({}); raise it or lower Max output tokens",
                    self.context_window, self.max_output_tokens
                ),
            ));
        }
        if let Some(budget) = self.thinking_budget_tokens {
            if budget < 1024 {
                return Err(ConfigError::invalid(
                    format!("{slot}.thinking_budget_tokens"),
                    format!("must be at least 1024 (the API's minimum), found {budget}"),
                ));
            }
        }
        for (name, price) in [
            ("input_price_per_mtok", self.input_price_per_mtok),
            ("output_price_per_mtok", self.output_price_per_mtok),
        ] {
            if let Some(price) = price {
                if !price.is_finite() || price < 0.0 {
                    return Err(ConfigError::invalid(
                        format!("{slot}.{name}"),
                        "must be a number >= 0",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `Ok` for an absolute http(s) URL with a host; otherwise the reason, for `<field>: <reason>`.
pub(crate) fn validate_base_url(raw: &str) -> Result<url::Url, String> {
    const NOT_URL: &str = "not a valid http(s) URL";
    if raw.trim().is_empty() {
        return Err(format!("{NOT_URL} (it is empty)"));
    }
    let parsed = url::Url::parse(raw).map_err(|e| format!("{NOT_URL} ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "{NOT_URL} (scheme is `{}`; use http or https)",
            parsed.scheme()
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("{NOT_URL} (no host)"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(format!("{NOT_URL} (remove the ?query or #fragment)"));
    }
    Ok(parsed)
}

fn validate_profile(name: &str, overrides: &ProfileOverrides) -> Result<(), ConfigError> {
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid_name {
        return Err(ConfigError::invalid(
            format!("profiles.{name:?}"),
            "profile names use letters, digits, '-' and '_' only",
        ));
    }
    let checks: [(&str, Option<u64>); 4] = [
        ("max_steps", overrides.max_steps.map(u64::from)),
        ("max_context_tokens", overrides.max_context_tokens),
        ("max_total_tokens", overrides.max_total_tokens),
        ("max_wall_time_ms", overrides.max_wall_time_ms),
    ];
    for (field, value) in checks {
        if value == Some(0) {
            return Err(ConfigError::invalid(
                format!("profiles.{name}.{field}"),
                "must be > 0",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)] // tests change one field of the defaults at a time
mod tests {
    use super::*;

    fn message(settings: &Settings) -> String {
        settings.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_valid_and_match_the_documented_values() {
        let s = Settings::default();
        s.validate().unwrap();
        assert_eq!(s.parallelism, 4);
        assert!(!s.verification_gate);
        assert_eq!(s.permissions.edit, PolicyAction::Ask);
        assert_eq!(s.permissions.write, PolicyAction::Ask);
        assert_eq!(s.permissions.bash, PolicyAction::Ask);
        assert_eq!(s.permissions.task, PolicyAction::Allow);
        assert!(s.light.is_none());
        assert_eq!(s.sandbox.mode, SandboxMode::Required);
        assert!(s.withheld_files.iter().any(|p| p == ".env*"));
    }

    #[test]
    fn a_file_without_the_sandbox_fields_gets_the_safe_defaults() {
        let mut v = serde_json::to_value(Settings::default()).unwrap();
        let map = v.as_object_mut().unwrap();
        map.remove("sandbox");
        map.remove("withheld_files");
        let s: Settings = serde_json::from_value(v).unwrap();
        assert_eq!(s.sandbox.mode, SandboxMode::Required);
        assert_eq!(s.withheld_files, default_withheld_files());
    }

    #[test]
    fn bad_sandbox_and_secret_file_entries_name_the_field() {
        let mut s = Settings::default();
        s.sandbox.env_allowlist = vec!["GOPATH".into(), "MY VAR".into()];
        let m = message(&s);
        assert!(m.contains("sandbox.env_allowlist[1]"), "{m}");
        assert!(m.contains("`MY VAR` is not a variable name"), "{m}");
        let mut s = Settings::default();
        s.withheld_files.push("keys/[".into());
        let m = message(&s);
        assert!(
            m.contains(&format!("withheld_files[{}]", DEFAULT_SECRET_FILES.len())),
            "{m}"
        );
        assert!(m.contains("`keys/[` is not a valid pattern"), "{m}");
        let mut s = Settings::default();
        s.withheld_files.push("!".into());
        assert!(message(&s).contains("is empty"));
    }

    #[test]
    fn bad_base_urls_name_the_field() {
        for bad in [
            "",
            "api.openai.com/v1",
            "ftp://example.com",
            "http://",
            "https://x/v1?a=b",
        ] {
            let mut s = Settings::default();
            s.main.base_url = bad.to_string();
            let msg = message(&s);
            assert!(
                msg.starts_with("main.base_url: not a valid http(s) URL"),
                "{bad:?} gave {msg}"
            );
        }
        let mut s = Settings::default();
        s.light = Some(ModelSlotConfig {
            base_url: "localhost:11434".into(),
            ..ModelSlotConfig::default()
        });
        assert!(message(&s).starts_with("light.base_url: not a valid http(s) URL"));
    }

    #[test]
    fn parallelism_must_be_between_1_and_16() {
        for bad in [0, 17, 1000] {
            let mut s = Settings::default();
            s.parallelism = bad;
            assert_eq!(
                message(&s),
                format!("parallelism: must be 1..=16, found {bad}")
            );
        }
        for good in [1, 16] {
            let mut s = Settings::default();
            s.parallelism = good;
            s.validate().unwrap();
        }
    }

    #[test]
    fn zero_profile_budgets_name_profile_and_field() {
        let mut s = Settings::default();
        s.profiles.insert(
            "explore".into(),
            ProfileOverrides {
                max_steps: Some(0),
                ..Default::default()
            },
        );
        assert_eq!(message(&s), "profiles.explore.max_steps: must be > 0");

        let mut s = Settings::default();
        s.profiles.insert(
            "review".into(),
            ProfileOverrides {
                max_wall_time_ms: Some(0),
                ..Default::default()
            },
        );
        assert_eq!(message(&s), "profiles.review.max_wall_time_ms: must be > 0");

        let mut s = Settings::default();
        s.profiles
            .insert("bad name".into(), ProfileOverrides::default());
        assert!(message(&s).starts_with("profiles.\"bad name\":"));
    }

    #[test]
    fn slot_limits_and_prices_are_checked() {
        let mut s = Settings::default();
        s.main.model = "  ".into();
        assert_eq!(message(&s), "main.model: must not be empty");

        let mut s = Settings::default();
        s.main.context_window = 0;
        assert_eq!(message(&s), "main.context_window: must be > 0");

        let mut s = Settings::default();
        s.main.max_output_tokens = 200_000;
        assert_eq!(
            message(&s),
            "main.context_window: 128000 is too small: it must be larger than Max output tokens (200000); raise it or lower Max output tokens"
        );

        // A local model's context window typed into the settings screen, with the default max output.
        let mut s = Settings::default();
        s.main.context_window = 8_192;
        assert_eq!(
            message(&s),
            "main.context_window: 8192 is too small: it must be larger than Max output tokens (8192); raise it or lower Max output tokens"
        );

        let mut s = Settings::default();
        s.main.input_price_per_mtok = Some(-1.0);
        assert_eq!(
            message(&s),
            "main.input_price_per_mtok: must be a number >= 0"
        );
        s.main.input_price_per_mtok = Some(f64::NAN);
        assert_eq!(
            message(&s),
            "main.input_price_per_mtok: must be a number >= 0"
        );
    }

    #[test]
    fn a_thinking_budget_below_the_api_minimum_names_the_field() {
        let mut s = Settings::default();
        s.main.thinking_budget_tokens = Some(512);
        assert_eq!(
            message(&s),
            "main.thinking_budget_tokens: must be at least 1024 (the API's minimum), found 512"
        );
        s.main.thinking_budget_tokens = Some(2048);
        s.validate().unwrap();
    }

    #[test]
    fn old_settings_files_read_without_the_reasoning_fields() {
        let mut v = serde_json::to_value(Settings::default()).unwrap();
        let main = v["main"].as_object_mut().unwrap();
        main.remove("reasoning_effort");
        main.remove("thinking_budget_tokens");
        let s: Settings = serde_json::from_value(v).unwrap();
        assert_eq!(s.main.reasoning_effort, None);
        assert_eq!(s.main.thinking_budget_tokens, None);
        let mut v = serde_json::to_value(Settings::default()).unwrap();
        v["main"]["reasoning_effort"] = serde_json::json!("minimal");
        let s: Settings = serde_json::from_value(v).unwrap();
        assert_eq!(s.main.reasoning_effort, Some(ReasoningEffort::Minimal));
    }

    #[test]
    fn light_falls_back_to_main_only_when_missing() {
        let mut s = Settings::default();
        let (used, cfg, fallback) = s.resolve_slot(ModelSlot::Light);
        assert_eq!(used, ModelSlot::Main);
        assert_eq!(cfg, &s.main);
        assert!(fallback);

        let light = ModelSlotConfig {
            model: "gpt-4.1-mini".into(),
            ..ModelSlotConfig::default()
        };
        s.light = Some(light.clone());
        let (used, cfg, fallback) = s.resolve_slot(ModelSlot::Light);
        assert_eq!((used, cfg, fallback), (ModelSlot::Light, &light, false));
        let (used, cfg, fallback) = s.resolve_slot(ModelSlot::Main);
        assert_eq!((used, cfg, fallback), (ModelSlot::Main, &s.main, false));
    }

    #[test]
    fn presets_have_the_documented_endpoints_and_are_valid_once_filled_in() {
        let all = presets();
        let url = |id: &str| {
            all.iter()
                .find(|p| p.id == id)
                .unwrap_or_else(|| panic!("no preset {id}"))
                .base_url
                .clone()
        };
        assert_eq!(url("ollama"), "http://127.0.0.1:11434/v1");
        assert_eq!(url("lmstudio"), "http://127.0.0.1:1234/v1");
        assert_eq!(url("deepseek"), "https://api.deepseek.com/v1");
        assert_eq!(url("openrouter"), "https://openrouter.ai/api/v1");
        assert_eq!(url("openai"), "https://api.openai.com/v1");
        assert_eq!(url("anthropic"), "https://api.anthropic.com");
        assert!(all
            .iter()
            .any(|p| p.id == "custom" && p.base_url.is_empty()));
        for p in &all {
            assert_eq!(
                p.needs_key,
                !matches!(p.id.as_str(), "ollama" | "lmstudio"),
                "{}",
                p.id
            );
            let mut cfg = p.slot_config();
            if cfg.base_url.is_empty() {
                cfg.base_url = "http://10.0.0.5:8000/v1".into();
            }
            if cfg.model.is_empty() {
                cfg.model = "some-model".into();
            }
            let s = Settings {
                main: cfg,
                ..Settings::default()
            };
            s.validate()
                .unwrap_or_else(|e| panic!("preset {}: {e}", p.id));
        }
    }

    #[test]
    fn profile_overrides_replace_only_what_is_set() {
        let base = Budgets {
            max_steps: 40,
            max_context_tokens: 100_000,
            max_total_tokens: 1_000_000,
            max_wall_time_ms: 600_000,
        };
        let o = ProfileOverrides {
            max_steps: Some(5),
            max_wall_time_ms: Some(1_000),
            ..Default::default()
        };
        let b = o.apply_to(base);
        assert_eq!(b.max_steps, 5);
        assert_eq!(b.max_wall_time_ms, 1_000);
        assert_eq!(b.max_context_tokens, 100_000);
        assert_eq!(b.max_total_tokens, 1_000_000);
    }

    #[test]
    fn serialised_settings_have_no_key_like_field() {
        let mut s = Settings::default();
        s.light = Some(ModelSlotConfig::default());
        s.profiles.insert(
            "explore".into(),
            ProfileOverrides {
                model: Some(ModelSlot::Light),
                max_steps: Some(3),
                max_context_tokens: Some(1),
                max_total_tokens: Some(1),
                max_wall_time_ms: Some(1),
            },
        );
        s.main.input_price_per_mtok = Some(1.0);
        s.main.output_price_per_mtok = Some(2.0);
        let value = serde_json::to_value(&s).unwrap();
        let mut keys = Vec::new();
        collect_keys(&value, &mut keys);
        assert!(
            keys.contains(&"base_url".to_string()),
            "walked the tree: {keys:?}"
        );
        for key in &keys {
            let k = key.to_lowercase();
            for bad in [
                "key",
                "secret",
                "token_value",
                "password",
                "credential",
                "auth",
            ] {
                assert!(
                    !k.contains(bad),
                    "settings field `{key}` looks like a secret"
                );
            }
        }
    }

    fn collect_keys(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    out.push(k.clone());
                    collect_keys(v, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect_keys(v, out)),
            _ => {}
        }
    }
}
