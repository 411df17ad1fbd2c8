//! What closing the window would cost, and the question to ask before it does: a run still going
//! (closing cancels it) and Settings edits not saved (closing drops them). With nothing at stake the
//! window closes at once. Pure, so the wording and the choice of buttons are tested without a window.

/** What a close would lose right now. */
export interface QuitStakes {
  /** A run this window started (or shows as still running) has not ended. */
  running: boolean;
  /** Agents of that run still running or waiting for a slot; null when not known (the run is not shown). */
  agents: number | null;
  /** The Settings form differs from what is saved. */
  settingsDirty: boolean;
}

export interface QuitQuestion {
  /** One line per thing at stake, in the order shown. */
  reasons: string[];
  /** The button that closes anyway. */
  quitLabel: string;
  /** Closing must cancel the run first (so its trace ends `cancelled`, not `interrupted`). */
  stopRun: boolean;
}

/** The question to ask before closing, or null when the window may close at once. */
export function quitQuestion(s: QuitStakes): QuitQuestion | null {
  const reasons: string[] = [];
  if (s.running) {
    const n = s.agents;
    reasons.push(n === null || n < 1 ? 'A run is still going' : `A run is still going (${n} agent${n === 1 ? '' : 's'})`);
  }
  if (s.settingsDirty) reasons.push('Settings have unsaved changes');
  if (reasons.length === 0) return null;
  const quitLabel = s.running ? (s.settingsDirty ? 'Stop the run and quit without saving' : 'Stop the run and quit') : 'Quit without saving';
  return { reasons, quitLabel, stopRun: s.running };
}

/** How long quitting waits for a cancelled run to write its end before the window closes anyway. */
export const QUIT_WAIT_MS = 2000;

/**
 * Cancels (`cancel`) and then waits until `stillRunning()` is false, at most `timeoutMs`. Resolves
 * true when the run ended in time. A failed cancel is passed to `onError` and the wait still happens:
 * the person asked to quit, and the run may be ending anyway.
 */
export async function stopAndWait(
  cancel: () => Promise<unknown>,
  stillRunning: () => boolean,
  { timeoutMs = QUIT_WAIT_MS, intervalMs = 50, onError }: { timeoutMs?: number; intervalMs?: number; onError?: (e: unknown) => void } = {},
): Promise<boolean> {
  try {
    await cancel();
  } catch (e) {
    onError?.(e);
  }
  const deadline = Date.now() + timeoutMs;
  while (stillRunning()) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return true;
}
