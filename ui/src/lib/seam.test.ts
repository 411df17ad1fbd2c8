import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Views (components and App) reach the backend only through the stores and services: an import of the
// backend seam itself (api.ts), the in-browser fake or Tauri is refused by ESLint (eslint.config.js).
// This checks the rule fires on each, wherever the view sits, and leaves the stores' own imports alone.
const ui = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const eslint = new ESLint({ cwd: ui });

async function refused(file: string, importLine: string): Promise<string[]> {
  const code = `<script lang="ts">\n  ${importLine}\n  void x;\n</script>\n`;
  const [r] = await eslint.lintText(code, { filePath: join(ui, file) });
  return r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('views never import the backend', () => {
  const views = ['src/App.svelte', 'src/components/Probe.svelte', 'src/components/nested/Probe.svelte'];
  const from = (file: string) => (file === 'src/App.svelte' ? './lib' : file.includes('nested') ? '../../lib' : '../lib');

  it.each(views)('%s: api.ts, fake.ts and @tauri-apps/* are refused, even as types', async (file) => {
    const lib = from(file);
    for (const line of [
      `import { tauriBackend as x } from '${lib}/api';`,
      `import { pickBackend as x } from '${lib}/api.ts';`,
      `import type { Backend as x } from '${lib}/api';`,
      `import { createFakeBackend as x } from '${lib}/fake';`,
      `import { invoke as x } from '@tauri-apps/api/core';`,
      `import { open as x } from '@tauri-apps/plugin-dialog';`,
    ]) {
      expect(await refused(file, line), line).toHaveLength(1);
    }
  }, 30_000);

  it.each(views)('%s: the stores, services and errors are allowed', async (file) => {
    const lib = from(file);
    for (const line of [`import { useStores as x } from '${lib}/context';`, `import { toApiError as x } from '${lib}/errors';`, `import type { Stores as x } from '${lib}/stores';`]) {
      expect(await refused(file, line), line).toEqual([]);
    }
  }, 30_000);

  it('the views as they are pass it', async () => {
    const components = readdirSync(join(ui, 'src', 'components')).filter((f) => f.endsWith('.svelte'));
    expect(components.length).toBeGreaterThan(10);
    const results = await eslint.lintFiles(['src/App.svelte', ...components.map((f) => `src/components/${f}`)]);
    const hits = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `${r.filePath}: ${m.message}`));
    expect(hits).toEqual([]);
  }, 60_000);
});
