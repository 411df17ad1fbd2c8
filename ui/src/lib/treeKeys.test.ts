import { describe, expect, it } from 'vitest';
import { visibleRows } from './derive';
import type { SessionNode } from './reducer';
import {
  agentCounts,
  agentCountsText,
  collapsedAncestors,
  resolveActive,
  siblingPosition,
  treeKeyAction,
  type TreeAction,
} from './treeKeys';

// main ─┬─ a ─┬─ a1
//       │     └─ a2
//       ├─ b ─── b1
//       └─ c
const shape: Record<string, string[]> = { main: ['a', 'b', 'c'], a: ['a1', 'a2'], b: ['b1'] };
function build(): Map<string, SessionNode> {
  const nodes = new Map<string, SessionNode>();
  const add = (id: string, parentId: string | null, depth: number): void => {
    const children = shape[id] ?? [];
    nodes.set(id, { id, parentId, children, depth } as unknown as SessionNode);
    for (const c of children) add(c, id, depth + 1);
  };
  add('main', null, 0);
  return nodes;
}
const nodes = build();
const parentOf = (id: string): string | null => nodes.get(id)?.parentId ?? null;

/** Presses `keys` in order from `start`, applying each action the way Tree.svelte does. */
function press(start: string, keys: string[], collapsed = new Set<string>()): { active: string; opened: string[]; collapsed: Set<string> } {
  let active = start;
  const opened: string[] = [];
  for (const key of keys) {
    const rows = visibleRows(nodes, 'main', collapsed);
    active = resolveActive(active, rows, parentOf) as string;
    const a = treeKeyAction(key, rows, active, collapsed) as TreeAction;
    expect(a, `key ${key}`).not.toBeNull();
    if (a.kind === 'move') active = a.id;
    else if (a.kind === 'expand') collapsed.delete(a.id);
    else if (a.kind === 'collapse') collapsed.add(a.id);
    else if (a.kind === 'open') opened.push(a.id);
  }
  return { active, opened, collapsed };
}

describe('tree keys', () => {
  it('Down and Up walk the shown rows in order and stop at the ends', () => {
    const order = ['main', 'a', 'a1', 'a2', 'b', 'b1', 'c'];
    for (let i = 1; i < order.length; i += 1) expect(press('main', Array(i).fill('ArrowDown')).active).toBe(order[i]);
    expect(press('main', Array(10).fill('ArrowDown')).active).toBe('c');
    expect(press('c', ['ArrowUp', 'ArrowUp']).active).toBe('b');
    expect(press('main', ['ArrowUp']).active).toBe('main');
  });

  it('Home and End jump to the first and last shown row', () => {
    expect(press('a2', ['End']).active).toBe('c');
    expect(press('a2', ['Home']).active).toBe('main');
    // With b collapsed the last row is still c, and b1 is skipped on the way up.
    expect(press('c', ['ArrowUp', 'ArrowUp'], new Set(['b'])).active).toBe('a2');
  });

  it('Left collapses an open row, then goes to its parent; Right expands, then steps into the first child', () => {
    const r = press('a', ['ArrowLeft']);
    expect(r.active).toBe('a');
    expect([...r.collapsed]).toEqual(['a']);
    expect(press('a', ['ArrowLeft', 'ArrowLeft']).active).toBe('main');
    expect(press('a2', ['ArrowLeft']).active).toBe('a');
    const back = press('a', ['ArrowLeft', 'ArrowRight']);
    expect(back.collapsed.size).toBe(0);
    expect(back.active).toBe('a');
    expect(press('a', ['ArrowRight']).active).toBe('a1');
    // A leaf ignores Right; the root has no parent to go to once collapsed.
    expect(press('c', ['ArrowRight']).active).toBe('c');
    const top = press('main', ['ArrowLeft', 'ArrowLeft']);
    expect(top.active).toBe('main');
    expect(visibleRows(nodes, 'main', top.collapsed).map((n) => n.id)).toEqual(['main']);
  });

  it('Enter and Space open the active row; other keys are not the tree\'s', () => {
    expect(press('b1', ['Enter']).opened).toEqual(['b1']);
    expect(press('b', ['ArrowDown', ' ']).opened).toEqual(['b1']);
    const rows = visibleRows(nodes, 'main', new Set());
    expect(treeKeyAction('a', rows, 'main', new Set())).toBeNull();
    expect(treeKeyAction('Tab', rows, 'main', new Set())).toBeNull();
    expect(treeKeyAction('ArrowDown', [], null, new Set())).toEqual({ kind: 'none' });
  });

  it('a hidden or unknown position resolves to the nearest shown ancestor or the first row', () => {
    const rows = visibleRows(nodes, 'main', new Set(['a']));
    expect(resolveActive('a2', rows, parentOf)).toBe('a');
    expect(resolveActive('gone', rows, parentOf)).toBe('main');
    expect(resolveActive(null, rows, parentOf)).toBe('main');
    expect(resolveActive('a2', [], parentOf)).toBeNull();
    // After collapsing a's parent by keyboard the position moves up with it.
    expect(press('a2', ['ArrowDown'], new Set(['a'])).active).toBe('b');
  });

  it('selecting a hidden node names the collapsed ancestors to open', () => {
    expect(collapsedAncestors('a2', parentOf, new Set(['a', 'main', 'b']))).toEqual(['a', 'main']);
    expect(collapsedAncestors('c', parentOf, new Set(['a']))).toEqual([]);
  });

  it('each row knows its place among its siblings', () => {
    const of = (id: string) => nodes.get(id);
    expect(siblingPosition(nodes.get('main') as SessionNode, of)).toEqual({ posinset: 1, setsize: 1 });
    expect(siblingPosition(nodes.get('b') as SessionNode, of)).toEqual({ posinset: 2, setsize: 3 });
    expect(siblingPosition(nodes.get('a2') as SessionNode, of)).toEqual({ posinset: 2, setsize: 2 });
    expect(siblingPosition(nodes.get('b1') as SessionNode, of)).toEqual({ posinset: 1, setsize: 1 });
  });
});

describe('agent counts', () => {
  it('counts running and queued apart, not queued as active', () => {
    const c = agentCounts(['running', 'queued', 'queued', 'completed']);
    expect(c).toEqual({ total: 4, running: 1, queued: 2 });
    expect(agentCountsText(c)).toBe('4 agents · 1 running · 2 queued');
    expect(agentCountsText(agentCounts(['completed']))).toBe('1 agent');
    expect(agentCountsText(agentCounts(['completed', 'running']))).toBe('2 agents · 1 running');
  });
});
