import { describe, expect, it } from 'vitest';
import { applyRecords, emptyState, type SessionNode } from './reducer';
import { demoRun, demoRunInteractive } from './fixtures/demo';
import { pendingApprovalCount, pendingIndexes, promptKey, resultEchoId, taskOutcome } from './conversation';

const tree = applyRecords(emptyState(), demoRun(1_000_000));
const node = (id: string): SessionNode => {
  const n = tree.nodes.get(id);
  if (n === undefined) throw new Error(`no node ${id}`);
  return n;
};

describe('Task card outcome', () => {
  it('a completed subagent shows the first line of its summary and no status word', () => {
    const o = taskOutcome(node('explore-loop-1c2d'));
    expect(o?.status).toBeNull();
    expect(o?.line).toBe(node('explore-loop-1c2d').result?.summary.split('\n')[0]);
    expect(o?.line).toMatch(/^Connections are accepted in `Server::run`/);
    expect(o?.result).toBe(node('explore-loop-1c2d').result);
  });

  it('a partial one says so before its summary', () => {
    const o = taskOutcome(node('explore-errors-5b77'));
    expect(o?.status).toBe('Partial');
    expect(o?.line).toMatch(/^Read and write errors go through/);
  });

  it('a running subagent, a failed one with an error, and one with a multi-line summary', () => {
    expect(taskOutcome({ ...node('explore-loop-1c2d'), status: 'running' })).toBeNull();
    expect(taskOutcome(undefined)).toBeNull();
    const failed = taskOutcome({ ...node('explore-loop-1c2d'), status: 'failed', result: null, error: 'model error: 500\nmore detail' });
    expect(failed).toEqual({ status: 'Failed', tone: 'bad', line: 'model error: 500', result: null });
    const r = node('explore-loop-1c2d').result;
    if (r === null) throw new Error('demo child has a result');
    const multi = taskOutcome({ ...node('explore-loop-1c2d'), result: { ...r, summary: '\n  First line.\nSecond line.' } });
    expect(multi?.line).toBe('First line.');
  });
});

describe('pending approvals', () => {
  it('are counted across the tree and found in the main conversation while they wait', () => {
    const { first, rest } = demoRunInteractive(0);
    const waiting = applyRecords(emptyState(), first);
    expect(pendingApprovalCount(waiting)).toBe(1);
    const root = waiting.nodes.get(waiting.rootId as string);
    const idx = pendingIndexes(root?.items ?? []);
    expect(idx.length).toBe(1);
    const it = root?.items[idx[0]];
    expect(it?.kind === 'tool' && it.id).toBe('call_edit1');
    const answered = applyRecords(waiting, rest('allow_once', 200_000));
    expect(pendingApprovalCount(answered)).toBe(0);
    expect(pendingIndexes(answered.nodes.get(answered.rootId as string)?.items ?? [])).toEqual([]);
  });
});

describe('result echo', () => {
  it("is a subagent's last answer when it has a structured result", () => {
    const n = node('explore-loop-1c2d');
    const lastAssistant = [...n.items].reverse().find((i) => i.kind === 'assistant');
    expect(lastAssistant).toBeDefined();
    expect(resultEchoId(n)).toBe(lastAssistant?.id);
  });

  it('is nothing for the main agent (no structured result) or an answer still streaming', () => {
    expect(resultEchoId(node(tree.rootId as string))).toBeNull();
    const n = node('explore-loop-1c2d');
    const items = n.items.map((i) => (i.kind === 'assistant' ? { ...i, streaming: true } : i));
    expect(resultEchoId({ result: n.result, items })).toBeNull();
  });
});

describe('prompt keys', () => {
  const key = (over: Partial<KeyboardEvent>) => ({ key: 'Enter', shiftKey: false, ctrlKey: false, metaKey: false, altKey: false, isComposing: false, keyCode: 13, ...over });
  it('Enter and Ctrl/Cmd+Enter send, Shift+Enter is a new line, other keys do nothing', () => {
    expect(promptKey(key({}), false)).toBe('send');
    expect(promptKey(key({ ctrlKey: true }), false)).toBe('send');
    expect(promptKey(key({ metaKey: true }), false)).toBe('send');
    expect(promptKey(key({ shiftKey: true }), false)).toBe('newline');
    expect(promptKey(key({ key: 'a', keyCode: 65 }), false)).toBeNull();
  });
  it('an IME composition never sends', () => {
    expect(promptKey(key({ isComposing: true }), false)).toBeNull();
    expect(promptKey(key({ keyCode: 229 }), false)).toBeNull();
  });
  it('while a run is going a send is blocked, a new line is not', () => {
    expect(promptKey(key({}), true)).toBe('blocked');
    expect(promptKey(key({ ctrlKey: true }), true)).toBe('blocked');
    expect(promptKey(key({ shiftKey: true }), true)).toBe('newline');
  });
});
