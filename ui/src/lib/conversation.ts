//! Pure helpers of the Session view: what a Task card says of its subagent, where pending approvals
//! are, which transcript item only repeats a subagent's structured result, and what a key in the
//! prompt box does.

import type { ConvItem, SessionNode, TreeState } from './reducer';
import type { SubagentResult } from './types';
import { nodeStatusView } from './status';

/** What the Task card shows of the subagent it started. */
export interface TaskOutcome {
  /** The status word when the subagent did not simply complete ("Partial", "Failed", …), else null. */
  status: string | null;
  tone: string;
  /** First line of its result's summary (or of its error), or null when there is nothing to say yet. */
  line: string | null;
  /** Its structured result, laid out when the card is expanded (null: none was returned). */
  result: SubagentResult | null;
}

const firstLine = (s: string): string | null => {
  const l = s.split('\n').find((x) => x.trim() !== '');
  return l === undefined ? null : l.trim();
};

/** The card's outcome line for `child`, or null while it runs (or is unknown). */
export function taskOutcome(child: SessionNode | undefined): TaskOutcome | null {
  if (child === undefined || child.status === 'running' || child.status === 'queued') return null;
  const view = nodeStatusView(child.status);
  const status: string | null = child.status === 'completed' ? null : view.text;
  const line = child.result !== null ? firstLine(child.result.summary) : child.error !== null ? firstLine(child.error) : child.finalText !== null ? firstLine(child.finalText) : null;
  if (status === null && line === null) return null;
  return { status, tone: view.tone, line, result: child.result };
}

/** Approvals waiting anywhere in the tree (the Session tab's badge). */
export function pendingApprovalCount(tree: TreeState): number {
  let n = 0;
  for (const node of tree.nodes.values()) n += node.pendingApprovals;
  return n;
}

/** Indexes of the items whose approval is waiting for an answer. */
export function pendingIndexes(items: readonly ConvItem[]): number[] {
  const out: number[] = [];
  items.forEach((it, i) => {
    if (it.kind === 'tool' && it.permission?.state === 'pending') out.push(i);
  });
  return out;
}

/**
 * The id of the assistant item that carried a subagent's structured result (its last answer), which the
 * details pane already shows laid out above the transcript; null when there is none.
 */
export function resultEchoId(node: Pick<SessionNode, 'result' | 'items'>): string | null {
  if (node.result === null) return null;
  for (let i = node.items.length - 1; i >= 0; i -= 1) {
    const it = node.items[i];
    if (it.kind === 'assistant') return it.streaming || it.error !== null || it.text.trim() === '' ? null : it.id;
  }
  return null;
}

export type PromptKey = 'send' | 'blocked' | 'newline';

/**
 * What a key press in the prompt box does: Enter and Ctrl/Cmd+Enter send, Shift+Enter adds a line, and
 * a key that completes an IME composition never sends. While a run is going a send is `blocked` (the
 * view says why instead of ignoring the key).
 */
export function promptKey(
  e: Pick<KeyboardEvent, 'key' | 'shiftKey' | 'ctrlKey' | 'metaKey' | 'altKey' | 'isComposing' | 'keyCode'>,
  running: boolean,
): PromptKey | null {
  if (e.key !== 'Enter') return null;
  // WebKit reports the Enter that ends a composition with keyCode 229 and, on some versions, no isComposing.
  if (e.isComposing || e.keyCode === 229) return null;
  if (e.shiftKey || e.altKey) return 'newline';
  return running ? 'blocked' : 'send';
}
