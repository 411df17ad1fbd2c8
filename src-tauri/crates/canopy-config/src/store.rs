//! Reading and writing `settings.json`. Loading never fails: a missing file means defaults, and a file
//! that cannot be used (unreadable, not JSON, another version, invalid values) is moved aside to
//! `settings.json.bak-<unix ms>` and reported, so the app can start and tell the person what happened.
//! Saving validates first and replaces the file atomically.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::ConfigError;
use crate::paths::config_dir;
use crate::settings::{Settings, SETTINGS_VERSION};

const FILE_NAME: &str = "settings.json";

/// What happened while loading, for the app to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// True when settings came from the file (false: defaults).
    pub from_file: bool,
    /// Where an unusable file was moved, if one was.
    pub backup: Option<PathBuf>,
    /// Human-readable warnings; empty when everything was fine.
    pub warnings: Vec<String>,
}

/// The settings file at one path.
#[derive(Debug, Clone)]
pub struct SettingsStore {
    path: PathBuf,
}

impl SettingsStore {
    /// A store for the file at `path` (need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        SettingsStore { path: path.into() }
    }

    /// The store at `<config dir>/settings.json` (see [`crate::config_dir`]).
    pub fn at_default_location() -> Result<Self, ConfigError> {
        Ok(SettingsStore::new(config_dir()?.join(FILE_NAME)))
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads settings. Missing file → defaults with no warning; an unusable file → defaults, the file
    /// moved to a backup, and a warning saying why and where the backup is.
    pub fn load(&self) -> (Settings, LoadReport) {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Settings::default(), LoadReport::default());
            }
            Err(e) => return self.fall_back(format!("could not be read ({e})")),
        };
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => return self.fall_back(format!("is not valid JSON ({e})")),
        };
        match value.get("version").map(serde_json::Value::as_u64) {
            Some(Some(v)) if v == u64::from(SETTINGS_VERSION) => {}
            Some(Some(v)) => {
                let which = if v < u64::from(SETTINGS_VERSION) {
                    "an older"
                } else {
                    "a newer"
                };
                return self.fall_back(format!(
                    "has version {v}, {which} format than this Canopy understands ({SETTINGS_VERSION})"
                ));
            }
            _ => return self.fall_back("has no numeric \"version\" field".to_string()),
        }
        let settings: Settings = match serde_json::from_value(value.clone()) {
            Ok(s) => s,
            Err(e) => return self.fall_back(format!("does not match the settings format ({e})")),
        };
        if let Err(e) = settings.validate() {
            return self.fall_back(format!("has an invalid value ({e})"));
        }
        let mut report = LoadReport {
            from_file: true,
            ..LoadReport::default()
        };
        if let Some(warning) = self.unknown_fields_warning(&value, &settings) {
            tracing::warn!(%warning, "settings file has unknown fields");
            report.warnings.push(warning);
        }
        (settings, report)
    }

    /// Fields the file has but the settings format does not are dropped on the next save; say so,
    /// and point a hand-written API key to where keys belong.
    fn unknown_fields_warning(
        &self,
        file: &serde_json::Value,
        settings: &Settings,
    ) -> Option<String> {
        let known = serde_json::to_value(settings).ok()?;
        let mut unknown = Vec::new();
        collect_unknown(file, &known, "", &mut unknown);
        if unknown.is_empty() {
            return None;
        }
        let looks_secret = unknown.iter().any(|f| {
            let f = f.to_lowercase();
            ["key", "secret", "token", "password", "auth"]
                .iter()
                .any(|s| f.contains(s))
        });
        let listed: Vec<String> = unknown.iter().map(|f| format!("`{f}`")).collect();
        let mut warning = format!(
            "Settings file {} has unknown fields {}; they are ignored and will be removed on the next save.",
            self.path.display(),
            listed.join(", ")
        );
        if looks_secret {
            warning.push_str(" API keys are never read from the settings file: enter them in Settings → Models → API key (stored in the OS keychain) or set CANOPY_MAIN_API_KEY / CANOPY_LIGHT_API_KEY.");
        }
        Some(warning)
    }

    fn fall_back(&self, problem: String) -> (Settings, LoadReport) {
        let mut report = LoadReport::default();
        let shown = self.path.display();
        match self.move_aside() {
            Ok(backup) => {
                report.warnings.push(format!(
                    "Settings file {shown} {problem}. Using default settings; the old file was kept as {}.",
                    backup.display()
                ));
                report.backup = Some(backup);
            }
            Err(e) => report.warnings.push(format!(
                "Settings file {shown} {problem}. Using default settings; the old file could not be backed up ({e}) and will be replaced on the next save."
            )),
        }
        tracing::warn!(warnings = ?report.warnings, "settings fell back to defaults");
        (Settings::default(), report)
    }

    fn move_aside(&self) -> std::io::Result<PathBuf> {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let base = format!("{}.bak-{millis}", self.path.display());
        let mut backup = PathBuf::from(&base);
        let mut n = 1;
        while backup.exists() {
            backup = PathBuf::from(format!("{base}-{n}"));
            n += 1;
        }
        std::fs::rename(&self.path, &backup)?;
        Ok(backup)
    }

    /// Validates and writes `settings`: a temporary file in the same directory, flushed to disk, then
    /// renamed over the old file, so a crash leaves either the old or the new file, never half of one.
    pub fn save(&self, settings: &Settings) -> Result<(), ConfigError> {
        settings.validate()?;
        let json = serde_json::to_string_pretty(settings)?;
        write_atomically(&self.path, &json)
    }
}

/// Writes `text` and a newline to `path` through a temporary file in the same directory, flushed to
/// disk, then renamed over the old file, so a crash leaves either the old or the new file, never half
/// of one. Creates the directory when it is missing.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), ConfigError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| ConfigError::io("create directory", &dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .tempfile_in(&dir)
        .map_err(|e| ConfigError::io("create a temporary file in", &dir, e))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.write_all(b"\n"))
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| ConfigError::io("write", tmp.path().to_path_buf(), e))?;
    tmp.persist(path)
        .map_err(|e| ConfigError::io("replace", path, e.error))?;
    Ok(())
}

fn collect_unknown(
    file: &serde_json::Value,
    known: &serde_json::Value,
    at: &str,
    out: &mut Vec<String>,
) {
    if let (Some(file), Some(known)) = (file.as_object(), known.as_object()) {
        for (name, value) in file {
            let path = if at.is_empty() {
                name.clone()
            } else {
                format!("{at}.{name}")
            };
            match known.get(name) {
                Some(known_value) => collect_unknown(value, known_value, &path, out),
                None => out.push(path),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)] // tests change one field of the defaults at a time
mod tests {
    use super::*;
    use crate::settings::{ModelSlotConfig, PolicyAction, ProfileOverrides};

    fn store() -> (tempfile::TempDir, SettingsStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SettingsStore::new(dir.path().join("canopy").join("settings.json"));
        (dir, store)
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn missing_file_gives_defaults_without_warning() {
        let (_dir, store) = store();
        let (s, report) = store.load();
        assert_eq!(s, Settings::default());
        assert_eq!(report, LoadReport::default());
    }

    #[test]
    fn save_then_load_round_trips_and_leaves_no_temp_files() {
        let (_dir, store) = store();
        let mut s = Settings::default();
        s.parallelism = 7;
        s.verification_gate = true;
        s.permissions.bash = PolicyAction::Deny;
        s.light = Some(ModelSlotConfig {
            model: "small".into(),
            input_price_per_mtok: Some(0.15),
            ..ModelSlotConfig::default()
        });
        s.profiles.insert(
            "explore".into(),
            ProfileOverrides {
                max_steps: Some(12),
                ..Default::default()
            },
        );
        store.save(&s).unwrap();
        let (loaded, report) = store.load();
        assert_eq!(loaded, s);
        assert!(report.from_file && report.warnings.is_empty());
        assert_eq!(
            files_in(store.path().parent().unwrap()),
            vec!["settings.json"]
        );

        s.parallelism = 2;
        store.save(&s).unwrap();
        assert_eq!(store.load().0.parallelism, 2);
        assert_eq!(
            files_in(store.path().parent().unwrap()),
            vec!["settings.json"]
        );
    }

    #[test]
    fn invalid_settings_are_not_saved_and_the_old_file_survives() {
        let (_dir, store) = store();
        store.save(&Settings::default()).unwrap();
        let before = std::fs::read_to_string(store.path()).unwrap();
        let mut bad = Settings::default();
        bad.parallelism = 0;
        let err = store.save(&bad).unwrap_err().to_string();
        assert_eq!(err, "parallelism: must be 1..=16, found 0");
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), before);
        assert_eq!(
            files_in(store.path().parent().unwrap()),
            vec!["settings.json"]
        );
    }

    fn assert_fell_back(store: &SettingsStore, original: &str, expect_in_warning: &str) {
        let (s, report) = store.load();
        assert_eq!(s, Settings::default());
        assert!(!report.from_file);
        assert_eq!(report.warnings.len(), 1, "{report:?}");
        let warning = &report.warnings[0];
        assert!(warning.contains(expect_in_warning), "{warning}");
        let backup = report.backup.clone().expect("a backup path");
        assert!(warning.contains(&backup.display().to_string()), "{warning}");
        assert!(backup
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("settings.json.bak-"));
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
        assert!(!store.path().exists(), "the unusable file was moved aside");
        // Next start is quiet: the problem was reported once.
        assert!(store.load().1.warnings.is_empty());
    }

    fn write(store: &SettingsStore, text: &str) {
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), text).unwrap();
    }

    #[test]
    fn corrupt_json_is_backed_up_with_a_warning() {
        let (_dir, store) = store();
        let text = "{ \"version\": 1, \"main\": ";
        write(&store, text);
        assert_fell_back(&store, text, "is not valid JSON");
    }

    #[test]
    fn older_and_newer_versions_are_backed_up_with_a_warning() {
        let (_dir, store) = store();
        let mut value = serde_json::to_value(Settings::default()).unwrap();
        value["version"] = 0.into();
        let old = value.to_string();
        write(&store, &old);
        assert_fell_back(&store, &old, "has version 0, an older format");

        value["version"] = 2.into();
        let new = value.to_string();
        write(&store, &new);
        assert_fell_back(&store, &new, "has version 2, a newer format");

        let none = "{\"main\": {}}";
        write(&store, none);
        assert_fell_back(&store, none, "no numeric \"version\"");
    }

    #[test]
    fn wrong_shape_and_invalid_values_are_backed_up_with_a_warning() {
        let (_dir, store) = store();
        let mut value = serde_json::to_value(Settings::default()).unwrap();
        value["main"]["provider"] = "gemini".into();
        let text = value.to_string();
        write(&store, &text);
        assert_fell_back(&store, &text, "does not match the settings format");

        let mut value = serde_json::to_value(Settings::default()).unwrap();
        value["parallelism"] = 99.into();
        let text = value.to_string();
        write(&store, &text);
        assert_fell_back(&store, &text, "parallelism: must be 1..=16");
    }

    #[test]
    fn omitted_optional_fields_take_defaults() {
        let (_dir, store) = store();
        write(
            &store,
            r#"{"version":1,"main":{"provider":"anthropic","base_url":"https://api.anthropic.com","model":"claude-sonnet-4-5","context_window":200000,"max_output_tokens":8192}}"#,
        );
        let (s, report) = store.load();
        assert!(report.warnings.is_empty(), "{report:?}");
        assert_eq!(s.parallelism, 4);
        assert_eq!(s.permissions.task, PolicyAction::Allow);
        assert_eq!(s.main.model, "claude-sonnet-4-5");
    }

    #[test]
    fn unknown_fields_are_reported_and_a_pasted_key_is_pointed_to_the_keychain() {
        let (_dir, store) = store();
        let mut value = serde_json::to_value(Settings::default()).unwrap();
        value["main"]["api_key"] = "sk-in-the-wrong-place".into();
        value["colour"] = "green".into();
        write(&store, &value.to_string());
        let (s, report) = store.load();
        assert_eq!(s, Settings::default());
        assert!(report.from_file && report.backup.is_none());
        assert_eq!(report.warnings.len(), 1, "{report:?}");
        let w = &report.warnings[0];
        assert!(
            w.contains("`main.api_key`") && w.contains("`colour`"),
            "{w}"
        );
        assert!(
            w.contains("OS keychain") && w.contains("CANOPY_MAIN_API_KEY"),
            "{w}"
        );
        assert!(!w.contains("sk-in-the-wrong-place"), "{w}");
        store.save(&s).unwrap();
        let saved = std::fs::read_to_string(store.path()).unwrap();
        assert!(!saved.contains("sk-in-the-wrong-place"));
        assert!(store.load().1.warnings.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn save_into_an_unwritable_directory_names_the_directory() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, store) = store();
        let parent = store.path().parent().unwrap().to_path_buf();
        std::fs::create_dir_all(&parent).unwrap();
        std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o500)).unwrap();
        let result = store.save(&Settings::default());
        std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o700)).unwrap();
        if nix_is_root() {
            eprintln!("skipped: running as root, which ignores directory permissions");
            return;
        }
        let err = result.unwrap_err().to_string();
        assert!(err.contains(&parent.display().to_string()), "{err}");
    }

    fn nix_is_root() -> bool {
        std::fs::read_to_string("/proc/self/status")
            .map(|s| {
                s.lines()
                    .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
            })
            .unwrap_or(false)
    }
}
