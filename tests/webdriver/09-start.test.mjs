// The Start view as a first-time user meets it: the app launched with no folder on its command line and no
// usable model (a hosted endpoint, no key). The first-run hint leads into Settings; settings errors are
// marked on the field typed; storing or deleting a key and saving a local model flip the hint truthfully;
// a recent project opens from the list.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, keychainSecret, launch, PROJECT_NAME, screenshot, textOf, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
let project;

before(async () => {
  writeSettings(cfg);
  const file = path.join(cfg.configDir, 'settings.json');
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  // A hosted main model with no key anywhere: what a fresh install looks like.
  // `.invalid` never resolves (RFC 2606): even a bug that sent a request would reach no server.
  settings.main.base_url = 'https://api.example.invalid/v1';
  settings.main.model = 'gpt-4.1';
  fs.writeFileSync(file, JSON.stringify(settings, null, 2));
  try {
    execFileSync('secret-tool', ['clear', 'service', 'canopy']);
  } catch {
    // Nothing stored: what we want.
  }
  // The recent list as the app keeps it (data dir, canonical paths), naming a fresh copy of the fixture.
  project = fs.realpathSync(copyFixture());
  fs.mkdirSync(cfg.dataDir, { recursive: true });
  const recent = [{ root: project, name: PROJECT_NAME, last_opened_ms: Date.now() - 2 * 3_600_000 }];
  fs.writeFileSync(path.join(cfg.dataDir, 'recent-projects.json'), JSON.stringify(recent));
  app = await launch(cfg, null);
});
after(async () => app?.close('09-start-end'));

const exists = async (browser, id) => (await browser.$(`[data-testid="${id}"]`)).isExisting();

/** Goes to the Start view through the brand button, as a person would. */
async function toStart(browser) {
  await (await byTestId(browser, 'nav-start')).click();
  await byTestId(browser, 'start-view');
}

async function toSettings(browser) {
  await (await byTestId(browser, 'nav-settings')).click();
  await byTestId(browser, 'slot-main');
}

test('with no folder on the command line the Start view shows the first-run hint and the recent project', async () => {
  const { browser } = app;
  // Keys are stored per endpoint (account main@<origin>); the bare `main` is the old, never-read form.
  for (const account of ['main', `main@${new URL(cfg.mockUrl).origin}`]) {
    assert.equal(keychainSecret(account), null, `the keychain held a ${account} key before the test`);
  }
  await byTestId(browser, 'start-view');
  const hint = await byTestId(browser, 'first-run');
  assert.match(await textOf(hint), /connect a model/i);
  assert.ok(await exists(browser, 'needs-setup'), 'the header does not say that no model is configured');
  const row = await byTestId(browser, 'recent-project');
  assert.equal(await row.getAttribute('data-path'), project);
  assert.match(await textOf(row), new RegExp(PROJECT_NAME));
  assert.equal(await exists(browser, 'project-name'), false, 'a project is open although none was given');
  await screenshot(browser, cfg, '09-start-first-run');

  await (await byTestId(browser, 'go-settings')).click();
  await byTestId(browser, 'slot-main');
});

test('every input and list on the Settings screen has an accessible name', async () => {
  const { browser } = app;
  await byTestId(browser, 'budget-verify-max_wall_time_ms');
  const count = await browser.execute(() => document.querySelectorAll('section.settings input, section.settings select').length);
  assert.ok(count >= 20, `only ${count} inputs on the Settings screen: is it shown?`);
  const unnamed = await browser.execute(() => {
    const name = (el) => {
      const aria = el.getAttribute('aria-label');
      if (aria && aria.trim() !== '') return aria;
      const by = el.getAttribute('aria-labelledby');
      if (by) return by.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? '').join(' ').trim();
      if (el.id) {
        const l = document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
        if (l && l.textContent.trim() !== '') return l.textContent.trim();
      }
      return el.closest('label')?.textContent?.trim() ?? '';
    };
    return Array.from(document.querySelectorAll('section.settings input, section.settings select'))
      .filter((el) => name(el) === '')
      .map((el) => el.getAttribute('data-testid') ?? el.outerHTML.slice(0, 80));
  });
  assert.deepEqual(unnamed, [], `inputs a screen reader cannot name: ${unnamed.join(', ')}`);
  const names = await browser.execute(() =>
    ['budget-explore-max_steps', 'budget-verify-model'].map((id) => document.querySelector(`[data-testid="${id}"]`)?.getAttribute('aria-label')),
  );
  assert.match(names[0], /explore/i);
  assert.match(names[0], /steps/i);
  assert.match(names[1], /verify/i);
});

test('a too-small context window is marked on that field with the number typed; form errors block Save', async () => {
  const { browser } = app;
  const ctx = await byTestId(browser, 'main-context-window');
  await ctx.setValue('4096');
  const save = await byTestId(browser, 'settings-save');
  await waitFor(browser, 'Save to be enabled after editing the context window', () => save.isEnabled());
  await save.click();
  const err = await byTestId(browser, 'field-error', { extra: '[data-field="main.context_window"]' });
  const text = await textOf(err);
  assert.match(text, /4096/, `the error does not name the number typed: "${text}"`);
  assert.match(text, /max output tokens/i, `the error does not say what it must exceed: "${text}"`);
  const top = await byTestId(browser, 'settings-error');
  assert.equal(await textOf(top), 'Fix the marked field');
  await screenshot(browser, cfg, '09-settings-context-window-error');

  // A budget the form itself rejects: Save stays off, and both errors stay shown.
  const steps = await byTestId(browser, 'budget-explore-max_steps');
  await steps.setValue('-3');
  await byTestId(browser, 'field-error', { extra: '[data-field="profiles.explore.max_steps"]' });
  await waitFor(browser, 'Save to be disabled while a field is invalid', async () => !(await save.isEnabled()));
  const ctxErr = await browser.$('[data-testid="field-error"][data-field="main.context_window"]');
  assert.ok(await ctxErr.isExisting(), 'the server error vanished when a form error appeared');
  assert.equal(await textOf(await byTestId(browser, 'settings-error')), 'Fix the marked fields');

  // Emptying parallelism is caught in place too, not sent as null.
  const par = await byTestId(browser, 'parallelism');
  await par.clearValue();
  await browser.execute(() => {
    const el = document.querySelector('[data-testid="parallelism"]');
    el.value = '';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  const perr = await byTestId(browser, 'field-error', { extra: '[data-field="parallelism"]' });
  assert.match(await textOf(perr), /1 to 16/);
  await screenshot(browser, cfg, '09-settings-form-errors');

  // Fixing each field clears its error; the context-window error goes as soon as the number changes.
  await par.setValue('4');
  await steps.clearValue();
  await browser.execute(() => {
    const el = document.querySelector('[data-testid="budget-explore-max_steps"]');
    el.value = '';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await ctx.setValue('128000');
  await waitFor(browser, 'every field error to clear', async () => (await browser.$$('[data-testid="field-error"]')).length === 0);
  await waitFor(browser, 'Save to be enabled again', () => save.isEnabled());
  assert.equal(await exists(browser, 'settings-error'), false);
});

test('storing a main key ends the first-run state, deleting it brings it back', async () => {
  const { browser } = app;
  const input = await byTestId(browser, 'main-key-input');
  await input.setValue('sk-webdriver-start-1c9e');
  const saveKey = await byTestId(browser, 'main-key-save');
  await waitFor(browser, 'the key button to be enabled', () => saveKey.isEnabled());
  await saveKey.click();
  await waitFor(browser, 'the key to be stored', async () => (await (await byTestId(browser, 'main-key-status')).getAttribute('data-state')) === 'present');
  await toStart(browser);
  await waitFor(browser, 'the first-run hint to go', async () => !(await exists(browser, 'first-run')));
  assert.equal(await exists(browser, 'needs-setup'), false, 'the header still says no model is configured');

  await toSettings(browser);
  await (await byTestId(browser, 'main-key-delete')).click();
  await waitFor(browser, 'the key to be deleted', async () => (await (await byTestId(browser, 'main-key-status')).getAttribute('data-state')) === 'absent');
  await toStart(browser);
  await byTestId(browser, 'first-run', { timeout: 5000 });
  assert.ok(await exists(browser, 'needs-setup'), 'the header does not say no model is configured after the key was deleted');
});

test('saving a local model ends the first-run state without a key', async () => {
  const { browser } = app;
  await toSettings(browser);
  const url = await byTestId(browser, 'main-base-url');
  await url.setValue(`${cfg.mockUrl}/v1`);
  const save = await byTestId(browser, 'settings-save');
  await waitFor(browser, 'Save to be enabled', () => save.isEnabled());
  await save.click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
  await toStart(browser);
  await waitFor(browser, 'the first-run hint to go after saving a local model', async () => !(await exists(browser, 'first-run')), { timeout: 5000 });
  assert.equal(await exists(browser, 'needs-setup'), false);
  await screenshot(browser, cfg, '09-start-ready');
});

test('a recent project opens from the Start view', async () => {
  const { browser } = app;
  await (await byTestId(browser, 'recent-project', { extra: ' button.open' })).click();
  const name = await byTestId(browser, 'project-name');
  await waitFor(browser, 'the project name in the header', async () => (await textOf(name)) === PROJECT_NAME);
  await byTestId(browser, 'prompt-input');
  assert.equal(await exists(browser, 'start-view'), false, 'the Start view is still shown');
  await screenshot(browser, cfg, '09-start-opened-recent');
});
