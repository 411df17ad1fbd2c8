//! Evidence re-checked when a person opens it: a subagent's citations (its details, an expanded Task
//! card) or the main answer's references, live or replayed from History. The backend checks the
//! recorded items against the disk as it is now (`recheck_evidence`); the answers are kept here, by
//! whose evidence it is, and merged into what the views show (`withRecheck`). The trace and the tree
//! built from it are never changed: the records say what was found then, this says what holds now.

import { SvelteMap } from 'svelte/reactivity';
import { toApiError } from './errors';
import type { CheckedEvidence, RecheckedEvidence } from './types';
import { answerShown, withRecheck, type AnswerShown, type Rechecked } from './trust';
import type { SessionNode } from './reducer';

/** Asks the backend to re-check recorded items (the store's `recheckEvidence`). */
export type Recheck = (items: CheckedEvidence[]) => Promise<RecheckedEvidence>;

export class EvidenceChecks {
  /** Answers by key (a node id, or `answer:<node>:<item>` for a final answer's references). */
  private readonly done = new SvelteMap<string, Rechecked>();
  /** The items each key was last asked about, so showing the same result again does not ask again. */
  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- bookkeeping no view reads
  private readonly asked = new Map<string, readonly CheckedEvidence[]>();
  /** Why the last re-check of a key failed, shown beside the recorded state. */
  readonly errors = new SvelteMap<string, string>();
  /** Bumped by `clear` (another session shown): an answer for the one before is dropped. */
  private generation = 0;
  private readonly recheck: Recheck;

  constructor(recheck: Recheck) {
    this.recheck = recheck;
  }

  /** The last answer for `key`, if any. */
  get(key: string): Rechecked | undefined {
    return this.done.get(key);
  }

  /** Whether `key` has been re-checked (views expose it so a test can wait for it). */
  has(key: string): boolean {
    return this.done.has(key);
  }

  /**
   * Re-checks `items` for `key`, once per set of items shown (`force`: again, e.g. when the person
   * opens it anew). Resolves when the answer is in (or dropped).
   */
  async open(key: string, items: readonly CheckedEvidence[], force = false): Promise<void> {
    if (!force && this.asked.get(key) === items) return;
    if (items.length === 0) {
      // Nothing cited: nothing on disk to look at, and nothing to wait for.
      this.asked.set(key, items);
      this.done.set(key, { items: [], trust: null });
      return;
    }
    this.asked.set(key, items);
    const gen = this.generation;
    try {
      const r = await this.recheck([...items]);
      // Another session is shown now, or a newer question about the same key went out.
      if (gen !== this.generation || this.asked.get(key) !== items) return;
      this.done.set(key, { items: r.items, trust: r.trust });
      this.errors.delete(key);
    } catch (e) {
      if (gen !== this.generation || this.asked.get(key) !== items) return;
      this.errors.set(key, toApiError(e).message);
    }
  }

  /** `node`'s result with its evidence as last re-checked (the recorded one until then). */
  resultOf(node: SessionNode | undefined): SessionNode['result'] {
    if (node === undefined || node.result === null) return null;
    return withRecheck(node.result, this.get(node.id));
  }

  /** The final answer `itemId` of `node`, its references as checked (and re-checked once shown); null when none was checked. */
  answerOf(node: SessionNode | undefined, itemId: string): AnswerShown | null {
    const check = node?.answerChecks.find((c) => c.itemId === itemId);
    if (node === undefined || check === undefined) return null;
    return answerShown(check, this.get(answerKey(node.id, itemId)));
  }

  /** Re-checks every final answer's references of `node` (they are on screen). */
  recheckAnswers(node: SessionNode | undefined): void {
    for (const c of node?.answerChecks ?? []) {
      if (c.itemId !== null) void this.open(answerKey(node?.id ?? '', c.itemId), c.references);
    }
  }

  /** Forgets every answer (a new session is shown). */
  clear(): void {
    this.generation += 1;
    this.done.clear();
    this.asked.clear();
    this.errors.clear();
  }
}

/** The key of a final answer's references. */
export function answerKey(nodeId: string, itemId: string): string {
  return `answer:${nodeId}:${itemId}`;
}
