import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { quitQuestion, stopAndWait } from './quit';

describe('quitQuestion', () => {
  it('closes at once with nothing at stake', () => {
    expect(quitQuestion({ running: false, agents: null, settingsDirty: false })).toBeNull();
    // A count left over from an ended run is not a reason to ask.
    expect(quitQuestion({ running: false, agents: 3, settingsDirty: false })).toBeNull();
  });

  it('a run going: says how many agents and offers to stop it', () => {
    expect(quitQuestion({ running: true, agents: 3, settingsDirty: false })).toEqual({
      reasons: ['A run is still going (3 agents)'],
      quitLabel: 'Stop the run and quit',
      stopRun: true,
    });
    expect(quitQuestion({ running: true, agents: 1, settingsDirty: false })?.reasons).toEqual(['A run is still going (1 agent)']);
  });

  it('a run whose agents are not known is still asked about, without a made-up count', () => {
    expect(quitQuestion({ running: true, agents: null, settingsDirty: false })?.reasons).toEqual(['A run is still going']);
    expect(quitQuestion({ running: true, agents: 0, settingsDirty: false })?.reasons).toEqual(['A run is still going']);
  });

  it('unsaved Settings alone: quitting does not stop anything', () => {
    expect(quitQuestion({ running: false, agents: null, settingsDirty: true })).toEqual({
      reasons: ['Settings have unsaved changes'],
      quitLabel: 'Quit without saving',
      stopRun: false,
    });
  });

  it('both: names both, and the button says both things happen', () => {
    expect(quitQuestion({ running: true, agents: 2, settingsDirty: true })).toEqual({
      reasons: ['A run is still going (2 agents)', 'Settings have unsaved changes'],
      quitLabel: 'Stop the run and quit without saving',
      stopRun: true,
    });
  });
});

describe('stopAndWait', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('cancels first, then resolves true as soon as the run has ended', async () => {
    let running = true;
    const order: string[] = [];
    const cancel = vi.fn(async () => {
      order.push('cancel');
      setTimeout(() => {
        running = false;
      }, 300);
    });
    const done = stopAndWait(cancel, () => {
      order.push('check');
      return running;
    });
    await vi.advanceTimersByTimeAsync(400);
    await expect(done).resolves.toBe(true);
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(order[0]).toBe('cancel');
  });

  it('gives up after the timeout when the run does not end', async () => {
    let settled: boolean | null = null;
    void stopAndWait(async () => true, () => true, { timeoutMs: 2000 }).then((v) => (settled = v));
    await vi.advanceTimersByTimeAsync(1900);
    expect(settled).toBeNull();
    await vi.advanceTimersByTimeAsync(200);
    expect(settled).toBe(false);
  });

  it('a failed cancel is reported and the wait still happens', async () => {
    const onError = vi.fn();
    let running = true;
    setTimeout(() => (running = false), 100);
    const done = stopAndWait(
      async () => {
        throw new Error('no live session');
      },
      () => running,
      { onError },
    );
    await vi.advanceTimersByTimeAsync(200);
    await expect(done).resolves.toBe(true);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'no live session' }));
  });
});
