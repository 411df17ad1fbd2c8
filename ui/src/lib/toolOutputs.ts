//! Full tool outputs of a replayed session, fetched on demand. Replay leaves long outputs out of the
//! records (`output_elided`); the conversation asks for one when its row is expanded. Each output is
//! fetched at most once per session shown: a success is kept, concurrent asks share one request, and a
//! failure is kept too (so re-expanding does not hammer a missing trace) until `retry`.

import { toApiError, type ApiError } from './errors';

export type ToolOutput =
  | { state: 'loading' }
  | { state: 'ready'; text: string }
  | { state: 'error'; message: string };

/**
 * What a failed fetch says to a person. The backend answers `session_gone` when the session's trace file
 * is gone (deleted or moved since the replay was opened); its message names an id that means nothing to them.
 */
export function outputErrorText(e: ApiError): string {
  if (e.code === 'session_gone') {
    return 'The trace file of this session is gone, so this result cannot be shown.';
  }
  return e.message;
}

export type FetchOutput = (sessionId: string, callId: string) => Promise<string>;

export class ToolOutputCache {
  private readonly fetch: FetchOutput;
  private readonly done = new Map<string, ToolOutput>();
  private readonly inFlight = new Map<string, Promise<ToolOutput>>();
  /** Bumped by `clear`, so an answer for a session no longer shown is not stored. */
  private generation = 0;

  constructor(fetch: FetchOutput) {
    this.fetch = fetch;
  }

  private static key(sessionId: string, callId: string): string {
    // Session ids and call ids never contain a NUL; a plain join could collide ("a/b" + "c" vs "a" + "b/c").
    return `${sessionId}\u0000${callId}`;
  }

  /** What is known right now, without fetching: `undefined` when nobody asked yet. */
  peek(sessionId: string, callId: string): ToolOutput | undefined {
    const k = ToolOutputCache.key(sessionId, callId);
    if (this.inFlight.has(k)) return { state: 'loading' };
    return this.done.get(k);
  }

  /** The output, fetched on the first ask only; later asks get the kept result or the pending request. */
  load(sessionId: string, callId: string): Promise<ToolOutput> {
    const k = ToolOutputCache.key(sessionId, callId);
    const kept = this.done.get(k);
    if (kept !== undefined) return Promise.resolve(kept);
    const pending = this.inFlight.get(k);
    if (pending !== undefined) return pending;
    const gen = this.generation;
    const p = this.fetch(sessionId, callId).then(
      (text): ToolOutput => ({ state: 'ready', text }),
      (e: unknown): ToolOutput => ({ state: 'error', message: outputErrorText(toApiError(e)) }),
    );
    const settled = p.then((out) => {
      if (gen === this.generation) {
        this.inFlight.delete(k);
        this.done.set(k, out);
      }
      return out;
    });
    this.inFlight.set(k, settled);
    return settled;
  }

  /** Forgets a kept failure and asks again. */
  retry(sessionId: string, callId: string): Promise<ToolOutput> {
    const k = ToolOutputCache.key(sessionId, callId);
    if (this.done.get(k)?.state === 'error') this.done.delete(k);
    return this.load(sessionId, callId);
  }

  /** Drops everything (another session is shown); answers still on their way are discarded. */
  clear(): void {
    this.generation += 1;
    this.done.clear();
    this.inFlight.clear();
  }
}
