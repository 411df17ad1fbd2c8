import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import NodeDetails from './NodeDetails.svelte';
import Tree from './Tree.svelte';
import { storesContext } from '../lib/context';
import { createFakeBackend } from '../lib/fake';
import { DEMO_ROOT } from '../lib/fixtures/demo';
import { createStores } from '../lib/stores';
import { applyRecords, emptyState, finalizeRun } from '../lib/reducer';
import { deriveTrust, summarize } from '../lib/trust';
import type { CheckedEvidence, SubagentResult, TraceEvent, TraceRecord } from '../lib/types';

// The details and the tree mounted as App mounts them, over a replayed session: opening a result
// re-checks its evidence through the backend seam, and what comes back is shown without touching the tree.
function cite(path: string, line: number, over: Partial<CheckedEvidence> = {}): CheckedEvidence {
  const e: CheckedEvidence = { raw: `${path}:${line}`, path, line, end_line: null, state: 'valid', text: `text ${line}`, provenance: 'seen', ...over };
  const t = deriveTrust(e);
  if (t !== undefined) e.trust = t;
  return e;
}

function result(evidence: CheckedEvidence[], over: Partial<SubagentResult> = {}): SubagentResult {
  const trust = summarize(evidence);
  return { status: 'completed', summary: 's', findings: ['f'], evidence, unresolved_questions: [], verdict: null, reasons: [], ...(trust !== null ? { trust } : {}), ...over };
}

let seq = 0;
const rec = (session: string, parent: string | null, event: TraceEvent): TraceRecord =>
  ({ v: 1, seq: seq++, ts_ms: 1000 + seq, session_id: session, run_id: 'r', parent_session_id: parent, event }) as TraceRecord;
const done = (child: string, r: SubagentResult): TraceEvent =>
  ({ type: 'subagent_completed', child_session_id: child, tool_call_id: `c-${child}`, result: r, usage: { input_tokens: 1, output_tokens: 1, estimated: false }, tool_calls: 1, elapsed_ms: 5, terminal_reason: 'completed' }) as TraceEvent;

const seen = cite('src/pool.rs', 30);
const unseen = cite('src/net.rs', 3, { provenance: 'unseen' });

async function setup(recheck?: (items: CheckedEvidence[]) => CheckedEvidence[]) {
  const backend = createFakeBackend();
  const calls: CheckedEvidence[][] = [];
  const real = backend.recheckEvidence.bind(backend);
  backend.recheckEvidence = async (items) => {
    calls.push(items);
    if (recheck === undefined) return real(items);
    const now = recheck(items);
    return { items: now, trust: summarize(now) };
  };
  await backend.openProject(DEMO_ROOT);
  const stores = createStores(backend);
  const { session } = stores;
  session.tree = finalizeRun(
    applyRecords(emptyState(), [
      rec('main', null, { type: 'run_started', prompt: 'p' }),
      rec('main', null, { type: 'subagent_requested', child_session_id: 'good', tool_call_id: 'c-good', profile: 'explore', description: 'Grounded one', prompt: 'x', model_slot: 'light' } as TraceEvent),
      rec('main', null, done('good', result([seen, unseen]))),
      rec('main', null, { type: 'subagent_requested', child_session_id: 'guess', tool_call_id: 'c-guess', profile: 'explore', description: 'A guess', prompt: 'x', model_slot: 'light' } as TraceEvent),
      rec('main', null, done('guess', result([], { unsupported: 'no_tool_calls' }))),
      rec('main', null, { type: 'run_ended', terminal_reason: 'completed', final_text: 'ok', result: null, error: null, usage: { input_tokens: 1, output_tokens: 1, estimated: false }, usage_with_descendants: { input_tokens: 1, output_tokens: 1, estimated: false }, totals: { steps: 1, context_tokens: 1, total_tokens: 2, wall_time_ms: 5 }, tool_calls: 2 } as TraceEvent),
    ]),
  );
  session.pane = { kind: 'replay' };
  return { stores, session, calls };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await tick();
  await new Promise((r) => setTimeout(r, 60));
  for (let i = 0; i < 5; i++) await tick();
  flushSync();
}

describe('evidence opened in the details', () => {
  let view: Record<string, unknown> | null = null;
  afterEach(() => {
    if (view !== null) unmount(view);
    view = null;
    document.body.innerHTML = '';
  });

  it('is re-checked once, and a file changed since shows stale with its line then and now; the tree keeps the recorded result', async () => {
    const { stores, session, calls } = await setup((items) =>
      items.map((e) => (e.path === 'src/pool.rs' ? { ...e, stale: true, trust: 'stale', seen_text: 'text 30', text: 'renamed 30' } : e)),
    );
    const target = document.createElement('div');
    document.body.appendChild(target);
    view = mount(NodeDetails, { target, props: { id: 'good' }, context: storesContext(stores) });
    await settle();
    expect(calls).toHaveLength(1);
    expect(calls[0].map((e) => e.raw)).toEqual(['src/pool.rs:30', 'src/net.rs:3']);
    const marks = [...target.querySelectorAll('[data-testid="evidence-trust"]')];
    expect(marks.map((m) => m.getAttribute('data-trust'))).toEqual(['stale', 'unseen']);
    expect(marks[0].getAttribute('title')).toBe('Changed since the subagent read it');
    expect(marks[1].getAttribute('title')).toBe('The subagent never opened this file');
    expect(target.querySelector('[data-testid="evidence-then-now"]')?.textContent).toMatch(/then\s*text 30\s*now\s*renamed 30/);
    expect(target.querySelector('[data-testid="details-trust"]')?.textContent).toContain('0 of 2 citations seen and valid · 1 unseen · 1 stale');
    expect(target.querySelector('[data-rechecked]')?.getAttribute('data-rechecked')).toBe('true');
    // The trace as recorded is untouched.
    expect(session.tree.nodes.get('good')?.result?.evidence[0].trust).toBe('grounded');
    // Opening the stale citation tells the viewer so.
    target.querySelector<HTMLButtonElement>('[data-testid="evidence-link"]')?.click();
    await settle();
    expect(stores.fileViewer.file?.stale).toEqual({ reader: 'the subagent', then: 'text 30', now: 'renamed 30' });
  });

  it('says why an unsupported result is unsupported', async () => {
    const { stores } = await setup();
    const target = document.createElement('div');
    document.body.appendChild(target);
    view = mount(NodeDetails, { target, props: { id: 'guess' }, context: storesContext(stores) });
    await settle();
    const why = target.querySelector('[data-testid="details-unsupported"]');
    expect(why?.getAttribute('data-reason')).toBe('no_tool_calls');
    expect(why?.textContent).toMatch(/after zero tool calls/);
  });
});

describe('the tree', () => {
  let view: Record<string, unknown> | null = null;
  afterEach(() => {
    if (view !== null) unmount(view);
    view = null;
    document.body.innerHTML = '';
  });

  it('carries a trust badge per result and filters to unsupported agents', async () => {
    const { stores } = await setup();
    const target = document.createElement('div');
    target.style.height = '600px';
    document.body.appendChild(target);
    view = mount(Tree, { target, context: storesContext(stores) });
    await settle();
    const badge = (id: string) => target.querySelector(`[data-session-id="${id}"] [data-testid="node-trust"]`);
    expect(badge('good')?.textContent).toBe('1/2 ✓');
    expect(badge('good')?.getAttribute('title')).toBe('1 of 2 citations seen and valid · 1 unseen');
    expect(badge('guess')?.textContent).toBe('⚠ unsupported');
    expect(badge('guess')?.getAttribute('data-unsupported')).toBe('no_tool_calls');
    expect(badge('main')).toBeNull();
    const rows = () => [...target.querySelectorAll('[data-testid="tree-node"]')].map((r) => r.getAttribute('data-session-id'));
    expect(rows()).toEqual(['main', 'good', 'guess']);
    target.querySelector<HTMLInputElement>('[data-testid="filter-unsupported-toggle"]')?.click();
    await settle();
    expect(rows()).toEqual(['main', 'guess']);
  });
});
