// Settings: an API key goes to the real keychain (gnome-keyring in the test's D-Bus session) and never
// back into the page; it can be replaced and deleted; a connection test to a dead URL explains itself.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, deadPort, keychainSecret, launch, pageText, screenshot, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
let app;

before(async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
});
after(async () => app?.close('05-settings-end'));

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

test('an API key is stored in the keychain, replaced and deleted, and never shown', async () => {
  const { browser } = app;
  await (await byTestId(browser, 'nav-settings')).click();
  await waitFor(browser, 'the main key status "not set"', async () => (await keyStatus(browser)).text === 'not set');
  assert.equal(keychainSecret('main'), null, 'the keychain already held a key before the test');

  await enterKey(browser, FIRST);
  await waitFor(browser, 'the status "stored in keychain"', async () => {
    const s = await keyStatus(browser);
    return s.state === 'present' && s.text === 'stored in keychain';
  });
  assert.equal(keychainSecret('main'), FIRST, 'the real keychain does not hold the key that was entered');
  assert.ok(!(await pageText(browser)).includes(FIRST), 'the key is still readable in the page after saving');
  assert.equal(await textOf(await byTestId(browser, 'main-key-save')), 'Replace');

  await enterKey(browser, SECOND);
  await waitFor(browser, 'the keychain to hold the replacement key', async () => keychainSecret('main') === SECOND);
  assert.equal((await keyStatus(browser)).text, 'stored in keychain');
  const text = await pageText(browser);
  assert.ok(!text.includes(SECOND) && !text.includes(FIRST), 'a key is readable in the page after replacing');
  await screenshot(browser, cfg, '05-settings-key-stored');

  await (await byTestId(browser, 'main-key-delete')).click();
  await waitFor(browser, 'the status "not set" after deleting', async () => (await keyStatus(browser)).text === 'not set');
  assert.equal(keychainSecret('main'), null, 'the key is still in the keychain after Delete');
  assert.equal(await (await browser.$('[data-testid="main-key-delete"]')).isExisting(), false);
});

test('testing a connection to a URL where nothing listens shows a clear error next to the button', async () => {
  const { browser } = app;
  const port = await deadPort();
  const url = await byTestId(browser, 'main-base-url');
  await url.setValue(`http://127.0.0.1:${port}/v1`);
  const save = await byTestId(browser, 'settings-save');
  await waitFor(browser, 'Save to be enabled after editing the URL', () => save.isEnabled());
  await save.click();
  await byTestId(browser, 'settings-saved', { timeout: 10000 });
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
