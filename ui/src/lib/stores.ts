//! The one place the stores are made and wired to each other: one store per domain, each given the
//! backend seam (or the few calls it needs) and, where one domain must touch another, that store or a
//! callback, never a shared parent object. App calls `createStores` once and provides the result
//! through context (context.ts); a test calls it with the fake backend.

import type { Backend } from './api';
import { EvidenceChecks } from './evidence.svelte';
import { FileViewerStore } from './fileViewer.svelte';
import { NavStore } from './nav.svelte';
import { NoticeStore } from './notices.svelte';
import { SessionStore } from './session.svelte';
import { SettingsFormStore } from './settingsForm.svelte';
import { AboutService, FilesService, HistoryService, ModelsService, ProjectsService, WindowService } from './services';
import { toApiError } from './errors';

/** What `createStores` is made from (App gets it from main.ts and passes it on, never calling it). */
export type { Backend } from './api';

export interface Stores {
  /** Which backend this is: the app's, or the browser preview's demo. */
  readonly backendKind: Backend['kind'];
  /** Which view the window shows. */
  readonly nav: NavStore;
  /** The open project, the live or replayed run, selection, sending, approvals. */
  readonly session: SessionStore;
  /** The saved settings, the form's draft and its errors, whether a model still needs setting up. */
  readonly settingsForm: SettingsFormStore;
  /** The file open in the viewer. */
  readonly fileViewer: FileViewerStore;
  /** Evidence re-checked against the disk when it is opened (the shown session's). */
  readonly evidence: EvidenceChecks;
  /** Dismissible notices and the error toast. */
  readonly notices: NoticeStore;
  readonly projects: ProjectsService;
  readonly history: HistoryService;
  readonly models: ModelsService;
  readonly files: FilesService;
  readonly about: AboutService;
  readonly window: WindowService;
  /** Listens for what the backend says unasked (another project opened from the command line, warnings)
   *  and shows the startup warnings; resolves to an unsubscribe. */
  listen(): Promise<() => void>;
}

export function createStores(backend: Backend): Stores {
  const nav = new NavStore();
  const notices = new NoticeStore();
  const files = new FilesService(backend);
  const fileViewer = new FileViewerStore((path, start, end) => backend.readProjectFile(path, start, end));
  const evidence = new EvidenceChecks((items) => files.recheckEvidence(items));
  const session = new SessionStore(backend, {
    notices,
    nav,
    // What was opened from the session shown before (a file, re-checked evidence) is not about this one.
    onReset: () => {
      evidence.clear();
      fileViewer.close();
    },
  });

  async function listen(): Promise<() => void> {
    const unlistenProject = await backend.onProjectOpened((p) => session.projectOpened(p));
    const unlistenWarning = await backend.onAppWarning((w) => notices.notify('warning', w));
    const unlisten = () => {
      unlistenProject();
      unlistenWarning();
    };
    try {
      notices.startupWarnings(await backend.startupWarnings());
    } catch (e) {
      notices.notify('warning', `Could not read the startup warnings: ${toApiError(e).message}`);
    }
    return unlisten;
  }

  return {
    backendKind: backend.kind,
    nav,
    session,
    settingsForm: new SettingsFormStore(backend),
    fileViewer,
    evidence,
    notices,
    projects: new ProjectsService(backend),
    history: new HistoryService(backend),
    models: new ModelsService(backend),
    files,
    about: new AboutService(backend),
    window: new WindowService(backend),
    listen,
  };
}
