// Cancelling one running subagent from the tree: it is marked cancelled while its sibling goes on to
// complete, and the main agent finishes the run.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { config, copyFixture, launch, screenshot, sendPrompt, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;

before(async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
});
after(async () => app?.close('04-cancel-end'));

test('cancelling the slow subagent leaves its sibling running to completion', async () => {
  const { browser } = app;
  await sendPrompt(browser, 'CANCEL-DEMO: search slowly and quickly');
  const both = await waitFor(
    browser,
    'both subagents running',
    async () => {
      const kids = (await treeSnapshot(browser)).filter((n) => n.level === 2);
      return kids.length === 2 && kids.every((n) => n.status === 'running') ? kids : false;
    },
    { timeout: 30000, interval: 100, state: () => treeSnapshot(browser) },
  );
  const slow = both.find((n) => n.label === 'Slow search');
  const quick = both.find((n) => n.label === 'Quick search');
  assert.ok(slow && quick, `rows: ${JSON.stringify(both)}`);
  assert.ok(slow.hasCancel, 'a running subagent has no cancel button');

  await (await browser.$(`[data-testid="tree-node"][data-session-id="${slow.id}"] [data-testid="cancel-node"]`)).click();
  const atCancel = await waitFor(
    browser,
    '"Slow search" to be shown cancelled',
    async () => {
      const rows = await treeSnapshot(browser);
      return rows.find((n) => n.id === slow.id)?.status === 'cancelled' ? rows : false;
    },
    { timeout: 10000, interval: 100, state: () => treeSnapshot(browser) },
  );
  // The sibling was not touched: still working when its sibling was cancelled (it answers after 5 s).
  assert.equal(atCancel.find((n) => n.id === quick.id)?.status, 'running', `sibling after the cancel: ${JSON.stringify(atCancel)}`);
  assert.equal(atCancel.find((n) => n.id === slow.id)?.hasCancel, false, 'a cancelled node still offers cancel');

  const end = await waitFor(
    browser,
    '"Quick search" and the main agent to complete',
    async () => {
      const rows = await treeSnapshot(browser);
      const done = rows.find((n) => n.id === quick.id)?.status === 'completed' && rows.find((n) => n.level === 1)?.status === 'completed';
      return done ? rows : false;
    },
    { timeout: 30000, interval: 150, state: () => treeSnapshot(browser) },
  );
  assert.equal(end.find((n) => n.id === slow.id)?.status, 'cancelled', 'the cancelled node changed state afterwards');
  assert.match(end.find((n) => n.id === slow.id)?.statusText ?? '', /Cancelled/);
  await screenshot(browser, cfg, '04-cancelled-node');
});
