import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUILTIN_DEFAULTS } from './profiles';

// The settings screen shows these as the defaults of empty fields; a person must see the numbers the
// runtime really uses, so they are read back from the runtime's source.
const PROFILES_RS = fileURLToPath(new URL('../../../src-tauri/crates/canopy-runtime/src/profiles.rs', import.meta.url));

function rustBudgets(src: string, konst: string): Record<string, number> {
  const m = new RegExp(`pub const ${konst}: Budgets = Budgets \\{([^}]*)\\}`).exec(src);
  if (m === null) throw new Error(`${konst} not found in profiles.rs`);
  const out: Record<string, number> = {};
  for (const f of m[1].matchAll(/(\w+):\s*([\d_]+)/g)) out[f[1]] = Number(f[2].replaceAll('_', ''));
  return out;
}

describe('built-in profile defaults', () => {
  const src = readFileSync(PROFILES_RS, 'utf8');
  it('match the runtime budgets', () => {
    expect(BUILTIN_DEFAULTS.main.budgets).toEqual(rustBudgets(src, 'MAIN_BUDGETS'));
    expect(BUILTIN_DEFAULTS.explore.budgets).toEqual(rustBudgets(src, 'EXPLORE_BUDGETS'));
    expect(BUILTIN_DEFAULTS.verify.budgets).toEqual(rustBudgets(src, 'VERIFY_BUDGETS'));
  });
  it('match the runtime model slots', () => {
    for (const [name, d] of Object.entries(BUILTIN_DEFAULTS)) {
      const m = new RegExp(`name: "${name}"\\.into\\(\\),[\\s\\S]*?model: ModelSlot::(\\w+),`).exec(src);
      expect(m?.[1].toLowerCase(), name).toBe(d.model);
    }
  });
});
