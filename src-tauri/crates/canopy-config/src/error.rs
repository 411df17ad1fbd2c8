//! The crate's one error type. Messages name the field or the place that failed and never contain a
//! secret value.

use std::path::PathBuf;

use canopy_protocol::ModelSlot;
use serde::Serialize;
use ts_rs::TS;

/// Everything that can go wrong with settings, paths and keys.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A settings value is out of range or malformed; `field` is a dotted path such as `main.base_url`.
    #[error("{field}: {reason}")]
    Invalid {
        /// Dotted path of the offending field (or the environment variable that set it).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing a file or directory failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being attempted ("write", "create directory", …).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The platform has no config/data directory for this user (no home directory).
    #[error("could not determine the {0} directory for this user; set {1} to choose one")]
    NoPlatformDir(&'static str, &'static str),
    /// Settings could not be turned into JSON (should not happen for valid settings).
    #[error("could not serialise settings: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The OS keychain cannot be reached or is locked; the reason is meant for people.
    #[error("the OS keychain is unavailable: {0}")]
    Unavailable(String),
    /// The keychain answered but the operation failed for another reason.
    #[error("the OS keychain refused the operation: {0}")]
    Keychain(String),
    /// A key given to be stored is unusable (for example empty).
    #[error("invalid API key: {0}")]
    InvalidKey(&'static str),
    /// A remote endpoint needs a key and none was found.
    #[error("{}{}", crate::key_names::missing_key_message(*slot), keychain_problem.as_ref().map(|p| format!(" (the OS keychain could not be read: {p})")).unwrap_or_default())]
    MissingKey {
        /// The slot whose key is missing (after light → main fallback).
        slot: ModelSlot,
        /// Set when the keychain could not be asked at all.
        keychain_problem: Option<String>,
    },
}

/// A settings field that failed validation, as the UI marks it: `field` is the dotted path of the input
/// (`main.context_window`, `profiles.explore.max_steps`), or the `CANOPY_*` variable that set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FieldError {
    /// Dotted path of the offending field (or the environment variable that set it).
    pub field: String,
    /// What is wrong with it, for people.
    pub message: String,
}

/// The keychain half of the API uses the same enum (one error type per crate); this alias keeps the
/// names `KeyError::Unavailable` etc. readable at call sites.
pub type KeyError = ConfigError;

impl ConfigError {
    /// The field this error is about, for a form to mark without parsing the message; `None` for
    /// errors that are not about one settings field.
    pub fn field_error(&self) -> Option<FieldError> {
        match self {
            ConfigError::Invalid { field, reason } => Some(FieldError {
                field: field.clone(),
                message: reason.clone(),
            }),
            _ => None,
        }
    }

    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        ConfigError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_value_names_its_field_apart_from_the_message() {
        let e = ConfigError::invalid(
            "main.context_window",
            "must be larger than max_output_tokens (4096)",
        );
        assert_eq!(
            e.field_error(),
            Some(FieldError {
                field: "main.context_window".into(),
                message: "must be larger than max_output_tokens (4096)".into(),
            })
        );
        // People still read one sentence naming the field.
        assert_eq!(
            e.to_string(),
            "main.context_window: must be larger than max_output_tokens (4096)"
        );
        assert_eq!(ConfigError::InvalidKey("empty").field_error(), None);
    }
}
