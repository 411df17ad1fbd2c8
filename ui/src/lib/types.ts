//! The command-contract types of docs/commands.md. Protocol types come from the generated file; the
//! settings types mirror canopy-config's `Settings` until they are appended to `src/generated/`.

export type * from '../generated/types';
import type { ModelSlot, ProviderKind, TraceRecord } from '../generated/types';

export interface CommandError {
  code: string;
  message: string;
}

export interface ProfileInfo {
  name: string;
  description?: string;
  [key: string]: unknown;
}

export interface ProjectInfo {
  root: string;
  name: string;
  profiles: ProfileInfo[];
  profile_errors: { path: string; reason: string }[];
}

export interface RecentProject {
  root: string;
  name: string;
  last_opened_ms: number;
}

export interface RunHandle {
  session_id: string;
  run_id: string;
}

export type SessionStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

export interface SessionSummary {
  session_id: string;
  started_ms: number;
  title: string;
  status: SessionStatus;
  terminal_reason: string | null;
  total_tokens: number;
}

export interface FileWindow {
  path: string;
  total_lines: number;
  start_line: number;
  lines: string[];
  language: string | null;
}

export interface ConnectionTest {
  ok: boolean;
  latency_ms: number | null;
  model: string | null;
  error: string | null;
}

export interface OllamaDetection {
  found: boolean;
  base_url: string | null;
  models: string[];
}

export interface KeyStatus {
  state: 'present' | 'absent' | 'unavailable';
  source: 'keychain' | 'env' | null;
  reason: string | null;
}

export type ApprovalAnswer = 'allow_once' | 'allow_session' | 'deny';

export type PolicyAction = 'allow' | 'ask' | 'deny';

export interface PermissionPolicy {
  edit: PolicyAction;
  write: PolicyAction;
  bash: PolicyAction;
  task: PolicyAction;
}

export interface ModelSlotConfig {
  provider: ProviderKind;
  base_url: string;
  model: string;
  context_window: number;
  input_price_per_mtok: number | null;
  output_price_per_mtok: number | null;
  max_output_tokens: number;
}

export interface ProfileOverrides {
  model: ModelSlot | null;
  max_steps: number | null;
  max_context_tokens: number | null;
  max_total_tokens: number | null;
  max_wall_time_ms: number | null;
}

export interface Settings {
  version: number;
  main: ModelSlotConfig;
  light: ModelSlotConfig | null;
  profiles: { [name: string]: ProfileOverrides | undefined };
  parallelism: number;
  permissions: PermissionPolicy;
  verification_gate: boolean;
}

export interface Preset {
  id: string;
  label: string;
  provider: ProviderKind;
  base_url: string;
  needs_key: boolean;
  suggested_model: string;
  context_window: number;
}

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
