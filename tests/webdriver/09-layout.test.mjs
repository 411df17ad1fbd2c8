// After a run with subagents: the session with the details pane open fits the window at 1280×800 and at
// 900×700 (nothing pushed off screen); the file viewer opened from evidence takes keyboard focus, keeps
// Tab inside, closes on Escape and gives focus back to the link; History's Delete asks before deleting;
// Settings' budget table (main, explore, verify) fits at 1280×800 with a field error shown.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, sleep, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;

before(async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
});
after(async () => app?.close('09-layout-end'));

const CONFIG = 'Find the config';

/** Where the session's panes are, and whether anything reaches past the window's right edge. */
async function layout(browser) {
  return browser.execute(() => {
    const r = (el) => {
      const b = el.getBoundingClientRect();
      return { left: Math.round(b.left), right: Math.round(b.right), width: Math.round(b.width) };
    };
    const session = document.querySelector('.session');
    return {
      innerWidth: window.innerWidth,
      pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      sessionOverflow: session === null ? null : session.scrollWidth - session.clientWidth,
      panes: Array.from(document.querySelectorAll('.session > .pane')).map((p) => ({ cls: p.className, ...r(p) })),
      details: (() => {
        const d = document.querySelector('[data-testid="node-details"]');
        return d === null ? null : r(d);
      })(),
      // Whatever overlays the tree must leave the conversation usable: the Send button is what is hit there.
      sendReachable: (() => {
        const b = document.querySelector('[data-testid="send-prompt"]');
        if (b === null) return false;
        const r = b.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return hit !== null && b.contains(hit);
      })(),
      prompt: (() => {
        const p = document.querySelector('[data-testid="prompt-input"]');
        return p === null ? null : r(p);
      })(),
    };
  });
}

async function resize(browser, width, height) {
  await browser.setWindowSize(width, height);
  await waitFor(browser, `the window to be ${width} px wide`, async () => {
    const w = await browser.execute(() => window.innerWidth);
    return w <= width && w >= width - 40;
  });
  await sleep(300);
}

function assertFits(l, label) {
  assert.ok(l.details !== null, `${label}: the details pane is not shown`);
  assert.ok(l.pageOverflow <= 0, `${label}: the page scrolls sideways by ${l.pageOverflow} px: ${JSON.stringify(l)}`);
  assert.ok(l.sessionOverflow !== null && l.sessionOverflow <= 0, `${label}: the session is ${l.sessionOverflow} px wider than the window: ${JSON.stringify(l)}`);
  for (const p of l.panes) {
    assert.ok(p.right <= l.innerWidth + 1, `${label}: pane "${p.cls}" ends at ${p.right} px, past the window (${l.innerWidth}): ${JSON.stringify(l)}`);
    assert.ok(p.width >= 280, `${label}: pane "${p.cls}" is squeezed to ${p.width} px`);
  }
  assert.ok(l.details.width >= 300, `${label}: the details pane is only ${l.details.width} px wide`);
  assert.ok(l.sendReachable, `${label}: the Send button is covered or off screen: ${JSON.stringify(l)}`);
  assert.ok(l.prompt !== null && l.prompt.width >= 250, `${label}: the prompt box is squeezed: ${JSON.stringify(l.prompt)}`);
}

test('with the details pane open the session fits at 1280×800 and at 900×700', async () => {
  const { browser } = app;
  await resize(browser, 1280, 800);
  await sendPrompt(browser, 'PARALLEL-EXPLORE: explain how login and the config work');
  await waitFor(browser, 'the run to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 1)?.status === 'completed', {
    timeout: 60000,
    state: () => treeSnapshot(browser),
  });
  const row = (await treeSnapshot(browser)).find((n) => n.label === CONFIG);
  assert.ok(row, `no "${CONFIG}" row in the tree`);
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${row.id}"]`)).click();
  const details = await byTestId(browser, 'node-details');
  await waitFor(browser, 'the details of "Find the config"', async () => (await textOf(details)).includes(CONFIG));

  const wide = await layout(browser);
  assertFits(wide, '1280×800');
  assert.equal(wide.panes.length, 3);
  await screenshot(browser, cfg, '09-layout-1280x800');

  await resize(browser, 900, 700);
  const narrow = await layout(browser);
  assertFits(narrow, '900×700');
  await screenshot(browser, cfg, '09-layout-900x700');
  // The details pane stays closable where it overlays the tree.
  const close = await details.$('[aria-label="Close details"]');
  assert.ok(await close.isDisplayed({ withinViewport: true }), 'the details pane cannot be closed at 900 px');
  await resize(browser, 1280, 800);
});

test('the file viewer takes focus, keeps Tab inside, closes on Escape and gives focus back to the link', async () => {
  const { browser } = app;
  const link = await byTestId(browser, 'evidence-link');
  // The keyboard path: focus the link and press Enter.
  await browser.execute((el) => el.focus(), link);
  await browser.keys(['Enter']);
  await byTestId(browser, 'file-viewer');
  await waitFor(browser, 'focus to move into the file viewer', () =>
    browser.execute(() => document.querySelector('[data-testid="file-viewer"]')?.contains(document.activeElement) === true),
  );
  for (let i = 0; i < 6; i++) {
    await browser.keys(['Tab']);
    const inside = await browser.execute(() => document.querySelector('[data-testid="file-viewer"]')?.contains(document.activeElement) === true);
    assert.ok(inside, `Tab #${i + 1} left the dialog for ${await browser.execute(() => document.activeElement?.outerHTML.slice(0, 80))}`);
  }
  await screenshot(browser, cfg, '09-file-viewer-focused');
  await browser.keys(['Escape']);
  await waitFor(browser, 'the file viewer to close on Escape', async () => !(await (await browser.$('[data-testid="file-viewer"]')).isExisting()));
  const back = await browser.execute(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);
  assert.equal(back, 'evidence-link', 'focus did not return to the evidence link');
});

test('History asks before deleting a session, and the question lapses', async () => {
  const { browser } = app;
  await (await byTestId(browser, 'nav-history')).click();
  const rows = async () => (await browser.$$('[data-testid="history-row"]')).length;
  await waitFor(browser, 'the finished session in History', async () => (await rows()) >= 1);
  const before = await rows();
  const del = await byTestId(browser, 'history-delete');

  await del.click();
  await waitFor(browser, 'Delete to ask for confirmation', async () => (await del.getAttribute('data-armed')) === 'true');
  assert.match(await textOf(del), /delete for good\?/i);
  assert.equal(await rows(), before, 'one click deleted the session');
  await screenshot(browser, cfg, '09-history-confirm');

  await waitFor(browser, 'the question to lapse', async () => (await del.getAttribute('data-armed')) === 'false', { timeout: 8000 });
  assert.equal(await textOf(del), 'Delete');
  await del.click();
  assert.equal(await rows(), before, 'a click after the question lapsed deleted the session');

  await waitFor(browser, 'Delete to ask again', async () => (await del.getAttribute('data-armed')) === 'true');
  await del.click();
  await waitFor(browser, 'the session to be deleted after confirming', async () => (await rows()) === before - 1);
});

test('Settings at 1280×800 with a field error shown: all three budget columns fit, none is cut off', async () => {
  const { browser } = app;
  await resize(browser, 1280, 800);
  await (await byTestId(browser, 'nav-settings')).click();
  const steps = await byTestId(browser, 'budget-verify-max_steps');
  await steps.setValue('-3');
  await byTestId(browser, 'field-error', { extra: '[data-field="profiles.verify.max_steps"]' });
  await sleep(300);
  const m = await browser.execute(() => {
    const wrap = document.querySelector('[data-testid="budget-table"]');
    const w = wrap.getBoundingClientRect();
    const ctx = document.createElement('canvas').getContext('2d');
    const cells = Array.from(wrap.querySelectorAll('input, select')).map((el) => {
      const r = el.getBoundingClientRect();
      const cs = getComputedStyle(el);
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      // A select shows its chosen option's text beside the arrow; an input its placeholder or value.
      const shown = el.tagName === 'SELECT' ? el.options[el.selectedIndex].text : el.value || el.placeholder;
      return { id: el.getAttribute('data-testid'), left: Math.round(r.left), right: Math.round(r.right), width: Math.round(el.clientWidth), text: shown, textWidth: Math.ceil(ctx.measureText(shown).width) };
    });
    return {
      innerWidth: window.innerWidth,
      pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      wrap: { left: Math.round(w.left), right: Math.round(w.right), overflow: wrap.scrollWidth - wrap.clientWidth },
      cells,
      errorText: document.querySelector('[data-field="profiles.verify.max_steps"]')?.innerText ?? null,
      typed: document.querySelector('[data-testid="budget-verify-max_steps"]').value,
    };
  });
  await screenshot(browser, cfg, '09-layout-settings-1280x800-error');
  assert.equal(m.typed, '-3');
  assert.match(m.errorText ?? '', /positive whole number/, 'the field error is not shown while measuring');
  assert.ok(m.pageOverflow <= 0, `the page scrolls sideways by ${m.pageOverflow} px`);
  assert.ok(m.wrap.right <= m.innerWidth, `the budget table's card ends past the window: ${JSON.stringify(m.wrap)}`);
  assert.equal(m.wrap.overflow <= 0, true, `at 1280 px the budget table needs a sideways scroll of ${m.wrap.overflow} px`);
  assert.equal(m.cells.length, 3 * 5, `expected 5 fields for each of main, explore, verify: ${m.cells.map((c) => c.id)}`);
  for (const c of m.cells) {
    assert.ok(c.left >= m.wrap.left && c.right <= m.wrap.right, `${c.id} is cut off by its card: ${JSON.stringify(c)} in ${JSON.stringify(m.wrap)}`);
    // Room for the text beside a select's arrow and padding (about 40 px in WebKitGTK) or an input's padding.
    const room = c.id.endsWith('-model') ? c.width - 40 : c.width - 12;
    assert.ok(c.textWidth <= room, `${c.id} is too narrow to show "${c.text}" (${c.textWidth} px in ${room})`);
  }
  // Leave the form as it was for whatever runs next in this window.
  await steps.clearValue();
  await browser.execute(() => {
    const el = document.querySelector('[data-testid="budget-verify-max_steps"]');
    el.value = '';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
});
