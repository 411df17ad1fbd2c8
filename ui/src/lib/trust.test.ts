import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { CheckedEvidence, SubagentResult, TraceEvent, TraceRecord, TrustSummary } from '../generated/types';
import { applyRecords, emptyState, finalizeRun } from './reducer';
import { parseThemes, varContrast } from './contrast';
import { MarkdownRenderer } from './markdown';
import {
  answerMarks,
  answerShown,
  deriveTrust,
  nodeTrustBadge,
  NOT_RECORDED,
  summarize,
  trustLine,
  trustView,
  unsupportedPaths,
  unsupportedText,
  withRecheck,
} from './trust';

/** A citation as the runtime records it, with provenance (or without, as an old trace has it). */
function cite(path: string, line: number, over: Partial<CheckedEvidence> = {}): CheckedEvidence {
  const e: CheckedEvidence = { raw: `${path}:${line}`, path, line, end_line: null, state: 'valid', text: `line ${line}`, provenance: 'seen', ...over };
  const t = deriveTrust(e);
  if (t !== undefined) e.trust = t;
  return e;
}

const grounded = cite('src/auth.rs', 8);
const fileSeen = cite('src/db.rs', 40, { provenance: 'file_seen' });
const unseen = cite('src/net.rs', 3, { provenance: 'unseen' });
const stale = cite('src/pool.rs', 30, { stale: true, seen_text: 'fn remove() {', text: 'fn take() {' });
const mismatch = cite('src/conn.rs', 121, { quote: 'Ok(0) => Closed::Eof', quote_matches: false });
const invalid = cite('src/gone.rs', 9, { state: 'missing_file', text: null });
const old: CheckedEvidence = { raw: 'src/auth.rs:8', path: 'src/auth.rs', line: 8, end_line: null, state: 'valid', text: 'x' };

function result(evidence: CheckedEvidence[], over: Partial<SubagentResult> = {}): SubagentResult {
  const trust = summarize(evidence);
  return {
    status: 'completed',
    summary: 'found it',
    findings: ['a finding'],
    evidence,
    unresolved_questions: [],
    verdict: null,
    reasons: [],
    ...(trust !== null ? { trust } : {}),
    ...over,
  };
}

describe('trust words', () => {
  it("reads each state distinctly: its own icon, word and explanation, never colour alone", () => {
    const views = [grounded, fileSeen, unseen, stale, mismatch, invalid, old].map((e) => trustView(e));
    expect(views.map((v) => v.trust)).toEqual(['grounded', 'file_seen', 'unseen', 'stale', 'quote_mismatch', 'invalid', 'none']);
    expect(new Set(views.map((v) => v.icon)).size).toBe(7);
    expect(new Set(views.map((v) => v.word)).size).toBe(7);
    expect(trustView(unseen).explain).toBe('The subagent never opened this file');
    expect(trustView(stale).explain).toBe('Changed since the subagent read it');
    expect(trustView(invalid).explain).toBe('Not a valid reference: the file does not exist');
    expect(trustView(old).word).toBe(NOT_RECORDED);
    // The answer's references were checked against every agent of the run.
    expect(trustView(unseen, 'answer').explain).toBe('No agent of this run ever opened this file');
  });

  it("words a summary exactly as Rust's TrustSummary::line", () => {
    const s: TrustSummary = { total: 6, grounded: 5, file_seen: 0, unseen: 1, quote_mismatch: 0, stale: 0, invalid: 0 };
    expect(trustLine(s)).toBe('5 of 6 citations seen and valid · 1 unseen');
    expect(trustLine({ ...s, total: 1, grounded: 0, unseen: 0, stale: 1 })).toBe('0 of 1 citation seen and valid · 1 stale');
    const all = summarize([grounded, fileSeen, unseen, stale, mismatch, invalid]);
    expect(all).toEqual({ total: 6, grounded: 1, file_seen: 1, unseen: 1, quote_mismatch: 1, stale: 1, invalid: 1 });
    expect(trustLine(all as TrustSummary)).toBe('1 of 6 citations seen and valid · 1 file seen, line not · 1 unseen · 1 quote mismatch · 1 stale · 1 invalid');
    expect(summarize([old])).toBeNull();
  });

  it('says why a result is unsupported', () => {
    expect(unsupportedText('no_tool_calls')).toMatch(/after zero tool calls/);
    expect(unsupportedText('no_seen_evidence')).toMatch(/none of its citations is both valid and seen/);
  });

  it('gives a tree row a short badge coloured by the worst it counts, unsupported marked apart, old results as not recorded', () => {
    expect(nodeTrustBadge(result([grounded, grounded]))).toMatchObject({ text: '2/2 ✓', cls: 'tr-grounded', unsupported: null });
    const mixed = nodeTrustBadge(result([grounded, unseen, stale]));
    expect(mixed).toMatchObject({ text: '1/3 ✓', cls: 'tr-stale', title: '1 of 3 citations seen and valid · 1 unseen · 1 stale' });
    const guess = nodeTrustBadge(result([], { unsupported: 'no_tool_calls' }));
    expect(guess).toMatchObject({ text: '⚠ unsupported', cls: 'tr-unsupported', unsupported: 'no_tool_calls' });
    expect(guess?.title).toMatch(/zero tool calls/);
    expect(nodeTrustBadge(result([old]))).toMatchObject({ cls: 'tr-none' });
    expect(nodeTrustBadge(result([old]))?.title).toContain(NOT_RECORDED);
    expect(nodeTrustBadge(null)).toBeNull();
  });
});

describe('re-checked evidence', () => {
  it('is merged into a new result; the recorded one (and so the tree and the trace) is untouched', () => {
    const r = result([grounded, fileSeen]);
    const before = structuredClone(r);
    const nowStale = { ...grounded, stale: true, trust: 'stale' as const, seen_text: 'line 8', text: 'changed' };
    const merged = withRecheck(r, { items: [nowStale, fileSeen], trust: summarize([nowStale, fileSeen]) });
    expect(merged.evidence[0].trust).toBe('stale');
    expect(merged.trust).toEqual({ total: 2, grounded: 0, file_seen: 1, unseen: 0, quote_mismatch: 0, stale: 1, invalid: 0 });
    expect(r).toEqual(before);
    // An answer that does not fit the items shown (another result) is not applied.
    expect(withRecheck(r, { items: [nowStale], trust: null })).toBe(r);
    expect(withRecheck(r, undefined)).toBe(r);
  });

  it("keeps an old result's recorded counts absent when the re-check finds no provenance", () => {
    const r = result([old]);
    const merged = withRecheck(r, { items: [{ ...old, state: 'missing_file', text: null }], trust: null });
    expect(merged.evidence[0].state).toBe('missing_file');
    expect(merged.trust).toBeUndefined();
  });
});

describe('the "only unsupported" filter', () => {
  it('keeps each unsupported agent and the way to it', () => {
    const nodes = new Map([
      ['root', { parentId: null, result: null }],
      ['a', { parentId: 'root', result: result([grounded]) }],
      ['b', { parentId: 'root', result: null }],
      ['b1', { parentId: 'b', result: result([], { unsupported: 'no_tool_calls' as const }) }],
      ['c', { parentId: 'root', result: result([unseen], { unsupported: 'no_seen_evidence' as const }) }],
    ]);
    expect([...unsupportedPaths(nodes)].sort()).toEqual(['b', 'b1', 'c', 'root']);
  });
});

describe('the reducer', () => {
  let seq = 0;
  const rec = (session: string, parent: string | null, event: TraceEvent, ts = 1000 + seq): TraceRecord =>
    ({ v: 1, seq: seq++, ts_ms: ts, session_id: session, run_id: 'r1', parent_session_id: parent, event }) as TraceRecord;

  it("keeps each final answer's reference check with the answer it belongs to, and a subagent's trust and unsupported mark", () => {
    const refs = [grounded, invalid];
    const answerTrust = summarize(refs) as TrustSummary;
    const guess = result([], { unsupported: 'no_tool_calls' });
    const records: TraceRecord[] = [
      rec('main', null, { type: 'run_started', prompt: 'where is login?' }),
      rec('main', null, { type: 'subagent_requested', child_session_id: 'kid', tool_call_id: 'c1', profile: 'explore', description: 'look', prompt: 'look', model_slot: 'light' } as TraceEvent),
      rec('main', null, { type: 'subagent_completed', child_session_id: 'kid', tool_call_id: 'c1', result: guess, usage: { input_tokens: 1, output_tokens: 1, estimated: false }, tool_calls: 0, elapsed_ms: 5, terminal_reason: 'completed' } as TraceEvent),
      rec('main', null, { type: 'assistant_delta', model_call_id: 'm2', text: 'See src/auth.rs:8 and src/gone.rs:9.' } as TraceEvent),
      rec('main', null, { type: 'answer_checked', references: refs, trust: answerTrust }),
    ];
    const tree = finalizeRun(applyRecords(emptyState(), records));
    const main = tree.nodes.get('main');
    expect(main?.answerChecks).toEqual([{ itemId: 'm2', references: refs, trust: answerTrust }]);
    expect(tree.skipped).toBe(0);
    const kid = tree.nodes.get('kid');
    expect(kid?.result?.unsupported).toBe('no_tool_calls');
    expect(nodeTrustBadge(kid?.result ?? null)?.text).toBe('⚠ unsupported');
  });

  it('loads a trace written before provenance: no checks, results read "provenance not recorded"', () => {
    const oldResult = result([old]);
    const tree = applyRecords(emptyState(), [
      rec('m', null, { type: 'run_started', prompt: 'p' }),
      rec('m', null, { type: 'subagent_completed', child_session_id: 'k', tool_call_id: 'c', result: oldResult, usage: { input_tokens: 1, output_tokens: 1, estimated: false }, tool_calls: 2, elapsed_ms: 5, terminal_reason: 'completed' } as TraceEvent),
    ]);
    expect(tree.nodes.get('m')?.answerChecks).toEqual([]);
    expect(tree.nodes.get('k')?.result?.trust).toBeUndefined();
    expect(trustView(tree.nodes.get('k')?.result?.evidence[0] as CheckedEvidence).word).toBe(NOT_RECORDED);
  });
});

describe("the final answer's references", () => {
  it('are marked where the answer mentions them when broken or unseen; a grounded one stays a plain link', () => {
    const refs = [grounded, invalid, cite('src/net.rs', 3, { provenance: 'unseen' })];
    const html = new MarkdownRenderer().render('Login: `src/auth.rs:8`, see src/gone.rs:9 and src/net.rs:3.', true, answerMarks(refs));
    const button = (path: string) => new RegExp(`<button[^>]*data-path="${path.replace(/[./]/g, '\\$&')}"[^>]*>`).exec(html)?.[0] ?? '';
    expect(button('src/auth.rs')).toContain('class="md-path"');
    expect(button('src/auth.rs')).toContain('data-trust="grounded"');
    expect(button('src/gone.rs')).toContain('md-ref-invalid');
    expect(button('src/gone.rs')).toContain('title="Not a valid reference: the file does not exist. Open src/gone.rs at line 9"');
    expect(button('src/net.rs')).toContain('md-ref-unseen');
    expect(button('src/net.rs')).toContain('No agent of this run ever opened this file');
    // The mark is in the page, not only in the hover.
    expect(html).toMatch(/data-path="src\/gone\.rs"[^>]*>src\/gone\.rs:9<span class="md-ref-mark tr tr-invalid" aria-hidden="true">✗<\/span>/);
  });

  it('follow the re-check once it came back, and the marks change the rendered block', () => {
    const check = { itemId: 'm', references: [grounded], trust: summarize([grounded]) as TrustSummary };
    expect(answerShown(check, undefined)).toEqual({ references: [grounded], trust: check.trust, now: false });
    const nowStale = { ...grounded, stale: true, trust: 'stale' as const };
    const shown = answerShown(check, { items: [nowStale], trust: summarize([nowStale]) });
    expect(shown.now).toBe(true);
    const r = new MarkdownRenderer();
    const before = r.render('see src/auth.rs:8', true, answerMarks(check.references));
    const after = r.render('see src/auth.rs:8', true, answerMarks(shown.references));
    expect(before).not.toContain('md-ref-stale');
    expect(after).toContain('md-ref-stale');
  });
});

describe('trust colours', () => {
  const css = readFileSync(new URL('../app.css', import.meta.url), 'utf8');
  const themes = parseThemes(css);
  it.each(['light', 'dark'] as const)('%s: every trust badge reads at >= 4.5:1', (name) => {
    const rules = [...css.matchAll(/\.(tr-[\w_]+)\s*\{\s*color:\s*var\(--([\w-]+)\);\s*background:\s*var\(--([\w-]+)\);/g)];
    expect(rules.map((m) => m[1]).sort()).toEqual(['tr-file_seen', 'tr-grounded', 'tr-invalid', 'tr-none', 'tr-quote_mismatch', 'tr-stale', 'tr-unseen', 'tr-unsupported']);
    for (const [, cls, fg, bg] of rules) {
      expect(varContrast(themes[name], fg, bg), `${cls}: --${fg} on --${bg}`).toBeGreaterThanOrEqual(4.5);
    }
  });
});
