// An Edit proposed by the main agent waits for the person; "Allow once" lets it change the file on disk.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, sleep, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
let app;
let project;

before(async () => {
  writeSettings(cfg);
  project = copyFixture();
  app = await launch(cfg, project);
});
after(async () => app?.close('07-approval-end'));

test('approving an Edit once from the conversation (even with a double click) changes the file', async () => {
  const { browser } = app;
  const file = path.join(project, 'src', 'auth.rs');
  const original = fs.readFileSync(file, 'utf8');
  await sendPrompt(browser, 'EDIT-DEMO: make passwords need 12 characters');

  const approval = await byTestId(browser, 'approval', { extra: '[data-state="pending"]', timeout: 30000 });
  const tool = await browser.$('[data-testid="tool-call"][data-tool="Edit"]');
  assert.ok(await tool.isExisting(), 'the approval is not on an Edit call');
  assert.match(await textOf(approval), /auth\.rs/, 'the approval does not say which file');
  // Nothing happens until the person answers.
  await sleep(1000);
  assert.equal(fs.readFileSync(file, 'utf8'), original, 'the file changed before approval');
  await screenshot(browser, cfg, '07-approval-pending');

  // A double click: both clicks land before the page can redraw. Only one answer may go out, so no
  // "no approval is waiting" error for the second, and the buttons are disabled from then on.
  await browser.execute(() => {
    const b = document.querySelector('[data-testid="approval"][data-state="pending"] [data-testid="approve-once"]');
    b.click();
    b.click();
  });
  const buttons = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid^="approve-"]')).map((b) => b.disabled),
  );
  // Either still waiting for the run's answer (disabled) or already decided (no buttons).
  assert.ok(buttons.every((d) => d === true), `approval buttons still enabled after the answer: ${JSON.stringify(buttons)}`);
  await waitFor(browser, 'the edit to reach the file on disk', async () => fs.readFileSync(file, 'utf8').includes('password.len() >= 12'), {
    timeout: 15000,
    state: () => tool.getAttribute('data-status'),
  });
  assert.ok(!fs.readFileSync(file, 'utf8').includes('!password.is_empty()'), 'the old line is still there');
  await byTestId(browser, 'approval', { extra: '[data-state="allow"]' });
  await sleep(500);
  assert.equal(await (await browser.$('[data-testid="error-toast"]')).isExisting(), false, 'a second answer was sent for the same approval');
  await waitFor(browser, 'the Edit call to end successfully', async () => (await tool.getAttribute('data-status')) === 'ok', {
    state: () => tool.getAttribute('data-status'),
  });
  await waitFor(browser, 'the final answer', async () => {
    const msgs = await browser.$$('[data-testid="msg-assistant"]');
    for (const m of msgs) if ((await textOf(m)).includes('12 characters')) return true;
    return false;
  });
  await screenshot(browser, cfg, '07-approval-done');
});
