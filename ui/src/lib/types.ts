//! The command-contract types of docs/commands.md. Every type comes from the generated file (ts-rs, from
//! the Rust side); this module adds only what has no command: the preset list and the channel callback.

export type * from '../generated/types';
import type { Preset, TraceRecord } from '../generated/types';

/** Mirrors canopy-config's `presets()` (there is no command for them). */
export const PRESETS: Preset[] = [
  { id: 'openai', label: 'OpenAI', provider: 'openai', base_url: 'https://api.openai.com/v1', needs_key: true, suggested_model: 'gpt-4.1', context_window: 128_000 },
  { id: 'anthropic', label: 'Anthropic', provider: 'anthropic', base_url: 'https://api.anthropic.com', needs_key: true, suggested_model: 'claude-sonnet-4-5', context_window: 200_000 },
  { id: 'ollama', label: 'Ollama (local)', provider: 'openai', base_url: 'http://127.0.0.1:11434/v1', needs_key: false, suggested_model: 'qwen2.5-coder:7b', context_window: 32_768 },
  { id: 'lmstudio', label: 'LM Studio (local)', provider: 'openai', base_url: 'http://127.0.0.1:1234/v1', needs_key: false, suggested_model: '', context_window: 32_768 },
  { id: 'deepseek', label: 'DeepSeek', provider: 'openai', base_url: 'https://api.deepseek.com/v1', needs_key: true, suggested_model: 'deepseek-chat', context_window: 64_000 },
  { id: 'openrouter', label: 'OpenRouter', provider: 'openai', base_url: 'https://openrouter.ai/api/v1', needs_key: true, suggested_model: 'openai/gpt-4.1', context_window: 128_000 },
  { id: 'custom', label: 'Custom OpenAI-compatible', provider: 'openai', base_url: '', needs_key: true, suggested_model: '', context_window: 32_768 },
];

export type OnEvents = (batch: TraceRecord[]) => void;
