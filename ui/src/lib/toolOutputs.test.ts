import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './errors';
import { createFakeBackend, INLINE_OUTPUT_BYTES } from './fake';
import { DEMO_ROOT } from './fixtures/demo';
import { applyRecords, emptyState } from './reducer';
import { createStores } from './stores';
import { ToolOutputCache } from './toolOutputs';

/** A fetch the test answers by hand, counting every call. */
function manualFetch() {
  const calls: { sessionId: string; callId: string; resolve: (s: string) => void; reject: (e: unknown) => void }[] = [];
  const fetch = (sessionId: string, callId: string) =>
    new Promise<string>((resolve, reject) => {
      calls.push({ sessionId, callId, resolve, reject });
    });
  return { calls, fetch };
}

describe('tool output cache', () => {
  it('fetches once: concurrent and later asks share the first answer', async () => {
    const { calls, fetch } = manualFetch();
    const c = new ToolOutputCache(fetch);
    expect(c.peek('s1', 'call_1')).toBeUndefined();
    const a = c.load('s1', 'call_1');
    const b = c.load('s1', 'call_1');
    expect(c.peek('s1', 'call_1')).toEqual({ state: 'loading' });
    expect(calls.map((x) => [x.sessionId, x.callId])).toEqual([['s1', 'call_1']]);
    calls[0].resolve('fn main() {}\n');
    expect(await a).toEqual({ state: 'ready', text: 'fn main() {}\n' });
    expect(await b).toEqual({ state: 'ready', text: 'fn main() {}\n' });
    // Collapsing and expanding again (or the row being recreated by the virtual list) does not refetch.
    expect(c.peek('s1', 'call_1')).toEqual({ state: 'ready', text: 'fn main() {}\n' });
    expect(await c.load('s1', 'call_1')).toEqual({ state: 'ready', text: 'fn main() {}\n' });
    expect(calls.length).toBe(1);
  });

  it('keys by session and call: the same call id in another session is another output', async () => {
    const { calls, fetch } = manualFetch();
    const c = new ToolOutputCache(fetch);
    const a = c.load('root', 'call_1');
    const b = c.load('child', 'call_1');
    expect(calls.length).toBe(2);
    calls[0].resolve('root output');
    calls[1].resolve('child output');
    expect(await a).toEqual({ state: 'ready', text: 'root output' });
    expect(await b).toEqual({ state: 'ready', text: 'child output' });
  });

  it('keeps a failure with the backend message until retry, which asks again', async () => {
    const { calls, fetch } = manualFetch();
    const c = new ToolOutputCache(fetch);
    const first = c.load('s1', 'call_1');
    calls[0].reject({ code: 'not_found', message: 'the trace file of session s1 is gone' });
    expect(await first).toEqual({ state: 'error', message: 'the trace file of session s1 is gone' });
    expect(await c.load('s1', 'call_1')).toEqual({ state: 'error', message: 'the trace file of session s1 is gone' });
    expect(calls.length).toBe(1);
    const again = c.retry('s1', 'call_1');
    expect(c.peek('s1', 'call_1')).toEqual({ state: 'loading' });
    expect(calls.length).toBe(2);
    calls[1].resolve('found it');
    expect(await again).toEqual({ state: 'ready', text: 'found it' });
    // Retrying something already loaded does not fetch it again.
    await c.retry('s1', 'call_1');
    expect(calls.length).toBe(2);
  });

  it('says plainly when the session\'s trace file is gone, and keeps other reasons as the backend gave them', async () => {
    const { calls, fetch } = manualFetch();
    const c = new ToolOutputCache(fetch);
    const gone = c.load('s-0000000000000000', 'call_1');
    const missingCall = c.load('s1', 'call_9');
    // What load_tool_output answers when the file is not there (trace_reader: UnknownSession -> session_gone).
    calls[0].reject({ code: 'session_gone', message: 'unknown session `s-0000000000000000`' });
    calls[1].reject({ code: 'not_found', message: 'no tool call `call_9` in session `s1`' });
    expect(await gone).toEqual({ state: 'error', message: 'The trace file of this session is gone, so this result cannot be shown.' });
    expect(await missingCall).toEqual({ state: 'error', message: 'no tool call `call_9` in session `s1`' });
  });

  it('drops answers that arrive after clear (another session is shown)', async () => {
    const { calls, fetch } = manualFetch();
    const c = new ToolOutputCache(fetch);
    const old = c.load('s1', 'call_1');
    c.clear();
    calls[0].resolve('late');
    expect(await old).toEqual({ state: 'ready', text: 'late' });
    expect(c.peek('s1', 'call_1')).toBeUndefined();
    const fresh = c.load('s1', 'call_1');
    expect(calls.length).toBe(2);
    calls[1].resolve('new');
    expect(await fresh).toEqual({ state: 'ready', text: 'new' });
  });
});

// The browser preview takes the same lazy path as the session: replay leaves long outputs out, and they come
// back through loadToolOutput.
describe('demo backend: outputs left out of a replay', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function opened() {
    const be = createFakeBackend();
    const open = be.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    return be;
  }

  it('elides exactly the outputs over the limit and returns each one in full', async () => {
    const be = await opened();
    const [past] = await be.listSessions();
    const records = await be.loadSession(past.session_id);
    const ends = records.flatMap((r) => (r.event.type === 'tool_call_end' ? [{ session: r.session_id, e: r.event }] : []));
    const elided = ends.filter((x) => x.e.output_elided === true);
    const inline = ends.filter((x) => x.e.output_elided !== true);
    expect(elided.length).toBeGreaterThan(0);
    expect(inline.length).toBeGreaterThan(0);
    for (const x of elided) {
      expect(x.e.output, x.e.call_id).toBe('');
      const full = be.loadToolOutput(x.session, x.e.call_id);
      await vi.advanceTimersByTimeAsync(200);
      const text = await full;
      expect(new TextEncoder().encode(text).length, x.e.call_id).toBeGreaterThan(INLINE_OUTPUT_BYTES);
      expect(new TextEncoder().encode(text).length, x.e.call_id).toBe(x.e.output_bytes);
    }
    for (const x of inline) expect(new TextEncoder().encode(x.e.output).length, x.e.call_id).toBeLessThanOrEqual(INLINE_OUTPUT_BYTES);
    // The tree marks them, so the conversation knows to fetch.
    const s = applyRecords(emptyState(), records);
    const tools = [...s.nodes.values()].flatMap((n) => n.items).filter((i) => i.kind === 'tool');
    expect(tools.filter((t) => t.kind === 'tool' && t.outputElided).length).toBe(elided.length);
  });

  it('says which call it could not find', async () => {
    const be = await opened();
    const missing = be.loadToolOutput('explore-loop-1c2d', 'call_nope').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(200);
    const err = await missing;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('not_found');
    expect((err as ApiError).message).toContain('call_nope');
  });

  it('the store fetches a replayed output once and forgets it when another session is opened', async () => {
    const be = await opened();
    const spy = vi.spyOn(be, 'loadToolOutput');
    const stores = createStores(be);
    const { session } = stores;
    const [past] = await be.listSessions();
    await session.loadHistory(past.session_id);
    expect(stores.notices.error).toBeNull();
    const child = session.tree.nodes.get('explore-loop-1c2d');
    const item = child?.items.find((i) => i.kind === 'tool' && i.outputElided);
    if (item === undefined) throw new Error('the replayed explorer has no elided output');
    const first = session.toolOutputs.load('explore-loop-1c2d', item.id);
    await vi.advanceTimersByTimeAsync(200);
    const out = await first;
    expect(out.state).toBe('ready');
    expect(out.state === 'ready' && out.text.startsWith('// src/')).toBe(true);
    await session.toolOutputs.load('explore-loop-1c2d', item.id);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy).toHaveBeenCalledWith('explore-loop-1c2d', item.id);
    await session.loadHistory(past.session_id);
    expect(session.toolOutputs.peek('explore-loop-1c2d', item.id)).toBeUndefined();
  });
});
