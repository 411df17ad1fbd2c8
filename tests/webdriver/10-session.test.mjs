// The session view where a person could lose track of a run or of what they typed: a running session opened
// from History is the live one (Stop included), opening another project while it runs asks first, evidence
// far down a long file opens scrolled to the cited lines, a send without a key keeps the prompt and leads to
// Settings, and long answers keep a readable width.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { byTestId, config, copyFixture, fixturesDir, launch, PROJECT_NAME, screenshot, sendPrompt, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app = null;
let shot = '10-session-end';
afterEach(async () => {
  await app?.close(shot);
  app = null;
});

const exists = async (browser, id) => (await browser.$(`[data-testid="${id}"]`)).isExisting();

test('a running session opened from History is the live view with Stop; opening another project asks first', async () => {
  shot = '10-session-live-end';
  writeSettings(cfg);
  const project = copyFixture();
  // A second project in the recent list, to be tempted by while the run goes on.
  const otherParent = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-other-'));
  const other = path.join(otherParent, 'other-shop');
  fs.cpSync(path.join(fixturesDir, PROJECT_NAME), other, { recursive: true });
  fs.mkdirSync(cfg.dataDir, { recursive: true });
  const otherRoot = fs.realpathSync(other);
  fs.writeFileSync(path.join(cfg.dataDir, 'recent-projects.json'), JSON.stringify([{ root: otherRoot, name: 'other-shop', last_opened_ms: Date.now() - 3_600_000 }]));
  app = await launch(cfg, project);
  const { browser } = app;

  // TASK-SLOW answers after two minutes: the run stays busy for the whole test.
  await sendPrompt(browser, 'CANCEL-DEMO: keep a run going while I look around');
  const main = await waitFor(browser, 'the slow subagent to be running', async () => {
    const rows = await treeSnapshot(browser);
    return rows.length === 3 && rows.some((n) => n.label === 'Slow search' && n.status === 'running') ? rows.find((n) => n.level === 1) : false;
  }, { timeout: 30000, state: () => treeSnapshot(browser) });

  await (await byTestId(browser, 'nav-history')).click();
  const row = await byTestId(browser, 'history-row', { extra: `[data-session-id="${main.id}"]` });
  assert.equal(await row.getAttribute('data-status'), 'running');
  assert.ok(await row.$('[data-testid="history-live"]').then((e) => e.isExisting()), 'the row of the live session is not marked as this window\'s');
  await (await row.$('[data-testid="history-open"]')).click();

  await byTestId(browser, 'stop-run');
  assert.equal(await exists(browser, 'readonly-banner'), false, 'the live session opened as a read-only replay');
  const back = await treeSnapshot(browser);
  assert.deepEqual(back.filter((n) => n.status === 'interrupted'), [], `nodes marked interrupted: ${JSON.stringify(back)}`);
  assert.equal(back.find((n) => n.level === 1)?.status, 'running');
  assert.equal(back.find((n) => n.label === 'Slow search')?.status, 'running');
  // The live view goes on: the quick sibling (5 s) completes on this screen.
  await waitFor(browser, 'the quick subagent to complete in the reopened view', async () => (await treeSnapshot(browser)).find((n) => n.label === 'Quick search')?.status === 'completed', {
    timeout: 30000,
    state: () => treeSnapshot(browser),
  });
  await screenshot(browser, cfg, '10-session-live-from-history');

  // Start › a recent project while the run goes on: asked inline, nothing dropped silently.
  await (await byTestId(browser, 'nav-start')).click();
  await (await byTestId(browser, 'recent-project', { extra: `[data-path="${otherRoot}"] button.open` })).click();
  const ask = await byTestId(browser, 'open-while-running');
  assert.match(await textOf(ask), new RegExp(`still going in ${PROJECT_NAME}`));
  assert.equal(await textOf(await browser.$('[data-testid="project-name"]')), PROJECT_NAME, 'the other project opened without asking');
  await screenshot(browser, cfg, '10-session-open-while-running');
  await (await byTestId(browser, 'back-to-run')).click();
  await byTestId(browser, 'stop-run');
  assert.equal((await treeSnapshot(browser)).find((n) => n.label === 'Slow search')?.status, 'running');

  // Opening it anyway keeps the run going; opening the first project again brings it back live.
  await (await byTestId(browser, 'nav-start')).click();
  await (await byTestId(browser, 'recent-project', { extra: `[data-path="${otherRoot}"] button.open` })).click();
  await (await byTestId(browser, 'open-anyway')).click();
  await waitFor(browser, 'the other project to open', async () => (await textOf(await browser.$('[data-testid="project-name"]'))) === 'other-shop');
  const elsewhere = await byTestId(browser, 'live-elsewhere');
  assert.match(await textOf(elsewhere), new RegExp(`still going in ${PROJECT_NAME}`));
  await (await byTestId(browser, 'back-to-live')).click();
  await waitFor(browser, 'the first project to be back', async () => (await textOf(await browser.$('[data-testid="project-name"]'))) === PROJECT_NAME);
  await byTestId(browser, 'stop-run');
  assert.equal((await treeSnapshot(browser)).find((n) => n.label === 'Slow search')?.status, 'running');

  await (await byTestId(browser, 'stop-run')).click();
  await waitFor(browser, 'the run to end cancelled', async () => {
    const rows = await treeSnapshot(browser);
    return rows.find((n) => n.level === 1)?.status === 'cancelled' && rows.find((n) => n.label === 'Slow search')?.status === 'cancelled';
  }, { timeout: 20000, state: () => treeSnapshot(browser) });
  await byTestId(browser, 'send-prompt');
});

test('evidence at line 5600 of a 6000-line file opens with the cited lines in view and highlighted', async () => {
  shot = '10-session-far-evidence-end';
  writeSettings(cfg);
  const project = copyFixture();
  // Written into the copy only: the checked-in fixture stays small and the other tests' expectations hold.
  const lines = Array.from({ length: 6000 }, (_, i) => `// catalog entry ${i + 1}`);
  lines[5599] = 'pub const STATUS_TABLE: [u16; 4] = [200, 204, 400, 404];';
  lines[5600] = 'pub const STATUS_COUNT: usize = 4;';
  fs.writeFileSync(path.join(project, 'src', 'catalog.rs'), lines.join('\n') + '\n');
  app = await launch(cfg, project);
  const { browser } = app;

  await sendPrompt(browser, 'FAR-EVIDENCE: where is the status table?');
  const child = await waitFor(browser, 'the explorer to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 2 && n.status === 'completed') ?? false, {
    timeout: 30000,
    state: () => treeSnapshot(browser),
  });
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${child.id}"]`)).click();
  const details = await byTestId(browser, 'node-details');
  const ev = await byTestId(browser, 'evidence', { extra: '[data-state="valid"]' });
  assert.match(await textOf(ev), /src\/catalog\.rs:5600-5601/);
  await (await details.$('[data-testid="evidence-link"]')).click();
  await byTestId(browser, 'file-viewer');

  const view = await waitFor(browser, 'the cited lines to be highlighted and scrolled into view', async () => {
    const v = await browser.execute(() => {
      const code = document.querySelector('[data-testid="file-viewer"] .code');
      const hit = Array.from(document.querySelectorAll('[data-testid="file-line-highlighted"]'));
      if (code === null || hit.length === 0) return null;
      const box = code.getBoundingClientRect();
      return {
        lines: hit.map((h) => Number(h.getAttribute('data-line'))),
        text: hit.map((h) => h.querySelector('.src')?.textContent ?? ''),
        inside: hit.every((h) => {
          const r = h.getBoundingClientRect();
          return r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        }),
        firstShown: Number(code.querySelector('tr')?.getAttribute('data-line')),
      };
    });
    return v !== null && v.inside ? v : false;
  }, { timeout: 10000 });
  assert.deepEqual(view.lines, [5600, 5601]);
  assert.match(view.text[0], /STATUS_TABLE/);
  assert.ok(view.firstShown > 1 && view.firstShown <= 5600, `the window starts at line ${view.firstShown}`);
  await screenshot(browser, cfg, '10-session-far-evidence');

  // On a wide conversation pane the final answer keeps a readable line length (about 90 characters).
  await (await byTestId(browser, 'close-file')).click();
  const width = await browser.execute(() => {
    const t = document.querySelector('[data-testid="msg-assistant"] .text');
    const list = document.querySelector('[data-testid="conversation"]');
    if (t === null || list === null) return null;
    const probe = document.createElement('span');
    probe.textContent = '0'.repeat(90);
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
    t.appendChild(probe);
    const ch90 = probe.getBoundingClientRect().width;
    probe.remove();
    return { max: getComputedStyle(t).maxWidth, ch90, list: list.clientWidth };
  });
  assert.ok(width !== null, 'no assistant text to measure');
  assert.notEqual(width.max, 'none', 'assistant text has no maximum width');
  assert.ok(Math.abs(parseFloat(width.max) - width.ch90) <= 2, `max width ${width.max} is not about 90 characters (${width.ch90} px)`);
});

test('a send that fails for want of a key keeps the prompt and offers Settings', async () => {
  shot = '10-session-send-error-end';
  writeSettings(cfg);
  const file = path.join(cfg.configDir, 'settings.json');
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  // A hosted endpoint and no key: the app refuses before any request leaves the machine.
  // `.invalid` never resolves (RFC 2606): even a bug that sent a request would reach no server.
  settings.main.base_url = 'https://api.example.invalid/v1';
  fs.writeFileSync(file, JSON.stringify(settings, null, 2));
  try {
    // Every key Canopy stored, for any endpoint (accounts are `<slot>@<origin>`): with one left for
    // that endpoint the app would send the prompt.
    execFileSync('secret-tool', ['clear', 'service', 'canopy']);
  } catch {
    // Nothing stored: what we want.
  }
  const project = copyFixture();
  app = await launch(cfg, project);
  const { browser } = app;
  const text = 'PARALLEL-EXPLORE: a long prompt I would hate to type again';
  await sendPrompt(browser, text);
  const err = await byTestId(browser, 'send-error');
  assert.equal(await err.getAttribute('data-code'), 'missing_key');
  assert.equal(await (await byTestId(browser, 'prompt-input')).getValue(), text, 'the prompt box lost the text');
  assert.equal(await exists(browser, 'stop-run'), false, 'a Stop button for a run that never started');
  await screenshot(browser, cfg, '10-session-send-error');
  await (await err.$('[data-testid="send-error-settings"]')).click();
  await byTestId(browser, 'slot-main');
  // Back in the session the text is still there.
  await (await byTestId(browser, 'nav-session')).click();
  assert.equal(await (await byTestId(browser, 'prompt-input')).getValue(), text);
});

test('a session still running but no longer followed opens as running (not interrupted), and Stop ends it', async () => {
  shot = '10-session-elsewhere-end';
  writeSettings(cfg);
  const project = copyFixture();
  const otherParent = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-other-'));
  const other = path.join(otherParent, 'other-shop');
  fs.cpSync(path.join(fixturesDir, PROJECT_NAME), other, { recursive: true });
  const otherRoot = fs.realpathSync(other);
  const projectRoot = fs.realpathSync(project);
  fs.mkdirSync(cfg.dataDir, { recursive: true });
  fs.writeFileSync(path.join(cfg.dataDir, 'recent-projects.json'), JSON.stringify([{ root: otherRoot, name: 'other-shop', last_opened_ms: Date.now() - 3_600_000 }]));
  app = await launch(cfg, project);
  const { browser } = app;

  await sendPrompt(browser, 'CANCEL-DEMO: the run that will be left behind');
  const main = await waitFor(browser, 'the slow subagent to be running', async () => {
    const rows = await treeSnapshot(browser);
    return rows.some((n) => n.label === 'Slow search' && n.status === 'running') ? rows.find((n) => n.level === 1) : false;
  }, { timeout: 30000, state: () => treeSnapshot(browser) });

  // Another project and a run there: this window now follows that one.
  await (await byTestId(browser, 'nav-start')).click();
  await (await byTestId(browser, 'recent-project', { extra: `[data-path="${otherRoot}"] button.open` })).click();
  await (await byTestId(browser, 'open-anyway')).click();
  await waitFor(browser, 'the other project to open', async () => (await textOf(await browser.$('[data-testid="project-name"]'))) === 'other-shop');
  await sendPrompt(browser, 'PARALLEL-EXPLORE: something in the other project');
  await waitFor(browser, 'the other run to complete', async () => {
    const rows = await treeSnapshot(browser);
    return rows.length === 3 && rows.every((n) => n.status === 'completed');
  }, { timeout: 45000, state: () => treeSnapshot(browser) });

  await (await byTestId(browser, 'nav-start')).click();
  await (await byTestId(browser, 'recent-project', { extra: `[data-path="${projectRoot}"] button.open` })).click();
  await waitFor(browser, 'the first project to open', async () => (await textOf(await browser.$('[data-testid="project-name"]'))) === PROJECT_NAME);
  await (await byTestId(browser, 'nav-history')).click();
  const row = await byTestId(browser, 'history-row', { extra: `[data-session-id="${main.id}"]` });
  assert.equal(await row.getAttribute('data-status'), 'running');
  assert.equal(await row.$('[data-testid="history-live"]').then((e) => e.isExisting()), false);
  await (await row.$('[data-testid="history-open"]')).click();

  const banner = await byTestId(browser, 'still-running-banner');
  assert.match(await textOf(banner), /still running/i);
  const shown = await treeSnapshot(browser);
  assert.deepEqual(shown.filter((n) => n.status === 'interrupted'), [], `nodes marked interrupted: ${JSON.stringify(shown)}`);
  assert.equal(shown.find((n) => n.label === 'Slow search')?.status, 'running');
  await screenshot(browser, cfg, '10-session-still-running');

  await (await banner.$('[data-testid="stop-run"]')).click();
  await waitFor(browser, 'the stopped run to be shown as it ended', async () => {
    const rows = await treeSnapshot(browser);
    return rows.find((n) => n.level === 1)?.status === 'cancelled' && rows.find((n) => n.label === 'Slow search')?.status === 'cancelled';
  }, { timeout: 20000, state: () => treeSnapshot(browser) });
  await byTestId(browser, 'readonly-banner');
  assert.equal(await exists(browser, 'still-running-banner'), false);
});
