import { describe, expect, it } from 'vitest';
import { approvalPreview, DIFF_MAX_LINES, lineDiff, WRITE_HEAD_LINES } from './preview';

// What a person reads under "Approve?" before clicking Allow.
describe('approval preview', () => {
  it('shows an Edit as the lines it removes and adds, with unchanged lines as context', () => {
    const p = approvalPreview('Edit', {
      path: 'src/auth.rs',
      old_string: 'fn check(p: &str) -> bool {\n    !p.is_empty()\n}',
      new_string: 'fn check(p: &str) -> bool {\n    p.len() >= 12\n}',
    });
    expect(p).toEqual({
      kind: 'edit',
      path: 'src/auth.rs',
      replaceAll: false,
      lines: [
        { kind: 'ctx', text: 'fn check(p: &str) -> bool {' },
        { kind: 'del', text: '    !p.is_empty()' },
        { kind: 'add', text: '    p.len() >= 12' },
        { kind: 'ctx', text: '}' },
      ],
      removed: 1,
      added: 1,
      hiddenLines: 0,
    });
  });

  it('notes replace_all', () => {
    const p = approvalPreview('Edit', { path: 'a.rs', old_string: 'foo', new_string: 'bar', replace_all: true });
    expect(p.kind === 'edit' && p.replaceAll).toBe(true);
  });

  it('keeps a line that survives in the middle of a rewrite as context', () => {
    expect(lineDiff('a\nkeep\nb', 'x\nkeep\ny\nz')).toEqual([
      { kind: 'del', text: 'a' },
      { kind: 'add', text: 'x' },
      { kind: 'ctx', text: 'keep' },
      { kind: 'del', text: 'b' },
      { kind: 'add', text: 'y' },
      { kind: 'add', text: 'z' },
    ]);
  });

  it('shows a pure deletion and a pure insertion', () => {
    expect(lineDiff('a\nb\n', '')).toEqual([
      { kind: 'del', text: 'a' },
      { kind: 'del', text: 'b' },
    ]);
    expect(lineDiff('', 'new')).toEqual([{ kind: 'add', text: 'new' }]);
  });

  it('caps a huge edit but still counts every changed line', () => {
    const old = Array.from({ length: 600 }, (_, i) => `old ${i}`).join('\n');
    const neu = Array.from({ length: 500 }, (_, i) => `new ${i}`).join('\n');
    const p = approvalPreview('Edit', { path: 'big.txt', old_string: old, new_string: neu });
    if (p.kind !== 'edit') throw new Error(`expected an edit preview, got ${p.kind}`);
    expect(p.removed).toBe(600);
    expect(p.added).toBe(500);
    expect(p.lines).toHaveLength(DIFF_MAX_LINES);
    expect(p.hiddenLines).toBe(1100 - DIFF_MAX_LINES);
  });

  it('shows the first lines of a Write and how many more there are', () => {
    const content = Array.from({ length: 35 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const p = approvalPreview('Write', { path: 'notes/todo.md', content });
    if (p.kind !== 'write') throw new Error(`expected a write preview, got ${p.kind}`);
    expect(p.path).toBe('notes/todo.md');
    expect(p.head).toHaveLength(WRITE_HEAD_LINES);
    expect(p.head[0]).toBe('line 1');
    expect(p.head[WRITE_HEAD_LINES - 1]).toBe(`line ${WRITE_HEAD_LINES}`);
    expect(p.totalLines).toBe(35);
  });

  it('shows a Bash command with its timeout when given', () => {
    expect(approvalPreview('Bash', { command: 'cargo test -p auth', timeout_ms: 60000, description: 'Run the auth tests' })).toEqual({
      kind: 'bash',
      command: 'cargo test -p auth',
      timeoutMs: 60000,
      description: 'Run the auth tests',
      network: false,
    });
    expect(approvalPreview('Bash', { command: 'ls' })).toEqual({ kind: 'bash', command: 'ls', timeoutMs: null, description: null, network: false });
  });

  it('says when a Bash command asks for the network (only a literal true counts)', () => {
    expect(approvalPreview('Bash', { command: 'npm install', network: true })).toMatchObject({ kind: 'bash', network: true });
    expect(approvalPreview('Bash', { command: 'npm install', network: 'yes' })).toMatchObject({ kind: 'bash', network: false });
  });

  it('reads arguments that arrive as a JSON string', () => {
    const p = approvalPreview('Bash', JSON.stringify({ command: 'make' }));
    expect(p).toMatchObject({ kind: 'bash', command: 'make' });
  });

  it('falls back to the JSON arguments for other tools and for arguments of the wrong shape', () => {
    expect(approvalPreview('Fetch', { url: 'https://example.com' })).toEqual({
      kind: 'json',
      text: '{\n  "url": "https://example.com"\n}',
    });
    // An Edit without new_string is not shown as a diff that would delete the old text.
    expect(approvalPreview('Edit', { path: 'a.rs', old_string: 'x' }).kind).toBe('json');
    expect(approvalPreview('Bash', 'not json {')).toEqual({ kind: 'json', text: 'not json {' });
    expect(approvalPreview('Write', null)).toEqual({ kind: 'json', text: 'null' });
    // An external tool whose arguments look like a shell command is not drawn as Bash's.
    expect(approvalPreview('mcp__shell__run', { command: 'rm -rf build' }).kind).toBe('json');
  });
});
