//! The backend calls the views need, grouped by domain. `Backend` (api.ts in the app, fake.ts in the
//! browser preview) is the one seam to the outside; only the stores and these services hold it, and
//! views reach it through them (`stores.projects`, `stores.history`, `stores.models`, `stores.files`,
//! `stores.about`, `stores.window`; see stores.ts), never directly: ESLint refuses a view that imports
//! api.ts, fake.ts or Tauri (eslint.config.js; `seam.test.ts` keeps the rule honest).

import type { Backend } from './api';
import type { ProjectInfo, CheckedEvidence, ConnectionTest, EditorOpened, KeyStatus, ModelListing, ModelSlot, ModelSlotConfig, OllamaStatus, RecentProject, RecheckedEvidence, SessionSummary } from './types';

/** Recent projects and the folder picker (the Start view). */
export class ProjectsService {
  constructor(private readonly backend: Backend) {}
  recent(): Promise<RecentProject[]> {
    return this.backend.listRecentProjects();
  }
  pickFolder(): Promise<string | null> {
    return this.backend.pickFolder();
  }
  forget(path: string): Promise<void> {
    return this.backend.forgetProject(path);
  }
  /** The project the app was started on (its command line), if any. */
  current(): Promise<ProjectInfo | null> {
    return this.backend.currentProject().catch(() => null);
  }
}

/** Past sessions (the History view). */
export class HistoryService {
  constructor(private readonly backend: Backend) {}
  list(): Promise<SessionSummary[]> {
    return this.backend.listSessions();
  }
  remove(sessionId: string): Promise<void> {
    return this.backend.deleteSession(sessionId);
  }
}

/** A model slot's endpoint, key and models as the settings screen shows them (unsaved or not). */
export class ModelsService {
  constructor(private readonly backend: Backend) {}
  keyStatus(slot: ModelSlot, baseUrl?: string): Promise<KeyStatus> {
    return this.backend.apiKeyStatus(slot, baseUrl);
  }
  setKey(slot: ModelSlot, key: string, baseUrl?: string): Promise<void> {
    return this.backend.setApiKey(slot, key, baseUrl);
  }
  deleteKey(slot: ModelSlot, baseUrl?: string): Promise<void> {
    return this.backend.deleteApiKey(slot, baseUrl);
  }
  detectOllama(): Promise<OllamaStatus> {
    return this.backend.detectOllama();
  }
  testConnection(slot: ModelSlot, config?: ModelSlotConfig): Promise<ConnectionTest> {
    return this.backend.testConnection(slot, config);
  }
  listModels(slot: ModelSlot, config?: ModelSlotConfig): Promise<ModelListing[]> {
    return this.backend.listModels(slot, config);
  }
}

/** The file viewer's ways out (the file manager, the person's editor), and evidence checked against the files now. */
export class FilesService {
  constructor(private readonly backend: Backend) {}
  recheckEvidence(items: CheckedEvidence[]): Promise<RecheckedEvidence> {
    return this.backend.recheckEvidence(items);
  }
  reveal(path: string): Promise<void> {
    return this.backend.revealFile(path);
  }
  openInEditor(path: string, line?: number): Promise<EditorOpened> {
    return this.backend.openInEditor(path, line);
  }
}

/** What About shows. */
export class AboutService {
  constructor(private readonly backend: Backend) {}
  version(): Promise<string> {
    return this.backend.appVersion();
  }
}

/** The window itself: asking before it closes, and closing it. */
export class WindowService {
  constructor(private readonly backend: Backend) {}
  /** See `Backend.onCloseRequested`. */
  onCloseRequested(handler: () => boolean): Promise<() => void> {
    return this.backend.onCloseRequested(handler);
  }
  close(): Promise<void> {
    return this.backend.closeWindow();
  }
}
