import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfirmGate } from './confirm.svelte';

describe('ConfirmGate', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('needs a second press on the same item before it confirms', () => {
    const g = new ConfirmGate(4000);
    expect(g.press('a')).toBe(false);
    expect(g.isArmed('a')).toBe(true);
    expect(g.press('a')).toBe(true);
    expect(g.armed).toBeNull();
  });

  it('a press on another item moves the question instead of confirming', () => {
    const g = new ConfirmGate(4000);
    g.press('a');
    expect(g.press('b')).toBe(false);
    expect(g.isArmed('a')).toBe(false);
    expect(g.isArmed('b')).toBe(true);
  });

  it('the question lapses: a late second press only asks again', () => {
    const g = new ConfirmGate(4000);
    g.press('a');
    vi.advanceTimersByTime(3999);
    expect(g.isArmed('a')).toBe(true);
    vi.advanceTimersByTime(2);
    expect(g.isArmed('a')).toBe(false);
    expect(g.press('a')).toBe(false);
  });

  it('a re-armed question gets a fresh window', () => {
    const g = new ConfirmGate(4000);
    g.press('a');
    vi.advanceTimersByTime(3000);
    g.press('b');
    vi.advanceTimersByTime(3000);
    expect(g.isArmed('b')).toBe(true);
    expect(g.press('b')).toBe(true);
  });
});
