// What a person does in the Session and Timeline views that 07-approval and 02-subagents leave out:
// denying an Edit, allowing Edit for the whole session, watching the main agent's plan (TodoWrite)
// change, and reading the Timeline of a parallel run. Each test starts its own app: the scripted model
// picks its rule by the conversation's first prompt, and "Allow for session" must not leak into the
// next test's run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  byTestId,
  config,
  copyFixture,
  launch,
  screenshot,
  sendPrompt,
  sleep,
  textOf,
  treeSnapshot,
  waitFor,
  writeSettings,
} from './harness.mjs';

const cfg = config();
let app = null;
let closing = null;

/** Closes the previous test's app (with its end screenshot) and starts a fresh one on a fresh project. */
async function fresh(name) {
  if (app !== null) await app.close(closing);
  app = null;
  writeSettings(cfg);
  const project = copyFixture();
  app = await launch(cfg, project);
  closing = `12-${name}-end`;
  return { browser: app.browser, project };
}
after(async () => app?.close(closing));

/** Waits for an assistant message containing `needle` and returns every assistant text seen. */
async function finalAnswer(browser, needle, timeout = 30000) {
  let texts = [];
  await waitFor(
    browser,
    `an answer containing "${needle}"`,
    async () => {
      texts = await browser.execute(() =>
        Array.from(document.querySelectorAll('[data-testid="msg-assistant"]')).map((m) => m.innerText.trim()),
      );
      return texts.some((t) => t.includes(needle));
    },
    { timeout, state: () => texts },
  );
  return texts;
}

/** The main agent's row reaches "completed" (the run is over, nothing waits for the person). */
async function mainCompleted(browser) {
  await waitFor(browser, 'the main agent to complete', async () => (await treeSnapshot(browser)).find((n) => n.level === 1)?.status === 'completed', {
    timeout: 30000,
    state: () => treeSnapshot(browser),
  });
}

/** A CSS colour as the page resolves it (`var(--warn)` → `rgb(...)`), to compare with computed colours. */
async function resolvedColor(browser, css) {
  return browser.execute((c) => {
    const probe = document.createElement('span');
    probe.style.color = c;
    document.body.appendChild(probe);
    const out = getComputedStyle(probe).color;
    probe.remove();
    return out;
  }, css);
}

test('denying an Edit leaves the file untouched, marks the call denied in amber, and the model is told', async () => {
  const { browser, project } = await fresh('deny');
  const file = path.join(project, 'src', 'auth.rs');
  const original = fs.readFileSync(file, 'utf8');
  await sendPrompt(browser, 'DENY-DEMO: make passwords need 12 characters');

  await byTestId(browser, 'approval', { extra: '[data-state="pending"]', timeout: 30000 });
  const tool = await browser.$('[data-testid="tool-call"][data-tool="Edit"]');
  assert.ok(await tool.isExisting(), 'the approval is not on an Edit call');
  await screenshot(browser, cfg, '12-deny-pending');
  await (await browser.$('[data-testid="approval"][data-state="pending"] [data-testid="approve-deny"]')).click();

  await byTestId(browser, 'approval', { extra: '[data-state="deny"]', timeout: 15000 });
  await waitFor(browser, 'the Edit call to end as denied', async () => (await tool.getAttribute('data-status')) === 'denied', {
    state: () => tool.getAttribute('data-status'),
  });
  const card = await browser.execute(() => {
    const t = document.querySelector('[data-testid="tool-call"][data-tool="Edit"]');
    const st = t.querySelector('.st-text');
    const sum = t.querySelector('[data-testid="approval"] .perm-sum');
    return {
      text: t.innerText,
      status: st?.innerText.trim() ?? null,
      statusColor: st ? getComputedStyle(st).color : null,
      summaryColor: sum ? getComputedStyle(sum).color : null,
      border: getComputedStyle(t).borderTopColor,
      buttons: t.querySelectorAll('[data-testid^="approve-"]').length,
    };
  });
  const amber = await resolvedColor(browser, 'var(--warn)');
  const red = await resolvedColor(browser, 'var(--bad)');
  assert.match(card.text, /Denied/, `the card does not say it was denied: ${card.text}`);
  assert.match(card.status ?? '', /denied/i, `the call's status reads "${card.status}"`);
  assert.notEqual(amber, red, 'the theme has no separate amber and red');
  assert.equal(card.statusColor, amber, 'the "denied" status is not amber');
  assert.equal(card.summaryColor, amber, 'the "Denied —" line is not amber');
  assert.equal(card.border, amber, "the denied call's border is not amber (a refusal must not look like an error)");
  assert.equal(card.buttons, 0, 'approval buttons are still offered after the denial');

  // The rule that answers this comes into play only once the denial is in the conversation sent to the model.
  const texts = await finalAnswer(browser, 'You denied the edit');
  assert.ok(!texts.some((t) => t.includes('NOT TOLD')), `the model was not told about the denial: ${JSON.stringify(texts)}`);
  await mainCompleted(browser);
  assert.equal(fs.readFileSync(file, 'utf8'), original, 'the denied edit changed the file anyway');
  assert.equal(await (await browser.$('[data-testid="error-toast"]')).isExisting(), false, 'an error toast appeared');
  await screenshot(browser, cfg, '12-deny-done');
});

test('"Allow for session" on a first Edit lets a second Edit through without asking; both land on disk', async () => {
  const { browser, project } = await fresh('allow-session');
  const auth = path.join(project, 'src', 'auth.rs');
  const conf = path.join(project, 'src', 'config.rs');
  await sendPrompt(browser, 'SESSION-ALLOW-DEMO: require 12-character passwords everywhere');

  await byTestId(browser, 'approval', { extra: '[data-state="pending"]', timeout: 30000 });
  const firstId = await browser.execute(() => document.querySelector('[data-testid="approval"][data-state="pending"]').closest('[data-testid="tool-call"]').getAttribute('data-call-id'));
  // Nothing changes on disk until the person answers.
  assert.ok(fs.readFileSync(auth, 'utf8').includes('!password.is_empty()'));
  await screenshot(browser, cfg, '12-allow-session-pending');
  await (await browser.$('[data-testid="approval"][data-state="pending"] [data-testid="approve-session"]')).click();

  // From the answer to the end of the run, watch for any other call asking for approval.
  const askedAgain = new Set();
  let edits = [];
  await waitFor(
    browser,
    'the final answer after both edits',
    async () => {
      const seen = await browser.execute(() => ({
        pending: Array.from(document.querySelectorAll('[data-testid="approval"][data-state="pending"]')).map((a) => a.closest('[data-testid="tool-call"]').getAttribute('data-call-id')),
        edits: Array.from(document.querySelectorAll('[data-testid="tool-call"][data-tool="Edit"]')).map((t) => ({ id: t.getAttribute('data-call-id'), status: t.getAttribute('data-status') })),
        done: Array.from(document.querySelectorAll('[data-testid="msg-assistant"]')).some((m) => m.innerText.includes('Both changed')),
      }));
      for (const id of seen.pending) if (id !== firstId) askedAgain.add(id);
      edits = seen.edits;
      return seen.done;
    },
    { timeout: 30000, interval: 100, state: () => ({ edits, askedAgain: [...askedAgain] }) },
  );
  assert.deepEqual([...askedAgain], [], 'the second Edit asked for approval again');
  assert.equal(edits.length, 2, `expected two Edit calls, saw ${JSON.stringify(edits)}`);
  assert.ok(edits.every((e) => e.status === 'ok'), `not every Edit succeeded: ${JSON.stringify(edits)}`);
  const approvals = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="approval"]')).map((a) => ({
      call: a.closest('[data-testid="tool-call"]').getAttribute('data-call-id'),
      state: a.getAttribute('data-state'),
      text: a.innerText.trim(),
    })),
  );
  assert.equal(approvals.length, 1, `only the first Edit should show a decision: ${JSON.stringify(approvals)}`);
  assert.equal(approvals[0].call, firstId);
  assert.equal(approvals[0].state, 'allow');
  assert.match(approvals[0].text, /session/, `the decision does not say it holds for the session: ${approvals[0].text}`);

  const authNow = fs.readFileSync(auth, 'utf8');
  assert.ok(authNow.includes('password.len() >= 12') && !authNow.includes('!password.is_empty()'), `src/auth.rs is not changed:\n${authNow}`);
  const confNow = fs.readFileSync(conf, 'utf8');
  assert.ok(confNow.includes('password_min_len: 12,') && !confNow.includes('password_min_len: 1,'), `src/config.rs is not changed:\n${confNow}`);
  await mainCompleted(browser);
  await screenshot(browser, cfg, '12-allow-session-done');
});

test("the main agent's TodoWrite plan shows inline with each item's state and updates in place", async () => {
  const { browser } = await fresh('todo');
  await sendPrompt(browser, 'TODO-DEMO: plan the password change');

  const readPlans = () =>
    browser.execute(() =>
      Array.from(document.querySelectorAll('[data-testid="todo-plan"]')).map((p) =>
        Array.from(p.querySelectorAll('li')).map((li) => ({
          state: (Array.from(li.classList).find((c) => c.startsWith('td-')) ?? '').slice(3),
          mark: li.querySelector('.mark')?.textContent ?? '',
          text: li.innerText.slice((li.querySelector('.mark')?.innerText ?? '').length).trim(),
          struck: getComputedStyle(li).textDecorationLine.includes('line-through'),
        })),
      ),
    );
  const ITEMS = ['Read the login code', 'Require 12-character passwords', 'Report what changed'];
  let plans = [];
  const waitForStates = (states) =>
    waitFor(
      browser,
      `one plan reading ${states.join(' / ')}`,
      async () => {
        plans = await readPlans();
        return plans.length === 1 && plans[0].map((i) => i.state).join() === states.join();
      },
      { timeout: 30000, interval: 100, state: () => plans },
    );

  await waitForStates(['in_progress', 'pending', 'pending']);
  assert.deepEqual(plans[0].map((i) => i.text), ITEMS);
  assert.deepEqual(plans[0].map((i) => i.mark), ['◐', '○', '○'], 'each state has its own mark');
  assert.ok(plans[0].every((i) => !i.struck), 'an unfinished item is struck through');
  await screenshot(browser, cfg, '12-todo-first');

  await waitForStates(['completed', 'in_progress', 'pending']);
  assert.deepEqual(plans[0].map((i) => i.text), ITEMS);
  assert.deepEqual(plans[0].map((i) => i.mark), ['●', '◐', '○']);
  assert.deepEqual(plans[0].map((i) => i.struck), [true, false, false], 'only the completed item is struck through');
  await finalAnswer(browser, 'Plan updated');
  await mainCompleted(browser);
  // Still one plan, in the conversation, after the run ended.
  assert.equal((await readPlans()).length, 1, 'the update added a second plan instead of changing the first');
  assert.match(await textOf(await browser.$('[data-testid="todo-plan"]')), /^plan\b/i, 'the plan has no heading');
  await screenshot(browser, cfg, '12-todo-updated');
});

test('the Timeline shows one row per agent, overlapping subagent bars with model and tool segments, and a label opens that agent', async () => {
  const { browser } = await fresh('timeline');
  await sendPrompt(browser, 'PARALLEL-EXPLORE: explain how login and the config work');
  let tree = [];
  await waitFor(
    browser,
    'the main agent and both subagents to complete',
    async () => {
      tree = await treeSnapshot(browser);
      return tree.length === 3 && tree.every((n) => n.status === 'completed');
    },
    { timeout: 45000, state: () => tree },
  );

  await (await byTestId(browser, 'nav-timeline')).click();
  await byTestId(browser, 'timeline-row');
  const rows = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="timeline-row"]')).map((r) => {
      const box = (el) => {
        const b = el.getBoundingClientRect();
        return { left: b.left, right: b.right, width: b.width };
      };
      const life = r.querySelector('.life');
      return {
        id: r.getAttribute('data-session-id'),
        name: r.querySelector('.name')?.innerText.trim() ?? '',
        status: r.querySelector('.pill')?.innerText.trim() ?? '',
        track: box(r.querySelector('.track')),
        life: life ? box(life) : null,
        segs: Array.from(r.querySelectorAll('[data-testid="timeline-seg"]')).map((s) => ({ kind: s.getAttribute('data-kind'), ...box(s) })),
      };
    }),
  );
  const shown = JSON.stringify(rows);
  assert.equal(rows.length, 3, `one row per agent expected: ${shown}`);
  assert.deepEqual(rows.map((r) => r.id).sort(), tree.map((n) => n.id).sort(), 'the timeline rows are not the tree\'s agents');
  const mainId = tree.find((n) => n.level === 1).id;
  const main = rows.find((r) => r.id === mainId);
  assert.equal(main.name, 'Main agent');
  const login = rows.find((r) => r.name === 'Find the login code');
  const conf = rows.find((r) => r.name === 'Find the config');
  assert.ok(login && conf, `subagent rows by label: ${shown}`);
  for (const r of rows) {
    assert.equal(r.status, 'Completed', `"${r.name}" reads "${r.status}"`);
    assert.ok(r.life && r.life.width > 2, `"${r.name}" has no visible life bar: ${JSON.stringify(r.life)}`);
    // Inside the track, with a pixel of slack for rounding.
    assert.ok(r.life.left >= r.track.left - 1 && r.life.right <= r.track.right + 1, `"${r.name}" bar leaves its track: ${JSON.stringify(r)}`);
  }
  for (const r of [login, conf]) {
    assert.ok(r.segs.some((s) => s.kind === 'model'), `"${r.name}" has no model-call segment: ${JSON.stringify(r.segs)}`);
    assert.ok(r.segs.some((s) => s.kind === 'tool'), `"${r.name}" has no tool-call segment: ${JSON.stringify(r.segs)}`);
    for (const s of r.segs) {
      assert.ok(s.width > 0, `a ${s.kind} segment of "${r.name}" is not drawn: ${JSON.stringify(s)}`);
      assert.ok(s.left >= r.life.left - 1 && s.right <= r.life.right + 1, `a ${s.kind} segment of "${r.name}" lies outside its agent's life: ${JSON.stringify({ s, life: r.life })}`);
    }
  }
  // Run in parallel: the two bars share a stretch of time, by a good part of the shorter one.
  const overlap = Math.min(login.life.right, conf.life.right) - Math.max(login.life.left, conf.life.left);
  assert.ok(overlap > 0.5 * Math.min(login.life.width, conf.life.width), `the subagents' bars do not overlap: ${JSON.stringify({ login: login.life, conf: conf.life })}`);
  // Both started after, and ended before, the main agent that spawned them.
  for (const r of [login, conf]) {
    assert.ok(r.life.left >= main.life.left - 1 && r.life.right <= main.life.right + 1, `"${r.name}" is not within the main agent's time: ${shown}`);
  }
  await screenshot(browser, cfg, '12-timeline');

  await (await browser.$(`[data-testid="timeline-row"][data-session-id="${conf.id}"] button.lab`)).click();
  await waitFor(browser, 'the Session view', async () => (await (await browser.$('[data-testid="nav-session"]')).getAttribute('aria-current')) === 'page');
  const row = await byTestId(browser, 'tree-node', { extra: `[data-session-id="${conf.id}"]` });
  await waitFor(browser, `"${conf.name}" to be the selected tree row`, async () => (await row.getAttribute('aria-selected')) === 'true');
  const selected = await browser.execute(() => Array.from(document.querySelectorAll('[data-testid="tree-node"][aria-selected="true"]')).map((n) => n.getAttribute('data-session-id')));
  assert.deepEqual(selected, [conf.id], 'exactly the clicked agent is selected');
  const details = await byTestId(browser, 'node-details');
  await waitFor(browser, 'the details pane to show the clicked agent', async () => (await textOf(details)).includes('Find the config'));
  await sleep(300);
  await screenshot(browser, cfg, '12-timeline-to-session');
});
