// History: a finished session is listed after a restart and reopens into the same tree and evidence.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, treeSnapshot, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
let app;
after(async () => app?.close('06-history-end'));

const PROMPT = 'PARALLEL-EXPLORE: history check of login and config';

function shape(rows) {
  return rows.map((n) => `${n.level}:${n.label}:${n.status}`).sort();
}

test('an earlier session is listed and reopens into the same views', async () => {
  writeSettings(cfg);
  const project = copyFixture();
  app = await launch(cfg, project);
  let browser = app.browser;
  await sendPrompt(browser, PROMPT);
  const live = await waitFor(
    browser,
    'the run to complete',
    async () => {
      const rows = await treeSnapshot(browser);
      return rows.length === 3 && rows.every((n) => n.status === 'completed') ? rows : false;
    },
    { timeout: 45000, state: () => treeSnapshot(browser) },
  );
  await app.close();
  app = null;

  app = await launch(cfg, project);
  browser = app.browser;
  await (await byTestId(browser, 'nav-history')).click();
  const row = await byTestId(browser, 'history-row');
  const rows = await browser.$$('[data-testid="history-row"]');
  assert.equal(rows.length, 1, 'exactly the one earlier session is listed');
  assert.equal(await row.getAttribute('data-status'), 'completed');
  const open = await row.$('[data-testid="history-open"]');
  assert.ok((await textOf(open)).includes('history check of login and config'), `title shown: "${await textOf(open)}"`);
  await screenshot(browser, cfg, '06-history-list');

  await open.click();
  await byTestId(browser, 'readonly-banner');
  const replayed = await waitFor(browser, 'the replayed tree', async () => {
    const r = await treeSnapshot(browser);
    return r.length === 3 ? r : false;
  });
  assert.deepEqual(shape(replayed), shape(live), 'the reopened tree differs from the live one');
  const userMsg = await byTestId(browser, 'msg-user');
  assert.equal(await textOf(userMsg), PROMPT);

  const cfgRow = replayed.find((n) => n.label === 'Find the config');
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${cfgRow.id}"]`)).click();
  await byTestId(browser, 'node-details');
  const states = await waitFor(browser, 'the evidence of the reopened node', async () => {
    const s = await browser.execute(() => Array.from(document.querySelectorAll('[data-testid="node-details"] [data-testid="evidence"]')).map((e) => e.getAttribute('data-state')));
    return s.length === 2 ? s : false;
  });
  assert.deepEqual(states, ['valid', 'line_out_of_range']);
  await screenshot(browser, cfg, '06-history-reopened');
});
