// Evidence you can trust (#12), in the real app: each citation's trust is shown distinctly (seen/grounded,
// file seen, unseen, stale, quote mismatch, invalid) with a hover that explains it, a result written after
// zero tool calls is marked unsupported (tree badge, the "only unsupported" filter, why in the details), the
// main answer's broken and unseen references are marked where the answer is rendered, a stale citation
// opens in the viewer with its line then and now, and evidence is checked again when it is opened: after
// the test edits a file the agent had read, the reopened session says that citation no longer holds. A
// trace written before provenance was recorded still loads and says "provenance not recorded".
//
// The sessions are trace files written the way docs/trace-format.md describes them (children linked to
// their parents), put where the app keeps this project's traces, and opened from History; the read stamps
// are XXH3-64 of the files as the test wrote them, so the app's own re-check decides what is stale.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, textOf, traceDirOf, waitFor, writeSettings } from './harness.mjs';
import { stampOf } from './xxh3.mjs';

const cfg = config();
let app;
after(async () => app?.close('21-provenance-end'));

const SESSION_RS = 'pub fn check(token: &str) -> bool {\n    !token.is_empty()\n}\n';
const SESSION_RS_EDITED = 'pub fn check(token: &str) -> bool {\n    token.len() > 8\n}\n';
const CACHE_RS_THEN = 'pub const TTL_SECS: u64 = 30;\n';
const CACHE_RS_NOW = 'pub const TTL_SECS: u64 = 60;\n';

/** One trace file's records, seq and timestamps filled in. */
class Writer {
  constructor(sessionId, parent, runId, t0) {
    Object.assign(this, { sessionId, parent, runId, t: t0, seq: 0, lines: [] });
  }
  emit(event, dt = 5) {
    this.t += dt;
    this.lines.push(JSON.stringify({ v: 1, seq: this.seq++, ts_ms: this.t, session_id: this.sessionId, run_id: this.seq === 1 ? '' : this.runId, parent_session_id: this.parent, event }));
  }
  write(dir) {
    fs.writeFileSync(path.join(dir, `${this.sessionId}.jsonl`), this.lines.join('\n') + '\n');
  }
}

const MODEL = (slot) => ({ slot, requested_slot: slot, fallback: false, provider: 'openai', model_id: `mock-${slot}`, base_url: `${cfg.mockUrl}/v1` });
const BUDGETS = { max_steps: 12, max_context_tokens: 16000, max_total_tokens: 32000, max_wall_time_ms: 300000 };
const USAGE = { input_tokens: 900, output_tokens: 60, estimated: false };
const totals = (steps) => ({ steps, context_tokens: 900, total_tokens: 960 * steps, wall_time_ms: 800 * steps });

function started(w, project, agent, description, parentCall) {
  w.emit({
    type: 'session_started', agent, profile: agent === 'main' ? 'main' : 'explore', description,
    model: MODEL(agent === 'main' ? 'main' : 'light'), budgets: BUDGETS, project_root: project,
    parent: parentCall === null ? null : { session_id: w.parent, run_id: w.runId, tool_call_id: parentCall },
    permission_mode: agent === 'main' ? 'main' : 'readonly_subagent', tools: ['Read', 'Grep', 'Glob'], system_prompt: 'p', bash_sandbox: 'required',
  }, 0);
}

/** A citation as the runtime records it (`CheckedEvidence`); `prov` null writes one as traces before provenance had it. */
function cite(ref, { text, state = 'valid', prov = 'seen', trust, stamp, stale, seenText, quote, quoteMatches } = {}) {
  const [p, l] = ref.split(':');
  const e = { raw: ref, path: p, line: Number(l), end_line: null, state, text: state === 'valid' ? text : null };
  if (quote !== undefined) Object.assign(e, { quote, quote_matches: quoteMatches });
  if (prov !== null) e.provenance = prov;
  if (stamp !== undefined) e.read_stamp = stamp;
  if (stale) e.stale = true;
  if (seenText !== undefined) e.seen_text = seenText;
  if (trust !== undefined) e.trust = trust;
  return e;
}

function summary(items) {
  const s = { total: 0, grounded: 0, file_seen: 0, unseen: 0, quote_mismatch: 0, stale: 0, invalid: 0 };
  for (const e of items) {
    s.total += 1;
    s[e.trust] += 1;
  }
  return s;
}

/** A main session delegating to `children`, then answering `answer` (its references checked as `refs`). */
function writeSession(dir, project, { id, t0, prompt, children, answer, refs }) {
  const run = `r-${id.slice(2)}`;
  const main = new Writer(id, null, run, t0);
  started(main, project, 'main', null, null);
  main.emit({ type: 'run_started', prompt });
  main.emit({ type: 'model_call_begin', model_call_id: `${id}-m1`, step: 1, messages: 1, estimated_input_tokens: 900, tools_offered: true });
  main.emit({ type: 'model_call_end', model_call_id: `${id}-m1`, step: 1, text: '', tool_calls: children.map((c) => ({ id: c.call, name: 'Task', arguments: JSON.stringify({ description: c.description, prompt: c.description }) })), finish_reason: 'tool_calls', usage: USAGE, model: 'mock-main', latency_ms: 300, error: null, totals: totals(1) }, 300);
  for (const c of children) {
    main.emit({ type: 'tool_call_begin', call_id: c.call, tool: 'Task', arguments: { description: c.description, prompt: c.description }, mutates: false }, 1);
    main.emit({ type: 'subagent_requested', tool_call_id: c.call, child_session_id: c.id, description: c.description, profile: 'explore', model_slot: 'light', prompt: c.description }, 1);
    main.emit({ type: 'subagent_started', tool_call_id: c.call, child_session_id: c.id, profile: 'explore', model: MODEL('light'), budgets: BUDGETS }, 1);
    const kid = new Writer(c.id, id, run, main.t);
    started(kid, project, 'subagent', c.description, c.call);
    kid.emit({ type: 'run_started', prompt: c.description });
    let step = 0;
    for (const read of c.reads) {
      step += 1;
      kid.emit({ type: 'model_call_begin', model_call_id: `${c.id}-m${step}`, step, messages: step * 2 - 1, estimated_input_tokens: 900, tools_offered: true });
      kid.emit({ type: 'model_call_end', model_call_id: `${c.id}-m${step}`, step, text: '', tool_calls: [{ id: `${c.id}-t${step}`, name: 'Read', arguments: JSON.stringify({ path: read.path }) }], finish_reason: 'tool_calls', usage: USAGE, model: 'mock-light', latency_ms: 200, error: null, totals: totals(step) }, 200);
      kid.emit({ type: 'tool_call_begin', call_id: `${c.id}-t${step}`, tool: 'Read', arguments: { path: read.path }, mutates: false }, 1);
      const out = read.text.split('\n').slice(0, -1).map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join('\n');
      kid.emit({ type: 'tool_call_end', call_id: `${c.id}-t${step}`, tool: 'Read', status: 'ok', output: out, output_bytes: Buffer.byteLength(out), output_cap_bytes: 16384, truncated: false, duration_ms: 2, seen: [{ path: read.path, lines: [[1, read.text.split('\n').length - 1]], stamp: stampOf(Buffer.from(read.text)) }] }, 2);
    }
    step += 1;
    const resultJson = JSON.stringify({ status: 'completed', summary: c.result.summary, findings: c.result.findings, evidence: c.result.evidence.map((e) => e.raw), unresolved_questions: [] });
    kid.emit({ type: 'model_call_begin', model_call_id: `${c.id}-m${step}`, step, messages: step * 2 - 1, estimated_input_tokens: 900, tools_offered: true });
    kid.emit({ type: 'model_call_end', model_call_id: `${c.id}-m${step}`, step, text: resultJson, tool_calls: [], finish_reason: 'stop', usage: USAGE, model: 'mock-light', latency_ms: 400, error: null, totals: totals(step) }, 400);
    kid.emit({ type: 'run_ended', terminal_reason: 'completed', final_text: resultJson, result: c.result, error: null, usage: USAGE, usage_with_descendants: USAGE, totals: totals(step), tool_calls: c.reads.length });
    kid.write(dir);
    main.t = kid.t;
    main.emit({ type: 'subagent_completed', tool_call_id: c.call, child_session_id: c.id, result: c.result, usage: USAGE, tool_calls: c.reads.length, elapsed_ms: 1500, terminal_reason: 'completed' }, 1);
    main.emit({ type: 'tool_call_end', call_id: c.call, tool: 'Task', status: 'ok', output: `${c.result.summary}\n\n${resultJson}`, output_bytes: 200, output_cap_bytes: 16384, truncated: false, duration_ms: 1500 }, 1);
  }
  main.emit({ type: 'model_call_begin', model_call_id: `${id}-m2`, step: 2, messages: 3, estimated_input_tokens: 1200, tools_offered: true });
  main.emit({ type: 'assistant_delta', model_call_id: `${id}-m2`, text: answer }, 100);
  main.emit({ type: 'model_call_end', model_call_id: `${id}-m2`, step: 2, text: answer, tool_calls: [], finish_reason: 'stop', usage: USAGE, model: 'mock-main', latency_ms: 300, error: null, totals: totals(2) }, 200);
  if (refs !== null) main.emit({ type: 'answer_checked', references: refs, trust: summary(refs) });
  main.emit({ type: 'run_ended', terminal_reason: 'completed', final_text: answer, result: null, error: null, usage: USAGE, usage_with_descendants: USAGE, totals: totals(2), tool_calls: children.length });
  main.write(dir);
}

/** The evidence of the details pane as shown: ref, trust and its hover. */
const detailsEvidence = (browser) =>
  browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="node-details"] [data-testid="evidence"]')).map((li) => {
      const mark = li.querySelector('[data-testid="evidence-trust"]');
      return { ref: li.querySelector('.ev-link, .ev-label')?.textContent?.trim(), trust: mark?.getAttribute('data-trust'), word: mark?.textContent?.trim(), title: mark?.getAttribute('title'), thenNow: li.querySelector('[data-testid="evidence-then-now"]')?.innerText?.replace(/\s+/g, ' ').trim() ?? null };
    }),
  );

async function openFromHistory(browser, sessionId) {
  await (await byTestId(browser, 'nav-history')).click();
  const open = await byTestId(browser, 'history-open', { extra: '' }).then(() => browser.$(`[data-testid="history-row"][data-session-id="${sessionId}"] [data-testid="history-open"]`));
  await open.waitForExist({ timeout: 10000 });
  await open.click();
  await byTestId(browser, 'readonly-banner');
  await waitFor(browser, `session ${sessionId} shown`, () =>
    browser.execute((id) => document.querySelector(`[data-testid="tree-node"][data-session-id="${id}"]`) !== null, sessionId),
  );
}

async function selectNode(browser, id) {
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${id}"]`)).click();
  await waitFor(browser, `the details of ${id}, re-checked`, () =>
    browser.execute((sid) => document.querySelector(`[data-testid="node-details"][data-session-id="${sid}"] [data-rechecked="true"]`) !== null, id),
  );
}

const ROOT = 's-a11ce00000000001';
const GOOD = 's-a11ce000000000a1';
const GUESS = 's-a11ce000000000b2';
const OLD_ROOT = 's-0ld0000000000001';
const OLD_KID = 's-0ld00000000000a1';

function writeTraces(project) {
  const dir = traceDirOf(cfg, project);
  fs.mkdirSync(dir, { recursive: true });
  const auth = fs.readFileSync(path.join(project, 'src', 'auth.rs'), 'utf8');
  const config = fs.readFileSync(path.join(project, 'src', 'config.rs'), 'utf8');
  const line = (text, n) => text.split('\n')[n - 1];
  const sessionStamp = stampOf(Buffer.from(SESSION_RS));
  const evidence = [
    cite('src/session.rs:2', { text: '    !token.is_empty()', trust: 'grounded', stamp: sessionStamp }),
    cite('src/cache.rs:1', { text: line(CACHE_RS_NOW, 1), trust: 'stale', stamp: stampOf(Buffer.from(CACHE_RS_THEN)), stale: true, seenText: line(CACHE_RS_THEN, 1) }),
    cite('src/config.rs:5', { text: line(config, 5), prov: 'file_seen', trust: 'file_seen' }),
    cite('src/auth.rs:3', { text: line(auth, 3), prov: 'unseen', trust: 'unseen' }),
    cite('src/auth.rs:7', { text: line(auth, 7), trust: 'quote_mismatch', quote: 'password.len() >= 12', quoteMatches: false }),
    cite('src/missing.rs:4', { state: 'missing_file', prov: 'unseen', trust: 'invalid' }),
  ];
  writeSession(dir, project, {
    id: ROOT,
    t0: Date.now() - 60_000,
    prompt: 'PROVENANCE: how are sessions checked?',
    children: [
      { id: GOOD, call: 'call_good', description: 'Check the session code', reads: [{ path: 'src/session.rs', text: SESSION_RS }, { path: 'src/cache.rs', text: CACHE_RS_THEN }], result: { status: 'completed', summary: 'Tokens are checked in check().', findings: ['Any non-empty token passes'], evidence, unresolved_questions: [], verdict: null, reasons: [], trust: summary(evidence) } },
      { id: GUESS, call: 'call_guess', description: 'Guess the cache policy', reads: [], result: { status: 'completed', summary: 'The cache keeps entries for five minutes.', findings: ['TTL is 300 seconds'], evidence: [], unresolved_questions: [], verdict: null, reasons: [], trust: summary([]), unsupported: 'no_tool_calls' } },
    ],
    answer: 'Sessions are checked in `src/session.rs:2`. The TTL is set in src/gone.rs:7, and login starts at src/auth.rs:3.',
    refs: [
      cite('src/session.rs:2', { text: '    !token.is_empty()', trust: 'grounded', stamp: sessionStamp }),
      cite('src/gone.rs:7', { state: 'missing_file', prov: 'unseen', trust: 'invalid' }),
      cite('src/auth.rs:3', { text: line(auth, 3), prov: 'unseen', trust: 'unseen' }),
    ],
  });
  // Written before provenance was recorded: no `seen`, no provenance or trust, no answer check.
  writeSession(dir, project, {
    id: OLD_ROOT,
    t0: Date.now() - 7 * 24 * 3600_000,
    prompt: 'OLD-TRACE: where is login?',
    children: [{ id: OLD_KID, call: 'call_old', description: 'Find the login code', reads: [], result: { status: 'completed', summary: 'Login is in src/auth.rs.', findings: ['login() calls check_password()'], evidence: [cite('src/auth.rs:3', { text: line(auth, 3), prov: null })], unresolved_questions: [], verdict: null, reasons: [] } }],
    answer: 'Login starts at src/auth.rs:3.',
    refs: null,
  });
}

/** The project copy the tests share (the second launch, in the dark theme, reopens it). */
let project = null;

test('each trust state is shown distinctly, unsupported results are marked and filtered, and a broken answer reference is marked', async () => {
  writeSettings(cfg);
  project = copyFixture();
  fs.writeFileSync(path.join(project, 'src', 'session.rs'), SESSION_RS);
  fs.writeFileSync(path.join(project, 'src', 'cache.rs'), CACHE_RS_NOW);
  writeTraces(project);
  app = await launch(cfg, project);
  const { browser } = app;
  await openFromHistory(browser, ROOT);

  // The tree: a badge per result, an unsupported one marked apart.
  const badges = await waitFor(browser, 'the trust badges of the tree', async () => {
    const b = await browser.execute(() =>
      Object.fromEntries(Array.from(document.querySelectorAll('[data-testid="tree-node"]')).map((n) => {
        const t = n.querySelector('[data-testid="node-trust"]');
        return [n.getAttribute('data-session-id'), t === null ? null : { text: t.textContent.trim(), title: t.getAttribute('title'), unsupported: t.getAttribute('data-unsupported') }];
      })),
    );
    return Object.keys(b).length === 3 ? b : false;
  });
  assert.equal(badges[ROOT], null);
  assert.equal(badges[GOOD].text, '1/6 ✓');
  assert.equal(badges[GOOD].title, '1 of 6 citations seen and valid · 1 file seen, line not · 1 unseen · 1 quote mismatch · 1 stale · 1 invalid');
  assert.equal(badges[GUESS].text, '⚠ unsupported');
  assert.equal(badges[GUESS].unsupported, 'no_tool_calls');

  // "Only unsupported" keeps the guess and the way to it.
  await (await byTestId(browser, 'filter-unsupported-toggle')).click();
  const filtered = await waitFor(browser, 'the filtered tree', async () => {
    const ids = await browser.execute(() => Array.from(document.querySelectorAll('[data-testid="tree-node"]')).map((n) => n.getAttribute('data-session-id')));
    return ids.length === 2 ? ids : false;
  });
  assert.deepEqual(filtered, [ROOT, GUESS]);
  await screenshot(browser, cfg, '21-provenance-filter');
  await (await byTestId(browser, 'filter-unsupported-toggle')).click();
  await waitFor(browser, 'all agents back', async () => (await browser.$$('[data-testid="tree-node"]')).length === 3);

  // The details: each citation's trust, with its word and its hover.
  await selectNode(browser, GOOD);
  const ev = await detailsEvidence(browser);
  assert.deepEqual(ev.map((e) => [e.ref, e.trust]), [
    ['src/session.rs:2', 'grounded'],
    ['src/cache.rs:1', 'stale'],
    ['src/config.rs:5', 'file_seen'],
    ['src/auth.rs:3', 'unseen'],
    ['src/auth.rs:7', 'quote_mismatch'],
    ['src/missing.rs:4', 'invalid'],
  ]);
  assert.equal(new Set(ev.map((e) => e.word)).size, 6, `each state has its own word: ${ev.map((e) => e.word)}`);
  const title = Object.fromEntries(ev.map((e) => [e.trust, e.title]));
  assert.equal(title.unseen, 'The subagent never opened this file');
  assert.equal(title.stale, 'Changed since the subagent read it');
  assert.equal(title.file_seen, 'The subagent opened or listed this file, but was never shown this line');
  assert.match(title.quote_mismatch, /quoted differs/);
  assert.match(title.invalid, /the file does not exist/);
  assert.equal(ev[1].thenNow, `then ${CACHE_RS_THEN.trim()} now ${CACHE_RS_NOW.trim()}`);
  assert.match((await textOf(await byTestId(browser, 'details-trust'))).replace(/\s+/g, ' '), /^1 of 6 citations seen and valid · 1 file seen, line not · 1 unseen · 1 quote mismatch · 1 stale · 1 invalid/);
  // The quote that differs is shown beside the line on disk.
  assert.match(await textOf(await browser.$('[data-testid="node-details"] [data-testid="evidence-quote"]')), /password\.len\(\) >= 12/);
  await screenshot(browser, cfg, '21-provenance-details-light');

  // A stale citation opens in the viewer with what the subagent read then and what the line says now.
  const staleLink = await browser.$$('[data-testid="node-details"] [data-testid="evidence-link"]');
  await staleLink[1].click();
  const stale = await byTestId(browser, 'file-stale');
  assert.match(await textOf(stale), /Changed since the subagent read it/);
  assert.equal(await textOf(await byTestId(browser, 'file-stale-then')), CACHE_RS_THEN.trim());
  assert.equal(await textOf(await byTestId(browser, 'file-stale-now')), CACHE_RS_NOW.trim());
  await screenshot(browser, cfg, '21-provenance-viewer-stale');
  await (await byTestId(browser, 'close-file')).click();

  // The unsupported result says why in words.
  await selectNode(browser, GUESS);
  const why = await byTestId(browser, 'details-unsupported');
  assert.equal(await why.getAttribute('data-reason'), 'no_tool_calls');
  assert.match(await textOf(why), /after zero tool calls/);
  await screenshot(browser, cfg, '21-provenance-unsupported');

  // The main answer: the broken and the unseen references are marked, the grounded one is a plain link.
  const marks = await waitFor(browser, "the answer's checked references", async () => {
    const m = await browser.execute(() =>
      Array.from(document.querySelectorAll('[data-testid="conversation"] [data-testid="md-path"]')).map((b) => ({ path: b.getAttribute('data-path'), trust: b.getAttribute('data-trust'), marked: b.classList.contains('md-ref'), mark: b.querySelector('.md-ref-mark')?.textContent ?? null, title: b.getAttribute('title') })),
    );
    return m.length === 3 && m.every((x) => x.trust !== null) ? m : false;
  });
  assert.deepEqual(marks.map((m) => [m.path, m.trust, m.marked, m.mark]), [
    ['src/session.rs', 'grounded', false, null],
    ['src/gone.rs', 'invalid', true, '✗'],
    ['src/auth.rs', 'unseen', true, '?'],
  ]);
  assert.match(marks[1].title, /^Not a valid reference: the file does not exist/);
  assert.match(marks[2].title, /^No agent of this run ever opened this file/);
  assert.match(await textOf(await byTestId(browser, 'answer-trust')), /References: 1 of 3 citations seen and valid · 1 unseen · 1 invalid/);
  await screenshot(browser, cfg, '21-provenance-answer-light');
});

test('reopened from History after the file was edited, the citation the subagent read says it no longer holds', async () => {
  const { browser } = app;
  // Another process edits the file the subagent (and the answer) cited; the session is opened anew.
  fs.writeFileSync(path.join(project, 'src', 'session.rs'), SESSION_RS_EDITED);
  await openFromHistory(browser, OLD_ROOT);
  await openFromHistory(browser, ROOT);
  await selectNode(browser, GOOD);
  const ev = await waitFor(browser, 'src/session.rs:2 re-checked as stale', async () => {
    const e = await detailsEvidence(browser);
    return e[0]?.trust === 'stale' ? e : false;
  });
  assert.equal(ev[0].thenNow, 'then !token.is_empty() now token.len() > 8');
  assert.match((await textOf(await byTestId(browser, 'details-trust'))).replace(/\s+/g, ' '), /^0 of 6 citations seen and valid · 1 file seen, line not · 1 unseen · 1 quote mismatch · 2 stale · 1 invalid · checked now/);
  const badge = await browser.execute((id) => document.querySelector(`[data-testid="tree-node"][data-session-id="${id}"] [data-testid="node-trust"]`)?.textContent?.trim(), GOOD);
  assert.equal(badge, '0/6 ✓', 'the tree follows the re-check');
  // The trace on disk still says what was found then.
  assert.ok(fs.readFileSync(path.join(traceDirOf(cfg, project), `${ROOT}.jsonl`), 'utf8').includes('"trust":"grounded"'));
  const answerMark = await waitFor(browser, "the answer's reference re-checked", () =>
    browser.execute(() => document.querySelector('[data-testid="conversation"] [data-testid="md-path"][data-path="src/session.rs"]')?.getAttribute('data-trust') ?? null).then((t) => (t === 'stale' ? t : false)),
  );
  assert.equal(answerMark, 'stale');
  await screenshot(browser, cfg, '21-provenance-reopened-stale');
});

test('a trace written before provenance was recorded loads and says "provenance not recorded"', async () => {
  const { browser } = app;
  await openFromHistory(browser, OLD_ROOT);
  await selectNode(browser, OLD_KID);
  assert.equal((await textOf(await byTestId(browser, 'details-trust'))).replace(/\s+/g, ' '), 'provenance not recorded · checked now');
  const ev = await detailsEvidence(browser);
  assert.deepEqual(ev.map((e) => [e.ref, e.trust, e.word]), [['src/auth.rs:3', 'none', '– provenance not recorded']]);
  const badge = await browser.execute((id) => document.querySelector(`[data-testid="tree-node"][data-session-id="${id}"] [data-testid="node-trust"]`)?.textContent?.trim(), OLD_KID);
  assert.equal(badge, '– no provenance');
  assert.equal(await browser.$('[data-testid="answer-trust"]').then((e) => e.isExisting()), false, 'no answer check was recorded');
  await screenshot(browser, cfg, '21-provenance-old-trace');
});

test('dark theme: the trust marks read as distinctly', async () => {
  await app.close();
  app = null;
  app = await launch(cfg, project, { env: { GTK_THEME: 'Adwaita:dark' } });
  const { browser } = app;
  assert.equal(await browser.execute(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
  await openFromHistory(browser, ROOT);
  await selectNode(browser, GOOD);
  const ev = await detailsEvidence(browser);
  assert.deepEqual(ev.map((e) => e.trust), ['stale', 'stale', 'file_seen', 'unseen', 'quote_mismatch', 'invalid']);
  // Each mark's text against its own background, as drawn.
  const ratios = await browser.execute(() => {
    const rgb = (s) => s.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map((v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4)).reduce((a, c, i) => a + c * [0.2126, 0.7152, 0.0722][i], 0);
    return Array.from(document.querySelectorAll('[data-testid="evidence-trust"], [data-testid="node-trust"]')).map((el) => {
      const cs = getComputedStyle(el);
      const [a, b] = [lum(rgb(cs.color)), lum(rgb(cs.backgroundColor))];
      return [el.textContent.trim(), (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
    });
  });
  for (const [text, r] of ratios) assert.ok(r >= 4.5, `"${text}" reads at ${r.toFixed(2)}:1`);
  await screenshot(browser, cfg, '21-provenance-details-dark');
  await selectNode(browser, GUESS);
  await byTestId(browser, 'details-unsupported');
  await screenshot(browser, cfg, '21-provenance-unsupported-dark');
});
