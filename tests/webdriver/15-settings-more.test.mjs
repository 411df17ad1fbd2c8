// Settings beyond keys: unsaved edits survive leaving the tab, are marked on it, and "Canopy" (open
// another project) asks before leaving them; the main agent's budgets are editable and a step budget of 2
// really stops the main agent of a run; Max output tokens is a field, and the context-window error names
// it; project profiles say which file edits them. Screenshots of Settings in light and dark.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
let project;

before(async () => {
  writeSettings(cfg);
  project = copyFixture();
  // A project profile, to check its row says where it is edited.
  const agents = path.join(project, '.canopy', 'agents');
  fs.mkdirSync(agents, { recursive: true });
  fs.writeFileSync(
    path.join(agents, 'docs.md'),
    '---\nname: docs\ndescription: Reads the documentation\ntools: [Read, Grep]\nmodel: light\nmax_steps: 5\n---\nYou read documentation.\n',
  );
  app = await launch(cfg, project);
});
after(async () => app?.close('15-settings-more-end'));

const exists = async (browser, id) => (await browser.$(`[data-testid="${id}"]`)).isExisting();
const valueOf = async (browser, id) => (await byTestId(browser, id)).getProperty('value');

/** Types into a number input the way a person does: the old value goes, the new one fires `input`. */
async function typeNumber(browser, id, text) {
  const el = await byTestId(browser, id);
  await el.clearValue();
  await browser.execute(
    (sel, v) => {
      const input = document.querySelector(sel);
      input.value = v;
      input.dispatchEvent(new Event('input', { bubbles: true }));
    },
    `[data-testid="${id}"]`,
    text,
  );
}

async function openSettings(browser) {
  await (await byTestId(browser, 'nav-settings')).click();
  await byTestId(browser, 'budget-main-max_steps');
}

test('unsaved edits survive leaving Settings, are marked on its tab, and survive opening a project until reverted', async () => {
  const { browser } = app;
  await browser.setWindowSize(1280, 800);
  // The app shows the project's session once it has opened; a click before that would be undone by it.
  await byTestId(browser, 'prompt-input');
  await openSettings(browser);
  assert.equal(await exists(browser, 'settings-unsaved'), false, 'the tab is marked unsaved before any edit');

  await typeNumber(browser, 'parallelism', '3');
  await byTestId(browser, 'settings-unsaved');
  assert.equal(await textOf(await byTestId(browser, 'settings-dirty')), 'Unsaved changes');

  // Away and back: the edit is still there, and the tab says so meanwhile.
  await (await byTestId(browser, 'nav-session')).click();
  await byTestId(browser, 'prompt-input');
  assert.ok(await exists(browser, 'settings-unsaved'), 'the Settings tab lost its unsaved marker on leaving');
  assert.match(await textOf(await byTestId(browser, 'nav-settings')), /unsaved changes/i, 'the marker has no words for a screen reader');
  await screenshot(browser, cfg, '15-settings-unsaved-marker');
  await openSettings(browser);
  assert.equal(await valueOf(browser, 'parallelism'), '3', 'the unsaved parallelism was lost on leaving Settings');

  // Opening another project keeps them too: Settings are the app's, not the project's.
  await (await byTestId(browser, 'nav-start')).click();
  await byTestId(browser, 'start-view');
  await (await byTestId(browser, 'recent-project', { extra: ' button.open' })).click();
  await byTestId(browser, 'prompt-input');
  assert.ok(await exists(browser, 'settings-unsaved'), 'the unsaved marker went with the project change');
  await openSettings(browser);
  assert.equal(await valueOf(browser, 'parallelism'), '3', 'the unsaved parallelism was lost on opening a project');

  // Revert drops them, in the form and on the tab.
  await (await byTestId(browser, 'settings-revert')).click();
  await waitFor(browser, 'the unsaved marker to go after Revert', async () => !(await exists(browser, 'settings-unsaved')));
  assert.equal(await valueOf(browser, 'parallelism'), '4', 'Revert kept the edit');
  await (await byTestId(browser, 'nav-session')).click();
});

test('the main agent has its own budget column, and a step budget of 2 stops its run at the step budget', async () => {
  const { browser } = app;
  await openSettings(browser);
  const cols = await browser.execute(() => Array.from(document.querySelectorAll('[data-testid^="budget-col-"]')).map((c) => c.textContent.trim()));
  assert.deepEqual(cols, ['main', 'explore', 'verify']);
  const mainModel = await browser.execute(() => Array.from(document.querySelector('[data-testid="budget-main-model"]').options).map((o) => o.textContent.trim()));
  assert.deepEqual(mainModel, ['default (main)', 'main', 'light']);
  assert.equal(await (await byTestId(browser, 'budget-main-max_steps')).getAttribute('placeholder'), '60', 'the main default is not the runtime one');

  await typeNumber(browser, 'budget-main-max_steps', '2');
  const save = await byTestId(browser, 'settings-save');
  await waitFor(browser, 'Save to be enabled', () => save.isEnabled());
  await save.click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
  await waitFor(browser, 'the unsaved marker to go after Save', async () => !(await exists(browser, 'settings-unsaved')));
  await screenshot(browser, cfg, '15-settings-main-column');

  // TODO-DEMO answers with three model calls (two TodoWrite turns, then text).
  await (await byTestId(browser, 'nav-session')).click();
  await sendPrompt(browser, 'TODO-DEMO: plan the password change');
  const root = () =>
    browser.execute(() => {
      const n = document.querySelector('[data-testid="tree-node"][aria-level="1"]');
      if (n === null) return null;
      const bar = n.querySelector('[data-testid="budget-bar"][data-budget="steps"]');
      return {
        status: n.getAttribute('data-status'),
        statusText: n.querySelector('[data-testid="node-status"]')?.innerText.trim() ?? '',
        steps: bar === null ? null : { state: bar.getAttribute('data-state'), text: bar.querySelector('.val')?.textContent.trim() ?? '' },
      };
    });
  let seen = null;
  await waitFor(
    browser,
    'the main agent to end',
    async () => {
      seen = await root();
      return seen !== null && seen.status !== 'running' && seen.status !== 'queued';
    },
    { timeout: 60000, state: () => seen },
  );
  assert.match(seen.statusText, /step budget/, `the main agent did not end on its step budget: ${JSON.stringify(seen)}`);
  assert.ok(seen.steps !== null, 'the main agent has no Steps bar');
  assert.equal(seen.steps.state, 'exhausted', `the Steps bar is not marked as the budget that ended it: ${JSON.stringify(seen.steps)}`);
  // Two steps, then the final answer's tool-less call: shown as the limit holding plus that call.
  assert.equal(seen.steps.text, '2 / 2 +1', `the Steps bar does not count against 2: ${seen.steps.text}`);
  await screenshot(browser, cfg, '15-settings-main-step-budget');

  // Back to the default, so the runs of later tests are not cut short.
  await openSettings(browser);
  await typeNumber(browser, 'budget-main-max_steps', '');
  await (await byTestId(browser, 'settings-save')).click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
  assert.equal(await valueOf(browser, 'budget-main-max_steps'), '');
});

test('Max output tokens is a field of each slot, and the context-window error names it and clears when it changes', async () => {
  const { browser } = app;
  await openSettings(browser);
  assert.equal(await valueOf(browser, 'main-max-output-tokens'), '4096');

  await typeNumber(browser, 'main-context-window', '8192');
  await typeNumber(browser, 'main-max-output-tokens', '8192');
  const save = await byTestId(browser, 'settings-save');
  await waitFor(browser, 'Save to be enabled', () => save.isEnabled());
  await save.click();
  const err = await byTestId(browser, 'field-error', { extra: '[data-field="main.context_window"]' });
  const text = await textOf(err);
  assert.match(text, /Max output tokens \(8192\)/, `the error does not name the field: "${text}"`);
  const label = await browser.execute(() => document.querySelector('label[for="main-maxout"]')?.innerText.trim());
  assert.equal(label, 'Max output tokens', 'the field the error names is not on screen under that name');
  await screenshot(browser, cfg, '15-settings-max-output-error');

  // Lowering max output tokens (not the context window) fixes it: the error goes and Save works.
  await typeNumber(browser, 'main-max-output-tokens', '2048');
  await waitFor(browser, 'the context-window error to go', async () => !(await (await browser.$('[data-testid="field-error"][data-field="main.context_window"]')).isExisting()));
  await save.click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });

  // An emptied field is caught in place and blocks Save.
  await typeNumber(browser, 'main-max-output-tokens', '');
  const own = await byTestId(browser, 'field-error', { extra: '[data-field="main.max_output_tokens"]' });
  assert.match(await textOf(own), /whole number/);
  await waitFor(browser, 'Save to be disabled', async () => !(await save.isEnabled()));
  await typeNumber(browser, 'main-max-output-tokens', '4096');
  await typeNumber(browser, 'main-context-window', '200000');
  await waitFor(browser, 'Save to be enabled', () => save.isEnabled());
  await save.click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
});

test('a project profile is listed with its budgets and the file that edits it', async () => {
  const { browser } = app;
  await openSettings(browser);
  const row = await byTestId(browser, 'agent-profile', { extra: '[data-profile="docs"]' });
  const source = await textOf(await row.$('[data-testid="agent-profile-source"]'));
  assert.equal(source, 'edit in .canopy/agents/docs.md');
  assert.match(await textOf(await row.$('[data-testid="agent-profile-budgets"]')), /^5 steps · /);
  const main = await byTestId(browser, 'agent-profile', { extra: '[data-profile="main"]' });
  assert.equal(await textOf(await main.$('[data-testid="agent-profile-source"]')), 'built-in · budgets above');
  // Project profiles have no inputs in the budget table.
  assert.equal(await exists(browser, 'budget-docs-max_steps'), false);
});

test('Settings in the dark theme, with the main column and the unsaved marker', async () => {
  await app.close();
  app = await launch(cfg, project, { env: { GTK_THEME: 'Adwaita:dark' } });
  const { browser } = app;
  await browser.setWindowSize(1280, 800);
  await byTestId(browser, 'prompt-input');
  await openSettings(browser);
  await typeNumber(browser, 'budget-main-max_total_tokens', '500000');
  await byTestId(browser, 'settings-unsaved');
  await screenshot(browser, cfg, '15-settings-dark');
});
