//! The Settings form's domain: the saved settings, whether a usable main model is configured, the
//! draft being edited with its own and the backend's errors, and saving it. Kept out of the view so
//! leaving the Settings tab and coming back keeps unsaved edits. Saves and reads go through the one
//! backend seam.

import { sameSettings, serverError, withoutEmptyOverrides, type FieldErrors, type ServerError } from './settingsErrors';
import { toApiError } from './errors';
import { checkSetup } from './setup';
import type { Backend } from './api';
import type { Settings } from './types';

export class SettingsFormStore {
  /** The saved settings (as last read or saved). */
  saved = $state<Settings | null>(null);
  /**
   * The Settings form being edited (null until Settings is first opened), with its errors: kept here
   * rather than in the view, so leaving the Settings tab and coming back keeps unsaved edits.
   */
  draft = $state<Settings | null>(null);
  /** Errors the form found itself: they block Save. */
  clientErrors = $state<FieldErrors>({});
  /** From the last failed Save. */
  serverErrors = $state<ServerError[]>([]);
  /** A save is in flight. Kept here, not in the view: leaving Settings and coming back must not allow a
   * second save whose older answer could land last and leave stale settings in memory. */
  saving = $state(false);
  /** True when no usable main model is configured (no key for a provider that needs one). */
  needsSetup = $state(false);
  private readonly backend: Pick<Backend, 'getSettings' | 'saveSettings' | 'apiKeyStatus'>;

  constructor(backend: Pick<Backend, 'getSettings' | 'saveSettings' | 'apiKeyStatus'>) {
    this.backend = backend;
  }

  /** Reads the saved settings and whether a usable main model is configured (at start). */
  async checkStartup(): Promise<void> {
    const c = await checkSetup(this.backend);
    if (c.settings !== null) this.saved = c.settings;
    this.needsSetup = c.needsSetup;
  }

  /** Asks again whether a usable main model is configured (a key was stored or deleted, settings saved). */
  async refreshSetup(): Promise<void> {
    this.needsSetup = (await checkSetup(this.backend)).needsSetup;
  }

  /** Starts the form from the saved settings, unless a draft is already being edited. */
  async load(): Promise<void> {
    const s = await this.backend.getSettings();
    this.saved = s;
    // Another visit may have started a draft while this one loaded.
    if (this.draft === null) this.draft = structuredClone(s);
  }

  /** The Settings draft differs from what is saved. */
  get dirty(): boolean {
    return this.draft !== null && this.saved !== null && !sameSettings(this.draft, this.saved);
  }

  /**
   * Saves the Settings draft. Resolves true when the backend stored it; false when there is no draft or
   * the backend refused it (then `serverErrors` says why). The form stays editable meanwhile, so
   * the draft becomes what was stored only if it still equals what was sent: edits typed while the save
   * was in flight stay in the draft, still unsaved, instead of being overwritten.
   */
  async save(): Promise<boolean> {
    if (this.draft === null || this.saving) return false;
    const sent = withoutEmptyOverrides($state.snapshot(this.draft) as Settings);
    this.saving = true;
    try {
      const s = await this.backend.saveSettings(sent);
      this.saved = s;
      if (this.draft === null || sameSettings($state.snapshot(this.draft) as Settings, sent)) this.draft = structuredClone(s);
      this.serverErrors = [];
      return true;
    } catch (e) {
      this.serverErrors = [serverError(toApiError(e), sent)];
      return false;
    } finally {
      this.saving = false;
    }
  }

  /** Drops unsaved Settings edits: the form starts again from what is saved. */
  discard(): void {
    this.draft = this.saved === null ? null : structuredClone($state.snapshot(this.saved));
    this.clientErrors = {};
    this.serverErrors = [];
  }
}
