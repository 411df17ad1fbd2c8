//! The built-in profiles' defaults (the main agent's and its subagents'), as
//! `canopy-runtime/src/profiles.rs` defines them. There is no command for the defaults alone
//! (`ProfileInfo` carries budgets after settings overrides), so the settings screen shows these as
//! placeholders for empty override fields.

import type { Budgets, ModelSlot } from './types';

export interface BuiltinDefaults {
  model: ModelSlot;
  budgets: Budgets;
}

export const BUILTIN_DEFAULTS: Record<'main' | 'explore' | 'verify', BuiltinDefaults> = {
  main: { model: 'main', budgets: { max_steps: 60, max_context_tokens: 100_000, max_total_tokens: 2_000_000, max_wall_time_ms: 1_800_000 } },
  explore: { model: 'light', budgets: { max_steps: 12, max_context_tokens: 16_000, max_total_tokens: 128_000, max_wall_time_ms: 300_000 } },
  verify: { model: 'main', budgets: { max_steps: 16, max_context_tokens: 32_000, max_total_tokens: 96_000, max_wall_time_ms: 300_000 } },
};
