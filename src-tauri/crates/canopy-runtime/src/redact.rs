//! Keeps secrets out of traces and tool results: the configured keys' values, anything shaped like
//! an API key, and private-key blocks (`-----BEGIN … PRIVATE KEY-----`) are replaced before an event
//! is written or published and before a tool's output reaches the model.
//!
//! Output is often cut (Bash keeps a head and a tail, Read and Grep cap long lines, the trace caps a
//! result), and a cut can fall inside a key: then neither the whole value nor the `sk-…` shape is
//! left to match. So a configured key is also caught piecewise: any run of at least
//! [`MIN_FRAGMENT`] consecutive characters of it is replaced.

use canopy_protocol::SecretString;
use regex::Regex;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// What replaces a private-key block.
pub const REDACTED_KEY: &str = "[REDACTED PRIVATE KEY]";

/// Shortest piece of a configured key that is still redacted on its own. Shorter pieces are too
/// likely to occur by chance (and too short to be of use); 16 random key characters are not.
pub const MIN_FRAGMENT: usize = 16;

/// Shortest configured value treated as a secret at all: short values would redact ordinary words.
const MIN_SECRET: usize = 8;

/// Replaces known secrets (whole or in pieces) and key-shaped strings in text.
pub struct Redactor {
    /// Configured values, longest first so a value containing another wins.
    secrets: Vec<SecretString>,
    /// Every [`MIN_FRAGMENT`]-character window of every secret (a secret shorter than that as a
    /// whole), as one literal alternation: the regex engine runs it as a multi-literal
    /// (Aho-Corasick/Teddy) search, a single pass over the text however many windows there are.
    fragments: Option<Regex>,
    shapes: Option<Regex>,
    private_keys: Option<Regex>,
}

impl std::fmt::Debug for Redactor {
    // The fragment regex spells out the secrets; Debug must not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

impl Redactor {
    /// A redactor for these secrets (whole values and pieces of 16+ characters) plus common key
    /// shapes: OpenAI/Anthropic/OpenRouter `sk-…`, GitHub, Slack, AWS access key ids, Groq `gsk_…`,
    /// Google `AIza…`, Hugging Face `hf_…`, bearer tokens.
    pub fn new(secrets: Vec<SecretString>) -> Self {
        let mut secrets: Vec<SecretString> = secrets
            .into_iter()
            .filter(|s| s.expose().chars().count() >= MIN_SECRET)
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.expose().len()));
        let fragments = fragment_regex(&secrets);
        let shapes = Regex::new(concat!(
            r"(sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{16,}",
            r"|gh[pousr]_[A-Za-z0-9]{30,}",
            r"|xox[abprs]-[A-Za-z0-9\-]{10,}",
            r"|AKIA[0-9A-Z]{16}",
            // Groq: gsk_ + 52 alphanumerics. Hugging Face: hf_ + 34 letters. Both only as a whole
            // word of that shape, so `hf_hub_download` or `gsk_config` stay.
            r"|\bgsk_[A-Za-z0-9]{40,}\b",
            r"|\bhf_[A-Za-z0-9]{30,}\b",
            // Google API keys: AIza + exactly 35 more.
            r"|\bAIza[0-9A-Za-z_\-]{35}",
            r"|(?i:bearer)\s+[A-Za-z0-9\-._~+/]{20,}=*)",
        ))
        .ok();
        let private_keys = Regex::new(concat!(
            // A whole block, or one whose end was cut off (everything from BEGIN on goes)…
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            // …or one whose start was cut off: its base64 lines (numbered, as Read shows them, or
            // not) up to the END line.
            r"|(?m)(?:^[ \t]*(?:\d+\t)?[A-Za-z0-9+/=]{16,}\r?\n)+[ \t]*(?:\d+\t)?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
        ))
        .ok();
        Redactor {
            secrets,
            fragments,
            shapes,
            private_keys,
        }
    }

    /// A redactor that only catches key shapes.
    pub fn shapes_only() -> Self {
        Redactor::new(Vec::new())
    }

    /// Returns the text with secrets replaced, or `None` when nothing needed replacing.
    pub fn redact(&self, text: &str) -> Option<String> {
        let mut out = self.redact_fragments(text);
        if let Some(re) = &self.private_keys {
            let current = out.as_deref().unwrap_or(text);
            if current.contains("PRIVATE KEY") && re.is_match(current) {
                out = Some(re.replace_all(current, REDACTED_KEY).into_owned());
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

    /// Replaces every maximal run of a secret's characters that is at least [`MIN_FRAGMENT`] long
    /// (or a whole short secret).
    fn redact_fragments(&self, text: &str) -> Option<String> {
        let re = self.fragments.as_ref()?;
        let mut out = String::new();
        let mut copied = 0;
        let mut from = 0;
        while let Some(m) = re.find_at(text, from) {
            // The leftmost window starts the run; grow it to the right as far as the text keeps
            // following the secret from any place the window occurs in it.
            let end = self.extend_run(text, m.start(), m.end());
            out.push_str(&text[copied..m.start()]);
            out.push_str(REDACTED);
            copied = end;
            from = end;
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(out)
    }

    /// The end of the longest run starting at `start` that follows some secret, given that
    /// `text[start..end]` is a window of one.
    fn extend_run(&self, text: &str, start: usize, end: usize) -> usize {
        let window = &text[start..end];
        let rest = &text.as_bytes()[end..];
        let mut best = end;
        for secret in &self.secrets {
            let s = secret.expose();
            let mut search = 0;
            while let Some(pos) = s[search..].find(window) {
                let after = &s.as_bytes()[search + pos + window.len()..];
                let same = after.iter().zip(rest).take_while(|(a, b)| a == b).count();
                best = best.max(end + same);
                search += pos + 1;
                while !s.is_char_boundary(search) {
                    search += 1;
                }
            }
        }
        while !text.is_char_boundary(best) {
            best -= 1;
        }
        best
    }
}

/// One literal alternation of all windows of all secrets; `None` without secrets.
fn fragment_regex(secrets: &[SecretString]) -> Option<Regex> {
    let mut windows: Vec<&str> = Vec::new();
    for secret in secrets {
        let s = secret.expose();
        let bounds: Vec<usize> = s
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(s.len()))
            .collect();
        if bounds.len() <= MIN_FRAGMENT {
            windows.push(s);
            continue;
        }
        for w in bounds.windows(MIN_FRAGMENT + 1) {
            windows.push(&s[w[0]..w[MIN_FRAGMENT]]);
        }
    }
    if windows.is_empty() {
        return None;
    }
    windows.sort_unstable();
    windows.dedup();
    let pattern = windows
        .iter()
        .map(|w| regex::escape(w))
        .collect::<Vec<_>>()
        .join("|");
    regex::RegexBuilder::new(&pattern)
        .size_limit(64 * 1024 * 1024)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-Zq8vJt3LwX1pRm5NcY7bHd2KfG9sUe4AiO6lTr0WxQz-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_aBcDeFgHiJkLmN-xyzAA";

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

    #[test]
    fn a_key_cut_by_truncation_is_still_redacted() {
        let r = Redactor::new(vec![SecretString::new(KEY)]);
        // A Bash tail cut that kept only the key's last 40 characters: no `sk-` left to see.
        let tail = &KEY[KEY.len() - 40..];
        let out = r.redact(&format!("…[12 KB cut]…{tail}\nexit 0")).unwrap();
        assert_eq!(out, "…[12 KB cut]…[REDACTED]\nexit 0");
        // A head cut (or a line cap) that kept the start but not the end: the shape catches it too,
        // but here the prefix is gone and only a middle piece of 20 characters remains.
        let middle = &KEY[30..50];
        let out = r.redact(&format!("x={middle}; y")).unwrap();
        assert_eq!(out, "x=[REDACTED]; y");
        // The whole run goes, not just its first 16 characters.
        let piece = &KEY[10..90];
        let out = r.redact(&format!("[{piece}]")).unwrap();
        assert_eq!(out, "[[REDACTED]]");
        // A 15-character piece is too short to tell from chance and stays.
        let short = &KEY[40..55];
        assert_eq!(r.redact(&format!("a {short} b")), None);
    }

    #[test]
    fn two_pieces_of_keys_side_by_side_are_both_removed() {
        let other = "local-server-token-0f1e2d3c4b5a69788796a5b4c3d2e1f0";
        let r = Redactor::new(vec![SecretString::new(KEY), SecretString::new(other)]);
        let text = format!("{}|{}|end", &KEY[20..60], &other[5..30]);
        assert_eq!(r.redact(&text).unwrap(), "[REDACTED]|[REDACTED]|end");
    }

    #[test]
    fn short_configured_values_are_matched_whole() {
        let r = Redactor::new(vec![
            SecretString::new("abc12345xyz"),
            SecretString::new("tiny"),
        ]);
        assert_eq!(r.redact("v=abc12345xyz tiny").unwrap(), "v=[REDACTED] tiny");
        assert_eq!(r.redact("abc12345 only"), None);
    }

    #[test]
    fn groq_google_and_hugging_face_keys_are_caught_by_shape() {
        let r = Redactor::shapes_only();
        for key in [
            "gsk_8aKq2LmNp4RsTu6VwXy0Zb1Cd3Ef5Gh7Ij9Kl1Mn3Op5Qr7St9Uv2WxYz4AbCdEf",
            "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
        ] {
            let out = r.redact(&format!("export KEY={key}\n")).unwrap();
            assert_eq!(out, "export KEY=[REDACTED]\n", "{key}");
        }
    }

    #[test]
    fn ordinary_words_near_those_prefixes_are_left_alone() {
        let r = Redactor::shapes_only();
        for text in [
            "from huggingface_hub import hf_hub_download",
            "let hf_token_path = cfg.hf_token_file_location_override;",
            "gsk_config = load_gsk_settings()",
            "AIza is how Google keys start",
            "self_hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
            "docs mention gsk_ and hf_ prefixes",
        ] {
            assert_eq!(r.redact(text), None, "{text}");
        }
    }

    #[test]
    fn private_key_blocks_are_removed_whole_cut_or_line_numbered() {
        let r = Redactor::shapes_only();
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuic\n";
        let block = format!("-----BEGIN PRIVATE KEY-----\n{body}-----END PRIVATE KEY-----");
        let out = r.redact(&format!("before\n{block}\nafter\n")).unwrap();
        assert_eq!(out, format!("before\n{REDACTED_KEY}\nafter\n"));
        for kind in ["RSA ", "OPENSSH ", "EC ", "ENCRYPTED ", "PGP "] {
            let suffix = if kind == "PGP " { " BLOCK" } else { "" };
            let text = format!("-----BEGIN {kind}PRIVATE KEY{suffix}-----\n{body}-----END {kind}PRIVATE KEY{suffix}-----\n");
            assert_eq!(
                r.redact(&text).unwrap(),
                format!("{REDACTED_KEY}\n"),
                "{kind}"
            );
        }
        // Cut by a cap after the start: the rest goes.
        let out = r
            .redact(&format!("x\n-----BEGIN RSA PRIVATE KEY-----\n{body}"))
            .unwrap();
        assert_eq!(out, format!("x\n{REDACTED_KEY}"));
        // Cut before the start (a Bash tail): the key lines up to END go.
        let out = r
            .redact(&format!(
                "…cut…\n{body}-----END RSA PRIVATE KEY-----\ndone\n"
            ))
            .unwrap();
        assert_eq!(out, format!("…cut…\n{REDACTED_KEY}\ndone\n"));
        // As Read shows it, line-numbered.
        let numbered = "     1\t-----BEGIN OPENSSH PRIVATE KEY-----\n     2\tb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n     3\t-----END OPENSSH PRIVATE KEY-----\n";
        assert_eq!(
            r.redact(numbered).unwrap(),
            format!("     1\t{REDACTED_KEY}\n")
        );
        // Public keys and certificates stay.
        for text in [
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n",
            "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUF\n-----END CERTIFICATE-----\n",
            "grep -r 'PRIVATE KEY' src/",
        ] {
            assert_eq!(r.redact(text), None, "{text}");
        }
    }

    #[test]
    fn debug_does_not_show_secrets() {
        let r = Redactor::new(vec![SecretString::new(KEY)]);
        let shown = format!("{r:?}");
        assert!(!shown.contains(&KEY[20..36]), "{shown}");
    }

    #[test]
    fn a_megabyte_of_output_is_redacted_quickly() {
        let other = "local-server-token-0f1e2d3c4b5a69788796a5b4c3d2e1f0";
        let r = Redactor::new(vec![SecretString::new(KEY), SecretString::new(other)]);
        let line = "drwxr-xr-x  2 user user 4096 Jan  1 00:00 some/ordinary/path/name.rs\n";
        let mut text = line.repeat(1024 * 1024 / line.len());
        let at = text.len() / 2 / line.len() * line.len();
        text.insert_str(at, &format!("token: {}\n", &KEY[5..60]));
        let started = std::time::Instant::now();
        let out = r.redact(&text).unwrap();
        let took = started.elapsed();
        assert!(!out.contains(&KEY[5..21]));
        assert_eq!(out.len(), text.len() - 55 + REDACTED.len());
        assert!(out.contains("\ntoken: [REDACTED]\ndrwx"));
        eprintln!("redacting 1 MB took {took:?}");
        // Measured 2 ms in release and 260 ms in an unoptimised test build on the 2-core dev
        // machine; the bounds leave room for a loaded box but fail for a scan per window.
        let bound = if cfg!(debug_assertions) { 3000 } else { 100 };
        assert!(took < std::time::Duration::from_millis(bound), "{took:?}");
    }
}
