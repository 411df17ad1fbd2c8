//! The stores, one per domain, handed to the views through Svelte context (set once by App, read by
//! each view) rather than passed down as props: the session (the open project, the live or replayed
//! run, selection), the Settings form, the file viewer and the notices.

import { getContext, setContext } from 'svelte';
import type { FileViewerStore } from './fileViewer.svelte';
import type { NoticeStore } from './notices.svelte';
import type { SettingsFormStore } from './settingsForm.svelte';
import type { AppStore } from './store.svelte';

export interface Stores {
  /** The session domain (and the entry to the backend seam's services). */
  session: AppStore;
  settingsForm: SettingsFormStore;
  fileViewer: FileViewerStore;
  notices: NoticeStore;
}

const KEY = Symbol('canopy.stores');

/** The stores of `app`, as the views get them. */
export function storesOf(app: AppStore): Stores {
  return { session: app, settingsForm: app.settingsForm, fileViewer: app.fileViewer, notices: app.noticeStore };
}

/** Makes the stores of `app` available to every view below the calling component. */
export function provideStores(app: AppStore): Stores {
  return setContext(KEY, storesOf(app));
}

/** A `context` map for mounting or rendering a single view in a test. */
export function storesContext(app: AppStore): Map<symbol, Stores> {
  return new Map([[KEY, storesOf(app)]]);
}

/** The stores, from the nearest App above. */
export function useStores(): Stores {
  const s = getContext<Stores | undefined>(KEY);
  if (s === undefined) throw new Error('no Canopy stores in context: mount views under App (or pass storesContext in a test)');
  return s;
}
