// The Session view as someone used to Claude Code or Zed reads it: the answer is Markdown (headings,
// lists, highlighted code, and the model's raw HTML stays text), a `path:line` in it opens the file; an
// Edit that policy allowed still shows its diff when expanded; a Task card says how its subagent ended,
// and the subagent's raw result JSON is folded away under the laid-out result; Enter sends and
// Shift+Enter adds a line; a waiting approval shows on the Session tab and, when scrolled away, in a bar
// that brings it back. Each scenario runs in the light and in the dark theme (GTK_THEME=Adwaita:dark).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, textOf, treeSnapshot, waitFor, writeSettings } from './harness.mjs';

const cfg = config();
let app = null;
let closing = null;

const THEMES = [
  { name: 'light', env: undefined },
  { name: 'dark', env: { GTK_THEME: 'Adwaita:dark' } },
];

/** Closes the previous test's app (with its end screenshot) and starts a fresh one on a fresh project. */
async function fresh(name, theme, settings = {}) {
  if (app !== null) await app.close(closing);
  app = null;
  writeSettings(cfg, settings);
  const project = copyFixture();
  app = await launch(cfg, project, theme.env === undefined ? {} : { env: theme.env });
  closing = `13-${name}-${theme.name}-end`;
  const dark = await app.browser.execute(() => matchMedia('(prefers-color-scheme: dark)').matches);
  assert.equal(dark, theme.name === 'dark', `the page is not in the ${theme.name} theme`);
  return { browser: app.browser, project };
}
after(async () => app?.close(closing));

async function mainStatus(browser) {
  return (await treeSnapshot(browser)).find((n) => n.level === 1)?.status;
}

const POLICY_EDIT_ALLOWED = { permissions: { edit: 'allow', write: 'ask', bash: 'ask', task: 'allow' } };

for (const theme of THEMES) {
  test(`[${theme.name}] a Markdown answer with code and path:line links, an auto-allowed Edit's diff, a Task card's outcome`, async () => {
    const { browser, project } = await fresh('markdown', theme, POLICY_EDIT_ALLOWED);

    // Shift+Enter adds a line, Enter sends.
    const input = await byTestId(browser, 'prompt-input');
    await waitFor(browser, 'the prompt box to be enabled', () => input.isEnabled());
    assert.match(await input.getAttribute('placeholder'), /Enter to send, Shift\+Enter for a new line/);
    await input.click();
    await input.setValue('MD-DEMO: require 12-character passwords');
    await browser.keys(['Shift', 'Enter']);
    await input.addValue('and say what changed');
    assert.equal(await input.getValue(), 'MD-DEMO: require 12-character passwords\nand say what changed', 'Shift+Enter did not add a line');
    await browser.keys(['Enter']);
    const user = await byTestId(browser, 'msg-user');
    assert.equal(await textOf(user), 'MD-DEMO: require 12-character passwords\nand say what changed');
    await waitFor(browser, 'the box to clear after the send', async () => (await input.getValue()) === '');

    await waitFor(browser, 'the main agent to complete', async () => (await mainStatus(browser)) === 'completed', {
      timeout: 40000,
      state: () => treeSnapshot(browser),
    });

    // The answer's references are lines the agent read and lines it wrote itself: its own Edit
    // does not make them "changed since the agent read it".
    const refs = await waitFor(browser, "the answer's checked references", async () => {
      const m = await browser.execute(() =>
        Array.from(document.querySelectorAll('[data-testid="msg-assistant"] [data-testid="md-path"]')).map((b) => ({ ref: b.innerText, trust: b.getAttribute('data-trust'), marked: b.classList.contains('md-ref') })),
      );
      return m.length === 2 && m.every((x) => x.trust !== null) ? m : false;
    });
    assert.deepEqual(refs, [
      { ref: 'src/auth.rs:8', trust: 'grounded', marked: false },
      { ref: 'src/auth.rs:3-5', trust: 'grounded', marked: false },
    ]);
    assert.match(await textOf(await byTestId(browser, 'answer-trust')), /References: 2 of 2 citations seen and valid/);

    // The answer, as Markdown.
    const md = await browser.execute(() => {
      const msgs = Array.from(document.querySelectorAll('[data-testid="msg-assistant"]'));
      const m = msgs.find((x) => x.innerText.includes('What changed'));
      if (m === undefined) return null;
      return {
        h2: m.querySelector('h2')?.innerText ?? null,
        strong: m.querySelector('strong')?.innerText ?? null,
        items: Array.from(m.querySelectorAll('li')).map((li) => li.innerText.trim()),
        codeKeywords: Array.from(m.querySelectorAll('pre.md-code .hljs-keyword')).map((k) => k.textContent),
        code: m.querySelector('pre.md-code')?.innerText ?? null,
        paths: Array.from(m.querySelectorAll('[data-testid="md-path"]')).map((b) => ({ path: b.dataset.path, line: b.dataset.line, end: b.dataset.end ?? null, text: b.innerText })),
        // What the model sent as HTML must be text, never elements.
        elements: m.querySelectorAll('img, b, a, script, iframe').length,
        text: m.innerText,
        title: document.title,
      };
    });
    assert.ok(md !== null, 'no Markdown answer found');
    assert.equal(md.h2, 'What changed');
    assert.equal(md.strong, '12 characters');
    assert.deepEqual(md.items, ['login calls check_password', 'the rule is one line']);
    assert.ok(md.codeKeywords.includes('fn'), `the rust block is not highlighted: ${JSON.stringify(md.codeKeywords)}`);
    assert.match(md.code, /password\.len\(\) >= 12/);
    assert.deepEqual(md.paths, [
      { path: 'src/auth.rs', line: '8', end: null, text: 'src/auth.rs:8' },
      { path: 'src/auth.rs', line: '3', end: '5', text: 'src/auth.rs:3-5' },
    ]);
    assert.equal(md.elements, 0, 'raw HTML from the model became elements');
    assert.match(md.text, /<img src=x onerror="document\.title='pwned'"> and <b>not bold<\/b>/);
    assert.notEqual(md.title, 'pwned');
    assert.match(md.text, /the password notes \(https:\/\/example\.com\/passwords\)/);
    await browser.execute(() => document.querySelector('[data-testid="md-path"]')?.scrollIntoView({ block: 'center' }));
    await screenshot(browser, cfg, `13-markdown-answer-${theme.name}`);

    // A path:line in the answer opens the file viewer at that line.
    await (await browser.$('[data-testid="md-path"][data-line="8"]')).click();
    const viewer = await byTestId(browser, 'file-viewer');
    assert.equal(await viewer.getAttribute('data-path'), 'src/auth.rs');
    const hit = await byTestId(browser, 'file-line-highlighted');
    assert.equal(await hit.getAttribute('data-line'), '8');
    assert.match(await textOf(hit), /password\.len\(\) >= 12/, 'the viewer shows the file as edited');
    await browser.keys(['Escape']);
    await waitFor(browser, 'the file viewer to close', async () => !(await (await browser.$('[data-testid="file-viewer"]')).isExisting()));
    assert.match(fs.readFileSync(path.join(project, 'src', 'auth.rs'), 'utf8'), /password\.len\(\) >= 12/);

    // The Edit was allowed by policy (no prompt), and expanding it shows the diff, not JSON.
    const editCard = await byTestId(browser, 'tool-call', { extra: '[data-tool="Edit"]' });
    assert.equal(await editCard.getAttribute('data-status'), 'ok');
    assert.equal(await (await editCard.$('[data-testid="approval"]')).isExisting(), false, 'an automatic allow asked anyway');
    await (await editCard.$('button.head')).click();
    const diff = await waitFor(browser, 'the Edit diff', () =>
      browser.execute(() => {
        const card = document.querySelector('[data-testid="tool-call"][data-tool="Edit"]');
        const p = card?.querySelector('[data-testid="approval-preview"]');
        if (!p) return null;
        return {
          kind: p.getAttribute('data-kind'),
          del: Array.from(p.querySelectorAll('.d-del')).map((l) => l.innerText),
          add: Array.from(p.querySelectorAll('.d-add')).map((l) => l.innerText),
          json: card.innerText.includes('"old_string"'),
        };
      }),
    );
    assert.equal(diff.kind, 'edit');
    assert.deepEqual(diff.del, ['-    !password.is_empty()']);
    assert.deepEqual(diff.add, ['+    password.len() >= 12']);
    assert.equal(diff.json, false, 'the expanded Edit still shows raw JSON');
    await browser.execute(() => document.querySelector('[data-testid="tool-call"][data-tool="Edit"]')?.scrollIntoView({ block: 'center' }));
    await screenshot(browser, cfg, `13-edit-diff-${theme.name}`);

    // The Task card says how the subagent ended: its status word (it is partial) and its summary's first line.
    const task = await byTestId(browser, 'tool-call', { extra: '[data-tool="Task"]' });
    const outcome = await textOf(await task.$('[data-testid="task-outcome"]'));
    assert.match(outcome, /^Partial\s+Passwords only need to be non-empty today\.$/);
    await browser.execute(() => document.querySelector('[data-testid="tool-call"][data-tool="Task"]')?.scrollIntoView({ block: 'center' }));
    await screenshot(browser, cfg, `13-task-outcome-${theme.name}`);

    // Its details show the result laid out; the raw JSON it came from is one folded line.
    await (await task.$('[data-testid="open-subagent"]')).click();
    const details = await byTestId(browser, 'node-details');
    assert.match(await textOf(await details.$('[data-testid="details-summary"]')), /Passwords only need to be non-empty today/);
    const echo = await byTestId(browser, 'result-echo');
    assert.match(await textOf(echo), /Returned its result\s+\(shown above\)/);
    assert.equal(await (await browser.$('[data-testid="result-echo-raw"]')).isExisting(), false);
    const transcript = await textOf(await details.$('[data-testid="details-transcript"]'));
    assert.doesNotMatch(transcript, /"unresolved_questions"/, 'the raw result JSON is shown unfolded');
    await echo.click();
    const raw = await byTestId(browser, 'result-echo-raw');
    assert.match(await textOf(raw), /"status": "partial"/);
    await screenshot(browser, cfg, `13-result-echo-${theme.name}`);
  });

  test(`[${theme.name}] a waiting approval: Session tab badge, a bar when scrolled away, and no send while the run goes`, async () => {
    const { browser } = await fresh('approval', theme);
    await sendPrompt(browser, 'APPROVAL-BAR-DEMO: plan, then edit');
    await byTestId(browser, 'approval', { extra: '[data-state="pending"]', timeout: 30000 });

    // The tab shows the count from every view.
    const badge = await byTestId(browser, 'nav-session-badge');
    assert.equal(await badge.getAttribute('title'), '1 approval waiting');
    const shown = await browser.execute(() =>
      Array.from(document.querySelector('[data-testid="nav-session-badge"]').childNodes)
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent)
        .join(''),
    );
    assert.equal(shown, '1', 'the badge does not show the count');
    await (await byTestId(browser, 'nav-timeline')).click();
    await byTestId(browser, 'nav-session-badge');
    await screenshot(browser, cfg, `13-approval-badge-${theme.name}`);
    await (await byTestId(browser, 'nav-session')).click();
    await byTestId(browser, 'approval', { extra: '[data-state="pending"]' });

    // While the run waits, the box stays editable, but Enter and Send say why nothing is sent.
    const input = await byTestId(browser, 'prompt-input');
    assert.equal(await input.getAttribute('placeholder'), 'Running… Stop the run to send a follow-up');
    await input.click();
    await input.setValue('one more thing');
    const send = await byTestId(browser, 'send-prompt');
    assert.equal(await send.isEnabled(), false, 'Send is enabled while the run goes');
    assert.match(await send.getAttribute('title'), /Stop the run to send a follow-up/);
    await browser.keys(['Enter']);
    const hint = await byTestId(browser, 'prompt-hint');
    assert.match(await textOf(hint), /Running… Stop the run to send a follow-up/);
    assert.equal(await input.getValue(), 'one more thing', 'Enter while running changed the box');
    assert.equal((await browser.$$('[data-testid="msg-user"]')).length, 1, 'a second prompt went out while the run was going');

    // Scrolled up past the long plan, the card is out of sight and the bar offers to bring it back.
    assert.equal(await (await browser.$('[data-testid="approval-bar"]')).isExisting(), false, 'the bar shows while the card is in view');
    await browser.execute(() => {
      const vp = document.querySelector('[data-testid="conversation-scroll"]');
      vp.scrollTop = 0;
      vp.dispatchEvent(new Event('scroll'));
    });
    const bar = await byTestId(browser, 'approval-bar', { timeout: 5000 });
    assert.match(await textOf(bar), /^1 approval waiting/);
    await screenshot(browser, cfg, `13-approval-bar-${theme.name}`);
    await (await byTestId(browser, 'approval-bar-show')).click();
    await waitFor(browser, 'the pending card to be in view and the bar gone', () =>
      browser.execute(() => {
        const vp = document.querySelector('[data-testid="conversation-scroll"]').getBoundingClientRect();
        const c = document.querySelector('[data-testid="approval"][data-state="pending"]')?.getBoundingClientRect();
        const barGone = document.querySelector('[data-testid="approval-bar"]') === null;
        return c !== undefined && c.top >= vp.top - 1 && c.bottom <= vp.bottom + 1 && barGone;
      }),
    );

    // The list re-mounted the row on the way back: find its button again.
    await (await byTestId(browser, 'approve-once')).click();
    await waitFor(browser, 'the badge to go once answered', async () => !(await (await browser.$('[data-testid="nav-session-badge"]')).isExisting()));
    await waitFor(browser, 'the main agent to complete', async () => (await mainStatus(browser)) === 'completed', { timeout: 30000 });
    // Once the run is over the text typed meanwhile can be sent.
    await waitFor(browser, 'Send to be enabled', () => send.isEnabled());
  });
}
