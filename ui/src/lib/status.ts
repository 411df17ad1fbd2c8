//! How a status looks wherever it is shown (tool cards, tree, timeline, history): one mapping, so a
//! cancelled agent or a denied call never borrows the look of an error.

import type { SessionState, SessionSummary, TerminalReason, ToolStatus } from '../generated/types';
import type { NodeStatus } from './reducer';

/** Colour family; each maps to a `tone-*` class in app.css. */
export type Tone = 'active' | 'ok' | 'warn' | 'bad' | 'neutral';

export interface StatusView {
  text: string;
  tone: Tone;
}

const TOOL: Record<'running' | ToolStatus, StatusView> = {
  running: { text: 'running', tone: 'active' },
  ok: { text: 'ok', tone: 'ok' },
  error: { text: 'error', tone: 'bad' },
  // A refusal is a decision, not a failure of the tool.
  denied: { text: 'denied', tone: 'warn' },
  // Stopped on purpose: nothing went wrong.
  cancelled: { text: 'cancelled', tone: 'neutral' },
};

export function toolStatusView(status: 'running' | ToolStatus): StatusView {
  return TOOL[status] ?? { text: String(status), tone: 'neutral' };
}

const NODE: Record<NodeStatus | SessionState, StatusView> = {
  queued: { text: 'Queued', tone: 'neutral' },
  running: { text: 'Running', tone: 'active' },
  completed: { text: 'Completed', tone: 'ok' },
  partial: { text: 'Partial', tone: 'warn' },
  failed: { text: 'Failed', tone: 'bad' },
  cancelled: { text: 'Cancelled', tone: 'neutral' },
  interrupted: { text: 'Interrupted', tone: 'warn' },
};

/** An agent's (tree, timeline, details) or a stored session's (history) status. */
export function nodeStatusView(status: NodeStatus | SessionState): StatusView {
  return NODE[status] ?? { text: String(status), tone: 'neutral' };
}

const REASON: Record<TerminalReason, string> = {
  completed: 'completed',
  max_steps: 'step budget',
  token_budget: 'token budget',
  context_overflow: 'context full',
  time_budget: 'time budget',
  cancelled: 'cancelled',
  model_error: 'model error',
  empty_response: 'empty response',
  invalid_result: 'invalid result',
  interrupted: 'interrupted',
};

/** Why a run ended, worth showing next to its status: null for a normal completion or a repeat of it. */
export function reasonText(reason: TerminalReason | null, status: string): string | null {
  if (reason === null || reason === 'completed' || reason === status) return null;
  return REASON[reason] ?? reason;
}

export interface HistoryRowView {
  status: StatusView;
  reason: string | null;
  agents: string;
}

export function historyRowView(s: SessionSummary): HistoryRowView {
  const n = s.sessions;
  return {
    status: nodeStatusView(s.status),
    reason: reasonText(s.terminal_reason, s.status),
    agents: n === 1 ? '1 agent' : `${n} agents`,
  };
}
