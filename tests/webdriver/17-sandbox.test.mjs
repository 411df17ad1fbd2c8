// Bash in the sandbox as a person sees it: a command that wants the network says so on its card and in
// its approval, and is denied; an approved command builds in the project but cannot write outside it.
// With the sandbox turned off in Settings (radio + warning) every Bash card and approval says "no
// sandbox"; the secret-file list is edited and saved from the same screen.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
after(async () => app?.close('17-sandbox-end'));

const exists = async (browser, sel) => (await browser.$(sel)).isExisting();
const pendingBash = (browser) => byTestId(browser, 'tool-call', { extra: '[data-tool="Bash"][data-status="running"]', timeout: 30000 });

test('a command that wants the network is marked and can be denied; an approved one is confined to the project', async () => {
  writeSettings(cfg);
  const project = copyFixture();
  // Outside /tmp, which the sandbox replaces with its own: a real place a command could write to.
  const outside = '/var/tmp/canopy-e2e-outside';
  fs.rmSync(outside, { force: true });
  app = await launch(cfg, project);
  try {
    await sandboxed(app.browser, project, outside);
  } finally {
    await app.close('17-sandbox-first');
    app = null;
  }
});

async function sandboxed(browser, project, outside) {
  await sendPrompt(browser, 'SANDBOX-DEMO: build it');

  // First call: curl with `network: true`.
  await byTestId(browser, 'approval', { extra: '[data-state="pending"]', timeout: 30000 });
  const first = await pendingBash(browser);
  assert.ok(await exists(browser, '[data-testid="tool-call"][data-tool="Bash"] [data-testid="bash-network"]'), 'the card does not say the command wants network');
  const approval = await byTestId(browser, 'approval', { extra: '[data-state="pending"]' });
  assert.match(await textOf(approval), /wants network access/, 'the approval summary does not mention network');
  assert.match(await textOf(await byTestId(browser, 'approval-network')), /Wants network access/);
  assert.equal(await exists(browser, '[data-testid="approval-unsandboxed"]'), false, 'a sandboxed session is marked unsandboxed');
  await screenshot(browser, cfg, '17-sandbox-network-approval');
  await (await byTestId(browser, 'approve-deny')).click();
  await waitFor(browser, 'the network call to read denied', async () => (await first.getAttribute('data-status')) === 'denied');
  assert.equal(fs.existsSync(path.join(project, 'page.html')), false);

  // Second call: no network asked, allowed once; it builds in the project and cannot write outside.
  await waitFor(browser, 'the second approval', async () => (await browser.$$('[data-testid="approval"][data-state="pending"]')).length === 1, { timeout: 30000 });
  assert.equal(await exists(browser, '[data-testid="approval-network"]'), false, 'a command without network is marked as wanting it');
  await (await byTestId(browser, 'approve-once')).click();
  await waitFor(browser, 'the sandboxed build to write its file', async () => fs.existsSync(path.join(project, 'sandbox-out.txt')), { timeout: 20000 });
  const calls = await browser.$$('[data-testid="tool-call"][data-tool="Bash"]');
  const second = calls[calls.length - 1];
  await waitFor(browser, 'the build call to end', async () => (await second.getAttribute('data-status')) === 'ok');
  await (await second.$('button.head')).click();
  const out = await textOf(await second.$('[data-testid="tool-output"]'));
  assert.match(out, /built/, out);
  assert.match(out, /outside=1/, `writing outside the project was not refused: ${out}`);
  assert.match(out, /Read-only file system/, out);
  assert.equal(fs.existsSync(outside), false, 'the command wrote outside the project');
  assert.equal(await exists(browser, '[data-testid="bash-unsandboxed"]'), false);
  await screenshot(browser, cfg, '17-sandbox-confined');
}

test('with the sandbox turned off every Bash card says so, and the secret-file list is saved from Settings', async () => {
  writeSettings(cfg, { sandbox: { mode: 'off', env_allowlist: [] } });
  const project = copyFixture();
  app = await launch(cfg, project);
  const { browser } = app;

  await (await byTestId(browser, 'nav-settings')).click();
  const off = await byTestId(browser, 'sandbox-off');
  assert.equal(await off.getProperty('checked'), true, 'the saved choice is not shown');
  assert.match(await textOf(await byTestId(browser, 'sandbox-off-warning')), /full rights/);
  const list = await byTestId(browser, 'secret-files');
  assert.match(await list.getProperty('value'), /^\.env\*$/m, 'the default list is not shown');
  // Typed as a person does: a new line first (the page redraws), then the pattern on it.
  const type = (text) =>
    browser.execute((more) => {
      const t = document.querySelector('[data-testid="secret-files"]');
      t.value = `${t.value}${more}`;
      t.dispatchEvent(new Event('input', { bubbles: true }));
    }, text);
  await type('\n');
  await type('!.env.example');
  await browser.execute(() => document.querySelector('[data-testid="sandbox-settings"]').scrollIntoView());
  await screenshot(browser, cfg, '17-sandbox-settings');
  await (await byTestId(browser, 'settings-save')).click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
  const saved = JSON.parse(fs.readFileSync(path.join(cfg.configDir, 'settings.json'), 'utf8'));
  assert.equal(saved.withheld_files.at(-1), '!.env.example', JSON.stringify(saved.withheld_files));
  assert.equal(saved.withheld_files.at(-2), 'credentials.json');
  assert.ok(saved.withheld_files.includes('*.pem'));
  assert.equal(saved.sandbox.mode, 'off');

  await (await byTestId(browser, 'nav-session')).click();
  await sendPrompt(browser, 'UNSANDBOXED-DEMO: say hello');
  await byTestId(browser, 'approval', { extra: '[data-state="pending"]', timeout: 30000 });
  assert.match(await textOf(await byTestId(browser, 'approval-unsandboxed')), /without a sandbox/);
  assert.ok(await exists(browser, '[data-testid="tool-call"][data-tool="Bash"] [data-testid="bash-unsandboxed"]'), 'the pending Bash card is not marked');
  await screenshot(browser, cfg, '17-sandbox-off-approval');
  await (await byTestId(browser, 'approve-once')).click();
  const card = await byTestId(browser, 'tool-call', { extra: '[data-tool="Bash"][data-status="ok"]', timeout: 20000 });
  assert.ok(await card.$('[data-testid="bash-unsandboxed"]').isExisting(), 'the finished Bash card is not marked');
  await screenshot(browser, cfg, '17-sandbox-off-done');
});
