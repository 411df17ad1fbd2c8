// Evidence you can trust (#12), from a live run: the scripted explore subagent Reads two files and
// Grep-lists a third, the test edits one of the files it read while the subagent is still thinking (as
// another process would), and the subagent then cites six references — one for each thing the host can
// find. The runtime judges them by what the subagent's own tool results showed it (nothing here is a
// crafted trace), sends the unseen and invalid ones back once, and the app shows the marked result; the
// main agent's answer cites three references, checked against everything the run was shown.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, traceDirOf, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
after(async () => app?.close('22-provenance-live-end'));

const SESSION_RS = 'pub fn check(token: &str) -> bool {\n    !token.is_empty()\n}\n';
const SESSION_RS_EDITED = 'pub fn check(token: &str) -> bool {\n    token.len() > 8\n}\n';

/** The trace files of `project`'s sessions (other tests' sessions, crafted ones included, live elsewhere). */
function traceFiles(project) {
  const dir = traceDirOf(cfg, project);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(dir, f)) : [];
}

/** Whether some agent's trace records a tool result that showed it `src/session.rs`. */
function sessionRsWasShown(project) {
  return traceFiles(project).some((f) => fs.readFileSync(f, 'utf8').includes('"seen":[{"path":"src/session.rs"'));
}

test('a live subagent result: each citation judged by what the subagent was shown, and the answer by what the run was shown', async () => {
  writeSettings(cfg);
  const project = copyFixture();
  fs.writeFileSync(path.join(project, 'src', 'session.rs'), SESSION_RS);
  app = await launch(cfg, project);
  const { browser } = app;

  await sendPrompt(browser, 'PROV-LIVE: how are login and sessions checked?');
  // The subagent has read src/session.rs and waits for its model: another process edits the file now.
  await waitFor(browser, 'the subagent to have read src/session.rs', async () => sessionRsWasShown(project), { timeout: 20000, interval: 50 });
  fs.writeFileSync(path.join(project, 'src', 'session.rs'), SESSION_RS_EDITED);
  assert.ok(
    !traceFiles(project).some((f) => fs.readFileSync(f, 'utf8').includes('"type":"subagent_completed"')),
    'the edit must land while the subagent is still waiting for its answer',
  );

  const badges = await waitFor(
    browser,
    'the run to end with the subagent trust-badged',
    async () => {
      const b = await browser.execute(() =>
        Array.from(document.querySelectorAll('[data-testid="tree-node"]')).map((n) => {
          const t = n.querySelector('[data-testid="node-trust"]');
          return { id: n.getAttribute('data-session-id'), text: t?.textContent?.trim() ?? null, title: t?.getAttribute('title') ?? null };
        }),
      );
      const answered = await browser.execute(() => document.querySelector('[data-testid="answer-trust"]') !== null);
      return b.length === 2 && b[1].text !== null && answered ? b : false;
    },
    { timeout: 40000 },
  );
  const child = badges[1].id;
  assert.equal(badges[0].text, null, 'the main agent has no result to badge');
  assert.equal(badges[1].text, '1/6 ✓');
  assert.equal(badges[1].title, '1 of 6 citations seen and valid · 1 file seen, line not · 1 unseen · 1 quote mismatch · 1 stale · 1 invalid');

  // The details: each citation's trust, word and hover, as the runtime judged it.
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${child}"]`)).click();
  const ev = await waitFor(browser, 'the subagent evidence, re-checked', async () => {
    const rows = await browser.execute(() =>
      Array.from(document.querySelectorAll('[data-testid="node-details"] [data-testid="evidence"]')).map((li) => {
        const mark = li.querySelector('[data-testid="evidence-trust"]');
        return { ref: li.querySelector('.ev-link, .ev-label')?.textContent?.trim(), trust: mark?.getAttribute('data-trust'), word: mark?.textContent?.trim(), title: mark?.getAttribute('title'), thenNow: li.querySelector('[data-testid="evidence-then-now"]')?.innerText?.replace(/\s+/g, ' ').trim() ?? null };
      }),
    );
    const rechecked = await browser.execute((sid) => document.querySelector(`[data-testid="node-details"][data-session-id="${sid}"] [data-rechecked="true"]`) !== null, child);
    return rechecked && rows.length === 6 ? rows : false;
  });
  assert.deepEqual(ev.map((e) => [e.ref, e.trust]), [
    ['src/auth.rs:3', 'grounded'],
    ['src/auth.rs:8', 'quote_mismatch'],
    ['src/session.rs:2', 'stale'],
    ['src/config.rs:16', 'file_seen'],
    ['README.md:1', 'unseen'],
    ['src/missing.rs:4', 'invalid'],
  ]);
  assert.equal(new Set(ev.map((e) => e.word)).size, 6, `each state has its own word: ${ev.map((e) => e.word)}`);
  assert.equal(ev[4].title, 'The subagent never opened this file');
  assert.equal(ev[2].title, 'Changed since the subagent read it');
  // What the subagent's own Read showed it, beside the line as it is now.
  assert.equal(ev[2].thenNow, 'then !token.is_empty() now token.len() > 8');
  assert.match((await textOf(await byTestId(browser, 'details-trust'))).replace(/\s+/g, ' '), /^1 of 6 citations seen and valid · 1 file seen, line not · 1 unseen · 1 quote mismatch · 1 stale · 1 invalid/);
  await screenshot(browser, cfg, '22-provenance-live-details');

  // The subagent was sent back once over its unseen and invalid citations (and kept them): the trace says so.
  const childTrace = traceFiles(project).find((f) => path.basename(f) === `${child}.jsonl`);
  assert.ok(childTrace, 'the subagent has its own trace file');
  const rejected = fs
    .readFileSync(childTrace, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"type":"result_rejected"'))
    .map((l) => JSON.parse(l).event.error);
  assert.equal(rejected.length, 1, 'one corrective turn, no more');
  assert.match(rejected[0], /README\.md:1/);
  assert.match(rejected[0], /src\/missing\.rs:4/);

  // The main answer: seen by the run (grounded), only listed by the subagent (file seen), and a file
  // that does not exist (invalid, marked).
  const marks = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="conversation"] [data-testid="md-path"]')).map((b) => ({ path: b.getAttribute('data-path'), trust: b.getAttribute('data-trust'), marked: b.classList.contains('md-ref'), title: b.getAttribute('title') })),
  );
  assert.deepEqual(marks.map((m) => [m.path, m.trust]), [
    ['src/auth.rs', 'grounded'],
    ['src/config.rs', 'file_seen'],
    ['src/gone.rs', 'invalid'],
  ]);
  assert.equal(marks[0].marked, false, 'a grounded reference stays a plain link');
  assert.equal(marks[2].marked, true);
  assert.match(marks[2].title, /^Not a valid reference: the file does not exist/);
  assert.match(await textOf(await byTestId(browser, 'answer-trust')), /References: 1 of 3 citations seen and valid · 1 file seen, line not · 1 invalid/);
  await screenshot(browser, cfg, '22-provenance-live-answer');
});
