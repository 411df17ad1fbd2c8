import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyRecords, emptyState, finalizeRun, parseJsonl, reduce, type TreeState } from './reducer';
import { budgetBars, budgetState, costOf, elapsedMs, evidenceView, totalTokens, visibleRows } from './derive';
import { demoRun, demoRunInteractive } from './fixtures/demo';
import type { TraceRecord } from '../generated/types';

const here = dirname(fileURLToPath(import.meta.url));

function load(name: string): TraceRecord[] {
  const { records, errors } = parseJsonl(readFileSync(join(here, 'fixtures', name), 'utf8'));
  expect(errors).toEqual([]);
  return records;
}

function node(s: TreeState, id: string) {
  const n = s.nodes.get(id);
  if (n === undefined) throw new Error(`no node ${id}`);
  return n;
}

describe('session tree from the demo run', () => {
  const recs = demoRun(1_000_000);
  const s = applyRecords(emptyState(), recs);

  it('links three explorers under the main session in request order', () => {
    const root = node(s, s.rootId as string);
    expect(root.agent).toBe('main');
    expect(root.children).toEqual(['explore-loop-1c2d', 'explore-timeout-9e41', 'explore-errors-5b77']);
    expect(root.children.map((c) => node(s, c).label)).toEqual([
      'Map connection lifecycle',
      'Inspect idle-timeout handling',
      'Check error paths that close sockets',
    ]);
  });

  it('derives statuses, reasons and the exhausted budget', () => {
    expect(node(s, 'main-7f3a').status).toBe('completed');
    expect(node(s, 'explore-loop-1c2d').status).toBe('completed');
    const errs = node(s, 'explore-errors-5b77');
    expect(errs.status).toBe('partial');
    expect(errs.terminalReason).toBe('token_budget');
    expect(errs.exhausted).toBe('total_tokens');
    const bars = budgetBars(errs, 0);
    expect(bars.find((b) => b.kind === 'total_tokens')?.state).toBe('exhausted');
    expect(bars.find((b) => b.kind === 'steps')?.state).not.toBe('exhausted');
  });

  it('rolls child tokens up into the root total', () => {
    const sumOwn = [...s.nodes.values()].reduce((a, n) => a + n.ownTokens.input + n.ownTokens.output, 0);
    const fromEvents = recs.reduce(
      (a, r) => (r.event.type === 'model_call_end' ? a + r.event.usage.input_tokens + r.event.usage.output_tokens : a),
      0,
    );
    expect(sumOwn).toBe(fromEvents);
    expect(totalTokens(node(s, 'main-7f3a').subtreeTokens)).toBe(fromEvents);
    const child = node(s, 'explore-loop-1c2d');
    expect(totalTokens(child.subtreeTokens)).toBe(child.ownTokens.input + child.ownTokens.output);
    // The fallback child ran on main, so its tokens are priced as main.
    expect(node(s, 'explore-timeout-9e41').subtreeTokens.light.input).toBe(0);
  });

  it('replaces streamed text by the final text and keeps tool calls with results', () => {
    const root = node(s, 'main-7f3a');
    const streaming = root.items.filter((i) => i.kind === 'assistant' && i.streaming);
    expect(streaming).toEqual([]);
    const edit = root.items.find((i) => i.kind === 'tool' && i.id === 'call_edit1');
    expect(edit?.kind === 'tool' && edit.permission?.state).toBe('allow');
    expect(edit?.kind === 'tool' && edit.status).toBe('ok');
    const task = root.items.find((i) => i.kind === 'tool' && i.id === 'call_task_b');
    expect(task?.kind === 'tool' && task.childSessionId).toBe('explore-timeout-9e41');
  });

  it('gives the same tree whether records come one by one or in one batch', () => {
    let one = emptyState();
    for (const r of recs) one = reduce(one, r);
    for (const [id, n] of s.nodes) {
      const m = node(one, id);
      expect(m.status).toBe(n.status);
      expect(m.subtreeTokens).toEqual(n.subtreeTokens);
      expect(m.items.length).toBe(n.items.length);
    }
  });

  it('never modifies the input state', () => {
    const half = applyRecords(emptyState(), recs.slice(0, 40));
    const snapshot = JSON.stringify([...half.nodes.values()]);
    applyRecords(half, recs.slice(40));
    expect(JSON.stringify([...half.nodes.values()])).toBe(snapshot);
  });
});

describe('streaming and approvals', () => {
  it('accumulates assistant_delta text while the call runs', () => {
    const { first } = demoRunInteractive(0);
    const upToFirstDelta = first.findIndex((r) => r.event.type === 'assistant_delta');
    let s = applyRecords(emptyState(), first.slice(0, upToFirstDelta + 2));
    const item = node(s, 'main-7f3a').items.find((i) => i.kind === 'assistant');
    expect(item?.kind === 'assistant' && item.streaming).toBe(true);
    expect(item?.kind === 'assistant' && item.text.length).toBeGreaterThan(0);
    s = applyRecords(emptyState(), first);
    expect(node(s, 'main-7f3a').pendingApprovals).toBe(1);
    expect(node(s, 'main-7f3a').status).toBe('running');
  });

  it('records a denial from the user', () => {
    const { first, rest } = demoRunInteractive(0);
    const s = applyRecords(applyRecords(emptyState(), first), rest('deny', 200_000));
    const root = node(s, 'main-7f3a');
    expect(root.pendingApprovals).toBe(0);
    const edit = root.items.find((i) => i.kind === 'tool' && i.id === 'call_edit1');
    expect(edit?.kind === 'tool' && edit.permission?.state).toBe('deny');
    expect(edit?.kind === 'tool' && edit.status).toBe('denied');
    expect(root.status).toBe('completed');
  });
});

describe('interrupted runs loaded from history', () => {
  it('marks nodes without run_ended as interrupted and queued ones too', () => {
    const s = finalizeRun(applyRecords(emptyState(), load('interrupted.jsonl')));
    expect(node(s, 'root').status).toBe('interrupted');
    expect(node(s, 'c1').status).toBe('interrupted');
    expect(node(s, 'c2').status).toBe('completed');
    expect(node(s, 'c3').status).toBe('interrupted');
    const c1 = node(s, 'c1');
    expect(c1.spans.every((sp) => sp.end !== null)).toBe(true);
    const partialText = c1.items.find((i) => i.kind === 'assistant');
    expect(partialText?.kind === 'assistant' && partialText.text).toBe('The parser is a Pratt');
    expect(partialText?.kind === 'assistant' && partialText.streaming).toBe(false);
    expect(totalTokens(node(s, 'root').subtreeTokens)).toBe(1050 + 2100 + 3200);
  });

  it('leaves a finished run alone', () => {
    const s = applyRecords(emptyState(), demoRun(0));
    expect(finalizeRun(s)).toBe(s);
  });
});

describe('records arriving out of order across sessions', () => {
  it('links a child seen before its parent and still rolls its tokens up', () => {
    const s = applyRecords(emptyState(), load('budget-exhausted-out-of-order.jsonl'));
    expect(s.rootId).toBe('root9');
    expect(node(s, 'root9').children).toEqual(['c9']);
    const c = node(s, 'c9');
    expect(c.status).toBe('partial');
    expect(c.exhausted).toBe('total_tokens');
    expect(c.warned).toEqual(['total_tokens']);
    expect(totalTokens(node(s, 'root9').subtreeTokens)).toBe(21_500);
  });
});

describe('budget bar states', () => {
  it('is ok below 80 %, warn from 80 %, exhausted only when that budget ended the node', () => {
    expect(budgetState(79, 100, false)).toBe('ok');
    expect(budgetState(80, 100, false)).toBe('warn');
    expect(budgetState(130, 100, false)).toBe('warn');
    expect(budgetState(10, 100, true)).toBe('exhausted');
    expect(budgetState(5, 0, false)).toBe('ok');
  });
});

describe('evidence display', () => {
  const base = { raw: 'src/a.rs:3', path: 'src/a.rs', line: 3, end_line: null, text: 'x' };
  it('only valid references are clickable, each state is labelled distinctly', () => {
    const states = ['valid', 'missing_file', 'line_out_of_range', 'outside_project', 'unparseable'] as const;
    const views = states.map((state) => evidenceView({ ...base, state }));
    expect(views.map((v) => v.clickable)).toEqual([true, false, false, false, false]);
    expect(new Set(views.map((v) => v.cls)).size).toBe(5);
    expect(new Set(views.map((v) => v.stateText)).size).toBe(5);
    expect(evidenceView({ ...base, end_line: 7, state: 'valid' }).label).toBe('src/a.rs:3-7');
  });
});

describe('cost', () => {
  it('prices each slot and is unknown when a used slot has no price', () => {
    const t = { main: { input: 1_000_000, output: 100_000 }, light: { input: 0, output: 0 } };
    expect(costOf(t, { main: { input_price_per_mtok: 3, output_price_per_mtok: 15 } })).toBeCloseTo(4.5);
    expect(costOf(t, { light: { input_price_per_mtok: 1, output_price_per_mtok: 1 } })).toBeNull();
  });
});

describe('visible rows', () => {
  it('hides the children of collapsed nodes', () => {
    const s = applyRecords(emptyState(), demoRun(0));
    expect(visibleRows(s.nodes, s.rootId, new Set()).length).toBe(4);
    expect(visibleRows(s.nodes, s.rootId, new Set(['main-7f3a'])).length).toBe(1);
  });
});

describe('parseJsonl', () => {
  it('reports the line of bad input', () => {
    const { records, errors } = parseJsonl('{"session_id":"a","event":{"type":"x"}}\nnot json\n{"a":1}\n');
    expect(records.length).toBe(1);
    expect(errors[0]).toMatch(/^line 2: invalid JSON/);
    expect(errors[1]).toMatch(/^line 3: not a trace record/);
  });
});

// Traces produced by the real runtime (its end-to-end tests) land here, one folder per run with one file
// per session. They are read the way the app serves them: `load_session` gives the root's records
// first, then every descendant's; a live run delivers them interleaved by time in frame-sized batches.
const realDir = join(here, '..', '..', '..', 'tests', 'fixtures', 'traces');

function runFolders(): string[] {
  if (!existsSync(realDir)) return [];
  return readdirSync(realDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** One run's sessions: the root's records, then each descendant's (as `load_session` returns them). */
function loadRun(folder: string): TraceRecord[] {
  const dir = join(realDir, folder);
  const sessions = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => {
      const { records, errors } = parseJsonl(readFileSync(join(dir, f), 'utf8'));
      expect(errors, `${folder}/${f}`).toEqual([]);
      return records;
    });
  const isRoot = (rs: TraceRecord[]) => rs.length > 0 && rs[0].parent_session_id === null;
  expect(sessions.filter(isRoot).length, `${folder}: exactly one root session`).toBe(1);
  return [...sessions.filter(isRoot).flat(), ...sessions.filter((rs) => !isRoot(rs)).flat()];
}

/** As a live run delivers them: by time (each session's own order kept), in batches of ~one frame. */
function liveBatches(records: TraceRecord[]): TraceRecord[][] {
  const byTime = records.map((r, i) => ({ r, i })).sort((a, b) => a.r.ts_ms - b.r.ts_ms || a.i - b.i).map((x) => x.r);
  const batches: TraceRecord[][] = [];
  for (const r of byTime) {
    const last = batches.at(-1);
    if (last !== undefined && r.ts_ms - last[0].ts_ms < 16) last.push(r);
    else batches.push([r]);
  }
  return batches;
}

function runEnded(records: TraceRecord[], session: string) {
  const e = records.find((r) => r.session_id === session && r.event.type === 'run_ended')?.event;
  if (e?.type !== 'run_ended') throw new Error(`no run_ended for ${session}`);
  return e;
}

describe('runtime-produced traces', () => {
  it('the runtime has produced the parallel-explore run', () => {
    expect(runFolders()).toContain('parallel-explore');
  });

  it.each(runFolders())('%s reduces without skipped records, every session ended and linked', (folder) => {
    const s = finalizeRun(applyRecords(emptyState(), loadRun(folder)));
    expect(s.skipped).toBe(0);
    expect(s.rootId).not.toBeNull();
    for (const n of s.nodes.values()) {
      expect(['completed', 'partial', 'failed', 'cancelled', 'interrupted'], n.id).toContain(n.status);
      if (n.parentId !== null) expect(s.nodes.get(n.parentId)?.children, n.id).toContain(n.id);
    }
  });

  describe('parallel-explore: the tree a person sees', () => {
    const records = runFolders().includes('parallel-explore') ? loadRun('parallel-explore') : [];
    const replayed = finalizeRun(applyRecords(emptyState(), records));
    const live = liveBatches(records).reduce((st, b) => applyRecords(st, b), emptyState());

    it.each([
      ['replayed from history', replayed],
      ['streamed live', live],
    ])('%s: a main node with two completed explore children on the light model', (_how, s) => {
      const root = node(s, s.rootId as string);
      expect(root.agent).toBe('main');
      expect(root.status).toBe('completed');
      expect(root.prompt).toBe('Explain login and config');
      expect(root.children.length).toBe(2);
      const kids = root.children.map((id) => node(s, id));
      // In the order the main agent asked for them.
      expect(kids.map((k) => k.label)).toEqual(['Find the login code', 'Find the config']);
      for (const k of kids) {
        expect(k.status, k.label).toBe('completed');
        expect(k.terminalReason, k.label).toBe('completed');
        expect(k.profile, k.label).toBe('explore');
        expect(k.depth, k.label).toBe(1);
        // What the badge shows: the light slot and its model, with no fallback warning.
        expect(k.model?.slot, k.label).toBe('light');
        expect(k.model?.fallback, k.label).toBe(false);
        expect(k.model?.model_id, k.label).toBe('mock-light');
        expect(k.requestedSlot, k.label).toBe('light');
      }
      expect(root.model?.slot).toBe('main');
    });

    it('shows each citation with the state the host checked, only valid ones clickable', () => {
      const s = replayed;
      const byLabel = new Map(node(s, s.rootId as string).children.map((id) => [node(s, id).label, node(s, id)]));
      const ev = (label: string) => (byLabel.get(label)?.result?.evidence ?? []).map((e) => [evidenceView(e).label, e.state, evidenceView(e).clickable]);
      expect(ev('Find the login code')).toEqual([['src/auth.rs:3', 'valid', true]]);
      expect(ev('Find the config')).toEqual([
        ['src/config.rs:2', 'valid', true],
        ['src/config.rs:40', 'line_out_of_range', false],
      ]);
      expect(byLabel.get('Find the config')?.result?.summary).toBe('Config holds a session timeout');
    });

    it('rolls the children\'s tokens up into the root, as the runtime counted them', () => {
      for (const s of [replayed, live]) {
        const root = node(s, s.rootId as string);
        const kids = root.children.map((id) => node(s, id));
        for (const k of kids) {
          const u = runEnded(records, k.id).usage_with_descendants;
          expect(totalTokens(k.subtreeTokens), k.label).toBe(u.input_tokens + u.output_tokens);
          expect(k.subtreeTokens.main, k.label).toEqual({ input: 0, output: 0 });
        }
        const sumKids = kids.reduce((a, k) => a + totalTokens(k.subtreeTokens), 0);
        const rootTotal = totalTokens(root.subtreeTokens);
        expect(rootTotal).toBeGreaterThanOrEqual(sumKids);
        const u = runEnded(records, root.id).usage_with_descendants;
        expect(rootTotal).toBe(u.input_tokens + u.output_tokens);
        // The light slot served exactly the children's tokens; the main slot the root's own.
        expect(root.subtreeTokens.light.input + root.subtreeTokens.light.output).toBe(sumKids);
        const own = runEnded(records, root.id).usage;
        expect(root.subtreeTokens.main).toEqual({ input: own.input_tokens, output: own.output_tokens });
      }
    });
  });
});

// Replay (`load_session`) gives the root's records first, so a parent's `subagent_completed` (carrying the
// child's tool-call count) arrives before any of the child's own records; live runs interleave them.
describe('parallel-explore: counts are the same in every delivery order', () => {
  const records = runFolders().includes('parallel-explore') ? loadRun('parallel-explore') : [];
  const rootId = records[0]?.session_id ?? '';
  const childIds = [...new Set(records.filter((r) => r.parent_session_id !== null).map((r) => r.session_id))];
  const own = (id: string) => records.filter((r) => r.session_id === id);
  const childrenFirst = [...records.filter((r) => r.session_id !== rootId), ...own(rootId)];
  const orders: [string, TreeState][] = [
    ['replayed root-first', finalizeRun(applyRecords(emptyState(), records))],
    ['streamed live', liveBatches(records).reduce((st, b) => applyRecords(st, b), emptyState())],
    ['children first', finalizeRun(applyRecords(emptyState(), childrenFirst))],
  ];

  it('has the children the test relies on', () => {
    expect(childIds.length).toBe(2);
    for (const id of childIds) expect(own(id).some((r) => r.event.type === 'tool_call_begin'), id).toBe(true);
  });

  it.each(orders)('%s: each child shows as many tool calls as its trace began', (_how, s) => {
    for (const id of childIds) {
      const began = own(id).filter((r) => r.event.type === 'tool_call_begin').length;
      expect(node(s, id).toolCalls, id).toBe(began);
    }
    const rootBegan = own(rootId).filter((r) => r.event.type === 'tool_call_begin').length;
    expect(node(s, rootId).toolCalls).toBe(rootBegan);
  });

  it.each(orders)('%s: tokens are counted once, spans closed, children completed', (_how, s) => {
    const usage = (rs: TraceRecord[]) =>
      rs.reduce((a, r) => (r.event.type === 'model_call_end' ? a + r.event.usage.input_tokens + r.event.usage.output_tokens : a), 0);
    for (const id of childIds) {
      const k = node(s, id);
      expect(k.ownTokens.input + k.ownTokens.output, id).toBe(usage(own(id)));
      expect(totalTokens(k.subtreeTokens), id).toBe(usage(own(id)));
      expect(k.status, id).toBe('completed');
      expect(k.spans.filter((sp) => sp.end === null), id).toEqual([]);
      const began = own(id).filter((r) => r.event.type === 'model_call_begin' || r.event.type === 'tool_call_begin').length;
      expect(k.spans.length, id).toBe(began);
    }
    expect(totalTokens(node(s, rootId).subtreeTokens)).toBe(usage(records));
  });

  it('a child the parent already ended stays ended when its own trace was cut short', () => {
    // The app died after the child's first tool call started; the parent's record says it completed.
    const [cut] = childIds;
    const cutAt = own(cut).findIndex((r) => r.event.type === 'tool_call_begin');
    const partial = [...own(rootId), ...own(cut).slice(0, cutAt + 1), ...childIds.slice(1).flatMap(own)];
    const s = finalizeRun(applyRecords(emptyState(), partial));
    const k = node(s, cut);
    expect(k.status).toBe('completed');
    expect(k.toolCalls).toBe(own(cut).filter((r) => r.event.type === 'tool_call_begin').length);
    expect(k.spans.filter((sp) => sp.end === null)).toEqual([]);
    expect(k.items.filter((it) => it.kind === 'tool' && it.status === 'running')).toEqual([]);
  });

  it('a follow-up run of the main session still starts running again', () => {
    const done = applyRecords(emptyState(), records);
    const end = node(done, rootId).endedMs as number;
    const base = { v: 1, run_id: 'run-2', session_id: rootId, parent_session_id: null };
    const s = applyRecords(done, [{ ...base, seq: 9_000, ts_ms: end + 1_000, event: { type: 'run_started', prompt: 'and the logout?' } }]);
    expect(node(s, rootId).status).toBe('running');
    expect(node(s, rootId).endedMs).toBeNull();
  });
});

describe('a follow-up run: bars and elapsed time are per run, totals per session', () => {
  const records = runFolders().includes('parallel-explore') ? loadRun('parallel-explore') : [];
  const rootId = records[0]?.session_id ?? '';
  const first = applyRecords(emptyState(), records);
  const firstEnd = (first.nodes.get(rootId)?.endedMs ?? 0) as number;
  // Twenty minutes later the person asks again; the runtime starts this run's budgets (wall time too) at zero.
  const t = firstEnd + 20 * 60_000;
  const base = { v: 1, run_id: 'run-follow', session_id: rootId, parent_session_id: null };
  const u = { input_tokens: 1_000, output_tokens: 50, estimated: false };
  const followUp: TraceRecord[] = [
    { ...base, seq: 9_000, ts_ms: t, event: { type: 'run_started', prompt: 'and where is logout?' } },
    { ...base, seq: 9_001, ts_ms: t + 10, event: { type: 'model_call_begin', model_call_id: 'mc-f', step: 1, messages: 5, estimated_input_tokens: 1_000, tools_offered: true } },
    { ...base, seq: 9_002, ts_ms: t + 2_000, event: { type: 'model_call_end', model_call_id: 'mc-f', step: 1, text: 'In src/auth.rs.', tool_calls: [], finish_reason: 'stop', usage: u, model: 'mock', latency_ms: 1_990, error: null, totals: { steps: 1, context_tokens: 1_000, total_tokens: 1_050, wall_time_ms: 2_000 } } },
    { ...base, seq: 9_003, ts_ms: t + 2_100, event: { type: 'run_ended', terminal_reason: 'completed', final_text: 'In src/auth.rs.', result: null, error: null, usage: u, usage_with_descendants: u, totals: { steps: 1, context_tokens: 1_000, total_tokens: 1_050, wall_time_ms: 2_100 }, tool_calls: 0 } },
  ];
  const time = (s: TreeState, now: number) => budgetBars(node(s, rootId), now).find((b) => b.kind === 'wall_time');

  it('3 s into the follow-up the Time bar reads 3 s and is not amber', () => {
    const s = applyRecords(first, followUp.slice(0, 2));
    expect(elapsedMs(node(s, rootId), t + 3_000)).toBe(3_000);
    const bar = time(s, t + 3_000);
    expect(bar?.used).toBe(3_000);
    expect(bar?.state).toBe('ok');
    expect(bar?.text.startsWith('3.0s / ')).toBe(true);
    // Steps, context and tokens start again too: nothing of the first run's usage is shown against this run's limits.
    expect(budgetBars(node(s, rootId), t + 3_000).filter((b) => b.kind !== 'wall_time').map((b) => b.used)).toEqual([0, 0, 0]);
  });

  it.each([
    ['streamed live', () => applyRecords(first, followUp)],
    ['replayed root-first', () => finalizeRun(applyRecords(emptyState(), [...records.filter((r) => r.session_id === rootId), ...followUp, ...records.filter((r) => r.session_id !== rootId)]))],
  ])('%s: the ended follow-up shows its own time, the session its summed tokens', (_how, make) => {
    const s = make();
    const root = node(s, rootId);
    expect(root.status).toBe('completed');
    expect(elapsedMs(root, t + 60 * 60_000)).toBe(2_100);
    expect(time(s, t + 60 * 60_000)?.used).toBe(2_100);
    expect(totalTokens(root.subtreeTokens)).toBe(totalTokens(node(first, rootId).subtreeTokens) + 1_050);
    // The subagents of the first run keep their own durations.
    for (const id of node(first, rootId).children) expect(elapsedMs(node(s, id), 0), id).toBe(elapsedMs(node(first, id), 0));
    // The Timeline still draws the session from its first start.
    expect(root.startedMs).toBe(node(first, rootId).startedMs);
  });
});

describe('tool outputs left out of a replay', () => {
  const base = { v: 1, run_id: 'r', session_id: 's-root', parent_session_id: null };
  const begin: TraceRecord = { ...base, seq: 1, ts_ms: 10, event: { type: 'tool_call_begin', call_id: 'c1', tool: 'Read', arguments: { path: 'a.rs' }, mutates: false } };
  const end = (extra: Record<string, unknown>): TraceRecord =>
    ({ ...base, seq: 2, ts_ms: 20, event: { type: 'tool_call_end', call_id: 'c1', tool: 'Read', status: 'ok', output: '', output_bytes: 4000, output_cap_bytes: 16384, truncated: false, duration_ms: 3, ...extra } }) as TraceRecord;
  const tool = (s: TreeState) => node(s, 's-root').items.find((i) => i.kind === 'tool');

  it('marks the item elided only when the record says so', () => {
    const elided = applyRecords(emptyState(), [begin, end({ output_elided: true })]);
    expect(tool(elided)).toMatchObject({ outputElided: true, output: '', outputBytes: 4000, status: 'ok' });
    const live = applyRecords(emptyState(), [begin, end({ output: 'fn main() {}' })]);
    expect(tool(live)).toMatchObject({ outputElided: false, output: 'fn main() {}' });
    const explicitFalse = applyRecords(emptyState(), [begin, end({ output: 'x', output_elided: false })]);
    expect(tool(explicitFalse)).toMatchObject({ outputElided: false, output: 'x' });
  });
});

describe('Bash sandbox recorded by session_started', () => {
  it('keeps how the session ran Bash, and null for traces that predate the field', () => {
    const old = load('interrupted.jsonl');
    expect(node(applyRecords(emptyState(), old), 'root').bashSandbox).toBeNull();
    const off = old.map((r) =>
      r.event.type === 'session_started' && r.session_id === 'root' ? { ...r, event: { ...r.event, bash_sandbox: 'off' as const } } : r,
    );
    expect(node(applyRecords(emptyState(), off), 'root').bashSandbox).toBe('off');
    expect(node(applyRecords(emptyState(), demoRun(1_000_000)), 'main-7f3a').bashSandbox).toBe('required');
  });
});

describe('reasoning and provider adaptations', () => {
  const base = { v: 1, run_id: 'run-r', session_id: 's-r', parent_session_id: null };
  const u = { input_tokens: 1_000, output_tokens: 300, reasoning_tokens: 256, estimated: false };
  const totals = { steps: 1, context_tokens: 1_000, total_tokens: 1_300, wall_time_ms: 2_000 };
  const model = { slot: 'main' as const, requested_slot: 'main' as const, fallback: false, provider: 'openai' as const, model_id: 'o4-mini', base_url: 'https://api.openai.com/v1' };
  const budgets = { max_steps: 5, max_context_tokens: 10_000, max_total_tokens: 100_000, max_wall_time_ms: 60_000 };
  const records: TraceRecord[] = [
    { ...base, seq: 1, ts_ms: 1, event: { type: 'session_started', agent: 'main', profile: 'main', description: null, model, budgets, project_root: '/p', parent: null, permission_mode: 'main', tools: [], system_prompt: 's' } },
    { ...base, seq: 2, ts_ms: 2, event: { type: 'run_started', prompt: 'hi' } },
    { ...base, seq: 3, ts_ms: 3, event: { type: 'model_call_begin', model_call_id: 'm1', step: 1, messages: 1, estimated_input_tokens: 900, tools_offered: true } },
    { ...base, seq: 4, ts_ms: 4, event: { type: 'provider_adapted', model_call_id: 'm1', base_url: 'https://api.openai.com/v1', model: 'o4-mini', change: 'max_tokens -> max_completion_tokens', reason: "Unsupported parameter: 'max_tokens'" } },
    { ...base, seq: 5, ts_ms: 5, event: { type: 'model_call_end', model_call_id: 'm1', step: 1, text: '', reasoning: 'First I grep.', tool_calls: [], finish_reason: 'tool_calls', usage: u, model: 'o4-mini', latency_ms: 1, error: null, totals } },
  ];

  it('keeps a thinking-only turn with its reasoning and token count, and notes the adaptation', () => {
    const s = applyRecords(emptyState(), records);
    const items = s.nodes.get('s-r')?.items ?? [];
    const notice = items.find((i) => i.kind === 'notice');
    expect(notice?.kind === 'notice' && notice.text).toBe("o4-mini at https://api.openai.com/v1: max_tokens -> max_completion_tokens (Unsupported parameter: 'max_tokens')");
    const turn = items.find((i) => i.kind === 'assistant');
    expect(turn).toMatchObject({ kind: 'assistant', text: '', reasoning: 'First I grep.', reasoningTokens: 256 });
  });
});
