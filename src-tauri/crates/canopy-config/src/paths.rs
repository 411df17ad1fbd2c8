//! Where Canopy keeps its files: the config directory (settings), the data directory (traces,
//! recent projects) and the per-project trace directory. `CANOPY_CONFIG_DIR` / `CANOPY_DATA_DIR` move
//! them, so tests and end-to-end runs never touch a person's real files.

use std::path::{Component, Path, PathBuf};

use crate::error::ConfigError;

/// Environment variable that replaces the whole config directory.
pub const CONFIG_DIR_ENV: &str = "CANOPY_CONFIG_DIR";
/// Environment variable that replaces the whole data directory.
pub const DATA_DIR_ENV: &str = "CANOPY_DATA_DIR";

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `<platform config dir>/canopy`, or `$CANOPY_CONFIG_DIR`.
pub fn config_dir() -> Result<PathBuf, ConfigError> {
    config_dir_with(&process_env)
}

/// [`config_dir`] reading the environment through `env`.
pub fn config_dir_with(env: &impl Fn(&str) -> Option<String>) -> Result<PathBuf, ConfigError> {
    if let Some(dir) = env(CONFIG_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::BaseDirs::new()
        .map(|d| d.config_dir().join("canopy"))
        .ok_or(ConfigError::NoPlatformDir("config", CONFIG_DIR_ENV))
}

/// `<platform data dir>/canopy`, or `$CANOPY_DATA_DIR`.
pub fn data_dir() -> Result<PathBuf, ConfigError> {
    data_dir_with(&process_env)
}

/// [`data_dir`] reading the environment through `env`.
pub fn data_dir_with(env: &impl Fn(&str) -> Option<String>) -> Result<PathBuf, ConfigError> {
    if let Some(dir) = env(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::BaseDirs::new()
        .map(|d| d.data_dir().join("canopy"))
        .ok_or(ConfigError::NoPlatformDir("data", DATA_DIR_ENV))
}

/// `<data dir>/traces/<sanitised-name>-<short hash>` for the project at `root`.
pub fn trace_dir_for_project(root: &Path) -> Result<PathBuf, ConfigError> {
    Ok(trace_dir_in(&data_dir()?, root))
}

/// The trace directory of `root` under a given data directory. The hash is of the canonical path,
/// so two folders with the same name never share traces and a symlinked path maps to the same place;
/// the readable name is only for people browsing the folder.
pub fn trace_dir_in(data_dir: &Path, root: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| lexically_absolute(root));
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let name = if name.trim_matches(['.', '_']).is_empty() {
        "project".to_string()
    } else {
        name
    };
    let hash = fnv1a64(canonical.as_os_str().as_encoded_bytes());
    data_dir
        .join("traces")
        .join(format!("{name}-{:012x}", hash >> 16))
}

fn lexically_absolute(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// FNV-1a, 64 bit: stable across Rust versions and platforms, unlike `DefaultHasher`, so a project
/// keeps its trace directory after an upgrade.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_overrides_move_the_directories() {
        let env = |k: &str| match k {
            "CANOPY_CONFIG_DIR" => Some("/tmp/cfg-x".to_string()),
            "CANOPY_DATA_DIR" => Some("/tmp/data-x".to_string()),
            _ => None,
        };
        assert_eq!(config_dir_with(&env).unwrap(), PathBuf::from("/tmp/cfg-x"));
        assert_eq!(data_dir_with(&env).unwrap(), PathBuf::from("/tmp/data-x"));
        let none = |_: &str| None;
        assert!(config_dir_with(&none).unwrap().ends_with("canopy"));
        assert!(data_dir_with(&none).unwrap().ends_with("canopy"));
    }

    #[test]
    fn trace_dirs_are_readable_stable_and_distinct() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("one").join("My Project!");
        let b = tmp.path().join("two").join("My Project!");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let data = Path::new("/data");

        let da = trace_dir_in(data, &a);
        let db = trace_dir_in(data, &b);
        assert_ne!(da, db);
        assert_eq!(da.parent().unwrap(), Path::new("/data/traces"));
        let leaf = da.file_name().unwrap().to_str().unwrap();
        assert!(leaf.starts_with("My_Project_-"), "{leaf}");
        assert_eq!(leaf.len(), "My_Project_-".len() + 12, "{leaf}");

        // Same folder reached another way (`..`, a symlink) maps to the same directory.
        assert_eq!(trace_dir_in(data, &a.join("..").join("My Project!")), da);
        #[cfg(unix)]
        {
            let link = tmp.path().join("link");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert_eq!(trace_dir_in(data, &link), da);
        }
        assert_eq!(trace_dir_in(data, &a), da);
    }

    #[test]
    fn fnv_matches_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
