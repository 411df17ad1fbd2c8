//! The session domain: the open project, the session tree of the live or replayed run (records are
//! queued and reduced once per animation frame), what the session pane shows, selection, sending,
//! stopping, approvals, loading a past session, and the clock. The other domains are not reached
//! through it: it is given the notices store (to tell the person something), the navigation store (a
//! project or a past session opened shows the session view) and a callback for when another session is
//! shown (stores.ts clears the file viewer and the evidence re-checks there).
//!
//! The run this window started (its "live run") keeps its own tree: its records go on arriving while
//! the person looks at a past session, another project or a blank new session, so it can be shown again
//! as it is now (History row, reopening its project) instead of being stranded.

import { SvelteSet } from 'svelte/reactivity';
import type { Backend } from './api';
import { toApiError, type ApiError } from './errors';
import { applyRecords, emptyState, finalizeRun, type TreeState } from './reducer';
import { ToolOutputCache } from './toolOutputs';
import type { NoticeStore } from './notices.svelte';
import type { NavStore } from './nav.svelte';
import type { ApprovalAnswer, ProjectInfo, SessionState, TraceRecord } from './types';

/** Error codes of a send that a visit to Settings fixes (no key, no model, a setting the backend refuses). */
const SETTINGS_CODES: ReadonlySet<string> = new Set(['missing_key', 'not_configured', 'invalid_key', 'invalid_settings', 'keychain_unavailable']);

/** Why the last send failed, shown under the prompt box (which keeps the prompt). */
export interface SendError {
  code: ApiError['code'];
  message: string;
  /** True when the fix is in Settings (the view offers to go there). */
  settings: boolean;
}

/**
 * What the session pane shows. `blank`: a new session, nothing sent yet (or a first send on its way);
 * `live`: the run this window started, updated as its records arrive; `replay`: a past session from its
 * trace (a run that stopped without an end shows as interrupted); `replay_running`: a session the app is
 * still running but this window has no live view of, from its trace as it stands (Stop still works).
 */
export type SessionPane = { kind: 'blank' } | { kind: 'live' } | { kind: 'replay' } | { kind: 'replay_running' };

/** A run this window started; `queue` holds records not reduced yet. */
class LiveRun {
  sessionId: string | null = null;
  tree: TreeState = emptyState();
  queue: TraceRecord[] = [];
  running = true;
  readonly project: ProjectInfo | null;
  constructor(project: ProjectInfo | null) {
    this.project = project;
  }
}

const outputKey = (sessionId: string | null, callId: string) => `${sessionId ?? ''}\u0000${callId}`;

/** What the session store is given of the other domains (see stores.ts). */
export interface SessionDeps {
  /** Where the session tells the person something: profile warnings, a run's notes, what failed. */
  notices: NoticeStore;
  /** Opening a project or a past session, or the live run, shows the session view. */
  nav: NavStore;
  /** Another session (or a blank one) is now shown: what was opened from the one before goes. */
  onReset: () => void;
}

export class SessionStore {
  /** The one seam to the outside (api.ts or fake.ts); no view holds it. */
  private readonly backend: Backend;
  private readonly notices: NoticeStore;
  private readonly nav: NavStore;
  private readonly onReset: () => void;
  project = $state<ProjectInfo | null>(null);
  /** The tree shown: the live run's, or a replayed session's. */
  tree = $state.raw<TreeState>(emptyState());
  sessionId = $state<string | null>(null);
  /** The shown session has a run in progress (the Stop button shows). */
  running = $state(false);
  /** What the session pane shows: one of four, never a mix (see `SessionPane`). */
  pane = $state<SessionPane>({ kind: 'blank' });
  /** A session from its trace: approvals cannot be answered, subagents not cancelled from here. */
  get readOnly(): boolean {
    return this.pane.kind === 'replay' || this.pane.kind === 'replay_running';
  }
  /** The shown replay is of a session the app is still running, whose live view this window no longer has. */
  get stillRunning(): boolean {
    return this.pane.kind === 'replay_running';
  }
  /** The live run is what is shown. */
  get liveShown(): boolean {
    return this.pane.kind === 'live';
  }
  /** The live run's session (null before it has started or when there is none). */
  liveSessionId = $state<string | null>(null);
  /** The project the live run works in. */
  liveProject = $state.raw<ProjectInfo | null>(null);
  liveRunning = $state(false);
  selected = $state<string | null>(null);
  now = $state(Date.now());
  sendError = $state<SendError | null>(null);
  /** The prompt being typed: kept across views (a trip to Settings after a failed send must not lose it). */
  draft = $state('');
  /** The person asked to look at the project's own profiles again (after turning them down). */
  reviewingProfiles = $state(false);
  /**
   * Tool calls whose rows are expanded, by session and call id. Kept here rather than in the row: the
   * virtual lists unmount rows scrolled out of view, and a row scrolled back must come back as it was.
   */
  readonly expanded = new SvelteSet<string>();
  /** Approvals answered from this window (by session and call id): their buttons stay disabled. */
  readonly answered = new SvelteSet<string>();

  /** Full outputs that replay left out, fetched when their tool call is expanded. */
  readonly toolOutputs: ToolOutputCache;
  /** The tree and the Timeline show only agents whose result is unsupported (and the way to them). */
  onlyUnsupported = $state(false);

  private live: LiveRun | null = null;
  private frame: number | null = null;
  private clock: ReturnType<typeof setInterval> | null = null;

  constructor(backend: Backend, deps: SessionDeps) {
    this.backend = backend;
    this.notices = deps.notices;
    this.nav = deps.nav;
    this.onReset = deps.onReset;
    this.toolOutputs = new ToolOutputCache((sessionId, callId) => this.backend.loadToolOutput(sessionId, callId));
  }

  /** Starts the clock running durations are drawn against. */
  start(): void {
    this.clock = setInterval(() => {
      this.now = Date.now();
    }, 500);
  }

  /** Stops the clock (the window is going). */
  stop(): void {
    if (this.clock !== null) clearInterval(this.clock);
  }

  private fail(e: unknown): void {
    this.notices.fail(e);
  }

  /** A sink for one run's channel: its records are kept with that run, reduced while it is the live one. */
  private sink(run: LiveRun): (batch: TraceRecord[]) => void {
    return (batch) => {
      for (const r of batch) run.queue.push(r);
      if (run === this.live) this.schedule();
    };
  }

  private schedule(): void {
    if (this.frame === null) {
      const raf = typeof requestAnimationFrame === 'function' ? requestAnimationFrame : (f: () => void) => setTimeout(f, 16);
      this.frame = raf(() => this.flush()) as unknown as number;
    }
  }

  flush(): void {
    this.frame = null;
    const run = this.live;
    if (run === null || run.queue.length === 0) return;
    const batch = run.queue;
    run.queue = [];
    run.tree = applyRecords(run.tree, batch);
    const root = run.tree.rootId === null ? undefined : run.tree.nodes.get(run.tree.rootId);
    if (root !== undefined && root.endedMs !== null && root.status !== 'running') run.running = false;
    this.liveRunning = run.running;
    if (this.liveShown) {
      this.tree = run.tree;
      this.running = run.running;
    }
  }

  /** Cancels these sessions' runs (before the window closes). */
  async cancelRuns(ids: readonly string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.backend.cancelRun(id)));
  }

  /** Shows `p` as the open project; rejected profile files are worth telling about before a run needs them. */
  setProject(p: ProjectInfo): void {
    if (this.project?.root !== p.root) this.reviewingProfiles = false;
    this.project = p;
    const name = (e: { path: string }) => e.path.split('/').pop() ?? e.path;
    const rejected = p.profile_errors.filter((e) => !e.loaded);
    const changed = p.profile_errors.filter((e) => e.loaded);
    const n = rejected.length;
    if (n > 0) {
      const files = rejected.map(name).join(', ');
      this.notices.notify('warning', `${n} agent profile${n > 1 ? 's' : ''} in ${p.name} could not be loaded (${files}); see Settings › Agent profiles for why.`);
    }
    if (changed.length > 0) {
      const what = changed.map((e) => `${name(e)}: ${e.reason}`).join('; ');
      this.notices.notify('warning', `Agent profiles of ${p.name} in use with changes — ${what}`);
    }
  }

  /**
   * Records the person's answer about the open project's own profiles, for the digest they were shown.
   * Until they trust them, runs use the built-in profiles only (the runtime checks the digest itself).
   * A session's profiles are fixed when it starts, so unless a run is going the view moves to a new
   * session, where the answer applies (the old one stays in History).
   */
  async answerProjectProfiles(trusted: boolean): Promise<void> {
    const digest = this.project?.profiles_digest ?? null;
    if (digest === null) return;
    try {
      this.setProject(await this.backend.answerProjectProfiles(digest, trusted));
      this.reviewingProfiles = false;
      if (!this.running && this.sessionId !== null) this.reset();
    } catch (e) {
      this.fail(e);
    }
  }

  /** Opens a project; the live run's own project comes back with the live run shown. */
  async openProject(path: string): Promise<void> {
    try {
      const p = await this.backend.openProject(path);
      this.setProject(p);
      if (!(this.liveProject?.root === p.root && this.showLive())) this.reset();
      this.nav.view = 'session';
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * A second `canopy FOLDER` opened another project in the app: follow it. A run still going in the old
   * project keeps running in the app, and comes back into view when that project is opened again.
   */
  projectOpened(p: ProjectInfo): void {
    const before = this.project;
    if (before !== null && before.root === p.root) {
      this.setProject(p);
      return;
    }
    const leftRunning = this.liveRunning && this.liveProject !== null && this.liveProject.root !== p.root;
    const runIn = this.liveProject;
    this.setProject(p);
    if (!(this.liveProject?.root === p.root && this.showLive())) this.reset();
    this.nav.view = 'session';
    this.notices.notify(
      'info',
      leftRunning && runIn !== null
        ? `Opened ${p.name} from the command line. The run in ${runIn.name} is still going; open ${runIn.name} again to get back to it.`
        : `Opened ${p.name} from the command line.`,
    );
  }

  /** Shows a blank new session. The live run, if any, goes on in the background (see `showLive`). */
  reset(): void {
    this.tree = emptyState();
    this.toolOutputs.clear();
    this.sessionId = null;
    this.selected = null;
    this.running = false;
    this.pane = { kind: 'blank' };
    this.sendError = null;
    this.onReset();
  }

  /** Shows the live run as it is now; false when there is none. */
  showLive(): boolean {
    const run = this.live;
    if (run === null) return false;
    if (run.queue.length > 0) this.flush();
    this.reset();
    this.pane = { kind: 'live' };
    this.tree = run.tree;
    this.sessionId = run.sessionId;
    this.running = run.running;
    this.nav.view = 'session';
    return true;
  }

  /** Back to the live run, reopening its project if another one is open now. */
  async backToLive(): Promise<void> {
    const p = this.liveProject;
    if (p !== null && this.project?.root !== p.root) await this.openProject(p.root);
    else this.showLive();
  }

  /** Sends a prompt: a follow-up in the live run when it is shown, else a new session. False on failure. */
  async send(prompt: string): Promise<boolean> {
    this.notices.error = null;
    this.sendError = null;
    const run = this.live;
    if (this.liveShown && run !== null && run.sessionId !== null) {
      const was = run.running;
      run.running = true;
      this.running = this.liveRunning = true;
      try {
        await this.backend.sendMessage(run.sessionId, prompt, this.sink(run));
        return true;
      } catch (e) {
        run.running = was;
        this.liveRunning = was;
        if (this.liveShown && this.live === run) this.running = was;
        this.sendFailed(e);
        return false;
      }
    }
    // Until the backend has started it, the new run's records wait in its own queue: a start that fails
    // must not take the place of a live run that is still going.
    const next = new LiveRun(this.project);
    this.tree = emptyState();
    this.running = true;
    this.pane = { kind: 'blank' };
    try {
      const h = await this.backend.startRun(prompt, this.sink(next));
      for (const n of h.notices) this.notices.notify('info', n);
      next.sessionId = h.session_id;
      this.live = next;
      this.liveSessionId = h.session_id;
      this.liveProject = next.project;
      this.liveRunning = next.running;
      // The person may have moved on while it started (History, another project): show it only where they asked.
      if (this.sessionId === null && !this.readOnly && this.project?.root === next.project?.root) this.showLive();
      if (next.queue.length > 0) this.schedule();
      return true;
    } catch (e) {
      if (this.sessionId === null && !this.readOnly) this.running = false;
      this.sendFailed(e);
      return false;
    }
  }

  private sendFailed(e: unknown): void {
    const err = toApiError(e);
    this.sendError = { code: err.code, message: err.message, settings: SETTINGS_CODES.has(err.code) };
  }

  /** Stops the shown session's run: the live one, or one still running that this window shows from its trace. */
  async stopRun(): Promise<void> {
    const id = this.sessionId;
    if (id === null) return;
    const elsewhere = this.stillRunning;
    try {
      const stopped = await this.backend.cancelRun(id);
      if (elsewhere) {
        // No channel brings this run's end here: read its trace again once the app says it is over.
        await this.reloadWhenEnded(id);
      } else if (!stopped) {
        // The app has nothing running for this session, so no `run_ended` will come to clear the flag.
        if (this.live?.sessionId === id) {
          this.live.running = false;
          this.liveRunning = false;
        }
        if (this.sessionId === id) this.running = false;
      }
    } catch (e) {
      this.fail(e);
    }
  }

  private async reloadWhenEnded(id: string): Promise<void> {
    for (let i = 0; i < 40; i += 1) {
      const s = (await this.backend.listSessions()).find((x) => x.session_id === id);
      if (s === undefined || s.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (this.sessionId === id && this.readOnly) await this.refreshReplay();
  }

  /** Reads the shown replay's trace again (for a session still running elsewhere in the app). */
  async refreshReplay(): Promise<void> {
    const id = this.sessionId;
    if (id === null || !this.readOnly) return;
    try {
      const s = (await this.backend.listSessions()).find((x) => x.session_id === id);
      const selected = this.selected;
      await this.loadHistory(id, s?.status);
      if (this.sessionId === id && selected !== null && this.tree.nodes.has(selected)) this.selected = selected;
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

  /** Answers an approval of the shown session once: a second click while (or after) it goes out does nothing. */
  async answerApproval(callId: string, answer: ApprovalAnswer): Promise<void> {
    const id = this.sessionId;
    if (id === null || this.readOnly) return;
    const key = outputKey(id, callId);
    if (this.answered.has(key)) return;
    this.answered.add(key);
    try {
      await this.backend.answerApproval(id, callId, answer);
    } catch (e) {
      // Gone already (the run ended or it was answered): nothing to answer again. Anything else may be retried.
      if (toApiError(e).code !== 'no_such_approval') this.answered.delete(key);
      this.fail(e);
    }
  }

  isAnswered(callId: string): boolean {
    return this.answered.has(outputKey(this.sessionId, callId));
  }

  isExpanded(sessionId: string | null, callId: string): boolean {
    return this.expanded.has(outputKey(sessionId, callId));
  }

  setExpanded(sessionId: string | null, callId: string, open: boolean): void {
    const k = outputKey(sessionId, callId);
    if (open) this.expanded.add(k);
    else this.expanded.delete(k);
  }

  /**
   * Shows a session from History. The live run is shown live. A session the app is still running
   * elsewhere (`status` `running`) is shown from its trace as it stands, not marked interrupted.
   */
  async loadHistory(sessionId: string, status?: SessionState): Promise<void> {
    if (sessionId === this.liveSessionId && this.project !== null && this.liveProject?.root === this.project.root && this.showLive()) return;
    try {
      const records = await this.backend.loadSession(sessionId);
      this.reset();
      const tree = applyRecords(emptyState(), records);
      const still = status === 'running';
      // A stored trace without `run_ended` means the app stopped mid-run: show those nodes as interrupted.
      this.tree = still ? tree : finalizeRun(tree);
      this.sessionId = sessionId;
      this.pane = { kind: still ? 'replay_running' : 'replay' };
      this.running = still;
      this.nav.view = 'session';
    } catch (e) {
      const err = toApiError(e);
      // The id in the backend's message means nothing to a person; what happened does.
      this.notices.error = err.code === 'session_gone' ? 'This session is no longer in History: its trace file was deleted or moved.' : err.message;
    }
  }
}
