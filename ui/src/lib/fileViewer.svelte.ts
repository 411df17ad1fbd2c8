//! The file viewer's domain: which file is open at which citation, the window of lines held, and
//! loading more lines at either edge as the person scrolls. Reads go through the one backend seam
//! (`read`, the store's `readProjectFile`).

import { toApiError } from './errors';
import type { CheckedEvidence, FileWindow } from './types';

export interface FileView {
  /** Which opening of the viewer this is (a new number per `openFile`). */
  id: number;
  path: string;
  line: number;
  endLine: number;
  window: FileWindow | null;
  error: string | null;
  /** First line of each piece loaded so far, ascending (each piece is highlighted on its own). */
  pieces: number[];
  /** The edge more lines are being loaded at, if any. */
  loading: 'before' | 'after' | null;
  /** Why the last attempt to load more lines failed. */
  moreError: string | null;
  /** Said in the footer when the viewer reloaded itself, e.g. because the file changed on disk. */
  note: string | null;
  /** Set when the citation opened is stale: the file changed since the agent read it. */
  stale: StaleCitation | null;
}

/** A stale citation's cited line as the agent was shown it and as it reads now (null when not known). */
export interface StaleCitation {
  /** Who read it: `the subagent`, `the agent`. */
  reader: string;
  then: string | null;
  now: string | null;
}

/** Lines the file viewer asks for above a cited line, so the citation has context to scroll within. */
export const FILE_CONTEXT_BEFORE = 200;
/** Lines asked for below the end of a citation (the backend returns at most 5000 per call). */
export const FILE_CONTEXT_AFTER = 2000;
/** Lines loaded per step when the viewer is scrolled near an edge of what it holds. */
export const FILE_MORE_LINES = 2000;

/** Reads lines `startLine..=endLine` of a project file (the whole allowed window without a range). */
export type ReadFile = (path: string, startLine?: number, endLine?: number) => Promise<FileWindow>;

export class FileViewerStore {
  file = $state<FileView | null>(null);
  /** Bumped per `open`, so a slow answer for an earlier file cannot replace a later one. */
  private fileSeq = 0;
  private readonly read: ReadFile;

  constructor(read: ReadFile) {
    this.read = read;
  }

  close(): void {
    this.file = null;
  }

  /** Opens the viewer on a window of lines around the citation (the backend gives at most 5000 at once). */
  async open(path: string, line: number, endLine: number | null, note: string | null = null, stale: StaleCitation | null = null): Promise<void> {
    const end = Math.max(endLine ?? line, line);
    this.fileSeq += 1;
    const seq = this.fileSeq;
    const view: FileView = { id: seq, path, line, endLine: end, window: null, error: null, pieces: [], loading: null, moreError: null, note, stale };
    this.file = view;
    const start = Math.max(1, line - FILE_CONTEXT_BEFORE);
    try {
      let w: FileWindow;
      try {
        w = await this.read(path, start, Math.max(start, end + FILE_CONTEXT_AFTER));
      } catch (e) {
        // The file shrank below the cited line since it was cited: show it from the top rather than nothing.
        if (toApiError(e).code !== 'invalid_argument' || start === 1) throw e;
        w = await this.read(path);
      }
      if (this.fileSeq === seq && this.file !== null) this.file = { ...view, window: w, pieces: [w.start_line] };
    } catch (e) {
      if (this.fileSeq === seq && this.file !== null) this.file = { ...view, error: toApiError(e).message };
    }
  }

  /** Opens a citation; a stale one says so, with its line then and now. */
  openEvidence(e: CheckedEvidence, reader = 'the subagent'): Promise<void> {
    const stale = e.stale === true || e.trust === 'stale' ? { reader, then: e.seen_text ?? null, now: e.text } : null;
    return this.open(e.path, e.line, e.end_line, null, stale);
  }

  /**
   * Loads up to FILE_MORE_LINES lines just above (`before`) or below (`after`) what the viewer holds.
   * Resolves true when lines were added; false at the file's edge, while another load runs, on failure
   * (then `moreError` says why), or when the file changed on disk and the viewer was reloaded instead.
   */
  async loadMore(edge: 'before' | 'after'): Promise<boolean> {
    const view = this.file;
    const w = view?.window;
    if (view == null || w == null || view.loading !== null) return false;
    const first = w.start_line;
    const last = w.start_line + w.lines.length - 1;
    if (edge === 'before' ? first <= 1 : last >= w.total_lines) return false;
    const start = edge === 'before' ? Math.max(1, first - FILE_MORE_LINES) : last + 1;
    const end = edge === 'before' ? first - 1 : last + FILE_MORE_LINES;
    const seq = this.fileSeq;
    this.file = { ...view, loading: edge, moreError: null };
    try {
      const more = await this.read(view.path, start, end);
      const cur = this.file;
      if (this.fileSeq !== seq || cur?.window == null) return false;
      if (more.total_lines !== cur.window.total_lines) {
        // The file changed on disk since the lines held were read (the agent may be editing it): new lines
        // spliced onto old ones by number would show rows twice or not at all under wrong numbers, so read
        // it afresh around the same citation. An edit that keeps the line count is not caught here: the
        // backend gives no version to compare, and re-reading every held line on each step would cost more.
        await this.open(cur.path, cur.line, cur.endLine, 'The file changed; reloaded', cur.stale);
        return false;
      }
      const before = edge === 'before';
      const window: FileWindow = {
        ...cur.window,
        start_line: before ? more.start_line : cur.window.start_line,
        lines: before ? [...more.lines, ...cur.window.lines] : [...cur.window.lines, ...more.lines],
      };
      const pieces = before ? [more.start_line, ...cur.pieces] : [...cur.pieces, more.start_line];
      // A "file changed" note is about the reload it came with, not about later loads.
      this.file = { ...cur, window, pieces, loading: null, note: null };
      return more.lines.length > 0;
    } catch (e) {
      const cur = this.file;
      if (this.fileSeq !== seq || cur === null) return false;
      const err = toApiError(e);
      if (err.code === 'invalid_argument' && edge === 'after') {
        // The backend refuses a start past the end: the file shrank on disk since it was read.
        await this.open(cur.path, cur.line, cur.endLine, 'The file changed; reloaded', cur.stale);
        return false;
      }
      this.file = { ...cur, loading: null, moreError: err.message };
      return false;
    }
  }
}
