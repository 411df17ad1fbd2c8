import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeBackend } from './fake';
import { applyRecords, emptyState, type TreeState } from './reducer';
import { DEMO_ROOT } from './fixtures/demo';
import type { TraceRecord } from './types';

// The browser preview must behave like the app for the flows a user tries: cancel one subagent,
// answer an approval, and get field-specific settings errors.
describe('demo backend', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function started() {
    const be = createFakeBackend();
    const got: TraceRecord[] = [];
    const open = be.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    await be.startRun('go', (b) => got.push(...b));
    const tree = (): TreeState => applyRecords(emptyState(), got);
    return { be, tree };
  }

  it('cancelling one subagent cancels only it; the run goes on to the approval', async () => {
    const { be, tree } = await started();
    await vi.advanceTimersByTimeAsync(9_000);
    expect(tree().nodes.get('explore-errors-5b77')?.status).toBe('running');
    expect(await be.cancelNode('explore-errors-5b77')).toBe(true);
    // Like the app: a second cancel of an ended subagent answers false.
    expect(await be.cancelNode('explore-errors-5b77')).toBe(false);
    const s = tree();
    expect(s.nodes.get('explore-errors-5b77')?.status).toBe('cancelled');
    await vi.advanceTimersByTimeAsync(30_000);
    const later = tree();
    expect(later.nodes.get('explore-errors-5b77')?.status).toBe('cancelled');
    expect(later.nodes.get('explore-loop-1c2d')?.status).toBe('completed');
    expect(later.nodes.get('main-7f3a')?.pendingApprovals).toBe(1);
  });

  it('stop cancels every running agent', async () => {
    const { be, tree } = await started();
    await vi.advanceTimersByTimeAsync(9_000);
    await be.cancelRun('main-7f3a');
    await vi.advanceTimersByTimeAsync(30_000);
    for (const n of tree().nodes.values()) expect(['cancelled', 'completed', 'partial']).toContain(n.status);
    expect(tree().nodes.get('main-7f3a')?.status).toBe('cancelled');
  });

  it('an approval answer completes the run', async () => {
    const { be, tree } = await started();
    await vi.advanceTimersByTimeAsync(40_000);
    expect(tree().nodes.get('main-7f3a')?.pendingApprovals).toBe(1);
    await be.answerApproval('main-7f3a', 'call_edit1', 'allow_session');
    await vi.advanceTimersByTimeAsync(10_000);
    const root = tree().nodes.get('main-7f3a');
    expect(root?.status).toBe('completed');
    const edit = root?.items.find((i) => i.kind === 'tool' && i.id === 'call_edit1');
    expect(edit?.kind === 'tool' && edit.permission?.scope).toBe('session');
  });

  it('rejects invalid settings with the field and reason', async () => {
    const be = createFakeBackend();
    const s = await be.getSettings();
    s.main.base_url = 'api.example.com';
    const p = be.saveSettings(s);
    const assertion = expect(p).rejects.toMatchObject({ code: 'invalid_settings', message: 'main.base_url: must be an http:// or https:// URL' });
    await vi.advanceTimersByTimeAsync(100);
    await assertion;
  });
});
