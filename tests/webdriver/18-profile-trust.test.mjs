// A project that brings its own agent profiles (`.canopy/agents/*.md`): the app shows them — name,
// description, tools, prompt — and asks before any of their text reaches a model. A run before the
// answer, or after "Built-in profiles only", sends none of it; "Use these profiles" does. The answer is
// kept per project and profile content, so a restart does not ask again and a changed profile does.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
let project;
let agentsFile;

const DESCRIPTION = 'Reads the docs (PROFILE-DESC-MARKER)';
const PROMPT = 'You read documentation only. PROFILE-PROMPT-MARKER';
const profile = (description) => `---\nname: docs\ndescription: ${description}\ntools: [Read, Grep]\nmax_steps: 5\n---\n${PROMPT}\n`;

before(async () => {
  writeSettings(cfg);
  fs.rmSync(path.join(cfg.configDir, 'trusted-profiles.json'), { force: true });
  project = copyFixture();
  const agents = path.join(project, '.canopy', 'agents');
  fs.mkdirSync(agents, { recursive: true });
  agentsFile = path.join(agents, 'docs.md');
  fs.writeFileSync(agentsFile, profile(DESCRIPTION));
  app = await launch(cfg, project);
});
after(async () => app?.close('18-profile-trust-end'));

const exists = async (browser, id) => (await browser.$(`[data-testid="${id}"]`)).isExisting();

/** Request bodies the scripted model server received for the run whose prompt contains `marker`. */
async function requestsFor(marker) {
  const res = await fetch(`${cfg.mockUrl}/_requests`);
  const bodies = await res.json();
  return bodies.map((b) => JSON.stringify(b)).filter((b) => b.includes(marker));
}

async function runAndCollect(browser, marker) {
  await sendPrompt(browser, `${marker} say hello`);
  let found = [];
  await waitFor(browser, `the model to get the ${marker} prompt`, async () => {
    found = await requestsFor(marker);
    return found.length > 0;
  });
  return found.join('\n');
}

test('the profiles are shown with their text, and a run before the answer sends none of it', async () => {
  const { browser } = app;
  await browser.setWindowSize(1280, 800);
  const box = await byTestId(browser, 'profiles-trust');
  const row = await byTestId(browser, 'trust-profile', { extra: '[data-profile="docs"]' });
  assert.equal(await textOf(await row.$('[data-testid="trust-profile-description"]')), DESCRIPTION);
  assert.equal(await textOf(await row.$('[data-testid="trust-profile-prompt"]')), PROMPT);
  assert.match(await textOf(row), /tools: Read, Grep/);
  assert.match(await textOf(row), /\.canopy\/agents\/docs\.md/);
  assert.match(await textOf(box), /runs use the built-in profiles only/);
  await screenshot(browser, cfg, '18-profile-trust-ask');

  const sent = await runAndCollect(browser, 'TRUST-BEFORE');
  assert.ok(!sent.includes('PROFILE-DESC-MARKER') && !sent.includes('PROFILE-PROMPT-MARKER'), 'untrusted profile text reached the model');
  assert.ok(await exists(browser, 'profiles-trust'), 'the question is still there after a run');
});

test('"Built-in profiles only" keeps them out; Review, then "Use these profiles", lets them in', async () => {
  const { browser } = app;
  await (await byTestId(browser, 'profiles-trust-no')).click();
  await waitFor(browser, 'the question to go away', async () => !(await exists(browser, 'profiles-trust')));
  const declined = await runAndCollect(browser, 'TRUST-DECLINED');
  assert.ok(!declined.includes('PROFILE-DESC-MARKER'), 'a declined profile reached the model');

  await (await byTestId(browser, 'nav-settings')).click();
  const state = await byTestId(browser, 'profiles-trust-state');
  assert.match(await textOf(state), /not used: you chose the built-in profiles only/);
  await (await byTestId(browser, 'profiles-review')).click();
  await (await byTestId(browser, 'profiles-trust-yes')).click();
  await waitFor(browser, 'Settings to say they are used', async () => /are used in runs/.test(await textOf(await byTestId(browser, 'profiles-trust-state'))));
  assert.equal(await exists(browser, 'profiles-trust'), false);
  await screenshot(browser, cfg, '18-profile-trust-settings');

  await (await byTestId(browser, 'nav-session')).click();
  const trusted = await runAndCollect(browser, 'TRUST-AFTER');
  assert.ok(trusted.includes('PROFILE-DESC-MARKER'), 'the trusted profile is offered to the main agent');
  const kept = JSON.parse(fs.readFileSync(path.join(cfg.configDir, 'trusted-profiles.json'), 'utf8'));
  const answers = Object.values(kept);
  assert.equal(answers.length, 1);
  assert.equal(answers[0].trusted, true);
});

test('a restart does not ask again; a changed profile is asked about again', async () => {
  await app.close();
  app = await launch(cfg, project);
  let { browser } = app;
  await byTestId(browser, 'prompt-input');
  assert.equal(await exists(browser, 'profiles-trust'), false, 'asked again for the same files');

  await app.close();
  fs.writeFileSync(agentsFile, profile('Now says something else (PROFILE-DESC-CHANGED)'));
  app = await launch(cfg, project);
  ({ browser } = app);
  const row = await byTestId(browser, 'trust-profile', { extra: '[data-profile="docs"]' });
  assert.match(await textOf(await row.$('[data-testid="trust-profile-description"]')), /PROFILE-DESC-CHANGED/);
  const sent = await runAndCollect(browser, 'TRUST-CHANGED');
  assert.ok(!sent.includes('PROFILE-DESC-CHANGED'), 'a changed profile was used on the strength of the old answer');
});
