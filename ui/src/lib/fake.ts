//! The demo backend for a plain browser: replays the bundled demo run with its real timing, answers
//! approvals and cancels the way the app does, and keeps settings and keys in memory. It is never used
//! inside Tauri.

import type { Backend } from './api';
import { ApiError, toApiError } from './errors';
import { demoRun, demoRunInteractive, DEMO_ROOT } from './fixtures/demo';
import { keyOrigin } from './keyOrigin';
import { BUILTIN_PROFILES, MAX_PARALLELISM, MAX_WINDOW_LINES, REPLAY_INLINE_OUTPUT_BYTES } from '../generated/constants';
import { isLoopbackUrl } from './setup';
import { deriveTrust, summarize } from './trust';
import type {
  CheckedEvidence,
  KeyStatus,
  ModelSlot,
  OnEvents,
  ProjectInfo,
  RecentProject,
  SessionSummary,
  Settings,
  TraceRecord,
  ModelListing,
} from './types';

const PROJECT: ProjectInfo = {
  root: DEMO_ROOT,
  name: 'tiny-http',
  profiles: [
    { name: 'main', description: 'The main agent the person talks to.', model: 'main', read_only: false, tools: ['Read', 'Grep', 'Glob', 'Edit', 'Write', 'Bash', 'TodoWrite', 'Task'], budgets: BUILTIN_PROFILES.main.budgets, source: null, system_prompt: 'You are Canopy, a careful coding agent…' },
    { name: 'explore', description: 'Read-only search of the project: finds where and how something is done, with evidence.', model: 'light', read_only: true, tools: ['Read', 'Grep', 'Glob'], budgets: BUILTIN_PROFILES.explore.budgets, source: null, system_prompt: 'You are an explore subagent…' },
    { name: 'verify', description: 'Read-only check of a claim or a finished change: returns PASS/FAIL/PARTIAL/UNVERIFIED with reasons.', model: 'main', read_only: true, tools: ['Read', 'Grep', 'Glob'], budgets: BUILTIN_PROFILES.verify.budgets, source: null, system_prompt: 'You are a verify subagent…' },
    { name: 'http-spec', description: 'Checks handlers against RFC 9112 framing rules.', model: 'light', read_only: true, tools: ['Read', 'Grep'], budgets: { max_steps: 8, max_context_tokens: 16_000, max_total_tokens: 24_000, max_wall_time_ms: 120_000 }, source: `${DEMO_ROOT}/.canopy/agents/http-spec.md`, system_prompt: 'You check HTTP/1.1 handlers against RFC 9112 message framing. Answer with the explore JSON object.' },
  ],
  profile_errors: [{ path: `${DEMO_ROOT}/.canopy/agents/fuzz.md`, reason: 'tools: unknown tool `Fetch` (known: Read, Grep, Glob, Edit, Write, Bash, TodoWrite, Task)', loaded: false }],
  profiles_digest: 'demo-profiles-digest',
  // The demo's person trusted the demo's profile before; the app would ask first.
  profiles_trust: 'trusted',
};

const FILLER = [
  'use std::io;',
  '',
  '/// Keeps the hot path allocation-free.',
  'fn helper(buf: &mut Vec<u8>) -> usize {',
  '    buf.len()',
  '}',
  '',
  'impl Drop for Guard {',
  '    fn drop(&mut self) {}',
  '}',
];

/** Demo source files: filler code with the lines the demo evidence cites at the cited numbers. */
const FILES: Record<string, { total: number; lines: Record<number, string> }> = {
  'src/server.rs': {
    total: 212,
    lines: {
      40: 'impl Server {',
      41: '    pub fn run(&mut self) -> io::Result<()> {',
      42: '        loop {',
      43: '            self.poller.wait(&mut self.events, None)?;',
      44: '            for ev in self.events.iter() {',
      45: '                if ev.token() == LISTENER {',
      46: '                    let (stream, addr) = self.listener.accept()?;',
      47: '                    self.poller.register(&stream, Interest::READABLE)?;',
      48: '            let id = self.pool.insert(Connection::new(stream, addr));',
      49: '                    self.timeouts.arm(id, self.keep_alive);',
      50: '                    continue;',
      51: '                }',
    },
  },
  'src/conn.rs': {
    total: 340,
    lines: {
      118: '    pub fn read(&mut self) -> Closed {',
      119: '        match self.stream.read(&mut self.buf) {',
      120: '            Ok(n) if n > 0 => self.parse(n),',
      121: '        Ok(0) => return Closed::Eof,',
      122: '            // The peer closed: release the slot (and the fd) now.',
      123: '            Ok(_) => self.pool.remove(self.id),',
      130: '    fn close(&mut self) {',
      131: '        self.pool.remove(self.id);',
      140: '            Err(e) => return Closed::Error(e),',
    },
  },
  'src/pool.rs': {
    total: 96,
    lines: {
      28: '    /// Frees the slot; dropping the Connection closes its socket.',
      29: '    #[must_use]',
      30: '    pub fn remove(&mut self, id: usize) -> Option<Connection> {',
      31: '        self.slab.try_remove(id)',
      32: '    }',
    },
  },
  // Long enough that a citation near its end lies past the first 5000-line window the backend returns.
  'src/tables.rs': {
    total: 8000,
    lines: {
      7001: '/// Status codes the parser accepts; anything else is a 400.',
      7002: 'pub const STATUS: [u16; 63] = [',
    },
  },
  'src/timeout.rs': {
    total: 120,
    lines: {
      52: '    /// Called by the timer wheel when a keep-alive connection has been idle too long.',
      53: '    pub fn on_idle(&mut self, id: usize) -> io::Result<()> {',
      54: '        let Some(conn) = self.pool.get_mut(id) else {',
      55: '            return Ok(());',
      56: '        };',
      57: '        self.poller.deregister(&conn.stream)?;',
      58: '        // BUG: the connection is never removed from the pool, so its fd stays open.',
      59: '        conn.idle = true;',
      60: '        Ok(())',
      61: '    }',
    },
  },
};

const listed = (id: string, context_window: number | null = null, input: number | null = null, output: number | null = null): ModelListing => ({
  id,
  context_window,
  input_price_per_mtok: input,
  output_price_per_mtok: output,
});

const MODELS: Record<string, ModelListing[]> = {
  openai: ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'o4-mini'].map((id) => listed(id)),
  anthropic: ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1'].map((id) => listed(id)),
};

/** OpenRouter answers with hundreds of ids, each with its context length and prices: the model
 * picker must stay usable with that many. */
const OPENROUTER_MODELS: ModelListing[] = ['anthropic', 'openai', 'google', 'meta-llama', 'mistralai', 'qwen', 'deepseek', 'x-ai'].flatMap((vendor) =>
  Array.from({ length: 40 }, (_, i) => listed(`${vendor}/model-${String(i + 1).padStart(2, '0')}`, 131_072, 0.5 + i / 10, 1.5 + i / 5)),
);

function validate(s: Settings): void {
  const bad = (field: string, reason: string) => new ApiError('invalid_settings', `${field}: ${reason}`, [{ field, message: reason }]);
  const slots: [string, Settings['main'] | null][] = [
    ['main', s.main],
    ['light', s.light],
  ];
  for (const [name, c] of slots) {
    if (c === null) continue;
    if (!/^https?:\/\/[^\s/]+/.test(c.base_url)) throw bad(`${name}.base_url`, 'must be an http:// or https:// URL');
    if (c.model.trim() === '') throw bad(`${name}.model`, 'must not be empty');
    if (!Number.isInteger(c.context_window) || c.context_window < 1024)
      throw bad(`${name}.context_window`, 'must be a whole number of at least 1024 tokens');
    if (c.thinking_budget_tokens !== null && c.thinking_budget_tokens < 1024)
      throw bad(`${name}.thinking_budget_tokens`, `must be at least 1024 (the API's minimum), found ${c.thinking_budget_tokens}`);
    for (const k of ['input_price_per_mtok', 'output_price_per_mtok'] as const) {
      const v = c[k];
      if (v !== null && (!Number.isFinite(v) || v < 0)) throw bad(`${name}.${k}`, 'must be a non-negative number');
    }
  }
  if (!Number.isInteger(s.parallelism) || s.parallelism < 1 || s.parallelism > MAX_PARALLELISM)
    throw bad('parallelism', `must be between 1 and ${MAX_PARALLELISM}`);
  for (const [p, o] of Object.entries(s.profiles)) {
    if (o === undefined) continue;
    for (const k of ['max_steps', 'max_context_tokens', 'max_total_tokens', 'max_wall_time_ms'] as const) {
      const v = o[k];
      if (v !== null && (!Number.isInteger(v) || v <= 0)) throw bad(`profiles.${p}.${k}`, 'must be a positive whole number');
    }
  }
}

/** Replay sends tool outputs up to this many bytes inline; longer ones are fetched with `loadToolOutput`. */
export const INLINE_OUTPUT_BYTES = REPLAY_INLINE_OUTPUT_BYTES;

/** The record as `load_session` sends it: a long output replaced by `""` and `output_elided: true`. */
function elideLongOutput(r: TraceRecord): TraceRecord {
  const e = r.event;
  if (e.type !== 'tool_call_end' || new TextEncoder().encode(e.output).length <= INLINE_OUTPUT_BYTES) return r;
  return { ...r, event: { ...e, output: '', output_elided: true } };
}

/** Pending records released on a timer at their `ts_ms`, so the replay keeps real timing. */
class Player {
  private queue: TraceRecord[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;
  readonly seen: TraceRecord[] = [];
  private readonly sink: OnEvents;

  constructor(sink: OnEvents) {
    this.sink = sink;
  }

  push(records: TraceRecord[]): void {
    this.queue.push(...records);
    this.queue.sort((a, b) => a.ts_ms - b.ts_ms);
    if (this.timer === null) this.timer = setInterval(() => this.tick(), 50);
  }

  /** Emits right away (cancel and approval answers must not wait). */
  now(records: TraceRecord[]): void {
    this.seen.push(...records);
    this.sink(records);
  }

  drop(pred: (r: TraceRecord) => boolean): void {
    this.queue = this.queue.filter((r) => !pred(r));
  }

  private tick(): void {
    const t = Date.now();
    let i = 0;
    while (i < this.queue.length && this.queue[i].ts_ms <= t) i += 1;
    if (i > 0) {
      const batch = this.queue.splice(0, i);
      this.now(batch);
    }
    if (this.queue.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

export interface FakeOptions {
  startupWarnings?: string[];
}

/** The demo backend, plus what the app's shell would do on its own (a second `canopy FOLDER`). */
export interface FakeBackend extends Backend {
  secondLaunch(path: string): Promise<void>;
}

export function createFakeBackend(opts: FakeOptions = {}): FakeBackend {
  let settings: Settings = {
    version: 1,
    main: {
      provider: 'anthropic',
      base_url: 'https://api.anthropic.com',
      model: 'claude-sonnet-4-5',
      context_window: 200_000,
      input_price_per_mtok: 3,
      output_price_per_mtok: 15,
      reasoning_effort: null,
      thinking_budget_tokens: null,
      max_output_tokens: 8192,
    },
    light: {
      provider: 'openai',
      base_url: 'https://api.openai.com/v1',
      model: 'gpt-4.1-mini',
      context_window: 128_000,
      input_price_per_mtok: 0.4,
      output_price_per_mtok: 1.6,
      reasoning_effort: null,
      thinking_budget_tokens: null,
      max_output_tokens: 8192,
    },
    // Empty, like a fresh install: the settings screen shows the built-in defaults as placeholders.
    profiles: {},
    parallelism: 4,
    permissions: { edit: 'ask', write: 'ask', bash: 'ask', task: 'allow' },
    verification_gate: false,
    sandbox: { mode: 'required', env_allowlist: [] },
    // The built-in list (canopy-config's DEFAULT_SECRET_FILES).
    withheld_files: [
      '.env*', '*.pem', '*.key', '*.p12', '*.pfx', '*.keystore', '*.jks', 'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*',
      '.ssh', '.gnupg', '.aws/credentials', '.npmrc', '.pypirc', '.netrc', '.git-credentials', 'secrets.*', 'credentials.json',
    ],
  };
  // Keys per slot and endpoint origin, as in the keychain: `main@https://api.openai.com`.
  const keys = new Set<string>([`main@${keyOrigin(settings.main.base_url)?.origin}`]);
  const slotUrl = (slot: ModelSlot): string => (slot === 'light' ? settings.light ?? settings.main : settings.main).base_url;
  const originOf = (slot: ModelSlot, baseUrl?: string) => {
    const o = keyOrigin(baseUrl ?? slotUrl(slot));
    if (o === null) throw new ApiError('invalid_settings', `${slot}.base_url: not a valid http(s) URL`);
    return o;
  };
  const keyStatus = (slot: ModelSlot, baseUrl?: string): KeyStatus => {
    const o = originOf(slot, baseUrl);
    if (keys.has(`${slot}@${o.origin}`)) return { state: 'present', source: 'keychain', reason: null, origin: o.label, stored_for: [] };
    const elsewhere = [...keys].filter((k) => k.startsWith(`${slot}@`)).map((k) => keyOrigin(k.slice(slot.length + 1))?.label ?? k);
    return { state: 'absent', source: null, reason: null, origin: o.label, stored_for: elsewhere };
  };
  let recent: RecentProject[] = [
    { root: DEMO_ROOT, name: 'tiny-http', last_opened_ms: Date.now() - 3_600_000 },
    { root: '/home/ada/work/billing-service', name: 'billing-service', last_opened_ms: Date.now() - 86_400_000 * 3 },
  ];
  let opened = false;
  const day = 86_400_000;
  const oldDone = demoRun(Date.now() - day, { sessionId: 'main-2b91' });
  const oldInterrupted = demoRun(Date.now() - 2 * day, { sessionId: 'main-0c55' }).slice(0, 70);
  const history: Map<string, { summary: SessionSummary; records: TraceRecord[] }> = new Map([
    ['main-2b91', { summary: { session_id: 'main-2b91', started_ms: Date.now() - day, title: 'Why do keep-alive connections leak file descriptors?', status: 'completed', terminal_reason: 'completed', total_tokens: 118_430, sessions: 4, broken_parent: null }, records: oldDone }],
    ['main-0c55', { summary: { session_id: 'main-0c55', started_ms: Date.now() - 2 * day, title: 'Survey the TLS handshake error paths', status: 'interrupted', terminal_reason: null, total_tokens: 41_210, sessions: 3, broken_parent: null }, records: oldInterrupted }],
  ]);
  const projectListeners = new Set<(p: ProjectInfo) => void>();
  const warningListeners = new Set<(message: string) => void>();
  let player: Player | null = null;
  let rest: ((answer: string, at: number) => TraceRecord[]) | null = null;
  let liveId: string | null = null;

  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const needProject = () => {
    if (!opened) throw new ApiError('no_project', 'no project is open');
  };

  /** False when none of `ids` was still running, like the app's cancel commands. */
  function cancelSessions(ids: Set<string>, reason: string): boolean {
    if (player === null) return false;
    const p = player;
    p.drop((r) => ids.has(r.session_id) || ('child_session_id' in r.event && ids.has(r.event.child_session_id)));
    const now = Date.now();
    const last = new Map<string, TraceRecord>();
    for (const r of p.seen) last.set(r.session_id, r);
    const out: TraceRecord[] = [];
    for (const id of ids) {
      const lr = last.get(id);
      if (lr === undefined || p.seen.some((r) => r.session_id === id && r.event.type === 'run_ended')) continue;
      const base = { v: 1, run_id: lr.run_id, session_id: id, parent_session_id: lr.parent_session_id };
      const u = { input_tokens: 0, output_tokens: 0, estimated: false };
      out.push({ ...base, seq: lr.seq + 1, ts_ms: now, event: { type: 'cancel_requested', reason } });
      out.push({
        ...base, seq: lr.seq + 2, ts_ms: now + 1,
        event: { type: 'run_ended', terminal_reason: 'cancelled', final_text: null, result: null, error: null, usage: u, usage_with_descendants: u, totals: { steps: 0, context_tokens: 0, total_tokens: 0, wall_time_ms: 0 }, tool_calls: 0 },
      });
      const parent = lr.parent_session_id;
      if (parent !== null && !ids.has(parent)) {
        const req = p.seen.find((r) => r.event.type === 'subagent_requested' && r.event.child_session_id === id);
        const call = req?.event.type === 'subagent_requested' ? req.event.tool_call_id : '';
        const pb = { v: 1, run_id: lr.run_id, session_id: parent, parent_session_id: null, seq: 0 };
        out.push({ ...pb, ts_ms: now + 2, event: { type: 'subagent_cancelled', tool_call_id: call, child_session_id: id, usage: u, tool_calls: 0, elapsed_ms: 0 } });
        out.push({ ...pb, ts_ms: now + 3, event: { type: 'tool_call_end', call_id: call, tool: 'Task', status: 'cancelled', output: 'Cancelled by user.', output_bytes: 18, output_cap_bytes: 16384, truncated: false, duration_ms: 0 } });
      }
    }
    p.now(out);
    return out.length > 0;
  }

  function subtree(id: string): Set<string> {
    const ids = new Set([id]);
    if (player === null) return ids;
    let grew = true;
    while (grew) {
      grew = false;
      for (const r of player.seen) {
        if (r.parent_session_id !== null && ids.has(r.parent_session_id) && !ids.has(r.session_id)) {
          ids.add(r.session_id);
          grew = true;
        }
        if (r.event.type === 'subagent_requested' && ids.has(r.session_id) && !ids.has(r.event.child_session_id)) {
          ids.add(r.event.child_session_id);
          grew = true;
        }
      }
    }
    return ids;
  }

  const backend: FakeBackend = {
    kind: 'demo',
    async secondLaunch(path) {
      let p: ProjectInfo;
      try {
        p = await backend.openProject(path);
      } catch (e) {
        // As the shell does: the failure reaches the running window as a warning.
        for (const l of warningListeners) l(`Could not open ${path}: ${toApiError(e).message}`);
        return;
      }
      for (const l of projectListeners) l(p);
    },
    async onAppWarning(handler) {
      warningListeners.add(handler);
      return () => warningListeners.delete(handler);
    },
    startupWarnings: async () => (opts.startupWarnings ?? []).slice(),
    appVersion: async () => 'browser preview',
    async onProjectOpened(handler) {
      projectListeners.add(handler);
      return () => projectListeners.delete(handler);
    },
    async openProject(path) {
      await wait(80);
      if (path !== DEMO_ROOT && !recent.some((r) => r.root === path))
        throw new ApiError('not_found', `${path} does not exist (the browser preview only knows the demo project)`);
      opened = true;
      const name = path.split('/').pop() ?? path;
      recent = [{ root: path, name, last_opened_ms: Date.now() }, ...recent.filter((r) => r.root !== path)];
      return path === DEMO_ROOT ? PROJECT : { ...PROJECT, root: path, name };
    },
    currentProject: async () => null,
    listRecentProjects: async () => recent.slice(),
    async forgetProject(path) {
      recent = recent.filter((r) => r.root !== path);
    },
    async answerProjectProfiles(digest, trusted) {
      needProject();
      if (digest !== PROJECT.profiles_digest) throw new ApiError('invalid_argument', "the project's profiles changed since they were shown; look at them again before answering");
      return { ...PROJECT, profiles_trust: trusted ? 'trusted' : 'declined' };
    },
    pickFolder: async () => DEMO_ROOT,
    async startRun(_prompt, onEvents) {
      needProject();
      // As the app checks before a run: a hosted main model needs a key.
      const local = /^https?:\/\/(127\.0\.0\.1|localhost)[:/]/.test(settings.main.base_url);
      if (keyStatus('main').state !== 'present' && !local) throw new ApiError('missing_key', 'no API key for the main model; add one in Settings');
      const sessionId = 'main-7f3a';
      const demo = demoRunInteractive(Date.now() + 150, sessionId);
      player = new Player(onEvents);
      player.push(demo.first);
      rest = demo.rest;
      liveId = sessionId;
      history.set(sessionId, {
        summary: { session_id: sessionId, started_ms: Date.now(), title: 'Find why keep-alive connections leak file descriptors', status: 'running', terminal_reason: null, total_tokens: 0, sessions: 1, broken_parent: null },
        records: player.seen,
      });
      return { session_id: sessionId, run_id: `run-${sessionId}`, notices: [] };
    },
    async sendMessage(sessionId, prompt, onEvents) {
      needProject();
      player = player ?? new Player(onEvents);
      const t = Date.now();
      const runId = `run-${sessionId}-${t}`;
      const base = { v: 1, session_id: sessionId, run_id: runId, parent_session_id: null };
      const reply = 'This preview only replays a recorded run; open the app to talk to a real model.';
      const u = { input_tokens: 900, output_tokens: 40, estimated: false };
      player.push([
        { ...base, seq: 1000, ts_ms: t + 50, event: { type: 'run_started', prompt } },
        { ...base, seq: 1001, ts_ms: t + 100, event: { type: 'model_call_begin', model_call_id: `f${t}`, step: 1, messages: 3, estimated_input_tokens: 900, tools_offered: true } },
        { ...base, seq: 1002, ts_ms: t + 600, event: { type: 'assistant_delta', model_call_id: `f${t}`, text: reply.slice(0, 30) } },
        { ...base, seq: 1003, ts_ms: t + 1100, event: { type: 'model_call_end', model_call_id: `f${t}`, step: 1, text: reply, tool_calls: [], finish_reason: 'stop', usage: u, model: 'demo', latency_ms: 1000, error: null, totals: { steps: 1, context_tokens: 900, total_tokens: 940, wall_time_ms: 1100 } } },
        { ...base, seq: 1004, ts_ms: t + 1150, event: { type: 'run_ended', terminal_reason: 'completed', final_text: reply, result: null, error: null, usage: u, usage_with_descendants: u, totals: { steps: 1, context_tokens: 900, total_tokens: 940, wall_time_ms: 1150 }, tool_calls: 0 } },
      ]);
      return { session_id: sessionId, run_id: runId, notices: [] };
    },
    async cancelRun(sessionId) {
      return cancelSessions(subtree(sessionId), 'user');
    },
    async cancelNode(sessionId) {
      if (sessionId === liveId) throw new ApiError('invalid_argument', 'cancel_node is for subagents; use Stop for the whole run');
      return cancelSessions(subtree(sessionId), 'user');
    },
    async answerApproval(sessionId, callId, answer) {
      if (player === null || rest === null || sessionId !== liveId || callId !== 'call_edit1')
        throw new ApiError('no_such_approval', `no approval is waiting for call ${callId} of session ${sessionId} (answered already, or the run ended)`);
      player.push(rest(answer, Date.now() + 50));
      rest = null;
    },
    async listSessions() {
      needProject();
      // Like the app: the live session is running until its latest run has ended.
      const running = (h: { summary: SessionSummary; records: TraceRecord[] }) => {
        const own = h.records.filter((r) => r.session_id === h.summary.session_id && (r.event.type === 'run_started' || r.event.type === 'run_ended'));
        return own.length === 0 || own[own.length - 1].event.type === 'run_started';
      };
      return [...history.values()]
        .map((h) => (h.summary.session_id === liveId ? { ...h.summary, status: running(h) ? ('running' as const) : ('completed' as const) } : h.summary))
        .sort((a, b) => b.started_ms - a.started_ms);
    },
    async loadSession(sessionId) {
      const h = history.get(sessionId);
      if (h === undefined) throw new ApiError('session_gone', `unknown session \`${sessionId}\``);
      // Like the app: the root's records first, then every descendant's, long tool outputs left out.
      const root = h.records.filter((r) => r.session_id === sessionId);
      return [...root, ...h.records.filter((r) => r.session_id !== sessionId)].map(elideLongOutput);
    },
    async loadToolOutput(sessionId, callId) {
      await wait(120);
      for (const h of history.values()) {
        for (const r of h.records) {
          if (r.session_id === sessionId && r.event.type === 'tool_call_end' && r.event.call_id === callId) return r.event.output;
        }
      }
      const known = [...history.values()].some((h) => h.records.some((r) => r.session_id === sessionId));
      // The app's two answers: no trace file for that session, or no such call in it.
      if (!known) throw new ApiError('session_gone', `unknown session \`${sessionId}\``);
      throw new ApiError('not_found', `no tool call \`${callId}\` in session \`${sessionId}\``);
    },
    async deleteSession(sessionId) {
      if (!history.delete(sessionId)) throw new ApiError('not_found', `no session ${sessionId}`);
    },
    async readProjectFile(path, startLine, endLine) {
      needProject();
      await wait(40);
      if (path.startsWith('/') || path.split('/').includes('..'))
        throw new ApiError('outside_project', `${path} is outside the project`);
      const f = FILES[path];
      if (f === undefined) throw new ApiError('not_found', `${path} does not exist in the project`);
      const lines: string[] = [];
      for (let i = 1; i <= f.total; i += 1) lines.push(f.lines[i] ?? FILLER[i % FILLER.length]);
      const s = Math.max(1, startLine ?? 1);
      if (s > Math.max(1, f.total)) throw new ApiError('invalid_argument', `${path} has ${f.total} lines; cannot start at line ${s}`);
      // Like the app: at most MAX_WINDOW_LINES lines per call.
      const e = Math.min(f.total, endLine ?? f.total, s + MAX_WINDOW_LINES - 1);
      return { path, total_lines: f.total, start_line: s, lines: lines.slice(s - 1, e), language: 'rust' };
    },
    async recheckEvidence(items) {
      needProject();
      await wait(30);
      // The demo's files never change after the run read them, so nothing turns stale here; what the
      // disk check finds (a missing file, a line past the end) is found as the app would.
      const now = items.map((e) => {
        const f = FILES[e.path];
        const outside = e.path.startsWith('/') || e.path.split('/').includes('..');
        const state: CheckedEvidence['state'] =
          e.state === 'unparseable' ? 'unparseable' : outside ? 'outside_project' : f === undefined ? 'missing_file' : e.line > f.total || (e.end_line ?? e.line) > f.total ? 'line_out_of_range' : 'valid';
        const text = state === 'valid' && f !== undefined ? (f.lines[e.line] ?? FILLER[e.line % FILLER.length]).trimEnd() : null;
        const out: CheckedEvidence = { ...e, state, text, stale: state === 'valid' ? e.stale : undefined };
        if (out.stale !== true) delete out.stale;
        const trust = deriveTrust(out);
        if (trust === undefined) delete out.trust;
        else out.trust = trust;
        return out;
      });
      return { items: now, trust: summarize(now) };
    },
    revealFile: async () => undefined,
    async openInEditor(path, line) {
      needProject();
      if (FILES[path] === undefined) throw new ApiError('not_found', `${path} does not exist in the project`);
      // As on a desktop with VISUAL=code.
      return { editor: 'VS Code', line: line ?? null, note: null };
    },
    getSettings: async () => structuredClone(settings),
    async saveSettings(s) {
      await wait(60);
      validate(s);
      settings = structuredClone(s);
      return structuredClone(settings);
    },
    async testConnection(slot, onScreen) {
      await wait(500);
      const c = onScreen ?? (slot === 'main' ? settings.main : settings.light);
      if (c === null) throw new ApiError('not_configured', 'the light slot is not configured; subagents use the main model');
      if (keyStatus(slot, c.base_url).state !== 'present' && !isLoopbackUrl(c.base_url))
        throw new ApiError('missing_key', `No API key for the ${slot} model. Set the environment variable CANOPY_${slot.toUpperCase()}_API_KEY, or enter it in Settings → Models → API key (stored in the OS keychain).`);
      return { ok: true, latency_ms: 412, model: c.model, error: null };
    },
    async listModels(slot, onScreen) {
      await wait(150);
      const c = onScreen ?? (slot === 'main' ? settings.main : settings.light);
      if (c?.base_url.includes('openrouter.ai')) return OPENROUTER_MODELS;
      return MODELS[c?.provider ?? 'openai'] ?? [];
    },
    detectOllama: async () => ({ found: false, base_url: 'http://127.0.0.1:11434/v1', models: [] }),
    async setApiKey(slot, key, baseUrl) {
      if (key.trim() === '') throw new ApiError('invalid_key', 'invalid API key: it is empty');
      keys.add(`${slot}@${originOf(slot, baseUrl).origin}`);
    },
    async deleteApiKey(slot, baseUrl) {
      keys.delete(`${slot}@${originOf(slot, baseUrl).origin}`);
    },
    apiKeyStatus: async (slot, baseUrl) => keyStatus(slot, baseUrl),
    // A browser tab has no window API to ask before closing: nothing to register, nothing to close.
    onCloseRequested: async () => () => undefined,
    closeWindow: async () => undefined,
  };
  return backend;
}
