// Generated from Rust by the canopy-app test `generated_constants_are_current`.
// Do not edit: change the Rust values and run `CANOPY_BLESS=1 cargo test -p canopy-app generated_constants`.

import type { Budgets, EvidenceTrust, ModelSlot, Preset } from './types';

/** The endpoints the settings screen offers to fill a model slot with (canopy-config `presets()`). */
export const PRESETS: readonly Preset[] = [
  {
    "id": "openai",
    "label": "OpenAI",
    "provider": "openai",
    "base_url": "https://api.openai.com/v1",
    "needs_key": true,
    "suggested_model": "gpt-4.1",
    "context_window": 128000
  },
  {
    "id": "anthropic",
    "label": "Anthropic",
    "provider": "anthropic",
    "base_url": "https://api.anthropic.com",
    "needs_key": true,
    "suggested_model": "claude-sonnet-4-5",
    "context_window": 200000
  },
  {
    "id": "ollama",
    "label": "Ollama (local)",
    "provider": "openai",
    "base_url": "http://127.0.0.1:11434/v1",
    "needs_key": false,
    "suggested_model": "qwen2.5-coder:7b",
    "context_window": 32768
  },
  {
    "id": "lmstudio",
    "label": "LM Studio (local)",
    "provider": "openai",
    "base_url": "http://127.0.0.1:1234/v1",
    "needs_key": false,
    "suggested_model": "",
    "context_window": 32768
  },
  {
    "id": "deepseek",
    "label": "DeepSeek",
    "provider": "openai",
    "base_url": "https://api.deepseek.com/v1",
    "needs_key": true,
    "suggested_model": "deepseek-chat",
    "context_window": 64000
  },
  {
    "id": "openrouter",
    "label": "OpenRouter",
    "provider": "openai",
    "base_url": "https://openrouter.ai/api/v1",
    "needs_key": true,
    "suggested_model": "openai/gpt-4.1",
    "context_window": 128000
  },
  {
    "id": "custom",
    "label": "Custom OpenAI-compatible",
    "provider": "openai",
    "base_url": "",
    "needs_key": true,
    "suggested_model": "",
    "context_window": 32768
  }
];

/** Most subagents a run may have going at once: `parallelism` is 1 to this (canopy-config). */
export const MAX_PARALLELISM = 16;

/** Fraction of a budget at which the runtime tells the agent to wrap up (canopy-runtime). */
export const WRAP_UP_THRESHOLD = 0.8;

/** A built-in profile's model slot and budgets before settings overrides (canopy-runtime). */
export interface BuiltinProfile {
  model: ModelSlot;
  budgets: Budgets;
}

/** The built-in profiles: the main agent first, then its subagents. */
export const BUILTIN_PROFILE_NAMES = ["main", "explore", "verify"] as const;

export type BuiltinProfileName = (typeof BUILTIN_PROFILE_NAMES)[number];

export const BUILTIN_PROFILES: Readonly<Record<BuiltinProfileName, BuiltinProfile>> = {
  "explore": {
    "budgets": {
      "max_context_tokens": 16000,
      "max_steps": 12,
      "max_total_tokens": 128000,
      "max_wall_time_ms": 300000
    },
    "model": "light"
  },
  "main": {
    "budgets": {
      "max_context_tokens": 100000,
      "max_steps": 60,
      "max_total_tokens": 2000000,
      "max_wall_time_ms": 1800000
    },
    "model": "main"
  },
  "verify": {
    "budgets": {
      "max_context_tokens": 32000,
      "max_steps": 16,
      "max_total_tokens": 96000,
      "max_wall_time_ms": 300000
    },
    "model": "main"
  }
};

/** Most lines one `read_project_file` call returns (the file viewer loads more as it scrolls). */
export const MAX_WINDOW_LINES = 5000;

/** Replay (`load_session`) sends tool outputs up to this many bytes inline; longer ones come as `output_elided`. */
export const REPLAY_INLINE_OUTPUT_BYTES = 256;

/** How the app prefixes each `CANOPY_*` override line among its startup warnings (canopy-config). */
export const ENV_OVERRIDE_WARNING = "Environment override in effect: ";

/** Language ids of whole (lower-cased) file names, tried before the extension (the file viewer's table). */
export const LANGUAGE_BY_NAME: Readonly<Record<string, string>> = {
  "cargo.lock": "toml",
  "containerfile": "dockerfile",
  "dockerfile": "dockerfile",
  "gnumakefile": "makefile",
  "makefile": "makefile"
};

/** Language ids by (lower-cased) extension (the file viewer's table). */
export const LANGUAGE_BY_EXTENSION: Readonly<Record<string, string>> = {
  "bash": "shell",
  "c": "c",
  "cc": "cpp",
  "cjs": "javascript",
  "cpp": "cpp",
  "cs": "csharp",
  "css": "css",
  "cts": "typescript",
  "cxx": "cpp",
  "dockerfile": "dockerfile",
  "go": "go",
  "h": "c",
  "hh": "cpp",
  "hpp": "cpp",
  "htm": "html",
  "html": "html",
  "hxx": "cpp",
  "java": "java",
  "js": "javascript",
  "json": "json",
  "jsonl": "json",
  "jsx": "jsx",
  "kt": "kotlin",
  "kts": "kotlin",
  "lua": "lua",
  "markdown": "markdown",
  "md": "markdown",
  "mjs": "javascript",
  "mk": "makefile",
  "mts": "typescript",
  "php": "php",
  "py": "python",
  "pyi": "python",
  "rb": "ruby",
  "rs": "rust",
  "scss": "scss",
  "sh": "shell",
  "sql": "sql",
  "svelte": "svelte",
  "svg": "xml",
  "swift": "swift",
  "toml": "toml",
  "ts": "typescript",
  "tsx": "tsx",
  "vue": "vue",
  "xml": "xml",
  "yaml": "yaml",
  "yml": "yaml",
  "zig": "zig",
  "zsh": "shell"
};

/** What a trust summary line counts the citations that are not grounded as, in order (canopy-protocol `TRUST_LINE_WORDS`). */
export const TRUST_LINE_WORDS: readonly (readonly [EvidenceTrust, string])[] = [
  [
    "file_seen",
    "file seen, line not"
  ],
  [
    "unseen",
    "unseen"
  ],
  [
    "quote_mismatch",
    "quote mismatch"
  ],
  [
    "stale",
    "stale"
  ],
  [
    "invalid",
    "invalid"
  ]
];
