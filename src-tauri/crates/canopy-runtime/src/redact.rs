//! Keeps secrets out of traces: the configured keys' exact values and anything shaped like an API key
//! are replaced before an event is written or published.

use canopy_protocol::SecretString;
use regex::Regex;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Replaces known secrets and key-shaped strings in text.
#[derive(Debug)]
pub struct Redactor {
    secrets: Vec<SecretString>,
    shapes: Option<Regex>,
}

impl Redactor {
    /// A redactor for these exact secrets plus common key shapes (OpenAI/Anthropic `sk-…`, GitHub,
    /// Slack, AWS access key ids, bearer tokens).
    pub fn new(secrets: Vec<SecretString>) -> Self {
        // Short values would redact ordinary words; real keys are long.
        let secrets = secrets
            .into_iter()
            .filter(|s| s.expose().len() >= 8)
            .collect();
        let shapes = Regex::new(
            r"(sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|(?i:bearer)\s+[A-Za-z0-9\-._~+/]{20,}=*)",
        )
        .ok();
        Redactor { secrets, shapes }
    }

    /// A redactor that only catches key shapes.
    pub fn shapes_only() -> Self {
        Redactor::new(Vec::new())
    }

    /// Returns the text with secrets replaced, or `None` when nothing needed replacing.
    pub fn redact(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for secret in &self.secrets {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(secret.expose()) {
                out = Some(current.replace(secret.expose(), REDACTED));
            }
        }
        if let Some(re) = &self.shapes {
            let current = out.as_deref().unwrap_or(text);
            if re.is_match(current) {
                out = Some(re.replace_all(current, REDACTED).into_owned());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_configured_values_and_key_shapes() {
        let r = Redactor::new(vec![SecretString::new("my-very-own-local-key")]);
        let text = "key my-very-own-local-key and sk-ant-api03-abcdefghijklmnopqrstuv and ok";
        let out = r.redact(text).unwrap();
        assert!(!out.contains("my-very-own-local-key"));
        assert!(!out.contains("abcdefghijklmnop"));
        assert!(out.ends_with("and ok"));
        assert_eq!(r.redact("nothing secret here"), None);
    }
}
