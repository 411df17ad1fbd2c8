import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../generated/types';
import { historyRowView, nodeStatusView, reasonText, toolStatusView } from './status';

describe('status look', () => {
  it('gives cancelled and denied tool calls their own look, not the error one', () => {
    expect(toolStatusView('cancelled')).toEqual({ text: 'cancelled', tone: 'neutral' });
    expect(toolStatusView('denied')).toEqual({ text: 'denied', tone: 'warn' });
    expect(toolStatusView('error')).toEqual({ text: 'error', tone: 'bad' });
    expect(toolStatusView('ok').tone).toBe('ok');
    expect(toolStatusView('running').tone).toBe('active');
  });

  it('shows a cancelled agent as neutral and a failed one as bad', () => {
    expect(nodeStatusView('cancelled')).toEqual({ text: 'Cancelled', tone: 'neutral' });
    expect(nodeStatusView('failed')).toEqual({ text: 'Failed', tone: 'bad' });
    expect(nodeStatusView('interrupted').text).toBe('Interrupted');
  });

  it('names the reason only when it adds something to the status', () => {
    expect(reasonText('completed', 'completed')).toBeNull();
    expect(reasonText(null, 'interrupted')).toBeNull();
    expect(reasonText('cancelled', 'cancelled')).toBeNull();
    expect(reasonText('time_budget', 'failed')).toBe('time budget');
    expect(reasonText('max_steps', 'partial')).toBe('step budget');
    expect(reasonText('interrupted', 'failed')).toBe('interrupted');
  });
});

describe('history row', () => {
  const base: SessionSummary = {
    session_id: 's1',
    started_ms: 0,
    title: 'fix the leak',
    status: 'completed',
    terminal_reason: 'completed',
    total_tokens: 1000,
    sessions: 4,
    broken_parent: null,
  };

  it('counts the agents of the tree', () => {
    expect(historyRowView(base).agents).toBe('4 agents');
    expect(historyRowView({ ...base, sessions: 1 }).agents).toBe('1 agent');
  });

  it('says why a run that did not complete ended', () => {
    expect(historyRowView(base).reason).toBeNull();
    const timedOut = historyRowView({ ...base, status: 'failed', terminal_reason: 'time_budget' });
    expect(timedOut.status).toEqual({ text: 'Failed', tone: 'bad' });
    expect(timedOut.reason).toBe('time budget');
    const cancelled = historyRowView({ ...base, status: 'cancelled', terminal_reason: 'cancelled' });
    expect(cancelled.status).toEqual({ text: 'Cancelled', tone: 'neutral' });
    expect(cancelled.reason).toBeNull();
  });
});
