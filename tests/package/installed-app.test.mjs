// The installed app, as a person meets it: /usr/bin/canopy from the .deb, started on a folder (as the
// desktop entry's `canopy %F` does), its window grouped under the launcher (WM_CLASS = StartupWMClass),
// About showing the package's version, a second `canopy FOLDER` handing its folder to the running
// window, a prompt run against a model set in the settings file, a quit, and a start from the menu
// (no folder) showing the Start screen. Run by
// scripts/test-package.sh, which installs the package first and provides, as environment:
//   CANOPY_INSTALLED_APP     the installed binary (/usr/bin/canopy)
//   CANOPY_EXPECT_VERSION    the package's version
//   CANOPY_EXPECT_WM_CLASS   the desktop entry's StartupWMClass
//   CANOPY_PROJECT_A/_B      two project folders (copies of the fixture project)
//   CANOPY_E2E_MOCK_URL      the scripted model server on loopback
//   CANOPY_E2E_DRIVER_PORT, CANOPY_E2E_SCREENSHOTS as for tests/webdriver
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { byTestId, launch, pageText, screenshot, sendPrompt, textOf, treeSnapshot, waitFor } from '../webdriver/harness.mjs';

const need = ['CANOPY_INSTALLED_APP', 'CANOPY_EXPECT_VERSION', 'CANOPY_EXPECT_WM_CLASS', 'CANOPY_PROJECT_A', 'CANOPY_PROJECT_B', 'CANOPY_E2E_MOCK_URL'];
const missing = need.filter((k) => !process.env[k]);
if (missing.length > 0) throw new Error(`missing environment: ${missing.join(', ')} — run this through scripts/test-package.sh`);

const cfg = {
  binary: process.env.CANOPY_INSTALLED_APP,
  driverPort: Number(process.env.CANOPY_E2E_DRIVER_PORT ?? 4444),
  screenshots: process.env.CANOPY_E2E_SCREENSHOTS ?? 'artifacts/screenshots/package',
};
const projectA = process.env.CANOPY_PROJECT_A;
const projectB = process.env.CANOPY_PROJECT_B;
let app;

before(async () => {
  // Started the way the desktop entry starts it: the binary on PATH with the folder as its argument.
  app = await launch(cfg, projectA);
});
after(async () => app?.close('installed-end'));

/** Waits until the session bus does (`present`) or does not list `name`. */
async function waitForBusName(name, present, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const names = execFileSync(
      'dbus-send',
      ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.ListNames'],
      { encoding: 'utf8' },
    );
    if (names.includes(`"${name}`) === present) return;
    if (Date.now() > deadline) throw new Error(`the session bus ${present ? 'never listed' : 'still lists'} ${name} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const headerName = async (browser) => textOf(await byTestId(browser, 'project-name'));

test('the installed app opens the folder it was started on', async () => {
  const { browser } = app;
  await waitFor(browser, `"${path.basename(projectA)}" in the header`, async () => (await headerName(browser)) === path.basename(projectA));
  assert.equal(await (await browser.$('[data-testid="start-view"]')).isExisting(), false, 'the start screen is still showing');
  assert.equal(await (await byTestId(browser, 'prompt-input')).isEnabled(), true, 'the prompt box is disabled');
  await screenshot(browser, cfg, 'installed-opened');
});

test('its window carries the WM_CLASS the desktop entry names, so it groups under the launcher', (t) => {
  // xwininfo prints each window as `0x… "title": ("instance" "Class")  WxH+X+Y`.
  const tree = execFileSync('xwininfo', ['-root', '-tree'], { encoding: 'utf8' });
  const windows = [...tree.matchAll(/^\s*0x[0-9a-f]+ "([^"]*)": \("([^"]*)" "([^"]*)"\)\s+(\d+)x(\d+)/gm)].map((m) => ({
    title: m[1],
    instance: m[2],
    klass: m[3],
    width: Number(m[4]),
  }));
  const main = windows.filter((w) => w.title.startsWith('Canopy') && w.width >= 800);
  assert.ok(main.length > 0, `no Canopy window among: ${JSON.stringify(windows)}`);
  const wanted = process.env.CANOPY_EXPECT_WM_CLASS;
  for (const w of main) {
    t.diagnostic(`window "${w.title}": WM_CLASS ("${w.instance}", "${w.klass}")`);
    assert.ok(w.instance === wanted || w.klass === wanted, `window "${w.title}" has WM_CLASS ("${w.instance}", "${w.klass}"); the desktop entry says StartupWMClass=${wanted}`);
  }
});

test('About shows the version of the installed package', async () => {
  const { browser } = app;
  await (await byTestId(browser, 'nav-about')).click();
  const version = await byTestId(browser, 'about-version');
  const want = `Version ${process.env.CANOPY_EXPECT_VERSION}`;
  await waitFor(browser, `About to say "${want}"`, async () => (await textOf(version)) === want, { state: () => textOf(version) });
  await screenshot(browser, cfg, 'installed-about');
  await (await byTestId(browser, 'about-close')).click();
  await waitFor(browser, 'About to close', async () => !(await (await browser.$('[data-testid="about"]')).isExisting()));
});

test('a second `canopy FOLDER` hands its folder to the running window and exits', async () => {
  const { browser } = app;
  const second = spawn(cfg.binary, [projectB], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  second.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => {
      second.kill('SIGKILL');
      resolve('still running after 20 s');
    }, 20000);
    second.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  assert.equal(code, 0, `the second launch should hand over and exit 0 (got ${code}; stderr: ${stderr})`);
  await waitFor(browser, `"${path.basename(projectB)}" in the header of the first window`, async () => (await headerName(browser)) === path.basename(projectB), {
    state: () => headerName(browser),
  });
  assert.ok(app.appAlive(), 'the first app process is gone');
  // What the second launch found: the first window's single-instance name on the session bus.
  await waitForBusName('dev.canopy.app.SingleInstance', true);
  await screenshot(browser, cfg, 'installed-second-launch');
});

test('a prompt runs against the model set in the settings file, and its trace lands in the data folder', async () => {
  const { browser } = app;
  await sendPrompt(browser, 'Say hello from the installed app.');
  await waitFor(browser, 'the run to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 1)?.status === 'completed', {
    timeout: 30000,
    state: () => treeSnapshot(browser),
  });
  await waitFor(browser, "the scripted model's answer on screen", async () => (await pageText(browser)).includes('I am the scripted test model.'));
  await screenshot(browser, cfg, 'installed-run');
  const traces = path.join(process.env.XDG_DATA_HOME, 'canopy', 'traces');
  const files = fs.existsSync(traces) ? fs.readdirSync(traces, { recursive: true }).filter((f) => String(f).endsWith('.jsonl')) : [];
  assert.ok(files.length > 0, `no trace under ${traces} (the XDG data folder)`);
});

test('started from the menu (no folder), it shows the Start screen with both folders to reopen', async () => {
  await app.close('installed-before-menu-launch');
  // The bus may still list the closed app's single-instance name for a moment after its process is
  // gone; a launch then forwards to it and fails ("NoReply"). A person is not that fast.
  await waitForBusName('dev.canopy.app.SingleInstance', false);
  app = await launch(cfg, null);
  const { browser } = app;
  await byTestId(browser, 'start-view');
  const roots = await waitFor(browser, 'both projects in the recent list', async () => {
    const paths = await browser.execute(() =>
      Array.from(document.querySelectorAll('[data-testid="recent-project"]')).map((r) => r.getAttribute('data-path')),
    );
    return paths.length >= 2 ? paths : false;
  });
  for (const p of [projectA, projectB]) assert.ok(roots.includes(fs.realpathSync(p)), `${p} is not among the recent projects: ${JSON.stringify(roots)}`);
  // A model is set (the settings file): no first-run prompt to connect one.
  assert.equal(await (await browser.$('[data-testid="needs-setup"]')).isExisting(), false, 'the header says no model is configured');
  await screenshot(browser, cfg, 'installed-start-screen');
});
