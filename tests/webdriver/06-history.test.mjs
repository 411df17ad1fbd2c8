// History: a finished session is listed after a restart and reopens into the same tree, tool counts and
// evidence; tool outputs that replay leaves out (over 256 bytes) load in full when their call is expanded,
// and a failed load says why and can be retried; a session whose trace file is gone says so when opened.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, treeSnapshot, waitFor, writeSettings, textOf } from './harness.mjs';

const cfg = config();
let app;
after(async () => app?.close('06-history-end'));

const PROMPT = 'PARALLEL-EXPLORE: history check of login and config';

function shape(rows) {
  return rows.map((n) => `${n.level}:${n.label}:${n.status}`).sort();
}

/** "label: N tools" for every tree row, as the person reads the counts. */
async function toolCounts(browser) {
  const rows = await browser.execute(() =>
    Array.from(document.querySelectorAll('[data-testid="tree-node"]')).map((n) => [
      n.querySelector('.label')?.textContent?.trim() ?? '',
      n.querySelector('[data-testid="node-tool-count"]')?.textContent?.trim() ?? '',
    ]),
  );
  return rows.map(([label, count]) => `${label}: ${count}`).sort();
}

/** What `Read` shows the model for a whole file: each line numbered, right-aligned in six columns. */
function numbered(text) {
  return text
    .split('\n')
    .slice(0, text.endsWith('\n') ? -1 : undefined)
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join('\n');
}

/** The trace file of one session under the app's data directory. */
function traceFile(cfg, sessionId) {
  const dir = path.join(cfg.dataDir, 'traces');
  for (const project of fs.readdirSync(dir)) {
    const f = path.join(dir, project, `${sessionId}.jsonl`);
    if (fs.existsSync(f)) return f;
  }
  throw new Error(`no trace file for ${sessionId} under ${dir}`);
}

/** Clicks open the tool call matched by `selector` (one whose output replay left out) and returns it. */
async function expandedOutput(browser, selector) {
  const call = await browser.$(selector);
  await call.waitForExist({ timeout: 10000 });
  assert.equal(await call.getAttribute('data-elided'), 'true', `${selector}: the replay sent this output inline`);
  await (await call.$('button.head')).click();
  return call;
}

test('an earlier session is listed and reopens into the same views', async () => {
  writeSettings(cfg);
  const project = copyFixture();
  app = await launch(cfg, project);
  let browser = app.browser;
  await sendPrompt(browser, PROMPT);
  const live = await waitFor(
    browser,
    'the run to complete',
    async () => {
      const rows = await treeSnapshot(browser);
      return rows.length === 3 && rows.every((n) => n.status === 'completed') ? rows : false;
    },
    { timeout: 45000, state: () => treeSnapshot(browser) },
  );
  const liveCounts = await toolCounts(browser);
  await app.close();
  app = null;

  app = await launch(cfg, project);
  browser = app.browser;
  await (await byTestId(browser, 'nav-history')).click();
  const row = await byTestId(browser, 'history-row');
  const rows = await browser.$$('[data-testid="history-row"]');
  assert.equal(rows.length, 1, 'exactly the one earlier session is listed');
  assert.equal(await row.getAttribute('data-status'), 'completed');
  const open = await row.$('[data-testid="history-open"]');
  assert.ok((await textOf(open)).includes('history check of login and config'), `title shown: "${await textOf(open)}"`);
  await screenshot(browser, cfg, '06-history-list');

  await open.click();
  await byTestId(browser, 'readonly-banner');
  const replayed = await waitFor(browser, 'the replayed tree', async () => {
    const r = await treeSnapshot(browser);
    return r.length === 3 ? r : false;
  });
  assert.deepEqual(shape(replayed), shape(live), 'the reopened tree differs from the live one');
  // Each explorer made one tool call: replay once showed "2 tools" (the parent's count plus its own).
  assert.ok(liveCounts.includes('Find the config: 1 tool'), `live counts: ${liveCounts}`);
  assert.deepEqual(await toolCounts(browser), liveCounts, 'the reopened tree counts tool calls differently');
  const userMsg = await byTestId(browser, 'msg-user');
  assert.equal(await textOf(userMsg), PROMPT);

  const cfgRow = replayed.find((n) => n.label === 'Find the config');
  await (await browser.$(`[data-testid="tree-node"][data-session-id="${cfgRow.id}"]`)).click();
  await byTestId(browser, 'node-details');
  const states = await waitFor(browser, 'the evidence of the reopened node', async () => {
    const s = await browser.execute(() => Array.from(document.querySelectorAll('[data-testid="node-details"] [data-testid="evidence"]')).map((e) => e.getAttribute('data-state')));
    return s.length === 2 ? s : false;
  });
  assert.deepEqual(states, ['valid', 'line_out_of_range']);
  const meta = await textOf(await browser.$('[data-testid="node-details"] .meta'));
  assert.match(meta, /\b1 tool call\b/, 'the details count the one Read');
  await screenshot(browser, cfg, '06-history-reopened');

  // The explorer read src/config.rs (over 256 bytes): replay leaves the output out, expanding loads it.
  const file = fs.readFileSync(path.join(project, 'src', 'config.rs'), 'utf8');
  assert.ok(Buffer.byteLength(numbered(file)) > 256, 'the fixture file is too short for the output to be left out');
  const read = await expandedOutput(browser, '[data-testid="node-details"] [data-testid="tool-call"][data-tool="Read"]');
  const shown = await waitFor(browser, 'the full Read output in the details', async () => {
    const out = await read.$('[data-testid="tool-output"]');
    if (!(await out.isExisting())) return false;
    const t = await out.getProperty('textContent');
    return typeof t === 'string' && t.length > 0 ? t : false;
  }, { state: () => textOf(read) });
  assert.ok(shown.includes(numbered(file)), `the Read output is not the whole file:\n${shown}`);
  assert.ok(shown.includes('audit_log_path: String::from("logs/audit.log"),'), 'the last field is missing');
  await screenshot(browser, cfg, '06-history-lazy-output');

  // With the main session's trace gone, a Task result cannot load: the row says so and offers Retry,
  // which works once the file is back.
  const rootTrace = traceFile(cfg, replayed.find((n) => n.level === 1).id);
  fs.renameSync(rootTrace, `${rootTrace}.away`);
  let task;
  try {
    task = await expandedOutput(browser, '[data-testid="conversation"] [data-testid="tool-call"][data-tool="Task"]');
    const err = await waitFor(browser, 'the load error under the Task call', async () => {
      const e = await task.$('[data-testid="tool-output-error"]');
      return (await e.isExisting()) ? textOf(e) : false;
    }, { state: () => textOf(task) });
    assert.match(err, /Could not load the result/);
    // Said in words a person can act on, not as the backend's "unknown session `s-…`".
    assert.match(err, /trace file of this session is gone/);
    assert.doesNotMatch(err, /unknown session/);
    await screenshot(browser, cfg, '06-history-lazy-error');
  } finally {
    fs.renameSync(`${rootTrace}.away`, rootTrace);
  }
  await (await task.$('[data-testid="tool-output-retry"]')).click();
  const result = await waitFor(browser, 'the Task result after Retry', async () => {
    const out = await task.$('[data-testid="tool-output"]');
    return (await out.isExisting()) ? out.getProperty('textContent') : false;
  }, { state: () => textOf(task) });
  const callId = await task.getAttribute('data-call-id');
  const recorded = fs
    .readFileSync(rootTrace, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l).event)
    .find((e) => e.type === 'tool_call_end' && e.call_id === callId);
  assert.ok(recorded, `no tool_call_end for ${callId} in ${rootTrace}`);
  assert.equal(result, recorded.output, 'the Task result differs from the recorded output');
  assert.equal(await task.$('[data-testid="tool-output-error"]').then((e) => e.isExisting()), false);

  // A session whose trace file went away while History was open: opening it says so in words and the
  // list drops the row, instead of showing the backend's "unknown session `s-…`".
  await (await byTestId(browser, 'nav-history')).click();
  const stale = await byTestId(browser, 'history-open');
  fs.renameSync(rootTrace, `${rootTrace}.away`);
  try {
    await stale.click();
    const toast = await byTestId(browser, 'error-toast');
    const said = await textOf(toast);
    assert.match(said, /no longer in History: its trace file was deleted or moved/);
    assert.doesNotMatch(said, /unknown session|s-[0-9a-f]{8}/);
    await waitFor(browser, 'the gone session to leave the list', async () =>
      (await browser.$$('[data-testid="history-row"]')).length === 0,
    );
    await screenshot(browser, cfg, '06-history-gone');
  } finally {
    fs.renameSync(`${rootTrace}.away`, rootTrace);
  }
});
