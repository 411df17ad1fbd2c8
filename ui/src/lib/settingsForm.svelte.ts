//! The Settings form's domain: the saved settings, the draft being edited with its own and the
//! backend's errors, and saving it. Kept out of the view so leaving the Settings tab and coming back
//! keeps unsaved edits. Saves and reads go through the one backend seam.

import { sameSettings, serverError, withoutEmptyOverrides, type FieldErrors, type ServerError } from './settingsErrors';
import { toApiError } from './api';
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
  private readonly saveSettings: (s: Settings) => Promise<Settings>;
  private readonly getSettings: () => Promise<Settings>;

  constructor(saveSettings: (s: Settings) => Promise<Settings>, getSettings: () => Promise<Settings>) {
    this.saveSettings = saveSettings;
    this.getSettings = getSettings;
  }

  /** Starts the form from the saved settings, unless a draft is already being edited. */
  async load(): Promise<void> {
    const s = await this.getSettings();
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
      const s = await this.saveSettings(sent);
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
