// Two things a person sees at once: `CANOPY_*` environment overrides (here all seven lines the app
// reports) are ONE notice line that unfolds to the list, not seven banners over the session; and an
// expanded Task card shows its subagent's result laid out (summary, findings, evidence as a link with
// its check, unresolved questions), not the raw JSON the subagent returned. Screenshots of both.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;

before(async () => {
  // No light slot saved: the CANOPY_LIGHT_* variables create it, which is the seventh line. The values
  // are the ones the harness saves, so runs still reach the scripted server.
  writeSettings(cfg, { light: null, permissions: { edit: 'allow', write: 'ask', bash: 'ask', task: 'allow' } });
  const url = `${cfg.mockUrl}/v1`;
  app = await launch(cfg, copyFixture(), {
    env: {
      CANOPY_MAIN_PROVIDER: 'openai',
      CANOPY_MAIN_BASE_URL: url,
      CANOPY_MAIN_MODEL: 'mock-main',
      CANOPY_LIGHT_PROVIDER: 'openai',
      CANOPY_LIGHT_BASE_URL: url,
      CANOPY_LIGHT_MODEL: 'mock-light',
    },
  });
});
after(async () => app?.close('20-notices-task-result-end'));

test('seven environment overrides are one notice line that unfolds to the list', async () => {
  const { browser } = app;
  const notice = await byTestId(browser, 'notice', { extra: '[data-group="env-overrides"]' });
  const all = await browser.$$('[data-testid="notice"]');
  assert.equal(all.length, 1, `expected one notice, got ${all.length}`);
  const toggle = await notice.$('[data-testid="notice-toggle"]');
  assert.match(await textOf(toggle), /7 environment overrides in effect for runs \(CANOPY_\* variables, never saved\)/);
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await (await browser.$('[data-testid="notice-lines"]')).isExisting(), false);
  // Folded, the notices take one line's height of an 800-pixel-high window.
  const folded = await browser.execute(() => document.querySelector('[data-testid="notices"]')?.getBoundingClientRect().height ?? -1);
  assert.ok(folded > 0 && folded <= 40, `the folded notice is ${folded}px high`);
  await screenshot(browser, cfg, '20-env-overrides-folded');

  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  const lines = await textOf(await byTestId(browser, 'notice-lines'));
  for (const l of [
    'main.provider = openai (from CANOPY_MAIN_PROVIDER)',
    `main.base_url = ${cfg.mockUrl}/v1 (from CANOPY_MAIN_BASE_URL)`,
    'main.model = mock-main (from CANOPY_MAIN_MODEL)',
    "light slot created from main's settings (because CANOPY_LIGHT_* is set)",
    'light.provider = openai (from CANOPY_LIGHT_PROVIDER)',
    `light.base_url = ${cfg.mockUrl}/v1 (from CANOPY_LIGHT_BASE_URL)`,
    'light.model = mock-light (from CANOPY_LIGHT_MODEL)',
  ]) {
    assert.ok(lines.includes(l), `the unfolded notice lacks "${l}":\n${lines}`);
  }
  assert.doesNotMatch(lines, /Environment override in effect/, 'each line repeats the prefix');
  await screenshot(browser, cfg, '20-env-overrides-open');
  await toggle.click();
  assert.equal(await (await browser.$('[data-testid="notice-lines"]')).isExisting(), false);

  // Dismissed, it is gone.
  await (await notice.$('[data-testid="notice-dismiss"]')).click();
  await waitFor(browser, 'the notice to go', async () => (await browser.$$('[data-testid="notice"]')).length === 0);
});

test("an expanded Task card lays out its subagent's result with evidence links, not raw JSON", async () => {
  const { browser } = app;
  await sendPrompt(browser, 'MD-DEMO: require 12-character passwords');
  await waitFor(browser, 'the main agent to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 1)?.status === 'completed', {
    timeout: 60000,
  });
  const task = await byTestId(browser, 'tool-call', { extra: '[data-tool="Task"]' });
  await browser.execute(() => document.querySelector('[data-testid="tool-call"][data-tool="Task"]')?.scrollIntoView({ block: 'start' }));
  await (await task.$('button.head')).click();
  const result = await task.$('[data-testid="task-result"]');
  await result.waitForExist({ timeout: 10000 });
  assert.match(await textOf(await result.$('[data-testid="task-summary"]')), /^Passwords only need to be non-empty today\.\s+A second line the card leaves out\.$/);
  assert.match(await textOf(await result.$('[data-testid="task-findings"]')), /check_password accepts any non-empty password/);
  assert.match(await textOf(await result.$('[data-testid="task-unresolved"]')), /Is there a written password policy\?/);
  const ev = await result.$('[data-testid="task-evidence"]');
  assert.equal(await ev.getAttribute('data-state'), 'valid');
  assert.match(await textOf(ev), /src\/auth\.rs:8\s+checked/);
  // The raw JSON is folded under it, one click away.
  const cardText = await textOf(task);
  assert.doesNotMatch(cardText, /"unresolved_questions"|"status": ?"partial"/, 'the card shows the raw result JSON');
  assert.equal(await (await task.$('[data-testid="tool-output"]')).isDisplayed(), false, 'the raw result is unfolded');
  await (await task.$('[data-testid="tool-output-raw"]')).click();
  await waitFor(browser, 'the raw result to unfold', async () => (await task.$('[data-testid="tool-output"]')).isDisplayed());
  assert.match(await textOf(await task.$('[data-testid="tool-output"]')), /"unresolved_questions"/);
  await (await task.$('[data-testid="tool-output-raw"]')).click();
  await browser.execute(() => document.querySelector('[data-testid="tool-call"][data-tool="Task"]')?.scrollIntoView({ block: 'start' }));
  await screenshot(browser, cfg, '20-task-result');

  // The evidence is a link: it opens the file viewer at the cited line.
  await (await ev.$('[data-testid="task-evidence-link"]')).click();
  const viewer = await byTestId(browser, 'file-viewer');
  assert.equal(await viewer.getAttribute('data-path'), 'src/auth.rs');
  const hit = await byTestId(browser, 'file-line-highlighted');
  assert.equal(await hit.getAttribute('data-line'), '8');
});
