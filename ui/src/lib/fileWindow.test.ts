import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './errors';
import { createFakeBackend } from './fake';
import { DEMO_ROOT } from './fixtures/demo';
import { FILE_MORE_LINES } from './fileViewer.svelte';
import type { Stores } from './stores';
import { createStores } from './stores';

/** The demo project open and the viewer on its long `src/tables.rs` at `line` (fake timers running). */
async function opened(line: number) {
  const be = createFakeBackend();
  const stores = createStores(be);
  const { session } = stores;
  const open = session.openProject(DEMO_ROOT);
  await vi.advanceTimersByTimeAsync(100);
  await open;
  const f = stores.fileViewer.open('src/tables.rs', line, null);
  await vi.advanceTimersByTimeAsync(100);
  await f;
  return { stores, be };
}

// The file viewer holds a window of a long file and grows it as the person scrolls toward an edge.
describe('file viewer window', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function more(stores: Stores, edge: 'before' | 'after'): Promise<boolean> {
    const p = stores.fileViewer.loadMore(edge);
    await vi.advanceTimersByTimeAsync(100);
    return p;
  }

  it('prepends the lines above, numbered where they belong, and remembers the pieces', async () => {
    const { stores, be } = await opened(7001);
    const w0 = stores.fileViewer.file?.window;
    if (w0 == null) throw new Error(`no window: ${stores.fileViewer.file?.error}`);
    const cited = w0.lines[7001 - w0.start_line];
    const spy = vi.spyOn(be, 'readProjectFile');
    expect(await more(stores, 'before')).toBe(true);
    expect(spy).toHaveBeenCalledWith('src/tables.rs', 6801 - FILE_MORE_LINES, 6800);
    const w = stores.fileViewer.file?.window;
    if (w == null) throw new Error('window lost');
    expect(w.start_line).toBe(6801 - FILE_MORE_LINES);
    expect(w.lines.length).toBe(w0.lines.length + FILE_MORE_LINES);
    expect(w.lines[7001 - w.start_line]).toBe(cited);
    expect(stores.fileViewer.file?.pieces).toEqual([6801 - FILE_MORE_LINES, 6801]);
    expect(stores.fileViewer.file?.loading).toBeNull();
  });

  it('appends below until the end of the file, then stops asking', async () => {
    const { stores, be } = await opened(30);
    const total = stores.fileViewer.file?.window?.total_lines ?? 0;
    expect(total).toBeGreaterThan(2100 + FILE_MORE_LINES);
    const spy = vi.spyOn(be, 'readProjectFile');
    let steps = 0;
    while (await more(stores, 'after')) steps += 1;
    const w = stores.fileViewer.file?.window;
    if (w == null) throw new Error('window lost');
    expect(w.start_line).toBe(1);
    expect(w.lines.length).toBe(total);
    expect(steps).toBe(spy.mock.calls.length);
    // At the top and at the bottom there is nothing more to fetch.
    expect(await more(stores, 'before')).toBe(false);
    expect(await more(stores, 'after')).toBe(false);
    expect(spy.mock.calls.length).toBe(steps);
  });

  it('says why more lines could not be loaded, and a later open starts clean', async () => {
    const { stores, be } = await opened(7001);
    vi.spyOn(be, 'readProjectFile').mockRejectedValueOnce({ code: 'not_found', message: '`src/tables.rs` does not exist' });
    expect(await more(stores, 'before')).toBe(false);
    expect(stores.fileViewer.file?.moreError).toBe('`src/tables.rs` does not exist');
    expect(stores.fileViewer.file?.window?.start_line).toBe(6801);
    const again = stores.fileViewer.open('src/tables.rs', 7001, null);
    await vi.advanceTimersByTimeAsync(100);
    await again;
    expect(stores.fileViewer.file?.moreError).toBeNull();
  });

  it('drops an answer that arrives after the viewer moved on to another file', async () => {
    const { stores } = await opened(7001);
    const p = stores.fileViewer.loadMore('before');
    const other = stores.fileViewer.open('src/pool.rs', 30, null);
    await vi.advanceTimersByTimeAsync(200);
    await other;
    expect(await p).toBe(false);
    expect(stores.fileViewer.file?.path).toBe('src/pool.rs');
    expect(stores.fileViewer.file?.window?.start_line).toBe(1);
    expect(stores.fileViewer.file?.pieces).toEqual([1]);
  });
});

// The agent may edit a file while the person reads it in the viewer.
describe('file viewer on a file that changed since it was opened', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reloads at the same citation instead of splicing lines of two versions together', async () => {
    const { stores, be } = await opened(7001);
    const w0 = stores.fileViewer.file?.window;
    if (w0 == null) throw new Error(`no window: ${stores.fileViewer.file?.error}`);
    const id0 = stores.fileViewer.file?.id;
    expect(stores.fileViewer.file?.note).toBeNull();

    // From now on the file on disk has three new lines at the top.
    const read = be.readProjectFile.bind(be);
    const inserted = ['// added 1', '// added 2', '// added 3'];
    const edited = [...inserted];
    // The backend hands out at most 5000 lines per call.
    while (edited.length - inserted.length < w0.total_lines) {
      const piece = read('src/tables.rs', edited.length - inserted.length + 1, w0.total_lines);
      await vi.advanceTimersByTimeAsync(100);
      edited.push(...(await piece).lines);
    }
    const spy = vi.spyOn(be, 'readProjectFile').mockImplementation(async (path, startLine, endLine) => {
      await new Promise((r) => setTimeout(r, 40));
      const s = Math.max(1, startLine ?? 1);
      const e = Math.min(edited.length, endLine ?? edited.length, s + 4999);
      return { path, total_lines: edited.length, start_line: s, lines: edited.slice(s - 1, e), language: 'rust' };
    });

    const p = stores.fileViewer.loadMore('before');
    await vi.advanceTimersByTimeAsync(200);
    expect(await p).toBe(false);
    // One read for the lines above, one for the fresh window around the same citation.
    expect(spy).toHaveBeenCalledTimes(2);
    expect(spy).toHaveBeenLastCalledWith('src/tables.rs', 6801, 9001);
    const f = stores.fileViewer.file;
    const w = f?.window;
    if (f == null || w == null) throw new Error(`no window after reload: ${f?.error}`);
    expect(f.id).not.toBe(id0);
    expect(f.note).toBe('The file changed; reloaded');
    expect(f.line).toBe(7001);
    expect(w.total_lines).toBe(w0.total_lines + 3);
    expect(w.start_line).toBe(6801);
    expect(f.pieces).toEqual([6801]);
    // Every row shows the line of the new version that its number names.
    w.lines.forEach((text, i) => expect(text).toBe(edited[w.start_line + i - 1]));
    expect(w.lines[7004 - w.start_line]).toBe(w0.lines[7001 - w0.start_line]);

    // Loading more from the reloaded window splices as usual: the count now agrees.
    const q = stores.fileViewer.loadMore('before');
    await vi.advanceTimersByTimeAsync(100);
    expect(await q).toBe(true);
    const w2 = stores.fileViewer.file?.window;
    if (w2 == null) throw new Error('window lost');
    expect(w2.start_line).toBe(6801 - FILE_MORE_LINES);
    w2.lines.forEach((text, i) => expect(text).toBe(edited[w2.start_line + i - 1]));
    // The note was about that reload; it does not stay on through later loads.
    expect(stores.fileViewer.file?.note).toBeNull();
  });

  it('reloads, rather than stopping with an error, when the file shrank below the lines asked for', async () => {
    const { stores, be } = await opened(3001);
    const w0 = stores.fileViewer.file?.window;
    if (w0 == null) throw new Error(`no window: ${stores.fileViewer.file?.error}`);
    const last = w0.start_line + w0.lines.length - 1;
    // Cut on disk to fewer lines than the window already reaches: the next read starts past the end.
    const kept = last - 10;
    const read = be.readProjectFile.bind(be);
    const spy = vi.spyOn(be, 'readProjectFile').mockImplementation(async (path, startLine, endLine) => {
      const s = Math.max(1, startLine ?? 1);
      if (s > kept) {
        await new Promise((r) => setTimeout(r, 40));
        throw new ApiError('invalid_argument', `${path} has ${kept} lines; cannot start at line ${s}`);
      }
      const w = await read(path, s, Math.min(endLine ?? kept, kept));
      return { ...w, total_lines: kept };
    });
    const p = stores.fileViewer.loadMore('after');
    await vi.advanceTimersByTimeAsync(300);
    expect(await p).toBe(false);
    expect(spy.mock.calls[0]).toEqual(['src/tables.rs', last + 1, last + FILE_MORE_LINES]);
    const f = stores.fileViewer.file;
    expect(f?.moreError).toBeNull();
    expect(f?.note).toBe('The file changed; reloaded');
    expect(f?.window?.total_lines).toBe(kept);
    expect(f?.line).toBe(3001);
  });

  it('keeps splicing when the line count is unchanged', async () => {
    const { stores } = await opened(7001);
    const id0 = stores.fileViewer.file?.id;
    const p = stores.fileViewer.loadMore('before');
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(stores.fileViewer.file?.id).toBe(id0);
    expect(stores.fileViewer.file?.note).toBeNull();
    expect(stores.fileViewer.file?.pieces).toEqual([6801 - FILE_MORE_LINES, 6801]);
  });
});
