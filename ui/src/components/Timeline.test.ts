import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { render } from 'svelte/server';
import { applyRecords, emptyState, finalizeRun, parseJsonl } from '../lib/reducer';
import { createFakeBackend } from '../lib/fake';
import { createStores } from '../lib/stores';
import Timeline from './Timeline.svelte';
import { storesContext } from '../lib/context';
import { toolKind } from '../lib/toolKind';

// The waterfall as a person reads it, for a run the real runtime recorded: two explore subagents that
// ran at the same time (tests/fixtures/traces/parallel-explore).
const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'fixtures', 'traces', 'parallel-explore');

function html(): string {
  const records = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => parseJsonl(readFileSync(join(dir, f), 'utf8')).records);
  const tree = finalizeRun(applyRecords(emptyState(), records));
  // The stores as App makes them, showing that recorded run (ended: nothing running, the clock unused).
  const stores = createStores(createFakeBackend());
  stores.session.tree = tree;
  stores.session.now = 0;
  return render(Timeline, { context: storesContext(stores) }).body;
}

interface Bar {
  left: number;
  width: number;
}

/** The `left`/`width` percentages of the elements with `cls` in one row's markup. */
function bars(row: string, cls: string): Bar[] {
  const re = new RegExp(`class="${cls}[^"]*"[^>]*style="left: ([\\d.]+)%; width: ([\\d.]+)%;`, 'g');
  return [...row.matchAll(re)].map((m) => ({ left: Number(m[1]), width: Number(m[2]) }));
}

describe('Timeline', () => {
  const body = html();
  const rows = body.split('data-testid="timeline-row"').slice(1);

  it('has one row per agent: the main agent, then its two subagents', () => {
    expect(rows.length).toBe(3);
    expect(rows[0]).toContain('Main agent');
    expect(rows.slice(1).map((r) => (r.includes('Find the login code') ? 'login' : r.includes('Find the config') ? 'config' : '?')).sort()).toEqual([
      'config',
      'login',
    ]);
  });

  it('draws the two subagents over the same stretch of time, inside the main agent', () => {
    const [main, a, b] = rows.map((r) => bars(r, 'life')[0]);
    for (const bar of [main, a, b]) expect(bar).toBeDefined();
    // Parallel: each starts before the other ends.
    expect(a.left).toBeLessThan(b.left + b.width);
    expect(b.left).toBeLessThan(a.left + a.width);
    for (const child of [a, b]) {
      expect(child.left).toBeGreaterThanOrEqual(main.left);
      expect(child.left + child.width).toBeLessThanOrEqual(main.left + main.width + 0.01);
    }
  });

  it('shows model calls and tool calls as segments inside each bar', () => {
    for (const row of rows) {
      const life = bars(row, 'life')[0];
      const segs = [...bars(row, 'seg model'), ...bars(row, 'seg tool')];
      expect(bars(row, 'seg model').length).toBeGreaterThan(0);
      for (const s of segs) {
        expect(s.left).toBeGreaterThanOrEqual(life.left - 0.01);
        expect(s.left).toBeLessThanOrEqual(life.left + life.width + 0.01);
      }
    }
    // The main agent waits on its two Task calls; each subagent made one Read.
    expect(bars(rows[0], 'seg tool').length).toBe(2);
    for (const row of rows.slice(1)) expect(bars(row, 'seg tool').length).toBe(1);
  });

  it('draws a call as waiting on a subagent by its tool kind (delegate), not by its name', () => {
    // Each tool segment's title starts with its tool's name; only the delegate kind's are `wait`.
    const segs = [...body.matchAll(/class="seg tool[^"]*"[^>]*title="([^ "]+)/g)].map((m) => ({ wait: /\bwait\b/.test(m[0].split('"')[1]), tool: m[1] }));
    expect(segs.length).toBe(4);
    for (const s of segs) expect(s.wait).toBe(toolKind(s.tool) === 'delegate');
    expect(segs.filter((s) => s.wait).length).toBe(2);
  });
});
