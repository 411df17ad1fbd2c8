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

test('approving an Edit once from the conversation changes the file', async () => {
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

  await (await approval.$('[data-testid="approve-once"]')).click();
  await waitFor(browser, 'the edit to reach the file on disk', async () => fs.readFileSync(file, 'utf8').includes('password.len() >= 12'), {
    timeout: 15000,
    state: () => tool.getAttribute('data-status'),
  });
  assert.ok(!fs.readFileSync(file, 'utf8').includes('!password.is_empty()'), 'the old line is still there');
  await byTestId(browser, 'approval', { extra: '[data-state="allow"]' });
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
