//! What differs between OpenAI-compatible servers and model families, and what the client learned
//! about an endpoint while running: which token parameter a model takes, whether it accepts a
//! temperature or a reasoning effort, whether the endpoint is an Ollama server and how long its
//! model's context is. Learned facts live in a [`Quirks`] cache the host shares (an `Arc`) across
//! every client it builds, keyed by endpoint and model, for the life of the runtime.

use std::collections::HashMap;
use std::sync::Mutex;

use canopy_protocol::ReasoningEffort;

/// Which output-cap parameter a Chat Completions request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenParam {
    /// `max_tokens`: what most OpenAI-compatible servers (Ollama, vLLM, LM Studio…) expect.
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI's and Azure's endpoints expect (and reasoning models
    /// require).
    MaxCompletionTokens,
}

impl TokenParam {
    /// The JSON field name.
    pub fn field(self) -> &'static str {
        match self {
            TokenParam::MaxTokens => "max_tokens",
            TokenParam::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    fn other(self) -> TokenParam {
        match self {
            TokenParam::MaxTokens => TokenParam::MaxCompletionTokens,
            TokenParam::MaxCompletionTokens => TokenParam::MaxTokens,
        }
    }
}

/// What the client learned about one endpoint + model from the server's own rejections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Adaptation {
    /// The token parameter the server accepted instead of the default, if it rejected the default.
    pub token_param: Option<TokenParam>,
    /// The server rejected `temperature`.
    pub no_temperature: bool,
    /// The server rejected `reasoning_effort`.
    pub no_reasoning_effort: bool,
}

/// An Ollama server as probed once per endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OllamaProbe {
    /// `GET /api/version` answered: it is Ollama.
    Ollama,
    /// It did not: some other OpenAI-compatible server.
    NotOllama,
}

/// Learned facts, shared by every client of a runtime. Cheap to clone behind an `Arc`.
#[derive(Debug, Default)]
pub struct Quirks {
    adaptations: Mutex<HashMap<(String, String), Adaptation>>,
    ollama: Mutex<HashMap<String, OllamaProbe>>,
    context_lengths: Mutex<HashMap<(String, String), Option<u64>>>,
    num_ctx: Mutex<HashMap<(String, String), u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Quirks {
    /// An empty cache.
    pub fn new() -> Self {
        Quirks::default()
    }

    /// What was learned for `endpoint` + `model` (nothing yet: the default).
    pub fn adaptation(&self, endpoint: &str, model: &str) -> Adaptation {
        lock(&self.adaptations)
            .get(&(endpoint.to_string(), model.to_string()))
            .copied()
            .unwrap_or_default()
    }

    pub(crate) fn set_adaptation(&self, endpoint: &str, model: &str, a: Adaptation) {
        lock(&self.adaptations).insert((endpoint.to_string(), model.to_string()), a);
    }

    pub(crate) fn ollama(&self, endpoint: &str) -> Option<OllamaProbe> {
        lock(&self.ollama).get(endpoint).copied()
    }

    pub(crate) fn set_ollama(&self, endpoint: &str, probe: OllamaProbe) {
        lock(&self.ollama).insert(endpoint.to_string(), probe);
    }

    /// The context length an Ollama server reported for `model`, once asked (`Some(None)`: asked,
    /// not reported).
    pub(crate) fn context_length(&self, endpoint: &str, model: &str) -> Option<Option<u64>> {
        lock(&self.context_lengths)
            .get(&(endpoint.to_string(), model.to_string()))
            .copied()
    }

    /// Records the `num_ctx` used for `endpoint` + `model`; true when it is new or changed (worth
    /// announcing once).
    pub(crate) fn note_num_ctx(&self, endpoint: &str, model: &str, n: u64) -> bool {
        lock(&self.num_ctx).insert((endpoint.to_string(), model.to_string()), n) != Some(n)
    }

    pub(crate) fn set_context_length(&self, endpoint: &str, model: &str, n: Option<u64>) {
        lock(&self.context_lengths).insert((endpoint.to_string(), model.to_string()), n);
    }
}

/// The host of a base URL, lower-case, without port.
pub(crate) fn host_of(base_url: &str) -> String {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, r)| r)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("");
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split_once(']')
            .map_or(host, |(h, _)| h)
            .trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or(host)
    };
    host.to_ascii_lowercase()
}

fn port_of(base_url: &str) -> Option<u16> {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let after_host = authority.rsplit_once(']').map_or(authority, |(_, p)| p);
    after_host.rsplit_once(':')?.1.parse().ok()
}

/// OpenAI's own API.
pub(crate) fn is_openai_host(base_url: &str) -> bool {
    host_of(base_url) == "api.openai.com"
}

/// Azure OpenAI (`RESOURCE.openai.azure.com`, `RESOURCE.cognitiveservices.azure.com`).
pub(crate) fn is_azure_host(base_url: &str) -> bool {
    let h = host_of(base_url);
    h.ends_with(".openai.azure.com") || h.ends_with(".cognitiveservices.azure.com")
}

/// Where an Ollama server may run: this machine, a private network, or Ollama's port anywhere.
/// Only such endpoints are probed with `GET /api/version`, so cloud APIs never see the probe.
pub(crate) fn may_be_ollama(base_url: &str) -> bool {
    if port_of(base_url) == Some(11434) {
        return true;
    }
    let h = host_of(base_url);
    if h == "localhost" || h.ends_with(".local") || h.ends_with(".localhost") {
        return true;
    }
    match h.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback(),
        Err(_) => false,
    }
}

/// OpenAI reasoning model families, recognised by model id (with any `vendor/` prefix removed,
/// as OpenRouter and proxies write them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningFamily {
    /// o1, o3, o4-mini…: low/medium/high effort.
    OSeries,
    /// The gpt-5 family (not its `-chat` variants): minimal/low/medium/high effort.
    Gpt5,
}

/// The reasoning family of `model`, if it is an OpenAI reasoning model.
pub fn reasoning_family(model: &str) -> Option<ReasoningFamily> {
    let id = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = ["o1", "o3", "o4"].iter().any(|p| {
        id.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    if o_series {
        return Some(ReasoningFamily::OSeries);
    }
    if id.starts_with("gpt-5") && !id.contains("-chat") {
        return Some(ReasoningFamily::Gpt5);
    }
    None
}

/// The `reasoning_effort` value to send for `family`: `minimal` exists only for gpt-5.
pub(crate) fn effort_for(family: ReasoningFamily, effort: ReasoningEffort) -> &'static str {
    match (family, effort) {
        (ReasoningFamily::OSeries, ReasoningEffort::Minimal) => "low",
        (_, e) => e.as_str(),
    }
}

/// The request parameter a 400 says the server does not support, as OpenAI and compatible servers
/// word it ("Unsupported parameter: 'max_tokens' …", "Unsupported value: 'temperature' …",
/// "Unrecognized request argument supplied: reasoning_effort", "extra inputs are not permitted").
/// The parameter named first is the one rejected: OpenAI's message goes on to name the other token
/// parameter as the fix.
pub(crate) fn unsupported_param(message: &str) -> Option<&'static str> {
    let m = message.to_ascii_lowercase();
    let complains = [
        "unsupported",
        "not supported",
        "unrecognized",
        "unknown parameter",
        "not permitted",
        "not allowed",
        "does not support",
    ]
    .iter()
    .any(|w| m.contains(w));
    if !complains {
        return None;
    }
    [
        "max_completion_tokens",
        "max_tokens",
        "temperature",
        "reasoning_effort",
    ]
    .into_iter()
    .filter_map(|p| {
        // `max_tokens` must not match inside `max_completion_tokens`: look for whole words.
        m.match_indices(p)
            .find(|(i, _)| {
                let before = m[..*i].chars().next_back();
                let after = m[i + p.len()..].chars().next();
                let word =
                    |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                !word(before) && !word(after)
            })
            .map(|(i, _)| (i, p))
    })
    .min_by_key(|(i, _)| *i)
    .map(|(_, p)| p)
}

impl Adaptation {
    /// The adaptation after the server rejected `param` in a request that used `token_param`; `None`
    /// when there is nothing left to change for it. Returns the description of the change too.
    pub(crate) fn after_rejection(
        self,
        param: &str,
        token_param: TokenParam,
        sent: &serde_json::Value,
    ) -> Option<(Adaptation, String)> {
        let mut next = self;
        let change = match param {
            "max_tokens" | "max_completion_tokens" if token_param.field() == param => {
                let other = token_param.other();
                if self.token_param == Some(other) {
                    return None;
                }
                next.token_param = Some(other);
                format!("{param} -> {}", other.field())
            }
            "temperature" if sent.get("temperature").is_some() && !self.no_temperature => {
                next.no_temperature = true;
                "temperature dropped".to_string()
            }
            "reasoning_effort"
                if sent.get("reasoning_effort").is_some() && !self.no_reasoning_effort =>
            {
                next.no_reasoning_effort = true;
                "reasoning_effort dropped".to_string()
            }
            _ => return None,
        };
        Some((next, change))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rejected_parameter_is_the_first_one_named() {
        let openai = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
        assert_eq!(unsupported_param(openai), Some("max_tokens"));
        let back = "Unrecognized request argument supplied: max_completion_tokens";
        assert_eq!(unsupported_param(back), Some("max_completion_tokens"));
        let temp = "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.";
        assert_eq!(unsupported_param(temp), Some("temperature"));
        assert_eq!(unsupported_param("bad tools"), None);
        assert_eq!(unsupported_param("max_tokens is too large: 90000"), None);
    }

    #[test]
    fn reasoning_models_are_known_by_id() {
        for id in [
            "o1",
            "o3-mini",
            "o4-mini-2025-04-16",
            "openai/o3",
            "gpt-5",
            "gpt-5.4-mini",
            "GPT-5.2",
        ] {
            assert!(reasoning_family(id).is_some(), "{id}");
        }
        for id in [
            "gpt-4.1",
            "gpt-4o",
            "gpt-5-chat-latest",
            "omni",
            "o10x",
            "deepseek-reasoner",
            "qwen3:8b",
        ] {
            assert!(reasoning_family(id).is_none(), "{id}");
        }
    }

    #[test]
    fn hosts_are_classified() {
        assert!(is_openai_host("https://api.openai.com/v1"));
        assert!(is_azure_host("https://my-res.openai.azure.com/openai/v1"));
        assert!(!is_openai_host("https://openrouter.ai/api/v1"));
        assert!(may_be_ollama("http://127.0.0.1:11434/v1"));
        assert!(may_be_ollama("http://gpu-box:11434/v1"));
        assert!(may_be_ollama("http://192.168.1.20:8080/v1"));
        assert!(may_be_ollama("http://localhost:1234/v1"));
        assert!(!may_be_ollama("https://api.openai.com/v1"));
        assert!(!may_be_ollama("https://api.deepseek.com/v1"));
    }
}
