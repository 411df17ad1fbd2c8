// A prompt that makes the main agent start two explore subagents in parallel: the tree shows both,
// live, with budgets and the light model; then one node's checked evidence opens the file viewer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, treeSnapshot, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
let app;

before(async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
});
after(async () => app?.close('02-subagents-end'));

const LOGIN = 'Find the login code';
const CONFIG = 'Find the config';

test('two parallel explore subagents appear, run and complete with budgets and the light model', async () => {
  const { browser } = app;
  await sendPrompt(browser, 'PARALLEL-EXPLORE: explain how login and the config work');

  // Watch every status each child shows, until the run is over.
  const seen = new Map();
  let last = [];
  await waitFor(
    browser,
    'both subagents to reach "completed"',
    async () => {
      last = await treeSnapshot(browser);
      for (const n of last) {
        if (!seen.has(n.label)) seen.set(n.label, []);
        const s = seen.get(n.label);
        if (s[s.length - 1] !== n.status) s.push(n.status);
      }
      const kids = last.filter((n) => n.level === 2);
      return kids.length === 2 && kids.every((n) => n.status === 'completed');
    },
    { timeout: 45000, interval: 100, state: () => treeSnapshot(browser) },
  );
  const kids = last.filter((n) => n.level === 2);
  assert.deepEqual(kids.map((n) => n.label).sort(), [CONFIG, LOGIN].sort(), `tree rows: ${JSON.stringify(last)}`);
  for (const label of [LOGIN, CONFIG]) {
    assert.ok(seen.get(label).includes('running'), `"${label}" was never shown running: ${seen.get(label)}`);
    assert.equal(seen.get(label).at(-1), 'completed');
  }
  for (const n of kids) {
    assert.ok(n.budgetBars >= 1, `"${n.label}" shows no budget bars`);
    assert.ok(n.badges.some((b) => b.slot === 'light'), `"${n.label}" has no light model badge: ${JSON.stringify(n.badges)}`);
    assert.match(n.statusText, /Completed/);
  }
  const root = last.find((n) => n.level === 1);
  assert.ok(root, 'no main agent row');
  await waitFor(browser, 'the main agent to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 1)?.status === 'completed');
  await screenshot(browser, cfg, '02-subagent-tree');
});

test("a node's evidence shows path:line with its check, and a valid one opens the file at that line", async () => {
  const { browser } = app;
  const row = (await treeSnapshot(browser)).find((n) => n.label === CONFIG);
  assert.ok(row, `no "${CONFIG}" row in the tree`);
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${row.id}"]`)).click();
  const details = await byTestId(browser, 'node-details');
  await waitFor(browser, 'the details panel to show "Find the config"', async () => (await textOf(details)).includes(CONFIG));
  await waitFor(browser, 'two evidence entries', async () => (await details.$$('[data-testid="evidence"]')).length === 2);
  const evidence = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="node-details"] [data-testid="evidence"]')).map((e) => ({
      state: e.getAttribute('data-state'),
      text: e.textContent.replace(/\s+/g, ' ').trim(),
      link: e.querySelector('[data-testid="evidence-link"]') !== null,
    })),
  );
  const valid = evidence.find((e) => e.text.includes('src/config.rs:2'));
  const bad = evidence.find((e) => e.text.includes('src/config.rs:40'));
  assert.ok(valid && bad, `evidence shown: ${JSON.stringify(evidence)}`);
  assert.equal(valid.state, 'valid');
  assert.match(valid.text, /checked/);
  assert.equal(valid.link, true, 'a valid reference is not clickable');
  assert.equal(bad.state, 'line_out_of_range');
  assert.match(bad.text, /line out of range/);
  assert.equal(bad.link, false, 'an out-of-range reference must not be clickable');

  await (await details.$('[data-testid="evidence-link"]')).click();
  const viewer = await byTestId(browser, 'file-viewer');
  assert.equal(await viewer.getAttribute('data-path'), 'src/config.rs');
  const hit = await byTestId(browser, 'file-line-highlighted');
  assert.equal(await hit.getAttribute('data-line'), '2');
  assert.match(await textOf(hit), /session_timeout_secs: u64/);
  const highlighted = await browser.$$('[data-testid="file-line-highlighted"]');
  assert.equal(highlighted.length, 1, 'exactly one line is highlighted');
  await screenshot(browser, cfg, '03-evidence-file-viewer');
});
