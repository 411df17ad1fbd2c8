// The app starts on the project given on its command line and shows it, ready for a prompt.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, PROJECT_NAME, screenshot, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
let app;

before(async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
});
after(async () => app?.close('01-start-end'));

test('the app opens the project from its command line', async () => {
  const { browser } = app;
  const name = await byTestId(browser, 'project-name');
  await waitFor(browser, `the project name "${PROJECT_NAME}" in the title bar`, async () => (await textOf(name)) === PROJECT_NAME);
  // The session view, not the start screen, is showing: the prompt box is there and usable.
  assert.equal(await (await browser.$('[data-testid="start-view"]')).isExisting(), false, 'the start screen is still showing');
  const input = await byTestId(browser, 'prompt-input');
  assert.equal(await input.isEnabled(), true, 'the prompt box is disabled');
  assert.equal(await (await browser.$('[data-testid="nav-session"]')).getAttribute('aria-current'), 'page');
  assert.ok(app.appAlive(), 'the app process is gone');
  await screenshot(browser, cfg, '01-start');
});
