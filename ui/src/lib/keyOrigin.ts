//! The origin an API key belongs to, computed the way canopy-config's `KeyOrigin` does, so the settings
//! screen asks about (and names) the endpoint on screen while the person types.

import { isLoopbackUrl } from './setup';

export interface KeyOrigin {
  /** `https://api.openai.com`, `http://127.0.0.1:4000`: what the backend binds the key to. */
  origin: string;
  /** As people read it: `api.openai.com`, `127.0.0.1:4000`; plain-http remote hosts keep `http://`. */
  label: string;
}

/** The origin of `baseUrl`, or null when it is not a usable http(s) URL (the backend refuses those too). */
export function keyOrigin(baseUrl: string): KeyOrigin | null {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return null;
  if (url.search !== '' || url.hash !== '') return null;
  const origin = url.origin;
  const label = url.protocol === 'https:' || isLoopbackUrl(origin) ? url.host : origin;
  return { origin, label };
}
