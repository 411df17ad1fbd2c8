//! What a settings file means for the runtime: the [`RuntimeSettings`] it describes.

use canopy_config::Settings;
use canopy_runtime::RuntimeSettings;

/// The runtime settings a settings file describes.
pub fn runtime_settings(settings: &Settings) -> RuntimeSettings {
    let mut rs = RuntimeSettings {
        policy: settings.permissions,
        parallelism: settings.parallelism.max(1) as usize,
        verification_gate: settings.verification_gate,
        sandbox_mode: settings.sandbox.mode,
        sandbox_env: settings.sandbox.env_allowlist.clone(),
        // Traces of every project and the settings are no business of a command in this one.
        sandbox_hidden: [canopy_config::data_dir(), canopy_config::config_dir()]
            .into_iter()
            .flatten()
            .collect(),
        withheld_files: settings.withheld_files.clone(),
        ..RuntimeSettings::default()
    };
    if let Ok(builtins) = canopy_runtime::profiles::builtin_profiles() {
        for (name, overrides) in &settings.profiles {
            let base = builtins.iter().find(|p| p.name() == name);
            let (budgets, model) = match base {
                Some(p) => (
                    overrides.apply_to(p.budgets()),
                    overrides.model.unwrap_or(p.model()),
                ),
                None => continue,
            };
            rs.profile_overrides.insert(name.clone(), (budgets, model));
        }
    }
    rs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_and_secret_settings_reach_the_runtime() {
        let mut settings = canopy_config::Settings::default();
        settings.sandbox.mode = canopy_protocol::SandboxMode::Off;
        settings.sandbox.env_allowlist = vec!["GOPATH".into()];
        settings.withheld_files.push("!.env.example".into());
        let rs = runtime_settings(&settings);
        assert_eq!(rs.sandbox_mode, canopy_protocol::SandboxMode::Off);
        assert_eq!(rs.sandbox_env, ["GOPATH"]);
        assert_eq!(
            rs.withheld_files.last().map(String::as_str),
            Some("!.env.example")
        );
    }
}
