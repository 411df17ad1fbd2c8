// Closing the window with something at stake asks first. A run going: "Keep working" leaves it going,
// "Stop the run and quit" cancels it (its trace ends `cancelled`, not `interrupted`) and the app exits.
// Unsaved Settings: "Quit without saving" exits. Nothing at stake: the window closes at once.
//
// The close is requested the way Tauri's own `getCurrentWindow().close()` does it (`plugin:window|close`),
// which raises the same CloseRequested window event as the title bar's ✕. WebDriver's Close Window cannot
// stand in: WebKitWebDriver closes the web view, which wry answers by destroying the view (its `close`
// signal), with no close request for the app to see.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, sleep, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
after(async () => app?.close('16-quit-end'));

/** Asks the window to close, as the window manager's close button would. */
async function requestClose(browser) {
  await browser.execute(() => window.__TAURI_INTERNALS__.invoke('plugin:window|close', { label: 'main' }));
}

async function waitExit(a, what) {
  for (let i = 0; i < 100 && a.appAlive(); i++) await sleep(100);
  assert.equal(a.appAlive(), false, `the app did not exit after ${what}`);
}

/** The records of a session's trace file under the app's data directory. */
function traceRecords(sessionId) {
  const dir = path.join(cfg.dataDir, 'traces');
  for (const project of fs.readdirSync(dir)) {
    const f = path.join(dir, project, `${sessionId}.jsonl`);
    if (fs.existsSync(f)) return fs.readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  }
  throw new Error(`no trace file for ${sessionId} under ${dir}`);
}

const question = (browser) =>
  browser.execute(() => {
    const d = document.querySelector('[data-testid="quit-question"]');
    if (d === null) return null;
    return {
      role: d.getAttribute('role'),
      reasons: Array.from(d.querySelectorAll('[data-testid="quit-reason"]')).map((r) => r.innerText.trim()),
      quit: d.querySelector('[data-testid="quit-confirm"]')?.innerText.trim() ?? '',
      focusInside: d.contains(document.activeElement),
      focused: document.activeElement?.innerText?.trim() ?? '',
    };
  });

test('a run going: the close asks; Keep working keeps the run, Stop the run and quit ends it cancelled', async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
  const { browser } = app;
  await browser.setWindowSize(1280, 800);
  await sendPrompt(browser, 'CANCEL-DEMO: search slowly and quickly');
  const rows = await waitFor(browser, 'the main agent and both subagents running', async () => {
    const r = await treeSnapshot(browser);
    return r.length === 3 && r.every((n) => n.status === 'running') ? r : false;
  });
  const root = rows.find((n) => n.level === 1);
  assert.ok(root?.id, `no main agent row: ${JSON.stringify(rows)}`);

  await requestClose(browser);
  const q = await waitFor(browser, 'the question before closing', () => question(browser));
  assert.equal(q.role, 'alertdialog');
  assert.deepEqual(q.reasons, ['A run is still going (3 agents)']);
  assert.equal(q.quit, 'Stop the run and quit');
  assert.ok(q.focusInside, 'focus stayed outside the question');
  assert.equal(q.focused, 'Keep working', 'the safe answer should have the focus');
  await screenshot(browser, cfg, '16-quit-question-run');

  // Escape is "Keep working".
  await browser.keys('Escape');
  await waitFor(browser, 'the question to go on Escape', async () => (await question(browser)) === null);
  assert.ok(app.appAlive(), 'Escape closed the app');

  // Ask again and answer with the button; the window stays and the run is still going a while later.
  await requestClose(browser);
  await waitFor(browser, 'the question again', () => question(browser));
  await (await byTestId(browser, 'quit-keep')).click();
  await waitFor(browser, 'the question to go', async () => (await question(browser)) === null);
  await sleep(1500);
  assert.ok(app.appAlive(), '"Keep working" closed the app');
  const still = await treeSnapshot(browser);
  assert.equal(still.find((n) => n.id === root.id)?.status, 'running', `the run stopped: ${JSON.stringify(still)}`);
  assert.ok(await (await browser.$('[data-testid="stop-run"]')).isExisting(), 'the Stop button is gone while the run goes on');
  assert.equal(
    traceRecords(root.id).some((r) => r.event.type === 'cancel_requested' || r.event.type === 'run_ended'),
    false,
    'the run was cancelled or ended although the person chose to keep working',
  );

  // Now quit: the run is cancelled first, its trace ends cancelled, and the app goes away.
  await requestClose(browser);
  await waitFor(browser, 'the question a third time', () => question(browser));
  await (await byTestId(browser, 'quit-confirm')).click();
  await waitExit(app, '"Stop the run and quit"');
  const records = traceRecords(root.id);
  const last = records[records.length - 1];
  assert.equal(last.event.type, 'run_ended', `last record: ${JSON.stringify(last)}`);
  assert.equal(last.event.terminal_reason, 'cancelled');
  assert.ok(records.some((r) => r.event.type === 'cancel_requested'), 'no cancel_requested before the end');
  await app.close();
  app = undefined;
});

test('unsaved Settings: the close asks and "Quit without saving" exits; nothing at stake closes at once', async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
  const { browser } = app;
  await byTestId(browser, 'prompt-input');
  await (await byTestId(browser, 'nav-settings')).click();
  const par = await byTestId(browser, 'parallelism');
  await par.clearValue();
  await browser.execute(() => {
    const input = document.querySelector('[data-testid="parallelism"]');
    input.value = '3';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await byTestId(browser, 'settings-unsaved');

  await requestClose(browser);
  const q = await waitFor(browser, 'the question before closing', () => question(browser));
  assert.deepEqual(q.reasons, ['Settings have unsaved changes']);
  assert.equal(q.quit, 'Quit without saving');
  assert.equal(await textOf(await byTestId(browser, 'quit-keep')), 'Keep working');
  await screenshot(browser, cfg, '16-quit-question-settings');
  // The app is gone before WebKitWebDriver answers the click (nothing to wait for), so the click's own
  // answer is an error; whether the app exited is what counts.
  await (await byTestId(browser, 'quit-confirm')).click().catch(() => undefined);
  await waitExit(app, '"Quit without saving"');
  const saved = JSON.parse(fs.readFileSync(path.join(cfg.configDir, 'settings.json'), 'utf8'));
  assert.equal(saved.parallelism, 4, 'the unsaved edit was written anyway');
  await app.close();

  // Nothing at stake: no question, the app exits straight away.
  app = await launch(cfg, copyFixture());
  await byTestId(app.browser, 'prompt-input');
  await requestClose(app.browser).catch(() => undefined);
  await waitExit(app, 'a close with nothing at stake');
  await app.close();
  app = undefined;
});
