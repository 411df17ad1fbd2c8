//! Environment overrides for headless runs (CI, the CLI, end-to-end tests): `CANOPY_{MAIN,LIGHT}_
//! {PROVIDER,BASE_URL,MODEL}` applied on top of the loaded settings. They are never saved.

use canopy_protocol::ProviderKind;

use crate::error::ConfigError;
use crate::settings::{validate_base_url, ModelSlotConfig, Settings};

/// How a host reports each override line among its startup warnings (`{ENV_OVERRIDE_WARNING}{line}`);
/// the UI gathers the warnings that start with it into one notice.
pub const ENV_OVERRIDE_WARNING: &str = "Environment override in effect: ";

/// Applies the `CANOPY_*` model overrides found through `env` (pass `|k| std::env::var(k).ok()` for
/// the process environment). Returns one line per override, e.g.
/// `main.model = gpt-4.1-mini (from CANOPY_MAIN_MODEL)`, for logs and the CLI banner.
///
/// Setting any `CANOPY_LIGHT_*` variable creates the light slot, starting from main's values, when
/// settings have none. Changing a provider without giving a base URL moves a base URL that was the old
/// provider's default to the new provider's default. Empty values count as unset. An unknown provider
/// or a malformed URL is an error naming the variable, and nothing is changed.
pub fn apply_env_overrides(
    settings: &mut Settings,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let read = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let mut next = settings.clone();
    let mut applied = Vec::new();
    for slot in ["main", "light"] {
        let prefix = format!("CANOPY_{}_", slot.to_uppercase());
        let provider_var = format!("{prefix}PROVIDER");
        let base_url_var = format!("{prefix}BASE_URL");
        let model_var = format!("{prefix}MODEL");
        let provider = read(&provider_var);
        let base_url = read(&base_url_var);
        let model = read(&model_var);
        if provider.is_none() && base_url.is_none() && model.is_none() {
            continue;
        }

        let main_base = next.main.clone();
        let config: &mut ModelSlotConfig = if slot == "main" {
            &mut next.main
        } else {
            if next.light.is_none() {
                applied.push(format!(
                    "light slot created from main's settings (because {prefix}* is set)"
                ));
            }
            next.light.get_or_insert(main_base)
        };

        if let Some(raw) = provider {
            let kind = parse_provider(raw.trim()).ok_or_else(|| {
                ConfigError::invalid(
                    provider_var.clone(),
                    format!(
                        "unknown provider `{}`; use `openai` or `anthropic`",
                        raw.trim()
                    ),
                )
            })?;
            if kind != config.provider
                && base_url.is_none()
                && config.base_url == config.provider.default_base_url()
            {
                config.base_url = kind.default_base_url().to_string();
                applied.push(format!(
                    "{slot}.base_url = {} (default of {}, because the provider changed)",
                    config.base_url,
                    kind.as_str()
                ));
            }
            config.provider = kind;
            applied.push(format!(
                "{slot}.provider = {} (from {provider_var})",
                kind.as_str()
            ));
        }
        if let Some(raw) = base_url {
            let url = raw.trim();
            validate_base_url(url)
                .map_err(|reason| ConfigError::invalid(base_url_var.clone(), reason))?;
            config.base_url = url.to_string();
            applied.push(format!("{slot}.base_url = {url} (from {base_url_var})"));
        }
        if let Some(raw) = model {
            config.model = raw.trim().to_string();
            applied.push(format!(
                "{slot}.model = {} (from {model_var})",
                config.model
            ));
        }
    }
    *settings = next;
    Ok(applied)
}

fn parse_provider(raw: &str) -> Option<ProviderKind> {
    match raw.to_ascii_lowercase().as_str() {
        "openai" => Some(ProviderKind::Openai),
        "anthropic" => Some(ProviderKind::Anthropic),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use canopy_protocol::ModelSlot;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn no_variables_change_nothing() {
        let mut s = Settings::default();
        let applied = apply_env_overrides(&mut s, &env_of(&[])).unwrap();
        assert!(applied.is_empty());
        assert_eq!(s, Settings::default());
    }

    #[test]
    fn main_overrides_apply_and_are_reported() {
        let mut s = Settings::default();
        let applied = apply_env_overrides(
            &mut s,
            &env_of(&[
                ("CANOPY_MAIN_BASE_URL", "http://127.0.0.1:9999/v1"),
                ("CANOPY_MAIN_MODEL", "test-model"),
            ]),
        )
        .unwrap();
        assert_eq!(s.main.base_url, "http://127.0.0.1:9999/v1");
        assert_eq!(s.main.model, "test-model");
        assert!(s.light.is_none());
        assert_eq!(applied.len(), 2, "{applied:?}");
        assert!(applied.iter().any(|l| l.contains("CANOPY_MAIN_MODEL")));
        s.validate().unwrap();
    }

    #[test]
    fn a_light_variable_creates_light_from_main() {
        let mut s = Settings::default();
        s.main.base_url = "http://127.0.0.1:4000/v1".into();
        s.main.context_window = 64_000;
        apply_env_overrides(&mut s, &env_of(&[("CANOPY_LIGHT_MODEL", "small")])).unwrap();
        let light = s.light.clone().unwrap();
        assert_eq!(light.model, "small");
        assert_eq!(light.base_url, "http://127.0.0.1:4000/v1");
        assert_eq!(light.context_window, 64_000);
        assert_eq!(s.main.model, "gpt-4.1");
        let (used, _, fallback) = s.resolve_slot(ModelSlot::Light);
        assert_eq!((used, fallback), (ModelSlot::Light, false));
    }

    #[test]
    fn main_overrides_reach_a_light_slot_created_in_the_same_pass() {
        let mut s = Settings::default();
        apply_env_overrides(
            &mut s,
            &env_of(&[
                ("CANOPY_MAIN_BASE_URL", "http://localhost:8080/v1"),
                ("CANOPY_LIGHT_MODEL", "small"),
            ]),
        )
        .unwrap();
        assert_eq!(s.light.unwrap().base_url, "http://localhost:8080/v1");
    }

    #[test]
    fn switching_provider_moves_a_default_base_url_only() {
        let mut s = Settings::default();
        apply_env_overrides(&mut s, &env_of(&[("CANOPY_MAIN_PROVIDER", "Anthropic")])).unwrap();
        assert_eq!(s.main.provider, ProviderKind::Anthropic);
        assert_eq!(s.main.base_url, "https://api.anthropic.com");

        let mut s = Settings::default();
        s.main.base_url = "http://127.0.0.1:5000".into();
        apply_env_overrides(&mut s, &env_of(&[("CANOPY_MAIN_PROVIDER", "anthropic")])).unwrap();
        assert_eq!(s.main.base_url, "http://127.0.0.1:5000");
    }

    #[test]
    fn bad_values_name_the_variable_and_change_nothing() {
        let mut s = Settings::default();
        let err = apply_env_overrides(
            &mut s,
            &env_of(&[
                ("CANOPY_MAIN_MODEL", "x"),
                ("CANOPY_MAIN_PROVIDER", "gemini"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "CANOPY_MAIN_PROVIDER: unknown provider `gemini`; use `openai` or `anthropic`"
        );
        assert_eq!(s, Settings::default());

        let err = apply_env_overrides(&mut s, &env_of(&[("CANOPY_LIGHT_BASE_URL", "localhost:1")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("CANOPY_LIGHT_BASE_URL: not a valid http(s) URL"),
            "{err}"
        );
        assert!(s.light.is_none());
    }

    #[test]
    fn empty_values_count_as_unset() {
        let mut s = Settings::default();
        let applied =
            apply_env_overrides(&mut s, &env_of(&[("CANOPY_LIGHT_MODEL", "  ")])).unwrap();
        assert!(applied.is_empty());
        assert!(s.light.is_none());
    }
}
