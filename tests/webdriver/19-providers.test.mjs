// Settings shows what an endpoint reports about its models: pointed at an Ollama server (a second
// canopy-mock-llm playing Ollama, with `/api/show`), List models shows each model's real context
// window, picking one fills the Context window field with it and says where it came from, and a
// larger window or a profile budget above it is warned about. A run whose model streams its reasoning
// shows it folded above each answer, with its token count, and unfolds on a click. Screenshots of both.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, repoRoot, screenshot, sendPrompt, textOf, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
let ollama;
let ollamaUrl;

/** canopy-mock-llm as scripts/e2e-webdriver.sh built it, playing an Ollama server with two models. */
async function startOllama() {
  const target = process.env.CARGO_TARGET_DIR ?? path.join(repoRoot, 'target');
  const binary = path.join(target, 'debug', 'canopy-mock-llm');
  if (!fs.existsSync(binary)) throw new Error(`no canopy-mock-llm at ${binary}: run through scripts/e2e-webdriver.sh`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-ollama-'));
  const script = path.join(dir, 'ollama.json');
  fs.writeFileSync(
    script,
    JSON.stringify({
      models: ['qwen2.5-coder:7b', 'llama3.2:3b'],
      ollama_models: {
        'qwen2.5-coder:7b': { architecture: 'qwen2', context_length: 32768 },
        'llama3.2:3b': { architecture: 'llama', context_length: 131072 },
      },
      rules: [{ name: 'any', turns: [{ text: 'OK' }] }],
    }),
  );
  const child = spawn(binary, ['--script', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (b) => {
      out += b.toString();
      const m = /listening on (http:\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`canopy-mock-llm exited with ${code}: ${out}`)));
  });
  return { child, url };
}

before(async () => {
  ({ child: ollama, url: ollamaUrl } = await startOllama());
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
});
after(async () => {
  await app?.close('19-providers-end');
  ollama?.kill();
});

const valueOf = async (browser, id) => (await byTestId(browser, id)).getProperty('value');

test("an Ollama model's real context window is listed, filled in on pick, and a larger one is warned about", async () => {
  const { browser } = app;
  await browser.setWindowSize(1280, 900);
  await byTestId(browser, 'prompt-input');
  await (await byTestId(browser, 'nav-settings')).click();
  const url = await byTestId(browser, 'main-base-url');
  await url.setValue(`${ollamaUrl}/v1`);
  await (await byTestId(browser, 'main-list-models')).click();

  // Each listed model shows the context length Ollama's /api/show reports for it.
  await waitFor(browser, 'two listed models with their context', async () => (await browser.$$('[data-testid="main-model-about"]')).length === 2);
  const rows = await browser.$$('[data-testid="main-model-option"]');
  const texts = [];
  for (const r of rows) texts.push(await textOf(r));
  assert.ok(texts.some((t) => t.startsWith('qwen2.5-coder:7b') && t.includes('33k ctx')), texts.join(' | '));
  assert.ok(texts.some((t) => t.startsWith('llama3.2:3b') && t.includes('131k ctx')), texts.join(' | '));

  // Picking the model fills the field with its real window and says so.
  await rows[texts.findIndex((t) => t.startsWith('qwen2.5-coder:7b'))].click();
  await waitFor(browser, 'the context window filled in', async () => (await valueOf(browser, 'main-context-window')) === '32768');
  assert.equal(await valueOf(browser, 'main-model'), 'qwen2.5-coder:7b');
  const reported = await byTestId(browser, 'main-context-reported');
  assert.equal(await reported.getAttribute('data-tokens'), '32768');
  assert.equal(await textOf(reported), 'The endpoint reports 32,768 tokens for qwen2.5-coder:7b');
  // The main profile's context budget (100k by default) is more than this model takes.
  const budget = await byTestId(browser, 'main-budget-warning');
  assert.equal(await budget.getAttribute('data-profile'), 'main');
  assert.match(await textOf(budget), /main profile's context budget \(100k tokens\) exceeds what this model takes \(33k\)/);
  assert.equal((await browser.$$('[data-testid="main-context-warning"]')).length, 0, 'warned while the window fits');
  await screenshot(browser, cfg, '17-settings-ollama-context');

  // A window above what the model takes is warned about, with the number to use.
  const ctx = await byTestId(browser, 'main-context-window');
  await ctx.clearValue();
  await browser.execute((sel) => {
    const input = document.querySelector(sel);
    input.value = '65536';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, '[data-testid="main-context-window"]');
  const warning = await byTestId(browser, 'main-context-warning');
  assert.match(await textOf(warning), /More than the model takes: lower it to 32,768/);
  await screenshot(browser, cfg, '17-settings-ollama-context-warning');
});

test('a model\'s reasoning is shown folded above its answer, with its token count, and opens on a click', async () => {
  const { browser } = app;
  await browser.setWindowSize(1280, 800);
  // Leave the unsaved Settings edits of the test above behind; the run uses the saved settings.
  await (await byTestId(browser, 'nav-settings')).click();
  const revert = await browser.$('button=Revert');
  if (await revert.isExisting()) await revert.click();
  await (await byTestId(browser, 'nav-session')).click();
  await sendPrompt(browser, 'REASONING-DEMO: where is login?');
  await waitFor(browser, 'two folded reasoning blocks', async () => (await browser.$$('[data-testid="msg-reasoning"]')).length === 2, { timeout: 30000 });
  const blocks = await browser.$$('[data-testid="msg-reasoning"]');
  for (const b of blocks) assert.equal(await b.getProperty('open'), false, 'reasoning is folded by default');
  const summary = await blocks[1].$('summary');
  assert.match(await textOf(summary), /^Thinking \(\d+ tokens?\)$/);
  await summary.click();
  await waitFor(browser, 'the reasoning to unfold', async () => blocks[1].getProperty('open'));
  assert.equal(await textOf(await blocks[1].$('pre')), 'Grep found one definition in src/auth.rs; that answers it.');
  const answers = await browser.$$('[data-testid="msg-assistant"]');
  assert.match(await textOf(answers[answers.length - 1]), /Login is defined in src\/auth\.rs\./);
  await screenshot(browser, cfg, '17-reasoning-folded');
});
