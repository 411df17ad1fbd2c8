import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import type { ConvItem } from '../lib/reducer';
import type { JsonValue } from '../lib/types';
import type { CheckedEvidence } from '../generated/types';
import type { SessionStore } from '../lib/session.svelte';
import { createStores } from '../lib/stores';
import { createFakeBackend } from '../lib/fake';
import ConvItemView from './ConvItemView.svelte';

// A row of the conversation as the virtual list mounts it again after it was scrolled out of view
// (server-rendered: the row is built from its props alone, as a fresh mount is).
const tool = (over: Partial<Extract<ConvItem, { kind: 'tool' }>> = {}): ConvItem => ({
  kind: 'tool',
  id: 'call_read1',
  tool: 'Read',
  args: { path: 'src/config.rs' },
  mutates: false,
  status: 'ok',
  output: 'pub struct Config {}',
  outputBytes: 20,
  truncated: false,
  outputElided: false,
  durationMs: 12,
  permission: null,
  childSessionId: null,
  ts: 1,
  ...over,
});

function rowFor(session: SessionStore, sessionId: string, item: ConvItem, extra: Record<string, unknown> = {}): string {
  const props = {
    item,
    sessionId,
    outputs: session.toolOutputs,
    open: session.isExpanded(sessionId, item.id),
    onToggle: (o: boolean) => session.setExpanded(sessionId, item.id, o),
    ...extra,
  };
  return render(ConvItemView, { props }).body;
}

describe('ConvItemView header line', () => {
  it('names a TodoWrite call by what it does, not by its raw JSON', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const item = tool({ id: 'call_todo', tool: 'TodoWrite', args: { todos: [{ content: 'a', status: 'pending' }, { content: 'b', status: 'pending' }] } });
    const body = rowFor(session, 's-main', item);
    expect(body).toContain('Update plan (2 items)');
    expect(body).not.toContain('{&quot;todos&quot;');
    expect(body).not.toContain('{"todos"');
  });
});

describe('ConvItemView Bash sandbox marks', () => {
  const bash = (args: Record<string, unknown>, pending = false): ConvItem =>
    tool({
      id: 'call_bash',
      tool: 'Bash',
      args: args as JsonValue,
      mutates: true,
      status: pending ? 'running' : 'ok',
      permission: pending ? { state: 'pending', summary: 'Bash `npm install` — wants network access', source: null, scope: null, reason: null } : null,
    });

  it('marks every Bash card of an unsandboxed session, and only Bash cards', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    expect(rowFor(session, 's', bash({ command: 'ls' }), { unsandboxed: true })).toContain('data-testid="bash-unsandboxed"');
    expect(rowFor(session, 's', bash({ command: 'ls' }))).not.toContain('bash-unsandboxed');
    expect(rowFor(session, 's', tool(), { unsandboxed: true })).not.toContain('bash-unsandboxed');
  });

  it('a pending command that wants the network says so on the card and in the approval', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const body = rowFor(session, 's', bash({ command: 'npm install', network: true }, true), { onAnswer: () => {}, unsandboxed: true });
    expect(body).toContain('data-testid="bash-network"');
    expect(body).toContain('data-testid="approval-network"');
    expect(body).toContain('Wants network access');
    expect(body).toContain('data-testid="approval-unsandboxed"');
    const plain = rowFor(session, 's', bash({ command: 'ls' }, true), { onAnswer: () => {} });
    expect(plain).not.toContain('bash-network');
    expect(plain).not.toContain('approval-network');
    expect(plain).not.toContain('approval-unsandboxed');
  });
});

describe('ConvItemView', () => {
  it('a tool call expanded before it scrolled away comes back expanded; others stay closed', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    session.setExpanded('s-main', 'call_read1', true);
    const body = rowFor(session, 's-main', tool());
    expect(body).toContain('aria-expanded="true"');
    expect(body).toContain('data-testid="tool-output"');
    expect(body).toContain('pub struct Config {}');
    // The same call id in another session is another row.
    expect(rowFor(session, 's-child', tool())).toContain('aria-expanded="false"');
    session.setExpanded('s-main', 'call_read1', false);
    expect(rowFor(session, 's-main', tool())).not.toContain('data-testid="tool-output"');
  });

  it('an expanded replayed output already fetched shows at once when the row comes back', async () => {
    const be = createFakeBackend();
    be.loadToolOutput = async () => 'the whole file';
    const stores = createStores(be);
    const { session } = stores;
    await session.toolOutputs.load('s-main', 'call_read1');
    session.setExpanded('s-main', 'call_read1', true);
    const body = rowFor(session, 's-main', tool({ output: '', outputElided: true, outputBytes: 900 }));
    expect(body).toContain('the whole file');
    expect(body).not.toContain('tool-output-loading');
  });

  it('approval buttons are disabled once an answer was sent', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const pending = tool({ tool: 'Edit', status: 'running', permission: { state: 'pending', summary: 'Edit src/auth.rs', source: null, scope: null, reason: null } });
    const onAnswer = () => undefined;
    const fresh = rowFor(session, 's-main', pending, { onAnswer, answered: false });
    expect(fresh.match(/<button[^>]*data-testid="approve-(once|session|deny)"[^>]*>/g)?.filter((b) => b.includes('disabled')).length).toBe(0);
    const sent = rowFor(session, 's-main', pending, { onAnswer, answered: true });
    const buttons = sent.match(/<button[^>]*data-testid="approve-(once|session|deny)"[^>]*>/g) ?? [];
    expect(buttons.length).toBe(3);
    expect(buttons.every((b) => b.includes('disabled'))).toBe(true);
    expect(sent).toContain('Answer sent');
  });
});

const answer = (text: string, streaming = false): ConvItem => ({ kind: 'assistant', id: 'mc1', text, streaming, error: null, ts: 1 });
const edit = (permission: Extract<ConvItem, { kind: 'tool' }>['permission']): ConvItem =>
  tool({
    id: 'call_edit1',
    tool: 'Edit',
    mutates: true,
    args: { path: 'src/auth.rs', old_string: '    !password.is_empty()', new_string: '    password.len() >= 12' },
    output: 'edited src/auth.rs',
    permission,
  });

describe('ConvItemView answers', () => {
  it('renders Markdown with highlighted code and path:line buttons when files can be opened', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const text = '## Done\n\nThe check is in `src/auth.rs:8`:\n\n```rust\nfn check() -> bool { true }\n```\n\n<img src=x onerror=alert(1)>';
    const body = rowFor(session, 's-main', answer(text), { onOpenPath: () => undefined });
    expect(body).toContain('<h2>Done</h2>');
    expect(body).toContain('data-path="src/auth.rs" data-line="8"');
    expect(body).toContain('<span class="hljs-keyword">fn</span>');
    expect(body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(body).not.toContain('<img');
    // Without a way to open files (e.g. no handler) the mention is plain text.
    expect(rowFor(session, 's-main', answer(text))).not.toContain('data-path=');
  });

  it("an answer's reference the Markdown view does not link is still named under it when it does not hold", () => {
    const { session } = createStores(createFakeBackend());
    const text = 'Login is at `src/auth.rs:3`; the key sits in .env:2 and /etc/app.rs:9.';
    const ref = (raw: string, path: string, line: number, state: CheckedEvidence['state'], trust: CheckedEvidence['trust'], provenance: CheckedEvidence['provenance']): CheckedEvidence => ({
      raw, path, line, end_line: null, state, text: null, provenance, trust,
    });
    const references = [
      ref('src/auth.rs:3', 'src/auth.rs', 3, 'valid', 'grounded', 'seen'),
      ref('.env:2', '.env', 2, 'valid', 'unseen', 'unseen'),
      ref('/etc/app.rs:9', '/etc/app.rs', 9, 'outside_project', 'invalid', 'unseen'),
    ];
    const body = rowFor(session, 's-main', answer(text), {
      onOpenPath: () => undefined,
      answer: { references, trust: { total: 3, grounded: 1, file_seen: 0, unseen: 1, quote_mismatch: 0, stale: 0, invalid: 1 }, now: false },
    });
    // Only src/auth.rs:3 becomes a link in the text ...
    expect(body).toContain('data-path="src/auth.rs"');
    expect(body).not.toContain('data-path=".env"');
    // ... so the two that do not hold are named under the answer, each with its mark.
    const listed = body.slice(body.indexOf('data-testid="answer-not-grounded"'));
    expect(listed).toContain('data-trust="unseen"');
    expect(listed).toContain('.env:2');
    expect(listed).toContain('data-trust="invalid"');
    expect(listed).toContain('/etc/app.rs:9');
    expect(listed).not.toContain('src/auth.rs:3');
  });

  it("a subagent's result answer is one line until expanded to the raw JSON", () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const json = '{"status": "completed", "summary": "login is in src/auth.rs"}';
    const closed = rowFor(session, 's-child', answer(json), { resultEcho: true });
    expect(closed).toContain('Returned its result');
    expect(closed).not.toContain('login is in src/auth.rs');
    session.setExpanded('s-child', 'mc1', true);
    const opened = rowFor(session, 's-child', answer(json), { resultEcho: true });
    expect(opened).toContain('data-testid="result-echo-raw"');
    expect(opened).toMatch(/(&quot;|")summary\1: \1login is in src\/auth\.rs\1/);
  });
});

describe('ConvItemView Edit and Task cards', () => {
  const diffOf = (body: string) => (body.match(/class="dl d-(add|del)[^"]*"/g) ?? []).length;

  it('an expanded Edit shows its diff in every approval state, not the raw arguments', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    session.setExpanded('s-main', 'call_edit1', true);
    const states: Extract<ConvItem, { kind: 'tool' }>['permission'][] = [
      null,
      { state: 'allow', summary: 'Edit src/auth.rs', source: 'policy', scope: null, reason: null },
      { state: 'allow', summary: 'Edit src/auth.rs', source: 'user', scope: 'session', reason: null },
      { state: 'deny', summary: 'Edit src/auth.rs', source: 'user', scope: null, reason: 'denied' },
    ];
    for (const p of states) {
      const body = rowFor(session, 's-main', edit(p));
      expect(body, `state ${p?.state ?? 'none'}`).toContain('data-kind="edit"');
      expect(diffOf(body)).toBe(2);
      expect(body).not.toContain('&quot;old_string&quot;');
      expect(body).not.toContain('"old_string"');
    }
    // While the approval waits, the diff is in the prompt once, not again in the body.
    const waiting = rowFor(session, 's-main', edit({ state: 'pending', summary: 'Edit src/auth.rs', source: null, scope: null, reason: null }));
    expect(waiting.match(/data-testid="approval-preview"/g)?.length).toBe(1);
  });

  it('an expanded Write shows the new file, a Read still shows its arguments', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    session.setExpanded('s-main', 'call_w', true);
    session.setExpanded('s-main', 'call_read1', true);
    const w = rowFor(session, 's-main', tool({ id: 'call_w', tool: 'Write', args: { path: 'NOTES.md', content: 'line one\nline two\n' } }));
    expect(w).toContain('data-kind="write"');
    expect(w).toContain('2 lines');
    expect(rowFor(session, 's-main', tool())).toMatch(/<h4>Arguments<\/h4>\s*<pre[^>]*>\{\s*(&quot;|")path\1: \1src\/config\.rs\1/);
  });

  it('a Task card shows how its subagent ended', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const task = tool({ id: 'call_task', tool: 'Task', args: { description: 'Find the login code' }, childSessionId: 'child-1' });
    const ok = rowFor(session, 's-main', task, { outcome: { status: null, tone: 'ok', line: 'login is implemented in src/auth.rs' } });
    expect(ok).toContain('data-testid="task-outcome"');
    expect(ok).toContain('login is implemented in src/auth.rs');
    const partial = rowFor(session, 's-main', task, { outcome: { status: 'Partial', tone: 'warn', line: 'ran out of tokens' } });
    expect(partial).toMatch(/<span class="oc-status[^"]*">Partial<\/span>/);
    expect(rowFor(session, 's-main', task)).not.toContain('task-outcome');
  });

  it("an expanded Task card lays out the subagent's result: summary, findings, evidence links with their check", () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    session.setExpanded('s-main', 'call_task', true);
    const result = {
      status: 'partial' as const,
      summary: 'Login is checked in src/auth.rs.',
      findings: ['Passwords only need to be non-empty'],
      evidence: [
        { raw: 'src/auth.rs:8', path: 'src/auth.rs', line: 8, end_line: null, state: 'valid' as const, text: '    !password.is_empty()' },
        { raw: 'src/auth.rs:900', path: 'src/auth.rs', line: 900, end_line: null, state: 'line_out_of_range' as const, text: null },
      ],
      unresolved_questions: ['Is there a minimum length elsewhere?'],
      verdict: null,
      reasons: [],
    };
    const json = JSON.stringify(result);
    const taskArgs = { id: 'call_task', tool: 'Task', args: { description: 'Find the login code' }, childSessionId: 'child-1' };
    const task = tool({ ...taskArgs, output: json, outputBytes: json.length });
    const body = rowFor(session, 's-main', task, { outcome: { status: 'Partial', tone: 'warn', line: result.summary, result }, onOpenPath: () => undefined });
    expect(body).toContain('data-testid="task-result"');
    expect(body).toMatch(/data-testid="task-summary"[^>]*>Login is checked in src\/auth\.rs\.</);
    expect(body).toMatch(/data-testid="task-findings"[^>]*>(<!--[^>]*-->)*<li>Passwords only need to be non-empty<\/li>/);
    // The valid reference is a link; the one past the end of the file is plain text saying so.
    expect(body).toMatch(/<li class="ev-valid[^"]*" data-testid="task-evidence" data-state="valid">(<!--[^>]*-->)*<button[^>]*data-testid="task-evidence-link"[^>]*>src\/auth\.rs:8<\/button>/);
    expect(body).toMatch(/data-state="line_out_of_range">(<!--[^>]*-->)*<span class="ev-label[^"]*">src\/auth\.rs:900<\/span>/);
    expect(body).toContain('data-testid="task-unresolved"');
    // The raw JSON it came from is folded away below it (a closed <details>), and the details pane's
    // ids are not used (both can be on screen at once).
    const raw = /<details class="raw[^"]*"( open="")?>(?:(?!<\/details>)[\s\S])*data-testid="tool-output"(?:(?!<\/details>)[\s\S])*(&quot;|")unresolved_questions/.exec(body);
    expect(raw, 'the raw result is not kept under the laid-out one').not.toBeNull();
    expect(raw?.[1], 'the raw result is unfolded').toBeUndefined();
    expect(body.indexOf('data-testid="task-result"')).toBeLessThan(body.indexOf('data-testid="tool-output"'));
    expect(body).not.toContain('data-testid="details-summary"');
    // Without a result (a subagent that failed) the card shows what the tool returned, unfolded.
    const failed = rowFor(session, 's-main', tool({ ...taskArgs, output: 'subagent failed: model error' }), { outcome: { status: 'Failed', tone: 'bad', line: 'model error', result: null } });
    expect(failed).toMatch(/<details class="raw [^"]*\bflat\b[^"]*" open="">/);
    expect(failed).toContain('data-testid="tool-output"');
    expect(failed).not.toContain('task-result');
  });
});

describe('ConvItemView reasoning', () => {
  it('shows a turn\'s reasoning folded, with its token count', () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const item: ConvItem = { kind: 'assistant', id: 'm1', text: 'Login is in src/auth.rs.', streaming: false, error: null, ts: 1, reasoning: 'I should grep for fn login.', reasoningTokens: 7 };
    const body = rowFor(session, 's-main', item);
    expect(body).toMatch(/<details class="reasoning[^"]*" data-testid="msg-reasoning">/);
    expect(body).not.toMatch(/<details[^>]*open/);
    expect(body).toContain('Thinking');
    expect(body).toContain('(7 tokens)');
    expect(body).toContain('I should grep for fn login.');
    const plain = rowFor(session, 's-main', { ...item, reasoning: undefined, reasoningTokens: undefined });
    expect(plain).not.toContain('msg-reasoning');
  });
});
