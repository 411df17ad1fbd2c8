// The file viewer as a person uses it on a long file: evidence far down opens at the cited lines, scrolling
// up or down past what was loaded loads more (the lines being read stay put), the footer says which lines
// are shown of how many, "Open in editor" starts $VISUAL at the cited line (or the default app, saying
// why the line could not go with it), and languages beyond the first handful are highlighted (SQL here).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app = null;
let shot = '14-file-viewer-end';
afterEach(async () => {
  await app?.close(shot);
  app = null;
});

/**
 * A program named `name` in a fresh folder that appends each argument it gets, one per line, to
 * `argv.txt` beside it (so a test can check exactly what the app passed, spaces and quotes included).
 */
function recorder(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-editor-'));
  const log = path.join(dir, 'argv.txt');
  const program = path.join(dir, name);
  fs.writeFileSync(program, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${log}'; done\n`, { mode: 0o755 });
  return { dir, program, log, args: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : []) };
}

/** Runs FAR-EVIDENCE (a subagent citing src/catalog.rs:5600-5601) and opens the citation in the viewer. */
async function openFarEvidence(browser) {
  await sendPrompt(browser, 'FAR-EVIDENCE: where is the status table?');
  const child = await waitFor(browser, 'the explorer to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 2 && n.status === 'completed') ?? false, {
    timeout: 30000,
    state: () => treeSnapshot(browser),
  });
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${child.id}"]`)).click();
  const details = await byTestId(browser, 'node-details');
  await byTestId(browser, 'evidence', { extra: '[data-state="valid"]' });
  await (await details.$('[data-testid="evidence-link"]')).click();
  await byTestId(browser, 'file-viewer');
  await waitFor(browser, 'the cited lines to be shown', () => browser.execute(() => document.querySelectorAll('[data-testid="file-line-highlighted"]').length === 2));
}

/** What the viewer shows: loaded line range, footer, where a given row sits in the scroll box. */
function viewerState(browser, watchLine) {
  return browser.execute((watch) => {
    const code = document.querySelector('[data-testid="file-viewer"] .code');
    const rows = code === null ? [] : code.querySelectorAll('tr[data-line]');
    const row = code?.querySelector(`tr[data-line="${watch}"]`) ?? null;
    return {
      first: rows.length > 0 ? Number(rows[0].getAttribute('data-line')) : null,
      last: rows.length > 0 ? Number(rows[rows.length - 1].getAttribute('data-line')) : null,
      count: rows.length,
      footer: document.querySelector('[data-testid="file-extent"]')?.innerText.trim() ?? null,
      rowTop: row === null || code === null ? null : row.getBoundingClientRect().top - code.getBoundingClientRect().top,
      rowText: row?.querySelector('.src')?.textContent ?? null,
      scrollTop: code?.scrollTop ?? null,
    };
  }, watchLine);
}

const scrollTo = (browser, where) =>
  browser.execute((w) => {
    const code = document.querySelector('[data-testid="file-viewer"] .code');
    code.scrollTop = w === 'top' ? 0 : code.scrollHeight;
  }, where);

test('a long file loads more lines when scrolled past either edge, says which lines it shows, and opens in $VISUAL at the cited line', async () => {
  shot = '14-file-viewer-more-end';
  writeSettings(cfg);
  // A project folder whose path has a space and a quote: the editor must still get it as one argument.
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-viewer-'));
  const project = path.join(parent, "shop's fixture copy");
  fs.cpSync(copyFixture(), project, { recursive: true });
  const lines = Array.from({ length: 12000 }, (_, i) => `// catalog entry ${i + 1}`);
  lines[5599] = 'pub const STATUS_TABLE: [u16; 4] = [200, 204, 400, 404];';
  lines[5600] = 'pub const STATUS_COUNT: usize = 4;';
  fs.writeFileSync(path.join(project, 'src', 'catalog.rs'), lines.join('\n') + '\n');
  // Named `code`, so the app takes it for VS Code and passes `-g file:line`.
  const editor = recorder('code');
  app = await launch(cfg, project, { env: { VISUAL: editor.program, EDITOR: '' } });
  const { browser } = app;

  await openFarEvidence(browser);
  // 200 lines above the citation, 2,000 below its end; the footer does not pretend that is the whole file.
  let s = await viewerState(browser, 5400);
  assert.equal(s.first, 5400);
  assert.equal(s.last, 7601);
  assert.equal(s.footer, 'lines 5400–7601 of 12000 · rust');

  // Up to the top of what is loaded: the 2,000 lines above arrive, and line 5400 stays where it was on screen.
  await scrollTo(browser, 'top');
  const before = await viewerState(browser, 5400);
  s = await waitFor(browser, 'lines 3400-5399 to load above', async () => {
    const v = await viewerState(browser, 5400);
    return v.first === 3400 ? v : false;
  }, { timeout: 10000, state: () => viewerState(browser, 5400) });
  assert.equal(s.footer, 'lines 3400–7601 of 12000 · rust');
  assert.ok(Math.abs(s.rowTop - before.rowTop) <= 4, `line 5400 moved on screen from ${before.rowTop} to ${s.rowTop} px`);
  assert.ok(s.scrollTop > 10000, `the view jumped to the new lines (scrollTop ${s.scrollTop})`);
  const earlier = await viewerState(browser, 3400);
  assert.equal(earlier.rowText, '// catalog entry 3400');
  await screenshot(browser, cfg, '14-file-viewer-loaded-above');

  // Down past the end of what is loaded: the next lines arrive below.
  await scrollTo(browser, 'bottom');
  s = await waitFor(browser, 'lines 7602-9601 to load below', async () => {
    const v = await viewerState(browser, 9601);
    return v.last === 9601 ? v : false;
  }, { timeout: 10000, state: () => viewerState(browser, 9601) });
  assert.equal(s.rowText, '// catalog entry 9601');
  assert.equal(s.footer, 'lines 3400–9601 of 12000 · rust');

  // Keep going to both ends: once everything is there the footer says just how long the file is.
  for (const [edge, done] of [['top', (v) => v.first === 1], ['bottom', (v) => v.last === 12000]]) {
    await waitFor(browser, `the ${edge} of the file to load`, async () => {
      const v = await viewerState(browser, 1);
      if (done(v)) return true;
      await scrollTo(browser, edge);
      return false;
    }, { timeout: 30000, interval: 400, state: () => viewerState(browser, 1) });
  }
  s = await viewerState(browser, 5600);
  assert.equal(s.count, 12000);
  assert.equal(s.footer, '12000 lines · rust');
  assert.match(s.rowText, /STATUS_TABLE/);
  assert.equal(await browser.execute(() => document.querySelectorAll('[data-testid="file-more-before"], [data-testid="file-more-after"]').length), 0);

  // Open in editor: $VISUAL gets the real path (one argument, space and quote intact) at the cited line.
  await (await byTestId(browser, 'open-in-editor')).click();
  const status = await byTestId(browser, 'editor-status');
  await waitFor(browser, 'the viewer to say where the file opened', async () => (await textOf(status)) !== '');
  assert.equal(await textOf(status), 'Opened in VS Code at line 5600');
  const file = path.join(fs.realpathSync(project), 'src', 'catalog.rs');
  const args = await waitFor(browser, 'the editor to record its arguments', async () => (editor.args().length >= 2 ? editor.args() : false), { timeout: 5000 });
  assert.deepEqual(args, ['-g', `${file}:5600`]);
  await screenshot(browser, cfg, '14-file-viewer-opened-in-editor');
});

test('an SQL file is highlighted, and with a terminal $VISUAL the default app opens it and the viewer says why the line was not passed', async () => {
  shot = '14-file-viewer-sql-end';
  writeSettings(cfg);
  const project = copyFixture();
  // The cited src/catalog.rs is a link to an SQL file in the project: the viewer shows the file itself.
  const sql = Array.from({ length: 6000 }, (_, i) => `INSERT INTO catalog (id, name) VALUES (${i + 1}, 'entry ${i + 1}'); -- row ${i + 1}`);
  sql[5599] = 'SELECT code, COUNT(*) AS uses FROM status_table WHERE code >= 400 GROUP BY code;';
  sql[5600] = "CREATE TABLE status_table (code INTEGER PRIMARY KEY, label TEXT NOT NULL DEFAULT 'ok');";
  fs.mkdirSync(path.join(project, 'db'));
  fs.writeFileSync(path.join(project, 'db', 'catalog.sql'), sql.join('\n') + '\n');
  fs.symlinkSync(path.join('..', 'db', 'catalog.sql'), path.join(project, 'src', 'catalog.rs'));
  // The desktop's default app is whatever `xdg-open` starts: here a recorder found first on PATH.
  const opener = recorder('xdg-open');
  app = await launch(cfg, project, { env: { VISUAL: 'vim', EDITOR: '', PATH: `${opener.dir}:${process.env.PATH}` } });
  const { browser } = app;

  await openFarEvidence(browser);
  const s = await viewerState(browser, 5600);
  assert.equal(s.footer, 'lines 5400–6000 of 6000 · sql');
  const colours = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="file-line-highlighted"] .src span[class^="hljs-"]')).map((e) => ({
      cls: e.className,
      text: e.textContent,
      color: getComputedStyle(e).color,
      plain: getComputedStyle(e.closest('code')).color,
    })),
  );
  const keywords = colours.filter((c) => c.cls === 'hljs-keyword').map((c) => c.text.toUpperCase());
  for (const k of ['SELECT', 'FROM', 'WHERE', 'CREATE TABLE', 'NOT NULL']) assert.ok(keywords.includes(k), `${k} is not highlighted as a keyword: ${JSON.stringify(colours)}`);
  assert.ok(colours.some((c) => c.cls === 'hljs-keyword' && c.color !== c.plain), 'keywords are not coloured differently from plain text');
  await screenshot(browser, cfg, '14-file-viewer-sql');

  await (await byTestId(browser, 'open-in-editor')).click();
  const status = await byTestId(browser, 'editor-status');
  await waitFor(browser, 'the viewer to say where the file opened', async () => (await textOf(status)) !== '');
  assert.match(await textOf(status), /^Opened with the default app \(line not passed: \$VISUAL is vim, which needs a terminal; set \$VISUAL to your editor/);
  const args = await waitFor(browser, 'the default app to get the file', async () => (opener.args().length > 0 ? opener.args() : false), { timeout: 5000 });
  assert.deepEqual(args, [path.join(fs.realpathSync(project), 'db', 'catalog.sql')]);
  await screenshot(browser, cfg, '14-file-viewer-default-app');

  // Without scrolling (a keyboard user tabs to it): the "Show lines" button above loads the earlier lines.
  const label = await browser.execute(() => document.querySelector('[data-testid="file-more-before"]')?.innerText.trim() ?? null);
  assert.equal(label, 'Show lines 3400–5399');
  await browser.execute(() => document.querySelector('[data-testid="file-more-before"]').click());
  const more = await waitFor(browser, 'lines 3400-5399 to load from the button', async () => {
    const v = await viewerState(browser, 3400);
    return v.first === 3400 ? v : false;
  }, { timeout: 10000, state: () => viewerState(browser, 3400) });
  assert.equal(more.footer, 'lines 3400–6000 of 6000 · sql');
  assert.match(more.rowText, /VALUES \(3400, 'entry 3400'\)/);
});
