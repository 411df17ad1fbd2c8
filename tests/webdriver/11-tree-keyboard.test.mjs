// The agent tree with the keyboard, as a keyboard or screen-reader user meets it: after a click the tree
// (not the row) has focus, arrows move a visible active row named by aria-activedescendant, Enter opens
// the details, Left/Right collapse and expand, and a selection made elsewhere moves the keyboard position.
// Then the same app in the dark theme (GTK_THEME=Adwaita:dark, which WebKitGTK turns into
// prefers-color-scheme: dark): text contrast measured on screen in both themes, and a queued subagent
// cancelled from its row.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app;
after(async () => app?.close('11-tree-keyboard-dark-end'));

const LOGIN = 'Find the login code';
const CONFIG = 'Find the config';

/** What the tree tells assistive tech and the eye, read in one round trip. */
async function treeState(browser) {
  return browser.execute(() => {
    const tree = document.querySelector('[data-testid="agent-tree"]');
    const rows = Array.from(document.querySelectorAll('[data-testid="tree-node"]'));
    const activeId = tree?.getAttribute('aria-activedescendant') ?? null;
    const activeRow = activeId === null ? null : document.getElementById(activeId);
    return {
      role: tree?.getAttribute('role') ?? null,
      focused: document.activeElement === tree,
      focusedTag: document.activeElement?.tagName ?? null,
      activeId,
      activeSession: activeRow?.getAttribute('data-session-id') ?? null,
      activeLabel: activeRow?.querySelector('.label')?.textContent?.trim() ?? null,
      activeOutline: activeRow === null ? null : getComputedStyle(activeRow).outlineStyle,
      selected: rows.filter((r) => r.getAttribute('aria-selected') === 'true').map((r) => r.querySelector('.label')?.textContent?.trim()),
      rows: rows.map((r) => ({
        id: r.getAttribute('data-session-id'),
        domId: r.id,
        role: r.getAttribute('role'),
        label: r.querySelector('.label')?.textContent?.trim() ?? '',
        level: r.getAttribute('aria-level'),
        setsize: r.getAttribute('aria-setsize'),
        posinset: r.getAttribute('aria-posinset'),
        expanded: r.getAttribute('aria-expanded'),
        selected: r.getAttribute('aria-selected'),
        tabindex: r.getAttribute('tabindex'),
      })),
    };
  });
}

async function press(browser, key) {
  await browser.keys([key]);
}

/** Waits until the active row is `label` (and the tree still has the keyboard). */
async function activeIs(browser, label, why) {
  return waitFor(
    browser,
    `${why}: the active row to be "${label}" with the tree focused`,
    async () => {
      const s = await treeState(browser);
      return s.activeLabel === label && s.focused ? s : false;
    },
    { timeout: 5000, interval: 50, state: () => treeState(browser) },
  );
}

function rgb(css) {
  const m = /rgba?\(([^)]+)\)/.exec(css);
  if (m === null) throw new Error(`unreadable colour "${css}"`);
  const [r, g, b, a = 1] = m[1].split(/[,\s/]+/).filter(Boolean).map(Number);
  return { r, g, b, a };
}
function lum({ r, g, b }) {
  const f = (v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
}
function ratio(a, b) {
  const [x, y] = [lum(a), lum(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}
function over(top, under) {
  const a = top.a;
  return { r: top.r * a + under.r * (1 - a), g: top.g * a + under.g * (1 - a), b: top.b * a + under.b * (1 - a), a: 1 };
}

/**
 * Text colour against the background actually behind it (ancestors' backgrounds composited) for the
 * small text of the tree and header, and the primary button's label on its fill. Returns the pairs
 * under 4.5:1, so a failure names them.
 */
async function lowContrast(browser) {
  const seen = await browser.execute(() => {
    const sels = [
      '[data-testid="agent-counts"]',
      '[data-testid="tree-node"] .label',
      '[data-testid="tree-node"] .l2 > span',
      '[data-testid="node-status"]',
      '[data-testid="model-badge"]',
      '[data-testid="budget-bar"] .lbl span',
      '[data-testid="run-total-tokens"]',
    ];
    const out = [];
    for (const sel of sels) {
      for (const el of Array.from(document.querySelectorAll(sel)).slice(0, 12)) {
        if (el.textContent.trim() === '' || el.getClientRects().length === 0) continue;
        const bgs = [];
        for (let n = el; n !== null; n = n.parentElement) bgs.push(getComputedStyle(n).backgroundColor);
        out.push({ sel, text: el.textContent.trim().slice(0, 30), fg: getComputedStyle(el).color, bgs });
      }
    }
    const primary = document.querySelector('button.primary');
    if (primary !== null) {
      const cs = getComputedStyle(primary);
      out.push({ sel: 'button.primary', text: primary.textContent.trim(), fg: cs.color, bgs: [cs.backgroundColor] });
    }
    return out;
  });
  assert.ok(seen.length >= 8, `too few text elements measured: ${JSON.stringify(seen)}`);
  assert.ok(seen.some((s) => s.sel === 'button.primary'), 'no primary button on screen to measure');
  assert.ok(seen.some((s) => s.sel.includes('budget-bar')), 'no budget bar label on screen to measure');
  const bad = [];
  for (const s of seen) {
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const c of [...s.bgs].reverse()) {
      const layer = rgb(c);
      if (layer.a > 0) bg = over(layer, bg);
    }
    const fg = over(rgb(s.fg), bg);
    const r = ratio(fg, bg);
    if (r < 4.5) bad.push(`${s.sel} "${s.text}" ${s.fg} on ${JSON.stringify(bg)}: ${r.toFixed(2)}:1`);
  }
  return bad;
}

test('after a click the tree has the keyboard: arrows, Home/End, Left/Right and Enter, with ARIA', async () => {
  writeSettings(cfg);
  app = await launch(cfg, copyFixture());
  try {
    await keyboardChecks(app.browser);
  } finally {
    // The next test starts its own app (dark theme); the app is single-instance.
    await app.close('11-tree-keyboard-light-end');
    app = undefined;
  }
});

async function keyboardChecks(browser) {
  await sendPrompt(browser, 'PARALLEL-EXPLORE: explain how login and the config work');
  await waitFor(
    browser,
    'the run to complete with two subagents',
    async () => {
      const rows = await treeSnapshot(browser);
      return rows.length === 3 && rows.every((n) => n.status === 'completed');
    },
    { timeout: 45000, interval: 150, state: () => treeSnapshot(browser) },
  );
  assert.equal(await textOf(await byTestId(browser, 'agent-counts')), '3 agents', 'header counts of a finished run');
  // The two Task cards of the conversation sit 4px apart (2px margin each; rows of the virtual list
  // do not collapse margins).
  const gaps = await browser.execute(() => {
    const r = Array.from(document.querySelectorAll('[data-testid="conversation"] [data-testid="tool-call"]'))
      .map((e) => e.getBoundingClientRect())
      .filter((b) => b.height > 0)
      .sort((x, y) => x.top - y.top);
    const seen = new Set();
    const uniq = r.filter((b) => (seen.has(b.top) ? false : (seen.add(b.top), true)));
    return uniq.slice(1).map((b, i) => Math.round(b.top - uniq[i].bottom));
  });
  assert.deepEqual(gaps, [4], `gaps between the Task cards: ${JSON.stringify(gaps)}`);

  const before = await treeState(browser);
  assert.equal(before.role, 'tree');
  const [main, first, second] = before.rows;
  assert.equal(main.label, 'Main agent');
  assert.deepEqual(
    before.rows.map((r) => [r.role, r.level, r.setsize, r.posinset, r.expanded, r.tabindex]),
    [
      ['treeitem', '1', '1', '1', 'true', null],
      ['treeitem', '2', '2', '1', null, null],
      ['treeitem', '2', '2', '2', null, null],
    ],
    `rows: ${JSON.stringify(before.rows)}`,
  );
  assert.deepEqual([first.label, second.label].sort(), [CONFIG, LOGIN].sort());

  // A click on the first subagent's row: it is selected (details open) and the tree, not the row, has focus.
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${first.id}"] .label`)).click();
  let s = await activeIs(browser, first.label, 'after a click');
  assert.equal(s.activeId, first.domId);
  assert.deepEqual(s.selected, [first.label]);
  assert.equal(s.activeOutline, 'solid', 'the active row is not drawn while the tree has focus');
  const details = await byTestId(browser, 'node-details');
  await waitFor(browser, `the details to show "${first.label}"`, async () => (await textOf(details)).includes(first.label));
  await screenshot(browser, cfg, '11-tree-clicked-light');

  await press(browser, 'ArrowDown');
  s = await activeIs(browser, second.label, 'Down');
  assert.deepEqual(s.selected, [first.label], 'moving with the arrows does not change the selection');
  assert.equal(s.activeOutline, 'solid');
  await screenshot(browser, cfg, '11-tree-arrow-down-light');
  await press(browser, 'ArrowDown');
  await activeIs(browser, second.label, 'Down on the last row stays');
  await press(browser, 'ArrowUp');
  await activeIs(browser, first.label, 'Up');
  await press(browser, 'Home');
  await activeIs(browser, 'Main agent', 'Home');
  await press(browser, 'End');
  await activeIs(browser, second.label, 'End');

  // Enter opens the active row's details.
  await press(browser, 'Enter');
  s = await waitFor(browser, 'Enter to select the active row', async () => {
    const t = await treeState(browser);
    return t.selected.length === 1 && t.selected[0] === second.label ? t : false;
  });
  assert.equal(s.rows.find((r) => r.label === second.label).selected, 'true');
  await waitFor(browser, `the details to show "${second.label}"`, async () => (await textOf(details)).includes(second.label));

  // Left from a leaf goes to the parent; Left on the open parent collapses it; Right opens it again,
  // then steps into the first child.
  await press(browser, 'ArrowLeft');
  await activeIs(browser, 'Main agent', 'Left on a subagent');
  await press(browser, 'ArrowLeft');
  s = await waitFor(browser, 'Left to collapse the main agent', async () => {
    const t = await treeState(browser);
    return t.rows.length === 1 && t.rows[0].expanded === 'false' ? t : false;
  });
  assert.equal(s.activeLabel, 'Main agent');
  await press(browser, 'ArrowRight');
  await waitFor(browser, 'Right to expand the main agent', async () => {
    const t = await treeState(browser);
    return t.rows.length === 3 && t.rows[0].expanded === 'true';
  });
  await press(browser, 'ArrowRight');
  await activeIs(browser, first.label, 'Right on an open parent');

  // A selection made elsewhere (the details pane's "Spawned by" link) moves the keyboard position.
  await press(browser, 'End');
  await press(browser, 'Enter');
  await waitFor(browser, `the details to show "${second.label}"`, async () => (await textOf(details)).includes(second.label));
  await (await details.$('button.link')).click();
  await waitFor(browser, 'the details to show the main agent', async () => (await treeState(browser)).selected[0] === 'Main agent');
  await browser.execute(() => document.querySelector('[data-testid="agent-tree"]').focus());
  s = await activeIs(browser, 'Main agent', 'after selecting the parent from the details');
  await press(browser, 'ArrowDown');
  await activeIs(browser, first.label, 'Down continues from the node selected elsewhere');

  assert.deepEqual(await lowContrast(browser), [], 'light theme text under 4.5:1');
  assert.equal(await browser.execute(() => matchMedia('(prefers-color-scheme: dark)').matches), false);
  await screenshot(browser, cfg, '11-tree-keyboard-light');
}

test('dark theme: readable text and navy-on-blue primary buttons; a queued subagent can be cancelled', async () => {
  // One slot for subagents, so the second one waits in the queue.
  writeSettings(cfg, { parallelism: 1 });
  app = await launch(cfg, copyFixture(), { env: { GTK_THEME: 'Adwaita:dark' } });
  const { browser } = app;
  const dark = await browser.execute(() => ({
    media: matchMedia('(prefers-color-scheme: dark)').matches,
    bg: getComputedStyle(document.body).backgroundColor,
  }));
  assert.deepEqual(dark, { media: true, bg: 'rgb(22, 24, 28)' }, 'GTK_THEME=Adwaita:dark did not give the page the dark theme');

  await sendPrompt(browser, 'CANCEL-DEMO: search slowly and quickly');
  const rows = await waitFor(
    browser,
    'one subagent running and one queued',
    async () => {
      const kids = (await treeSnapshot(browser)).filter((n) => n.level === 2);
      const st = kids.map((n) => n.status).sort();
      return kids.length === 2 && st[0] === 'queued' && st[1] === 'running' ? kids : false;
    },
    { timeout: 30000, interval: 100, state: () => treeSnapshot(browser) },
  );
  const queued = rows.find((n) => n.status === 'queued');
  const running = rows.find((n) => n.status === 'running');
  assert.ok(queued.hasCancel, `a queued subagent has no cancel button: ${JSON.stringify(queued)}`);
  assert.ok(running.hasCancel);
  assert.equal(await textOf(await byTestId(browser, 'agent-counts')), '3 agents · 2 running · 1 queued');
  const fit = await browser.execute(() => {
    const el = document.querySelector('[data-testid="agent-counts"]');
    const total = document.querySelector('[data-testid="run-total-tokens"]');
    return { lines: el.getClientRects().length, cut: el.scrollWidth > el.clientWidth, totalHeight: total.getBoundingClientRect().height, lineHeight: parseFloat(getComputedStyle(total).lineHeight) };
  });
  assert.deepEqual([fit.lines, fit.cut], [1, false], `the header counts wrap or are cut: ${JSON.stringify(fit)}`);
  assert.ok(fit.totalHeight <= fit.lineHeight + 1, `the run total wraps: ${JSON.stringify(fit)}`);
  await screenshot(browser, cfg, '11-tree-queued-dark');

  await (await browser.$(`[data-testid="tree-node"][data-session-id="${queued.id}"] [data-testid="cancel-node"]`)).click();
  const afterCancel = await waitFor(
    browser,
    `"${queued.label}" to be cancelled while still queued`,
    async () => {
      const t = await treeSnapshot(browser);
      return t.find((n) => n.id === queued.id)?.status === 'cancelled' ? t : false;
    },
    { timeout: 10000, interval: 100, state: () => treeSnapshot(browser) },
  );
  assert.equal(afterCancel.find((n) => n.id === running.id)?.status, 'running', 'cancelling the queued one stopped its sibling');
  const focus = await treeState(browser);
  assert.ok(focus.focused, `the keyboard left the tree after the cancel click (focus on ${focus.focusedTag})`);
  await waitFor(browser, 'the header to stop counting the cancelled agent', async () =>
    (await textOf(await byTestId(browser, 'agent-counts'))) === '3 agents · 2 running',
  );

  await screenshot(browser, cfg, '11-tree-queued-cancelled-dark');

  await (await browser.$(`[data-testid="tree-node"][data-session-id="${running.id}"] [data-testid="cancel-node"]`)).click();
  await waitFor(
    browser,
    'the main agent to finish once both subagents are cancelled',
    async () => (await treeSnapshot(browser)).find((n) => n.level === 1)?.status === 'completed',
    { timeout: 30000, interval: 150, state: () => treeSnapshot(browser) },
  );
  // A prompt typed so Send (the primary button, shown once the run is over) is enabled.
  await (await byTestId(browser, 'prompt-input')).setValue('a follow-up');
  await byTestId(browser, 'send-prompt');
  assert.deepEqual(await lowContrast(browser), [], 'dark theme text under 4.5:1');
  await screenshot(browser, cfg, '11-tree-keyboard-dark');
});
