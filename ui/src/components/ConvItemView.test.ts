import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import type { ConvItem } from '../lib/reducer';
import { AppStore } from '../lib/store.svelte';
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

function rowFor(app: AppStore, sessionId: string, item: ConvItem, extra: Record<string, unknown> = {}): string {
  const props = {
    item,
    sessionId,
    outputs: app.toolOutputs,
    open: app.isExpanded(sessionId, item.id),
    onToggle: (o: boolean) => app.setExpanded(sessionId, item.id, o),
    ...extra,
  };
  return render(ConvItemView, { props }).body;
}

describe('ConvItemView header line', () => {
  it('names a TodoWrite call by what it does, not by its raw JSON', () => {
    const app = new AppStore(createFakeBackend());
    const item = tool({ id: 'call_todo', tool: 'TodoWrite', args: { todos: [{ content: 'a', status: 'pending' }, { content: 'b', status: 'pending' }] } });
    const body = rowFor(app, 's-main', item);
    expect(body).toContain('Update plan (2 items)');
    expect(body).not.toContain('{&quot;todos&quot;');
    expect(body).not.toContain('{"todos"');
  });
});

describe('ConvItemView', () => {
  it('a tool call expanded before it scrolled away comes back expanded; others stay closed', () => {
    const app = new AppStore(createFakeBackend());
    app.setExpanded('s-main', 'call_read1', true);
    const body = rowFor(app, 's-main', tool());
    expect(body).toContain('aria-expanded="true"');
    expect(body).toContain('data-testid="tool-output"');
    expect(body).toContain('pub struct Config {}');
    // The same call id in another session is another row.
    expect(rowFor(app, 's-child', tool())).toContain('aria-expanded="false"');
    app.setExpanded('s-main', 'call_read1', false);
    expect(rowFor(app, 's-main', tool())).not.toContain('data-testid="tool-output"');
  });

  it('an expanded replayed output already fetched shows at once when the row comes back', async () => {
    const be = createFakeBackend();
    be.loadToolOutput = async () => 'the whole file';
    const app = new AppStore(be);
    await app.toolOutputs.load('s-main', 'call_read1');
    app.setExpanded('s-main', 'call_read1', true);
    const body = rowFor(app, 's-main', tool({ output: '', outputElided: true, outputBytes: 900 }));
    expect(body).toContain('the whole file');
    expect(body).not.toContain('tool-output-loading');
  });

  it('approval buttons are disabled once an answer was sent', () => {
    const app = new AppStore(createFakeBackend());
    const pending = tool({ tool: 'Edit', status: 'running', permission: { state: 'pending', summary: 'Edit src/auth.rs', source: null, scope: null, reason: null } });
    const onAnswer = () => undefined;
    const fresh = rowFor(app, 's-main', pending, { onAnswer, answered: false });
    expect(fresh.match(/<button[^>]*data-testid="approve-(once|session|deny)"[^>]*>/g)?.filter((b) => b.includes('disabled')).length).toBe(0);
    const sent = rowFor(app, 's-main', pending, { onAnswer, answered: true });
    const buttons = sent.match(/<button[^>]*data-testid="approve-(once|session|deny)"[^>]*>/g) ?? [];
    expect(buttons.length).toBe(3);
    expect(buttons.every((b) => b.includes('disabled'))).toBe(true);
    expect(sent).toContain('Answer sent');
  });
});
