//! App state shared by the views: the backend, the open project, the session tree of the live or
//! replayed run (records are queued and reduced once per animation frame), selection and the clock.

import type { Backend } from './api';
import { toApiError } from './api';
import { applyRecords, emptyState, finalizeRun, type TreeState } from './reducer';
import type { FileWindow, ProjectInfo, Settings, TraceRecord } from './types';

export type View = 'start' | 'session' | 'timeline' | 'history' | 'settings';

export interface FileView {
  path: string;
  line: number;
  endLine: number;
  window: FileWindow | null;
  error: string | null;
}

export class AppStore {
  backend: Backend;
  view = $state<View>('start');
  project = $state<ProjectInfo | null>(null);
  settings = $state<Settings | null>(null);
  /** True when no usable main model is configured (no key for a provider that needs one). */
  needsSetup = $state(false);
  tree = $state.raw<TreeState>(emptyState());
  sessionId = $state<string | null>(null);
  running = $state(false);
  readOnly = $state(false);
  selected = $state<string | null>(null);
  file = $state<FileView | null>(null);
  now = $state(Date.now());
  error = $state<string | null>(null);

  private queue: TraceRecord[] = [];
  private frame: number | null = null;
  private clock: ReturnType<typeof setInterval> | null = null;

  constructor(backend: Backend) {
    this.backend = backend;
  }

  start(): void {
    this.clock = setInterval(() => {
      this.now = Date.now();
    }, 500);
  }

  stop(): void {
    if (this.clock !== null) clearInterval(this.clock);
  }

  fail(e: unknown): void {
    this.error = toApiError(e).message;
  }

  /** Queues live records; they are reduced together on the next animation frame. */
  ingest = (batch: TraceRecord[]): void => {
    for (const r of batch) this.queue.push(r);
    if (this.frame === null) {
      const raf = typeof requestAnimationFrame === 'function' ? requestAnimationFrame : (f: () => void) => setTimeout(f, 16);
      this.frame = raf(() => this.flush()) as unknown as number;
    }
  };

  flush(): void {
    this.frame = null;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.tree = applyRecords(this.tree, batch);
    const root = this.tree.rootId === null ? undefined : this.tree.nodes.get(this.tree.rootId);
    if (root !== undefined && root.endedMs !== null && root.status !== 'running') this.running = false;
  }

  async openProject(path: string): Promise<void> {
    try {
      this.project = await this.backend.openProject(path);
      this.reset();
      this.view = 'session';
    } catch (e) {
      this.fail(e);
    }
  }

  reset(): void {
    this.tree = emptyState();
    this.sessionId = null;
    this.selected = null;
    this.running = false;
    this.readOnly = false;
    this.file = null;
  }

  async send(prompt: string): Promise<void> {
    this.error = null;
    try {
      this.running = true;
      this.readOnly = false;
      if (this.sessionId === null) {
        this.tree = emptyState();
        const h = await this.backend.startRun(prompt, this.ingest);
        this.sessionId = h.session_id;
      } else {
        await this.backend.sendMessage(this.sessionId, prompt, this.ingest);
      }
    } catch (e) {
      this.running = false;
      this.fail(e);
    }
  }

  async stopRun(): Promise<void> {
    if (this.sessionId === null) return;
    try {
      // False: the app has nothing running for this session, so no `run_ended` will come to clear the flag.
      if (!(await this.backend.cancelRun(this.sessionId))) this.running = false;
    } catch (e) {
      this.fail(e);
    }
  }

  async cancelNode(id: string): Promise<void> {
    try {
      await this.backend.cancelNode(id);
    } catch (e) {
      this.fail(e);
    }
  }

  async loadHistory(sessionId: string): Promise<void> {
    try {
      const records = await this.backend.loadSession(sessionId);
      this.reset();
      // A stored trace without `run_ended` means the app stopped mid-run: show those nodes as interrupted.
      this.tree = finalizeRun(applyRecords(emptyState(), records));
      this.sessionId = sessionId;
      this.readOnly = true;
      this.view = 'session';
    } catch (e) {
      this.fail(e);
    }
  }

  async openFile(path: string, line: number, endLine: number | null): Promise<void> {
    this.file = { path, line, endLine: endLine ?? line, window: null, error: null };
    try {
      const w = await this.backend.readProjectFile(path);
      if (this.file?.path === path) this.file = { ...this.file, window: w };
    } catch (e) {
      if (this.file?.path === path) this.file = { ...this.file, error: toApiError(e).message };
    }
  }
}
