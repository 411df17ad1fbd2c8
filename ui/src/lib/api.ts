//! Typed wrappers over every command in docs/commands.md. Inside Tauri they call `invoke`; in a plain
//! browser (`npm run dev`, screenshots) a fake backend replays a bundled demo run instead.

import { Channel, invoke } from '@tauri-apps/api/core';
import { toApiError } from './errors';
import { listen } from '@tauri-apps/api/event';
import type {
  ApprovalAnswer,
  CheckedEvidence,
  ConnectionTest,
  EditorOpened,
  FileWindow,
  KeyStatus,
  ModelSlot,
  ModelSlotConfig,
  OllamaStatus,
  OnEvents,
  ProjectInfo,
  RecentProject,
  RecheckedEvidence,
  RunHandle,
  SessionSummary,
  Settings,
  TraceRecord,
  ModelListing,
} from './types';

export interface Backend {
  readonly kind: 'tauri' | 'demo';
  openProject(path: string): Promise<ProjectInfo>;
  currentProject(): Promise<ProjectInfo | null>;
  listRecentProjects(): Promise<RecentProject[]>;
  forgetProject(path: string): Promise<void>;
  /** The person's answer about the open project's own profiles as shown (`digest` from its ProjectInfo). */
  answerProjectProfiles(digest: string, trusted: boolean): Promise<ProjectInfo>;
  /** Things to tell the person once (an unusable settings file moved aside, `CANOPY_*` overrides…). */
  startupWarnings(): Promise<string[]>;
  /** Calls `handler` when a second `canopy FOLDER` opened FOLDER in this app; resolves to an unsubscribe. */
  onProjectOpened(handler: (project: ProjectInfo) => void): Promise<() => void>;
  /** Calls `handler` with a message when something asked for outside the window failed (a second
   *  `canopy FOLDER` naming a folder that cannot be opened); resolves to an unsubscribe. */
  onAppWarning(handler: (message: string) => void): Promise<() => void>;
  pickFolder(): Promise<string | null>;
  startRun(prompt: string, onEvents: OnEvents): Promise<RunHandle>;
  sendMessage(sessionId: string, prompt: string, onEvents: OnEvents): Promise<RunHandle>;
  /** False when nothing was running. */
  cancelRun(sessionId: string): Promise<boolean>;
  /** False when that subagent had already ended. */
  cancelNode(sessionId: string): Promise<boolean>;
  answerApproval(sessionId: string, callId: string, answer: ApprovalAnswer): Promise<void>;
  listSessions(): Promise<SessionSummary[]>;
  /** For replay: tool outputs over REPLAY_INLINE_OUTPUT_BYTES (generated) come as `output: ""` with `output_elided: true`. */
  loadSession(sessionId: string): Promise<TraceRecord[]>;
  /** The full recorded output of `callId`; `sessionId` is the session (root or descendant) that made the call. */
  loadToolOutput(sessionId: string, callId: string): Promise<string>;
  deleteSession(sessionId: string): Promise<void>;
  readProjectFile(path: string, startLine?: number, endLine?: number): Promise<FileWindow>;
  /** Recorded evidence checked against the open project now (existence, text, staleness); nothing is written. */
  recheckEvidence(items: CheckedEvidence[]): Promise<RecheckedEvidence>;
  revealFile(path: string): Promise<void>;
  /** Opens the file at `line` in $VISUAL/$EDITOR when it is a known desktop editor, else with the default app. */
  openInEditor(path: string, line?: number): Promise<EditorOpened>;
  getSettings(): Promise<Settings>;
  saveSettings(settings: Settings): Promise<Settings>;
  /** `config`: the slot as shown on screen, saved or not (validated like Save); without it, the
   *  settings in force. Only the key stored for that endpoint's origin is sent. */
  testConnection(slot: ModelSlot, config?: ModelSlotConfig): Promise<ConnectionTest>;
  listModels(slot: ModelSlot, config?: ModelSlotConfig): Promise<ModelListing[]>;
  detectOllama(): Promise<OllamaStatus>;
  /** Keys belong to a slot and the origin of `baseUrl` (the endpoint on screen); without `baseUrl`,
   *  the slot's endpoint in the settings in force. */
  setApiKey(slot: ModelSlot, key: string, baseUrl?: string): Promise<void>;
  deleteApiKey(slot: ModelSlot, baseUrl?: string): Promise<void>;
  apiKeyStatus(slot: ModelSlot, baseUrl?: string): Promise<KeyStatus>;
  /**
   * Calls `handler` when the person asks to close the window; when it returns true the window stays
   * open (the page asks first, then calls `closeWindow`). While registered, the app no longer cancels
   * runs on a close by itself. Resolves to an unsubscribe. No window in the browser preview: a no-op.
   */
  onCloseRequested(handler: () => boolean): Promise<() => void>;
  /** Closes the window now, without another close request (the app exits with it). */
  closeWindow(): Promise<void>;
  /** The app's version (the one `canopy --version` prints and the package carries), for About. */
  appVersion(): Promise<string>;
}

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw toApiError(e);
  }
}

function channel(onEvents: OnEvents): Channel<TraceRecord[]> {
  const ch = new Channel<TraceRecord[]>();
  ch.onmessage = (batch) => onEvents(batch);
  return ch;
}

export const tauriBackend: Backend = {
  kind: 'tauri',
  openProject: (path) => call('open_project', { path }),
  currentProject: () => call('current_project'),
  listRecentProjects: () => call('list_recent_projects'),
  forgetProject: (path) => call('forget_project', { path }),
  answerProjectProfiles: (digest, trusted) => call('answer_project_profiles', { digest, trusted }),
  startupWarnings: () => call('startup_warnings'),
  onProjectOpened: (handler) => listen<ProjectInfo>('project_opened', (e) => handler(e.payload)),
  onAppWarning: (handler) => listen<string>('app_warning', (e) => handler(e.payload)),
  pickFolder: async () => {
    const { open } = await import('@tauri-apps/plugin-dialog');
    const picked = await open({ directory: true, multiple: false, title: 'Open a project folder' });
    return typeof picked === 'string' ? picked : null;
  },
  startRun: (prompt, onEvents) => call('start_run', { prompt, onEvent: channel(onEvents) }),
  sendMessage: (sessionId, prompt, onEvents) =>
    call('send_message', { sessionId, prompt, onEvent: channel(onEvents) }),
  cancelRun: (sessionId) => call('cancel_run', { sessionId }),
  cancelNode: (sessionId) => call('cancel_node', { sessionId }),
  answerApproval: (sessionId, callId, answer) => call('answer_approval', { sessionId, callId, answer }),
  listSessions: () => call('list_sessions'),
  loadSession: (sessionId) => call('load_session', { sessionId }),
  loadToolOutput: (sessionId, callId) => call('load_tool_output', { sessionId, callId }),
  deleteSession: (sessionId) => call('delete_session', { sessionId }),
  readProjectFile: (path, startLine, endLine) => call('read_project_file', { path, startLine, endLine }),
  recheckEvidence: (items) => call('recheck_evidence', { items }),
  revealFile: (path) => call('reveal_file', { path }),
  openInEditor: (path, line) => call('open_in_editor', { path, line }),
  getSettings: () => call('get_settings'),
  saveSettings: (settings) => call('save_settings', { settings }),
  testConnection: (slot, config) => call('test_connection', { slot, config }),
  listModels: (slot, config) => call('list_models', { slot, config }),
  detectOllama: () => call('detect_ollama'),
  setApiKey: (slot, key, baseUrl) => call('set_api_key', { slot, key, baseUrl }),
  deleteApiKey: (slot, baseUrl) => call('delete_api_key', { slot, baseUrl }),
  apiKeyStatus: (slot, baseUrl) => call('api_key_status', { slot, baseUrl }),
  onCloseRequested: async (handler) => {
    const { getCurrentWindow } = await import('@tauri-apps/api/window');
    const unlisten = await getCurrentWindow().onCloseRequested((e) => {
      if (handler()) e.preventDefault();
    });
    try {
      // Only once the listener is in place: until then the app's own close handler keeps runs safe.
      await call('guard_close', { on: true });
    } catch (e) {
      unlisten();
      throw e;
    }
    return () => {
      unlisten();
      void call('guard_close', { on: false }).catch(() => undefined);
    };
  },
  closeWindow: async () => {
    const { getCurrentWindow } = await import('@tauri-apps/api/window');
    try {
      await getCurrentWindow().destroy();
    } catch (e) {
      throw toApiError(e);
    }
  },
  appVersion: async () => {
    const { getVersion } = await import('@tauri-apps/api/app');
    try {
      return await getVersion();
    } catch (e) {
      throw toApiError(e);
    }
  },
};

export function inTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** The real backend inside Tauri, otherwise the demo backend (loaded lazily so it stays out of the way). */
export async function pickBackend(): Promise<Backend> {
  if (inTauri()) return tauriBackend;
  const { createFakeBackend } = await import('./fake');
  // `?warning=text` (repeatable) previews the startup-warnings banner.
  const q = new URLSearchParams(typeof location === 'undefined' ? '' : location.search);
  return createFakeBackend({ startupWarnings: q.getAll('warning') });
}
