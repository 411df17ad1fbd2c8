//! A wrapper for secret strings (API keys) whose `Debug` and `Display` never show the value.

use std::fmt;

/// An API key or other secret. Not `Serialize`: it cannot end up in a settings file or trace by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        SecretString(value.into())
    }

    /// The secret itself, for the one place that must send it (an HTTP header, the keychain).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True for an empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretString([redacted])")
    }
}

impl fmt::Display for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_redact() {
        let s = SecretString::new("sk-live-123456");
        assert!(!format!("{s:?}").contains("sk-live"));
        assert!(!format!("{s}").contains("sk-live"));
        assert_eq!(s.expose(), "sk-live-123456");
    }
}
