//! Whether the person still has to connect a model: drives the first-run hint on the Start view and the
//! "No model configured" button. Re-checked whenever settings are saved or a key is stored or deleted,
//! so neither outlives the problem nor hides one that a change created.

import type { Backend } from './api';
import type { KeyStatus, Settings } from './types';

/** A model server on this machine (Ollama, LM Studio…) needs no key. */
export function isLoopbackUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return false;
  }
  // The parsed host, not a prefix: in `http://127.0.0.1:1@api.example.com` the host is api.example.com.
  return (u.protocol === 'http:' || u.protocol === 'https:') && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

/** True when the main slot cannot be used: a hosted endpoint with no key anywhere. */
export function needsModelSetup(settings: Settings, mainKey: KeyStatus): boolean {
  return !isLoopbackUrl(settings.main.base_url) && mainKey.state !== 'present';
}

export interface SetupCheck {
  /** The saved settings, or null when they could not be read. */
  settings: Settings | null;
  needsSetup: boolean;
}

/** Asks the backend for the saved settings and the main key. Anything unreadable counts as "set up a model". */
export async function checkSetup(backend: Pick<Backend, 'getSettings' | 'apiKeyStatus'>): Promise<SetupCheck> {
  let settings: Settings;
  try {
    settings = await backend.getSettings();
  } catch {
    return { settings: null, needsSetup: true };
  }
  try {
    return { settings, needsSetup: needsModelSetup(settings, await backend.apiKeyStatus('main')) };
  } catch {
    return { settings, needsSetup: !isLoopbackUrl(settings.main.base_url) };
  }
}
