//! App state shared by the views: the backend, the open project, the session tree of the live or
//! replayed run (records are queued and reduced once per animation frame), selection and the clock.

import type { Backend } from './api';
import { toApiError } from './api';
import { applyRecords, emptyState, finalizeRun, type TreeState } from './reducer';
import { ToolOutputCache } from './toolOutputs';
import type { FileWindow, ProjectInfo, Settings, TraceRecord } from './types';

export type View = 'start' | 'session' | 'timeline' | 'history' | 'settings';

export interface FileView {
  path: string;
  line: number;
  endLine: number;
  window: FileWindow | null;
  error: string | null;
}

export interface Notice {
  id: number;
  kind: 'warning' | 'info';
  text: string;
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
  /** Dismissible notices: startup warnings, and a project switch made from the command line. */
  notices = $state<Notice[]>([]);
  private noticeId = 0;

  /** Full outputs that replay left out, fetched when their tool call is expanded. */
  readonly toolOutputs: ToolOutputCache;

  private queue: TraceRecord[] = [];
  /** Bumped whenever the shown session is replaced, so a still-streaming earlier run cannot write into it. */
  private generation = 0;
  private frame: number | null = null;
  private clock: ReturnType<typeof setInterval> | null = null;

  constructor(backend: Backend) {
    this.backend = backend;
    this.toolOutputs = new ToolOutputCache((sessionId, callId) => this.backend.loadToolOutput(sessionId, callId));
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

  /** A sink for one run's channel: queues its records while that run's session is still the one shown. */
  private sink(): (batch: TraceRecord[]) => void {
    const gen = this.generation;
    return (batch) => {
      if (gen === this.generation) this.ingest(batch);
    };
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

  /** Shows `p` as the open project; rejected profile files are worth telling about before a run needs them. */
  setProject(p: ProjectInfo): void {
    this.project = p;
    const n = p.profile_errors.length;
    if (n > 0) {
      const files = p.profile_errors.map((e) => e.path.split('/').pop() ?? e.path).join(', ');
      this.notify('warning', `${n} agent profile${n > 1 ? 's' : ''} in ${p.name} could not be loaded (${files}); see Settings › Agent profiles for why.`);
    }
  }

  async openProject(path: string): Promise<void> {
    try {
      this.setProject(await this.backend.openProject(path));
      this.reset();
      this.view = 'session';
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * A second `canopy FOLDER` opened another project in the app: follow it. A run still going in the old
   * project keeps running in the app; it stays reachable through that project's History.
   */
  projectOpened(p: ProjectInfo): void {
    const before = this.project;
    if (before !== null && before.root === p.root) {
      this.setProject(p);
      return;
    }
    const leftRunning = this.running && !this.readOnly && before !== null;
    this.setProject(p);
    this.reset();
    this.view = 'session';
    this.notify(
      'info',
      leftRunning
        ? `Opened ${p.name} from the command line. The run in ${before.name} is still going; open ${before.name} again to find it in History.`
        : `Opened ${p.name} from the command line.`,
    );
  }

  notify(kind: Notice['kind'], text: string): void {
    // The same project opened again would repeat its warning word for word.
    if (this.notices.some((n) => n.text === text)) return;
    this.noticeId += 1;
    this.notices = [...this.notices, { id: this.noticeId, kind, text }];
  }

  dismiss(id: number): void {
    this.notices = this.notices.filter((n) => n.id !== id);
  }

  /** Startup warnings and the command-line project switches; resolves to an unsubscribe. */
  async listen(): Promise<() => void> {
    const unlistenProject = await this.backend.onProjectOpened((p) => this.projectOpened(p));
    const unlistenWarning = await this.backend.onAppWarning((w) => this.notify('warning', w));
    const unlisten = () => {
      unlistenProject();
      unlistenWarning();
    };
    try {
      for (const w of await this.backend.startupWarnings()) this.notify('warning', w);
    } catch (e) {
      this.notify('warning', `Could not read the startup warnings: ${toApiError(e).message}`);
    }
    return unlisten;
  }

  reset(): void {
    this.generation += 1;
    this.queue = [];
    this.tree = emptyState();
    this.toolOutputs.clear();
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
        const h = await this.backend.startRun(prompt, this.sink());
        this.sessionId = h.session_id;
      } else {
        await this.backend.sendMessage(this.sessionId, prompt, this.sink());
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
