// Settings: an API key goes to the real keychain (gnome-keyring in the test's D-Bus session) bound to
// the endpoint's origin and never back into the page; it can be replaced and deleted; pointing the slot
// at another endpoint shows "not set" there and never sends the key to it; Test connection and List
// models use the endpoint on screen before saving; a connection test to a dead URL explains itself.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, deadPort, keychainSecret, launch, pageText, screenshot, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
const MOCK = new URL(cfg.mockUrl);
const MOCK_HOST = MOCK.host; // 127.0.0.1:PORT, as the app names an origin
const MOCK_ACCOUNT = `main@${MOCK.origin}`;
let app;
let second;

/** A second OpenAI-compatible server on another loopback port (another origin) that records the
 *  headers of every request, so the test can see whether a key reached it. */
function startSecondServer() {
  const models = Array.from({ length: 120 }, (_, i) => `second/model-${String(i + 1).padStart(3, '0')}`);
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: { ...req.headers } });
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'second' })) }));
      return;
    }
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta, finish) => ({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: models[0], choices: [{ index: 0, delta, finish_reason: finish }] });
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'OK' }, null))}\n\n`);
        res.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`);
        res.end('data: [DONE]\n\n');
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ server, seen, models, url: `http://127.0.0.1:${port}/v1`, host: `127.0.0.1:${port}` });
    });
  });
}

before(async () => {
  writeSettings(cfg);
  second = await startSecondServer();
  app = await launch(cfg, copyFixture());
});
after(async () => {
  await app?.close('05-settings-end');
  second?.server.close();
});

const FIRST = 'sk-webdriver-FIRST-7f3a9c1e5b';
const SECOND = 'sk-webdriver-SECOND-2d8e4a6f0c';

async function keyStatus(browser) {
  const el = await byTestId(browser, 'main-key-status');
  return { state: await el.getAttribute('data-state'), text: await textOf(el) };
}

async function enterKey(browser, key) {
  const input = await byTestId(browser, 'main-key-input');
  await input.setValue(key);
  const save = await byTestId(browser, 'main-key-save');
  await waitFor(browser, 'the key button to be enabled', () => save.isEnabled());
  await save.click();
}

async function setBaseUrl(browser, url) {
  const input = await byTestId(browser, 'main-base-url');
  await input.setValue(url);
}

async function saveSettings(browser) {
  const save = await byTestId(browser, 'settings-save');
  await waitFor(browser, 'Save to be enabled after editing', () => save.isEnabled());
  await save.click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
}

test('an API key is stored in the keychain for its endpoint, replaced and deleted, and never shown', async () => {
  const { browser } = app;
  await (await byTestId(browser, 'nav-settings')).click();
  await waitFor(browser, `the main key status "not set for ${MOCK_HOST}"`, async () => (await keyStatus(browser)).text === `not set for ${MOCK_HOST}`);
  assert.equal(keychainSecret(MOCK_ACCOUNT), null, 'the keychain already held a key before the test');

  await enterKey(browser, FIRST);
  await waitFor(browser, 'the status "stored in keychain for …"', async () => {
    const s = await keyStatus(browser);
    return s.state === 'present' && s.text === `stored in keychain for ${MOCK_HOST}`;
  });
  // The keychain account names the slot and the endpoint's origin; nothing under the bare slot.
  assert.equal(keychainSecret(MOCK_ACCOUNT), FIRST, 'the real keychain does not hold the key under main@<origin>');
  assert.equal(keychainSecret('main'), null, 'a key was stored without its origin');
  assert.ok(!(await pageText(browser)).includes(FIRST), 'the key is still readable in the page after saving');
  assert.equal(await textOf(await byTestId(browser, 'main-key-save')), 'Replace');

  await enterKey(browser, SECOND);
  await waitFor(browser, 'the keychain to hold the replacement key', async () => keychainSecret(MOCK_ACCOUNT) === SECOND);
  assert.equal((await keyStatus(browser)).text, `stored in keychain for ${MOCK_HOST}`);
  const text = await pageText(browser);
  assert.ok(!text.includes(SECOND) && !text.includes(FIRST), 'a key is readable in the page after replacing');
  await screenshot(browser, cfg, '05-settings-key-stored');

  await (await byTestId(browser, 'main-key-delete')).click();
  await waitFor(browser, 'the status "not set" after deleting', async () => (await keyStatus(browser)).text === `not set for ${MOCK_HOST}`);
  assert.equal(keychainSecret(MOCK_ACCOUNT), null, 'the key is still in the keychain after Delete');
  assert.equal(await (await browser.$('[data-testid="main-key-delete"]')).isExisting(), false);
});

test('a key stays with its endpoint: another origin shows "not set" and never receives it', async () => {
  const { browser } = app;
  await enterKey(browser, FIRST);
  await waitFor(browser, 'the key to be stored for the first server', async () => (await keyStatus(browser)).state === 'present');

  // Unsaved: the slot now points at the second server, another port on the same host.
  await setBaseUrl(browser, second.url);
  await waitFor(browser, `"not set for ${second.host}" before saving`, async () => (await keyStatus(browser)).text === `not set for ${second.host}`);
  const note = await textOf(await byTestId(browser, 'main-key-elsewhere'));
  assert.ok(note.includes(`still stored for ${MOCK_HOST}`), `the note does not say where the key is: "${note}"`);
  assert.equal(await (await browser.$('[data-testid="main-key-delete"]')).isExisting(), false, 'Delete is offered for an endpoint with no key');
  await screenshot(browser, cfg, '05-settings-key-other-origin');

  // Test connection works before saving, against the endpoint on screen, and carries no key.
  const testBtn = await byTestId(browser, 'main-test');
  await waitFor(browser, 'Test connection to be enabled with unsaved changes', () => testBtn.isEnabled());
  await testBtn.click();
  const result = await byTestId(browser, 'main-test-result', { timeout: 30000 });
  assert.equal(await result.getAttribute('data-ok'), 'true', `the test of the second server failed: "${await textOf(result)}"`);
  const posts = second.seen.filter((r) => r.url === '/v1/chat/completions');
  assert.equal(posts.length, 1, 'Test connection did not ask the endpoint on screen');
  for (const r of second.seen) {
    assert.equal(r.headers.authorization, undefined, `the second server received Authorization on ${r.url}`);
    assert.equal(r.headers['x-api-key'], undefined, `the second server received x-api-key on ${r.url}`);
    assert.ok(!JSON.stringify(r.headers).includes(FIRST), `the key reached the second server on ${r.url}`);
  }

  // List models before saving lists the second server's models, in a filterable, capped list.
  await (await byTestId(browser, 'main-list-models')).click();
  await byTestId(browser, 'main-model-picker');
  const options = async () => browser.execute(() => Array.from(document.querySelectorAll('[data-testid="main-model-option"]')).map((o) => o.textContent?.trim()));
  await waitFor(browser, 'the second server\'s models to be listed', async () => (await options())[0] === second.models[0]);
  const more = await textOf(await byTestId(browser, 'main-model-more'));
  assert.match(more, /^\d+ more — type to filter$/, `the cap is not explained: "${more}"`);
  assert.equal(Number(more.split(' ')[0]) + (await options()).length, second.models.length, 'shown + "more" is not the number of models listed');
  await screenshot(browser, cfg, '05-settings-model-picker');
  const filter = await byTestId(browser, 'main-model-filter');
  await filter.setValue('model-077');
  await waitFor(browser, 'the filter to narrow the list to one model', async () => JSON.stringify(await options()) === JSON.stringify(['second/model-077']));
  // Keyboard: Down enters the list, Enter picks.
  await browser.keys(['ArrowDown']);
  await browser.keys(['Enter']);
  await waitFor(browser, 'the picked model in the Model field', async () => (await (await byTestId(browser, 'main-model')).getValue()) === 'second/model-077');
  await screenshot(browser, cfg, '05-settings-model-picked');

  // Saved, the slot is still without a key at the second server.
  await saveSettings(browser);
  await waitFor(browser, `"not set for ${second.host}" after saving`, async () => (await keyStatus(browser)).text === `not set for ${second.host}`);
  assert.equal(keychainSecret(MOCK_ACCOUNT), FIRST, 'the first server\'s key was touched by switching away');

  // Back at the first server, its key is there again (before and after saving).
  await setBaseUrl(browser, `${cfg.mockUrl}/v1`);
  await waitFor(browser, 'the key to be back for the first server', async () => (await keyStatus(browser)).text === `stored in keychain for ${MOCK_HOST}`);
  // The second server's answer and model list are not passed off as the first one's.
  assert.equal(await (await browser.$('[data-testid="main-test-result"]')).isExisting(), false, 'the second server\'s test result is still shown');
  assert.equal(await (await browser.$('[data-testid="main-model-picker"]')).isExisting(), false, 'the second server\'s models are still listed');
  await saveSettings(browser);
  assert.equal((await keyStatus(browser)).text, `stored in keychain for ${MOCK_HOST}`);
  await screenshot(browser, cfg, '05-settings-key-back');
  await (await byTestId(browser, 'main-key-delete')).click();
  await waitFor(browser, 'the key to be deleted', async () => keychainSecret(MOCK_ACCOUNT) === null);
});

/** The key index the app keeps next to settings.json: account names only. */
function keyIndex() {
  const file = path.join(cfg.configDir, 'keys.json');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

test('a key entered for an endpoint that is neither saved nor a preset is still named where it is stored', async () => {
  const { browser } = app;
  const secondAccount = `main@${new URL(second.url).origin}`;
  // Typed on screen, never saved: only the key index knows this endpoint afterwards.
  await setBaseUrl(browser, second.url);
  await waitFor(browser, `"not set for ${second.host}"`, async () => (await keyStatus(browser)).text === `not set for ${second.host}`);
  await enterKey(browser, SECOND);
  await waitFor(browser, 'the key to be stored for the second server', async () => keychainSecret(secondAccount) === SECOND);
  const index = keyIndex();
  assert.ok(index.includes(`"${secondAccount}"`), `keys.json does not list ${secondAccount}: ${index}`);
  assert.ok(!index.includes(SECOND) && !index.includes(FIRST), 'keys.json holds a key');

  // Back on the saved endpoint, which has no key: the note names the second server.
  await setBaseUrl(browser, `${cfg.mockUrl}/v1`);
  await waitFor(browser, `"not set for ${MOCK_HOST}"`, async () => (await keyStatus(browser)).text === `not set for ${MOCK_HOST}`);
  await waitFor(browser, `the note "still stored for ${second.host}"`, async () => {
    const el = await browser.$('[data-testid="main-key-elsewhere"]');
    return (await el.isExisting()) && (await textOf(el)).includes(`still stored for ${second.host}`);
  });
  await screenshot(browser, cfg, '05-settings-key-custom-endpoint-named');

  // Deleting it there removes it from the keychain and from the index.
  await setBaseUrl(browser, second.url);
  await waitFor(browser, 'the key status for the second server', async () => (await keyStatus(browser)).state === 'present');
  await (await byTestId(browser, 'main-key-delete')).click();
  await waitFor(browser, 'the second server\'s key to be deleted', async () => keychainSecret(secondAccount) === null);
  await waitFor(browser, 'keys.json to drop the account', async () => !keyIndex().includes(secondAccount));
  await setBaseUrl(browser, `${cfg.mockUrl}/v1`);
  await waitFor(browser, 'no note about other endpoints', async () => !(await browser.$('[data-testid="main-key-elsewhere"]').isExisting()));
});

test('testing a connection to a URL where nothing listens shows a clear error next to the button', async () => {
  const { browser } = app;
  const port = await deadPort();
  await setBaseUrl(browser, `http://127.0.0.1:${port}/v1`);
  await saveSettings(browser);
  const testBtn = await byTestId(browser, 'main-test');
  await waitFor(browser, 'Test connection to be enabled after saving', () => testBtn.isEnabled());
  await testBtn.click();
  const result = await byTestId(browser, 'main-test-result', { timeout: 30000 });
  assert.equal(await result.getAttribute('data-ok'), 'false', 'a dead URL was reported as working');
  const message = await textOf(result);
  // The person must learn what failed and where: the address, and that nothing answered there.
  assert.ok(message.includes(`127.0.0.1:${port}`), `the error does not name the address: "${message}"`);
  assert.match(message, /connect|refused|unreachable|reach/i, `the error does not say the connection failed: "${message}"`);
  await screenshot(browser, cfg, '05-settings-connection-error');
});

test('choosing the Ollama preset says whether Ollama runs on this machine', async () => {
  const { browser } = app;
  const preset = await byTestId(browser, 'main-preset');
  await preset.selectByAttribute('value', 'ollama');
  const status = await byTestId(browser, 'main-ollama', { extra: '[data-found]', timeout: 10000 });
  const text = await textOf(status);
  // Nothing listens on Ollama's port in the test session; a machine running Ollama would say "found".
  if ((await status.getAttribute('data-found')) === 'true') {
    assert.match(text, /^Ollama found at http:\/\/\S+ with \d+ models?$/, text);
  } else {
    assert.match(text, /^Ollama is not running at http:\/\/127\.0\.0\.1:11434\/v1$/, text);
  }
  await screenshot(browser, cfg, '05-settings-ollama');
});
