// What the tree shows for runs the real runtime recorded (tests/fixtures/traces/, written by
// `cargo test -p canopy-e2e` with CANOPY_FIXTURES_DIR set): cancels, exhausted budgets and a model
// fallback, each fed in both orders the app uses — replay (the root's file, then each child's) and live
// (interleaved by time).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyRecords, emptyState, finalizeRun, parseJsonl, type SessionNode, type TreeState } from './reducer';
import { budgetBars, totalTokens } from './derive';
import type { TraceRecord } from '../generated/types';
import { nodeTrustBadge, trustLine } from './trust';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'fixtures', 'traces');

interface Run {
  /** Each session's records, root first. */
  files: TraceRecord[][];
  rootId: string;
}

function loadRun(name: string): Run {
  const files = readdirSync(join(dir, name))
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => {
      const { records, errors } = parseJsonl(readFileSync(join(dir, name, f), 'utf8'));
      expect(errors, `${name}/${f}`).toEqual([]);
      return records;
    })
    .sort((a, b) => Number(a[0].parent_session_id !== null) - Number(b[0].parent_session_id !== null));
  expect(files[0][0].parent_session_id, `${name}: a root session`).toBeNull();
  return { files, rootId: files[0][0].session_id };
}

const orders = {
  replay: (run: Run) => run.files.flat(),
  live: (run: Run) =>
    run.files
      .flat()
      .map((r, i) => ({ r, i }))
      .sort((a, b) => a.r.ts_ms - b.r.ts_ms || a.i - b.i)
      .map((x) => x.r),
};

function tree(run: Run, order: keyof typeof orders): TreeState {
  const s = finalizeRun(applyRecords(emptyState(), orders[order](run)));
  expect(s.skipped).toBe(0);
  return s;
}

function get(s: TreeState, id: string): SessionNode {
  const n = s.nodes.get(id);
  if (n === undefined) throw new Error(`no node ${id}`);
  return n;
}

function children(s: TreeState, run: Run): SessionNode[] {
  return get(s, run.rootId).children.map((id) => get(s, id));
}

/** What a person would count in the node's own file. */
function beginsIn(run: Run, id: string): number {
  return run.files.flat().filter((r) => r.session_id === id && r.event.type === 'tool_call_begin').length;
}

function tokensIn(run: Run, id: string): number {
  return run.files
    .flat()
    .reduce(
      (a, r) =>
        r.session_id === id && r.event.type === 'model_call_end' ? a + r.event.usage.input_tokens + r.event.usage.output_tokens : a,
      0,
    );
}

describe.each(['replay', 'live'] as const)('runtime traces, %s order', (order) => {
  it('cancel-one-child: the cancelled child says so, its sibling and the parent complete', () => {
    const run = loadRun('cancel-one-child');
    const s = tree(run, order);
    expect(get(s, run.rootId).status).toBe('completed');
    const kids = children(s, run);
    expect(kids.map((k) => k.label).sort()).toEqual(['Quick one', 'Slow one']);
    const slow = kids.find((k) => k.label === 'Slow one') as SessionNode;
    const quick = kids.find((k) => k.label === 'Quick one') as SessionNode;
    expect([slow.status, slow.terminalReason]).toEqual(['cancelled', 'cancelled']);
    expect([quick.status, quick.terminalReason]).toEqual(['completed', 'completed']);
    expect(quick.result?.summary).toBe('quick answer');
    // The parent's Task card for the cancelled child ends as cancelled, not as running forever.
    const card = get(s, run.rootId).items.find((it) => it.kind === 'tool' && it.childSessionId === slow.id);
    expect(card?.kind === 'tool' && card.status).toBe('cancelled');
    expect(budgetBars(slow, 0).some((b) => b.state === 'exhausted')).toBe(false);
  });

  it('cancel-run: cancelling the run cancels every child', () => {
    const run = loadRun('cancel-run');
    const s = tree(run, order);
    expect(get(s, run.rootId).status).toBe('cancelled');
    const kids = children(s, run);
    expect(kids.length).toBe(2);
    for (const k of kids) expect([k.status, k.terminalReason], k.label).toEqual(['cancelled', 'cancelled']);
  });

  it('steps-exhausted: a partial result, the Steps bar red and only that one', () => {
    const run = loadRun('steps-exhausted');
    const s = tree(run, order);
    const [child] = children(s, run);
    expect([child.status, child.terminalReason, child.exhausted]).toEqual(['partial', 'max_steps', 'steps']);
    expect(child.warned).toContain('steps');
    expect(child.result?.unresolved_questions).toEqual(['config?']);
    const bars = budgetBars(child, 0);
    expect(bars.filter((b) => b.state === 'exhausted').map((b) => b.kind)).toEqual(['steps']);
    const steps = bars.find((b) => b.kind === 'steps');
    // Five tool steps, then the one tool-less call that asks for the answer (docs/runtime.md: `used` may
    // pass `limit` by exactly that call); the bar is full, not overflowing.
    expect([steps?.used, steps?.limit, steps?.fraction]).toEqual([6, 5, 1]);
    // Read as the limit holding plus the final answer's call, not as "6 / 5".
    expect(steps?.text).toBe('5 / 5 +1');
    expect(steps?.over).toMatch(/final answer/);
    // Bars that stayed within their limit read as before.
    expect(bars.find((b) => b.kind === 'context_tokens')?.over).toBeNull();
    expect(child.toolCalls).toBe(beginsIn(run, child.id));
    expect(child.toolCalls).toBe(5);
  });

  it('token-budget: the Tokens bar is the red one and tokens are not counted twice', () => {
    const run = loadRun('token-budget');
    const s = tree(run, order);
    const [child] = children(s, run);
    expect([child.status, child.terminalReason, child.exhausted]).toEqual(['partial', 'token_budget', 'total_tokens']);
    expect(budgetBars(child, 0).filter((b) => b.state === 'exhausted').map((b) => b.kind)).toEqual(['total_tokens']);
    expect(child.ownTokens.input + child.ownTokens.output).toBe(tokensIn(run, child.id));
    const root = get(s, run.rootId);
    expect(totalTokens(root.subtreeTokens)).toBe(tokensIn(run, run.rootId) + tokensIn(run, child.id));
  });

  it('parallel-explore: each child carries the trust its own reads earned, counted as the runtime counted it', () => {
    const run = loadRun('parallel-explore');
    const s = tree(run, order);
    const kids = children(s, run);
    expect(kids.length).toBe(2);
    for (const k of kids) {
      const trust = k.result?.trust;
      expect(trust, `${k.id}: the runtime recorded provenance`).toBeDefined();
      if (trust === undefined) continue;
      // Every citation the child made got exactly one trust word.
      expect(trust.total).toBe(k.result?.evidence.length);
      expect(k.result?.evidence.every((e) => e.trust !== undefined && e.provenance !== undefined)).toBe(true);
      expect(nodeTrustBadge(k.result ?? null)?.title).toBe(trustLine(trust));
    }
    // One child cites a line past the end of the file it read: that citation is invalid, the other grounded.
    const lines = kids.map((k) => (k.result?.trust ? trustLine(k.result.trust) : '')).sort();
    expect(lines).toContain('1 of 2 citations seen and valid · 1 invalid');
  });

  it('light-fallback: the child ran on the main model and is marked as a fallback', () => {
    const run = loadRun('light-fallback');
    const s = tree(run, order);
    const [child] = children(s, run);
    expect(child.status).toBe('completed');
    expect(child.requestedSlot).toBe('light');
    expect([child.model?.slot, child.model?.fallback, child.model?.model_id]).toEqual(['main', true, 'mock-main']);
  });
});

describe('a subagent known only from its parent (queued for a slot)', () => {
  it('shows its profile and is a subagent before its own records arrive', () => {
    const run = loadRun('cancel-one-child');
    const root = run.files[0];
    const upTo = root.findIndex((r) => r.event.type === 'subagent_requested');
    expect(upTo).toBeGreaterThan(0);
    const s = applyRecords(emptyState(), root.slice(0, upTo + 1));
    const e = root[upTo].event;
    if (e.type !== 'subagent_requested') throw new Error('not a request');
    const child = get(s, e.child_session_id);
    expect([child.status, child.agent, child.profile, child.label]).toEqual(['queued', 'subagent', e.profile, e.description]);
    expect(e.profile).toBe('explore');
  });
});
