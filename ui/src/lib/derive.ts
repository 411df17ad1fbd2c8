//! Pure view helpers over the session tree: budget-bar states, evidence display, elapsed time, cost.

import type { BudgetKind, CheckedEvidence, EvidenceState } from '../generated/types';
import type { SessionNode, SlotTokens } from './reducer';
import { TERMINAL_STATUSES } from './reducer';

/** Fraction of a budget at which the runtime asks the agent to wrap up (generated from Rust). */
import { WRAP_UP_THRESHOLD } from '../generated/constants';
export { WRAP_UP_THRESHOLD };

export type BarState = 'ok' | 'warn' | 'exhausted';

export interface BudgetBar {
  kind: BudgetKind;
  label: string;
  used: number;
  limit: number;
  /** 0..1 for the bar width. */
  fraction: number;
  state: BarState;
  text: string;
  /**
   * Set when `used` passed `limit` because a budget ended the agent: the runtime then makes one more
   * call without tools for the final answer (docs/runtime.md), and that call is what went over.
   */
  over: string | null;
}

/**
 * `exhausted` when this budget ended the node, `warn` from 80 % of the limit, `ok` below.
 * A limit of 0 means "no limit configured" and never warns.
 */
export function budgetState(used: number, limit: number, endedBy: boolean): BarState {
  if (endedBy) return 'exhausted';
  if (limit > 0 && used >= WRAP_UP_THRESHOLD * limit) return 'warn';
  return 'ok';
}

const LABELS: Record<BudgetKind, string> = {
  steps: 'Steps',
  context_tokens: 'Context',
  total_tokens: 'Tokens',
  wall_time: 'Time',
};

export function fmtTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(n >= 10_000_000 ? 0 : 1)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(n >= 10_000 ? 0 : 1)}k`;
  return String(Math.round(n));
}

export function fmtDuration(ms: number): string {
  if (ms < 0) ms = 0;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)}s`;
  if (s < 60) return `${Math.floor(s)}s`;
  const m = Math.floor(s / 60);
  const rest = Math.floor(s % 60);
  if (m < 60) return rest === 0 ? `${m}m` : `${m}m ${String(rest).padStart(2, '0')}s`;
  return m % 60 === 0 ? `${Math.floor(m / 60)}h` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/**
 * Wall time of a node's latest run (the runtime's wall-time budget is per run, so a follow-up starts
 * from zero): live while it runs (`now`), fixed once it ended.
 */
export function elapsedMs(node: SessionNode, now: number): number {
  const start = node.runStartedMs ?? node.startedMs;
  if (start === null) return 0;
  if (node.endedMs !== null && node.endedMs >= start) return node.endedMs - start;
  if (TERMINAL_STATUSES.has(node.status)) return Math.max(0, node.lastTs - start);
  return Math.max(0, now - start);
}

/** The four budget bars of a node, or [] before its budgets are known. */
export function budgetBars(node: SessionNode, now: number): BudgetBar[] {
  const b = node.budgets;
  if (b === null) return [];
  const u = node.usage;
  const wall = node.endedMs !== null && u !== null ? Math.max(u.wall_time_ms, 0) : elapsedMs(node, now);
  const rows: [BudgetKind, number, number, (v: number) => string][] = [
    ['steps', u?.steps ?? 0, b.max_steps, (v) => String(v)],
    ['context_tokens', u?.context_tokens ?? 0, b.max_context_tokens, fmtTokens],
    ['total_tokens', u?.total_tokens ?? 0, b.max_total_tokens, fmtTokens],
    ['wall_time', wall, b.max_wall_time_ms, fmtDuration],
  ];
  return rows.map(([kind, used, limit, f]) => {
    const state = budgetState(used, limit, node.exhausted === kind);
    // "2 / 2 +1" rather than "3 / 2": the limit held; the extra is the final answer's call.
    const past = node.exhausted !== null && limit > 0 && used > limit;
    return {
      kind,
      label: LABELS[kind],
      used,
      limit,
      fraction: limit > 0 ? Math.min(1, used / limit) : 0,
      state,
      text: past ? `${f(limit)} / ${f(limit)} +${f(used - limit)}` : `${f(used)} / ${f(limit)}`,
      over: past ? `+${f(used - limit)} for the final answer: once a budget ran out, one more call without tools wrote it` : null,
    };
  });
}

export interface EvidenceView {
  clickable: boolean;
  label: string;
  /** Short human explanation of the check state. */
  stateText: string;
  cls: string;
}

const EVIDENCE_TEXT: Record<EvidenceState, string> = {
  valid: 'checked',
  missing_file: 'missing file',
  line_out_of_range: 'line out of range',
  outside_project: 'outside project',
  unparseable: 'not a path:line reference',
};

export function evidenceView(e: CheckedEvidence): EvidenceView {
  const range = e.end_line !== null && e.end_line !== e.line ? `${e.line}-${e.end_line}` : `${e.line}`;
  const label = e.state === 'unparseable' || e.line === 0 ? e.raw : `${e.path}:${range}`;
  return {
    clickable: e.state === 'valid',
    label,
    stateText: EVIDENCE_TEXT[e.state] ?? e.state,
    cls: `ev-${e.state}`,
  };
}

/** Prices in currency units per million tokens; `null` when unknown. */
export interface SlotPrice {
  input_price_per_mtok: number | null;
  output_price_per_mtok: number | null;
}

/** Cost of a subtree's tokens, or null when any slot that served tokens has no price. */
export function costOf(t: SlotTokens, prices: Partial<Record<'main' | 'light', SlotPrice | null>>): number | null {
  let total = 0;
  for (const slot of ['main', 'light'] as const) {
    const used = t[slot];
    if (used.input + used.output === 0) continue;
    const p = prices[slot];
    if (p == null || p.input_price_per_mtok == null || p.output_price_per_mtok == null) return null;
    total += (used.input * p.input_price_per_mtok + used.output * p.output_price_per_mtok) / 1_000_000;
  }
  return total;
}

export function fmtCost(c: number): string {
  if (c === 0) return '$0';
  if (c < 0.01) return `$${c.toFixed(4)}`;
  return `$${c.toFixed(2)}`;
}

export function totalTokens(t: SlotTokens): number {
  return t.main.input + t.main.output + t.light.input + t.light.output;
}

/** Flattened visible rows of the tree (depth-first), skipping children of collapsed nodes. */
export function visibleRows(
  nodes: ReadonlyMap<string, SessionNode>,
  rootId: string | null,
  collapsed: ReadonlySet<string>,
): SessionNode[] {
  const out: SessionNode[] = [];
  if (rootId === null) return out;
  const stack: string[] = [rootId];
  while (stack.length > 0) {
    const id = stack.pop() as string;
    const n = nodes.get(id);
    if (n === undefined) continue;
    out.push(n);
    if (!collapsed.has(id)) {
      for (let i = n.children.length - 1; i >= 0; i -= 1) stack.push(n.children[i]);
    }
  }
  return out;
}
