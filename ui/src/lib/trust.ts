//! How far evidence can be trusted, in words and marks people read at a glance: one trust per citation
//! (computed by Rust: `CheckedEvidence.trust`), a count per result (`TrustSummary`), a subagent result
//! marked unsupported, and the main answer's references. Every state has an icon and a word as well as
//! a colour, and explains itself on hover. Traces written before provenance was recorded have none of
//! these fields: they read "provenance not recorded".

import type { CheckedEvidence, EvidenceTrust, SubagentResult, TrustSummary, Unsupported } from '../generated/types';
import { refKey, type RefMark, type RefMarks } from './markdown';
import { TRUST_LINE_WORDS } from '../generated/constants';

/** What the views show for a citation without a trust (an old trace). */
export const NOT_RECORDED = 'provenance not recorded';

/** Whose citations these are: a subagent's result, or the main agent's final answer (any agent of the run). */
export type Citer = 'subagent' | 'answer';

export interface TrustView {
  /** `EvidenceTrust`, or `none` without provenance. */
  trust: EvidenceTrust | 'none';
  /** A mark that tells the states apart without colour. */
  icon: string;
  /** One or two words. */
  word: string;
  /** What it means, for the hover. */
  explain: string;
  /** CSS class (`tr-<trust>`). */
  cls: string;
}

const INVALID_WHY: Record<CheckedEvidence['state'], string> = {
  valid: '',
  missing_file: 'the file does not exist',
  line_out_of_range: 'the file has no such line',
  outside_project: 'the path is outside the project',
  unparseable: 'it is not a path:line reference',
};

/** The icon, word and explanation of `e`'s trust. */
export function trustView(e: CheckedEvidence, who: Citer = 'subagent'): TrustView {
  const agent = who === 'subagent' ? 'the subagent' : 'any agent of this run';
  const Agent = who === 'subagent' ? 'The subagent' : 'No agent of this run';
  const t = e.trust;
  switch (t) {
    case 'grounded':
      return {
        trust: t,
        icon: '✓',
        word: 'seen',
        explain: `${who === 'subagent' ? 'The subagent' : 'An agent of this run'} was shown this line by its own tool call, and the file has not changed since`,
        cls: 'tr-grounded',
      };
    case 'file_seen':
      return { trust: t, icon: '◐', word: 'file seen', explain: `${who === 'subagent' ? 'The subagent' : 'An agent of this run'} opened or listed this file, but was never shown this line`, cls: 'tr-file_seen' };
    case 'unseen':
      return {
        trust: t,
        icon: '?',
        word: 'unseen',
        explain: who === 'subagent' ? 'The subagent never opened this file' : `${Agent} ever opened this file`,
        cls: 'tr-unseen',
      };
    case 'quote_mismatch':
      return { trust: t, icon: '≠', word: 'quote differs', explain: `The code ${agent} quoted differs from this line on disk`, cls: 'tr-quote_mismatch' };
    case 'stale':
      return { trust: t, icon: '↻', word: 'stale', explain: who === 'subagent' ? 'Changed since the subagent read it' : 'Changed since the agent read it', cls: 'tr-stale' };
    case 'invalid':
      return { trust: t, icon: '✗', word: 'invalid', explain: `Not a valid reference: ${INVALID_WHY[e.state] || e.state}`, cls: 'tr-invalid' };
    default:
      return {
        trust: 'none',
        icon: '–',
        word: NOT_RECORDED,
        explain: 'This run was recorded before Canopy tracked what each agent was shown',
        cls: 'tr-none',
      };
  }
}

/** One line for people, word for word as Rust's `TrustSummary::line`: `5 of 6 citations seen and valid · 1 unseen`. */
export function trustLine(s: TrustSummary): string {
  let out = `${s.grounded} of ${s.total} citation${s.total === 1 ? '' : 's'} seen and valid`;
  for (const [trust, word] of TRUST_LINE_WORDS) {
    const n = s[trust];
    if (n > 0) out += ` · ${n} ${word}`;
  }
  return out;
}

/** The short form a tree row carries: `5/6 ✓`. */
export function trustShort(s: TrustSummary): string {
  return `${s.grounded}/${s.total} ✓`;
}

/** Why a result is unsupported, in words. */
export function unsupportedText(u: Unsupported): string {
  return u === 'no_tool_calls'
    ? 'Unsupported: the subagent wrote this result after zero tool calls — it looked at nothing.'
    : 'Unsupported: the result has findings, but none of its citations is both valid and seen by the subagent.';
}

/** Mirror of Rust's `CheckedEvidence::derive_trust` (the browser preview's fake backend re-checks with it). */
export function deriveTrust(e: CheckedEvidence): EvidenceTrust | undefined {
  if (e.provenance === undefined) return undefined;
  if (e.state !== 'valid') return 'invalid';
  if (e.stale === true) return 'stale';
  if (e.quote_matches === false) return 'quote_mismatch';
  return e.provenance === 'seen' ? 'grounded' : e.provenance;
}

/** Mirror of Rust's `TrustSummary::of`: null when no item has a trust (an old trace). */
export function summarize(items: readonly CheckedEvidence[]): TrustSummary | null {
  const s: TrustSummary = { total: 0, grounded: 0, file_seen: 0, unseen: 0, quote_mismatch: 0, stale: 0, invalid: 0 };
  let recorded = items.length === 0;
  for (const e of items) {
    if (e.trust === undefined) continue;
    recorded = true;
    s.total += 1;
    s[e.trust] += 1;
  }
  return recorded ? s : null;
}

/** A result's evidence as last re-checked against the disk (null: not re-checked yet). */
export interface Rechecked {
  items: CheckedEvidence[];
  trust: TrustSummary | null;
}

/**
 * `result` with its evidence and counts as last re-checked, when they were: a new object, the result
 * (and so the trace it came from) untouched. Only items the re-check answered for are replaced.
 */
export function withRecheck(result: SubagentResult, checked: Rechecked | undefined): SubagentResult {
  if (checked === undefined || checked.items.length !== result.evidence.length) return result;
  const out: SubagentResult = { ...result, evidence: checked.items };
  if (checked.trust !== null) out.trust = checked.trust;
  return out;
}

/** The trust summary a tree row and the details show, or null for a result recorded without provenance. */
export function resultTrust(result: SubagentResult): TrustSummary | null {
  return result.trust ?? null;
}

/** Whether a node's result is marked unsupported (what the "only unsupported" filter keeps). */
export function isUnsupported(result: SubagentResult | null): boolean {
  return result?.unsupported !== undefined && result.unsupported !== null;
}

/** How the main answer's checked references are marked where the answer mentions them. */
export function answerMarks(references: readonly CheckedEvidence[]): RefMarks {
  const out = new Map<string, RefMark>();
  for (const e of references) {
    if (e.line === 0) continue;
    const v = trustView(e, 'answer');
    if (v.trust === 'none') continue;
    out.set(refKey(e.path, e.line, e.end_line), { trust: v.trust, icon: v.icon, explain: v.explain });
  }
  return out;
}

/** A final answer's references as shown: the recorded check, or the re-check when it came back. */
export interface AnswerShown {
  references: CheckedEvidence[];
  trust: TrustSummary | null;
  /** Whether these were checked against the files just now. */
  now: boolean;
}

/** `check` merged with its re-check (when it came back). */
export function answerShown(check: { references: CheckedEvidence[]; trust: TrustSummary }, checked: Rechecked | undefined): AnswerShown {
  if (checked === undefined || checked.items.length !== check.references.length) return { references: check.references, trust: check.trust, now: false };
  return { references: checked.items, trust: checked.trust ?? check.trust, now: true };
}

/** The worst trust a summary counts (what colours a tree row's badge); `grounded` when all hold. */
export function worstTrust(s: TrustSummary): EvidenceTrust {
  if (s.invalid > 0) return 'invalid';
  if (s.stale > 0) return 'stale';
  if (s.quote_mismatch > 0) return 'quote_mismatch';
  if (s.unseen > 0) return 'unseen';
  if (s.file_seen > 0) return 'file_seen';
  return 'grounded';
}

/** What a tree row says of a node's result: a badge, or null when it has no result (or nothing cited, nothing amiss). */
export interface NodeTrustBadge {
  text: string;
  title: string;
  cls: string;
  unsupported: Unsupported | null;
}

export function nodeTrustBadge(result: SubagentResult | null): NodeTrustBadge | null {
  if (result === null) return null;
  if (result.unsupported != null) {
    const why = unsupportedText(result.unsupported);
    return { text: '⚠ unsupported', title: result.trust !== undefined ? `${why} ${trustLine(result.trust)}` : why, cls: 'tr-unsupported', unsupported: result.unsupported };
  }
  if (result.trust !== undefined) {
    if (result.trust.total === 0) return null;
    return { text: trustShort(result.trust), title: trustLine(result.trust), cls: `tr-${worstTrust(result.trust)}`, unsupported: null };
  }
  if (result.evidence.length === 0) return null;
  return { text: '– no provenance', title: `${NOT_RECORDED}: this run was recorded before Canopy tracked what each agent was shown`, cls: 'tr-none', unsupported: null };
}

/**
 * Ids of the nodes the "only unsupported" filter keeps: each agent whose result is unsupported and
 * its ancestors (the way to it in the tree).
 */
export function unsupportedPaths(nodes: ReadonlyMap<string, { parentId: string | null; result: SubagentResult | null }>): Set<string> {
  const keep = new Set<string>();
  for (const [id, n] of nodes) {
    if (!isUnsupported(n.result)) continue;
    let cur: string | null = id;
    let guard = 0;
    while (cur !== null && !keep.has(cur) && guard < 10_000) {
      keep.add(cur);
      cur = nodes.get(cur)?.parentId ?? null;
      guard += 1;
    }
  }
  return keep;
}
