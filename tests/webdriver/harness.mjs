//! Shared set-up for the WebDriver tests: launching the real app through tauri-driver with a fresh copy
//! of the fixture project, settings that point both model slots at the scripted loopback server,
//! watching the app process (WebKitWebDriver never notices an app that dies during start-up), explicit
//! waits with readable failure messages, and screenshots.
//!
//! The tests are meant to run inside scripts/e2e-webdriver.sh, which provides (as environment):
//!   CANOPY_APP_BINARY      absolute path of the app built with the UI embedded
//!   CANOPY_CONFIG_DIR      throw-away config directory (settings.json is written here)
//!   CANOPY_DATA_DIR        throw-away data directory (traces, recent projects)
//!   CANOPY_E2E_MOCK_URL    http://127.0.0.1:PORT of canopy-mock-llm playing tests/fixtures/projects/mock-script.json
//!   CANOPY_E2E_DRIVER_PORT tauri-driver's port (default 4444)
//!   CANOPY_E2E_SCREENSHOTS folder for screenshots (default artifacts/screenshots)

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { remote } from 'webdriverio';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
export const fixturesDir = path.join(repoRoot, 'tests', 'fixtures', 'projects');
export const PROJECT_NAME = 'shop-fixture';

/** The run's environment, checked once so a missing variable fails with its name, not a hang. */
export function config() {
  const need = ['CANOPY_APP_BINARY', 'CANOPY_CONFIG_DIR', 'CANOPY_DATA_DIR', 'CANOPY_E2E_MOCK_URL'];
  const missing = need.filter((k) => !process.env[k]);
  if (missing.length > 0) {
    throw new Error(`missing environment: ${missing.join(', ')} — run these tests through scripts/e2e-webdriver.sh`);
  }
  const binary = process.env.CANOPY_APP_BINARY;
  if (!path.isAbsolute(binary) || !fs.existsSync(binary)) {
    throw new Error(`CANOPY_APP_BINARY must be an absolute path to the built app; got ${binary}`);
  }
  return {
    binary,
    configDir: process.env.CANOPY_CONFIG_DIR,
    dataDir: process.env.CANOPY_DATA_DIR,
    mockUrl: process.env.CANOPY_E2E_MOCK_URL.replace(/\/+$/, ''),
    driverPort: Number(process.env.CANOPY_E2E_DRIVER_PORT ?? 4444),
    screenshots: process.env.CANOPY_E2E_SCREENSHOTS ?? path.join(repoRoot, 'artifacts', 'screenshots'),
  };
}

/** Copies the fixture project into a fresh temporary folder (keeping its name, which the app shows). */
export function copyFixture() {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-project-'));
  const dest = path.join(parent, PROJECT_NAME);
  fs.cpSync(path.join(fixturesDir, PROJECT_NAME), dest, { recursive: true });
  return dest;
}

/**
 * Where the app keeps `project`'s traces (canopy-config `trace_dir_in`: a readable name + FNV-1a of the
 * canonical path), so a test reads only the sessions of its own project copy.
 */
export function traceDirOf(cfg, project) {
  const canonical = fs.realpathSync(project);
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(canonical)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & ((1n << 64n) - 1n);
  }
  const name = path.basename(canonical).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return path.join(cfg.dataDir, 'traces', `${name}-${(h >> 16n).toString(16).padStart(12, '0')}`);
}

/**
 * settings.json with both slots on the scripted server (OpenAI wire format, no key needed on loopback).
 * `overrides` replaces top-level fields, e.g. `{ parallelism: 1 }` to make a second subagent wait.
 */
export function writeSettings(cfg, overrides = {}) {
  const slot = (model) => ({
    provider: 'openai',
    base_url: `${cfg.mockUrl}/v1`,
    model,
    context_window: 200000,
    input_price_per_mtok: null,
    output_price_per_mtok: null,
    max_output_tokens: 4096,
  });
  fs.mkdirSync(cfg.configDir, { recursive: true });
  const settings = { version: 1, main: slot('mock-main'), light: slot('mock-light'), parallelism: 4, ...overrides };
  fs.writeFileSync(path.join(cfg.configDir, 'settings.json'), JSON.stringify(settings, null, 2));
}

/** PIDs of running processes whose executable is `binary`. */
function pidsOf(binary) {
  const real = fs.realpathSync(binary);
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readlinkSync(`/proc/${entry}/exe`) === real) found.push(Number(entry));
    } catch {
      // Not ours to read, or already gone.
    }
  }
  return found;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A script that starts `binary` with `env` added. WebKitWebDriver passes the app no environment of its
 * own choosing, so this is how one launch gets e.g. `GTK_THEME=Adwaita:dark`. It `exec`s, so the
 * process is the app itself (found by its executable like any other launch).
 */
function envWrapper(binary, env) {
  const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
  for (const k of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`not an environment variable name: "${k}"`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canopy-wd-env-'));
  const file = path.join(dir, 'canopy-with-env');
  const lines = ['#!/bin/sh', ...Object.entries(env).map(([k, v]) => `export ${k}=${q(v)}`), `exec ${q(binary)} "$@"`];
  fs.writeFileSync(file, lines.join('\n') + '\n', { mode: 0o755 });
  return file;
}

/**
 * Starts the app on `projectPath` through tauri-driver and returns `{ browser, pid, close }`.
 * `projectPath` null starts it with no folder on the command line (the Start view).
 * `env` adds environment variables for the app process only (e.g. `{ GTK_THEME: 'Adwaita:dark' }`).
 * Fails fast (instead of hanging in session creation) when the app process exits during start-up.
 */
export async function launch(cfg, projectPath, { startupTimeoutMs = 60000, env } = {}) {
  const before = new Set(pidsOf(cfg.binary));
  if (before.size > 0) {
    // The app is single-instance: a leftover window would swallow this launch.
    throw new Error(`an app process is still running from an earlier test (pids ${[...before].join(', ')})`);
  }
  const session = remote({
    hostname: '127.0.0.1',
    port: cfg.driverPort,
    logLevel: 'warn',
    connectionRetryTimeout: startupTimeoutMs,
    capabilities: {
      'wdio:enforceWebDriverClassic': true,
      'tauri:options': {
        application: env === undefined ? cfg.binary : envWrapper(cfg.binary, env),
        args: projectPath === null ? [] : [projectPath],
      },
    },
  });
  let pid = null;
  let settled = false;
  const watch = (async () => {
    const deadline = Date.now() + startupTimeoutMs;
    while (!settled) {
      const now = pidsOf(cfg.binary).filter((p) => !before.has(p));
      if (pid === null && now.length > 0) pid = now[0];
      if (pid !== null && !alive(pid)) {
        throw new Error(`the app (pid ${pid}) exited during start-up; see tauri-driver's log for its stderr`);
      }
      if (Date.now() > deadline) throw new Error(`no WebDriver session after ${startupTimeoutMs} ms (app pid ${pid ?? 'never seen'})`);
      await sleep(200);
    }
  })();
  let browser;
  try {
    browser = await Promise.race([session, watch]);
  } finally {
    settled = true;
  }
  await watch.catch(() => undefined);
  if (pid === null) pid = pidsOf(cfg.binary).find((p) => !before.has(p)) ?? null;
  // `finalShot` names a last screenshot, taken whether the test passed or not (what the window showed
  // at the end is the first thing to look at when a test failed).
  const close = async (finalShot) => {
    if (finalShot !== undefined && alive(pid ?? -1)) await screenshot(browser, cfg, finalShot).catch(() => undefined);
    await browser.deleteSession().catch(() => undefined);
    // Ending the session should end the app; make sure, so the next launch is not swallowed.
    for (let i = 0; i < 50 && pid !== null && alive(pid); i++) await sleep(100);
    if (pid !== null && alive(pid)) {
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 30 && alive(pid); i++) await sleep(100);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  };
  if (projectPath !== null) {
    // Until the project has opened, its name is missing from the header and the tabs sit further left:
    // a click aimed at a tab before then lands on its neighbour once the name appears.
    try {
      await waitFor(browser, 'the project named in the header', () =>
        browser.execute(() => (document.querySelector('[data-testid="project-name"]')?.textContent ?? '').trim() !== ''),
      );
    } catch (e) {
      await close();
      throw e;
    }
  }
  return { browser, pid, close, appAlive: () => pid === null || alive(pid) };
}

/**
 * `browser.waitUntil` whose failure says what was awaited, the last value seen, `state()` (for a
 * picture of the screen) and any error toast the app is showing.
 */
export async function waitFor(browser, what, probe, { timeout = 20000, interval = 150, state } = {}) {
  let last;
  let lastError;
  try {
    return await browser.waitUntil(
      async () => {
        try {
          last = await probe();
          return last;
        } catch (e) {
          lastError = e;
          return false;
        }
      },
      { timeout, interval, timeoutMsg: 'timeout' },
    );
  } catch {
    let seen = lastError !== undefined ? `error: ${lastError.message}` : `last value: ${JSON.stringify(last)}`;
    if (state !== undefined) seen += `; state: ${JSON.stringify(await Promise.resolve(state()).catch((e) => e.message))}`;
    // An error the app showed the person is usually the reason.
    const toast = await browser
      .execute(() => document.querySelector('[data-testid="error-toast"]')?.innerText ?? null)
      .catch(() => null);
    if (toast) seen += `; the app shows the error: "${toast.trim()}"`;
    throw new Error(`timed out after ${timeout} ms waiting for ${what} (${seen})`);
  }
}

/** Waits for an element by data-testid (optionally more CSS), returning it. */
export async function byTestId(browser, id, { extra = '', timeout = 20000 } = {}) {
  const sel = `[data-testid="${id}"]${extra}`;
  await waitFor(browser, `element ${sel}`, async () => (await browser.$(sel)).isExisting(), { timeout });
  return browser.$(sel);
}

/** The agent tree as the person sees it: one entry per row, read in one round trip. */
export async function treeSnapshot(browser) {
  return browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="tree-node"]')).map((n) => ({
      id: n.getAttribute('data-session-id'),
      status: n.getAttribute('data-status'),
      label: n.querySelector('.label')?.textContent?.trim() ?? '',
      level: Number(n.getAttribute('aria-level')),
      statusText: n.querySelector('[data-testid="node-status"]')?.textContent?.trim() ?? '',
      budgetBars: n.querySelectorAll('[data-testid="budget-bar"]').length,
      badges: Array.from(n.querySelectorAll('[data-testid="model-badge"]')).map((b) => ({
        slot: b.getAttribute('data-slot'),
        text: b.textContent?.trim() ?? '',
      })),
      hasCancel: n.querySelector('[data-testid="cancel-node"]') !== null,
    })),
  );
}

/** Types a prompt and sends it. */
export async function sendPrompt(browser, text) {
  const input = await byTestId(browser, 'prompt-input');
  await waitFor(browser, 'the prompt box to be enabled', () => input.isEnabled());
  await input.setValue(text);
  const send = await byTestId(browser, 'send-prompt');
  await waitFor(browser, 'the Send button to be enabled', () => send.isEnabled());
  await send.click();
}

/** Saves a screenshot under the screenshots folder and returns its path. */
export async function screenshot(browser, cfg, name) {
  fs.mkdirSync(cfg.screenshots, { recursive: true });
  const file = path.join(cfg.screenshots, `${name}.png`);
  await browser.saveScreenshot(file);
  return file;
}

/** A loopback port with nothing listening on it (bound, then released). */
export async function deadPort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The secret stored in the real keychain for a slot, or null (uses libsecret's secret-tool). */
export function keychainSecret(slot) {
  try {
    return execFileSync('secret-tool', ['lookup', 'service', 'canopy', 'username', slot], { encoding: 'utf8' });
  } catch {
    return null;
  }
}

/** Everything in the page a person or a script could read: markup plus every input's value. */
export async function pageText(browser) {
  return browser.execute(
    () =>
      document.documentElement.outerHTML +
      '\n' +
      Array.from(document.querySelectorAll('input, textarea'))
        .map((i) => i.value)
        .join('\n'),
  );
}

export { sleep };

/**
 * The text a person sees in an element. WebKitWebDriver's "Get Element Text" answers "" inside the
 * Tauri webview here, so read the rendered `innerText` property instead.
 */
export async function textOf(el) {
  const t = await el.getProperty('innerText');
  return typeof t === 'string' ? t.trim() : '';
}
