//! The agent tree's keyboard model (WAI-ARIA tree pattern) over the rows currently shown, kept free of
//! the DOM so it can be tested on its own: which row a key makes active, what it expands or collapses,
//! each row's position among its siblings (the virtual list leaves off-screen rows out of the DOM, so
//! assistive tech needs `aria-setsize`/`aria-posinset`), and the header's counts.

/** What the keyboard model needs of a node. */
export interface TreeNodeLike {
  id: string;
  parentId: string | null;
  children: readonly string[];
}

/** What a key does to the tree; `null` from `treeKeyAction` means the key is not the tree's. */
export type TreeAction =
  | { kind: 'move'; id: string }
  | { kind: 'expand'; id: string }
  | { kind: 'collapse'; id: string }
  | { kind: 'open'; id: string }
  | { kind: 'none' };

/**
 * The row that holds the keyboard position: `wanted` if it is shown, else its nearest shown ancestor
 * (it was hidden by collapsing one), else the first row. `null` only when there are no rows.
 */
export function resolveActive(
  wanted: string | null,
  rows: readonly TreeNodeLike[],
  parentOf: (id: string) => string | null,
): string | null {
  if (rows.length === 0) return null;
  const shown = new Set(rows.map((r) => r.id));
  const seen = new Set<string>();
  for (let id = wanted; id !== null && !seen.has(id); id = parentOf(id)) {
    if (shown.has(id)) return id;
    seen.add(id);
  }
  return rows[0].id;
}

/**
 * The action of `key` with `activeId` as the keyboard position (resolve it with `resolveActive` first).
 * Up/Down step through the shown rows, Home/End jump to the ends, Right expands a collapsed row or steps
 * into an expanded one, Left collapses an expanded row or goes to the parent, Enter/Space open the row.
 */
export function treeKeyAction(
  key: string,
  rows: readonly TreeNodeLike[],
  activeId: string | null,
  collapsed: ReadonlySet<string>,
): TreeAction | null {
  const keys = ['ArrowDown', 'ArrowUp', 'Home', 'End', 'ArrowRight', 'ArrowLeft', 'Enter', ' '];
  if (!keys.includes(key)) return null;
  if (rows.length === 0) return { kind: 'none' };
  const found = rows.findIndex((r) => r.id === activeId);
  // No position yet: the first key lands on the first row rather than doing its own thing somewhere.
  if (found < 0) return { kind: 'move', id: rows[0].id };
  const i = found;
  const n = rows[i];
  const move = (j: number): TreeAction => (j === i ? { kind: 'none' } : { kind: 'move', id: rows[j].id });
  const parent = n.children.length > 0;
  switch (key) {
    case 'ArrowDown':
      return move(Math.min(rows.length - 1, i + 1));
    case 'ArrowUp':
      return move(Math.max(0, i - 1));
    case 'Home':
      return move(0);
    case 'End':
      return move(rows.length - 1);
    case 'ArrowRight':
      if (!parent) return { kind: 'none' };
      if (collapsed.has(n.id)) return { kind: 'expand', id: n.id };
      return i + 1 < rows.length ? move(i + 1) : { kind: 'none' };
    case 'ArrowLeft': {
      if (parent && !collapsed.has(n.id)) return { kind: 'collapse', id: n.id };
      const p = n.parentId === null ? -1 : rows.findIndex((r) => r.id === n.parentId);
      return p < 0 ? { kind: 'none' } : move(p);
    }
    default:
      return { kind: 'open', id: n.id };
  }
}

/** 1-based position among its siblings and their number, for `aria-posinset`/`aria-setsize`. */
export function siblingPosition(
  n: TreeNodeLike,
  nodeOf: (id: string) => TreeNodeLike | undefined,
): { posinset: number; setsize: number } {
  const siblings = n.parentId === null ? undefined : nodeOf(n.parentId)?.children;
  if (siblings === undefined) return { posinset: 1, setsize: 1 };
  const at = siblings.indexOf(n.id);
  return { posinset: at < 0 ? siblings.length + 1 : at + 1, setsize: Math.max(siblings.length, at + 1, 1) };
}

/** The collapsed ancestors of `id`, which must open for its row to be shown. */
export function collapsedAncestors(id: string, parentOf: (id: string) => string | null, collapsed: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const seen = new Set<string>([id]);
  for (let p = parentOf(id); p !== null && !seen.has(p); p = parentOf(p)) {
    seen.add(p);
    if (collapsed.has(p)) out.push(p);
  }
  return out;
}

export interface AgentCounts {
  total: number;
  running: number;
  queued: number;
}

/** How many agents there are, and how many run or wait for a slot right now. */
export function agentCounts(statuses: Iterable<string>): AgentCounts {
  const out = { total: 0, running: 0, queued: 0 };
  for (const s of statuses) {
    out.total += 1;
    if (s === 'running') out.running += 1;
    else if (s === 'queued') out.queued += 1;
  }
  return out;
}

/** The header line, e.g. "3 agents · 1 running · 2 queued" (the parts at zero are left out). */
export function agentCountsText(c: AgentCounts): string {
  const parts = [`${c.total} agent${c.total === 1 ? '' : 's'}`];
  if (c.running > 0) parts.push(`${c.running} running`);
  if (c.queued > 0) parts.push(`${c.queued} queued`);
  return parts.join(' · ');
}
