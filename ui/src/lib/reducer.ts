//! Builds the session tree (main agent + nested subagents) from trace records.
//!
//! `applyRecords(state, records)` is pure: the input state is never modified. Within one batch each touched
//! node is shallow-copied once (copy-on-write), so a batch costs O(events + touched nodes + one map copy)
//! rather than a whole-tree copy per event. The UI feeds it one batch per animation frame.

import type {
  BudgetKind,
  Budgets,
  BudgetUsage,
  CheckedEvidence,
  JsonValue,
  ModelInfo,
  ModelSlot,
  SandboxMode,
  SubagentResult,
  TerminalReason,
  TrustSummary,
  TodoItem,
  ToolStatus,
  TraceRecord,
} from '../generated/types';
import { DELEGATE_TOOL } from './toolKind';

export type NodeStatus =
  | 'queued'
  | 'running'
  | 'completed'
  | 'partial'
  | 'failed'
  | 'cancelled'
  | 'interrupted';

export const TERMINAL_STATUSES: ReadonlySet<NodeStatus> = new Set([
  'completed',
  'partial',
  'failed',
  'cancelled',
  'interrupted',
]);

export interface Permission {
  state: 'pending' | 'allow' | 'deny';
  summary: string;
  source: string | null;
  scope: string | null;
  reason: string | null;
}

export type ConvItem =
  | { kind: 'user'; id: string; text: string; ts: number }
  | {
      kind: 'assistant';
      id: string;
      text: string;
      streaming: boolean;
      error: string | null;
      ts: number;
      /** The turn's reasoning (thinking, `reasoning_content`), shown folded; absent when none. */
      reasoning?: string;
      /** Tokens spent on it, as the provider reported (or estimated). */
      reasoningTokens?: number;
    }
  | {
      kind: 'tool';
      id: string;
      tool: string;
      args: JsonValue;
      mutates: boolean;
      status: 'running' | ToolStatus;
      output: string | null;
      outputBytes: number;
      truncated: boolean;
      /** Replayed from history with the output left out (`output` is ""): `load_tool_output` has it. */
      outputElided: boolean;
      durationMs: number | null;
      permission: Permission | null;
      childSessionId: string | null;
      ts: number;
    }
  | { kind: 'todo'; id: string; items: TodoItem[]; ts: number }
  | { kind: 'notice'; id: string; level: 'info' | 'warn' | 'error'; text: string; ts: number };

export interface Span {
  kind: 'model' | 'tool';
  id: string;
  label: string;
  start: number;
  end: number | null;
}

/** The main agent's final answer of one run, its `path:line` references checked (`answer_checked`). */
export interface AnswerCheck {
  /** The assistant item holding that answer (the last one with text before the check), if any. */
  itemId: string | null;
  references: CheckedEvidence[];
  trust: TrustSummary;
}

export interface TokenPair {
  input: number;
  output: number;
}

export interface SlotTokens {
  main: TokenPair;
  light: TokenPair;
}

export interface SessionNode {
  id: string;
  parentId: string | null;
  children: string[];
  depth: number;
  /** Task description for subagents, the first prompt for the main session. */
  label: string;
  profile: string;
  agent: 'main' | 'subagent';
  /** The task prompt given by the parent (subagents) or the latest user prompt (main). */
  prompt: string | null;
  status: NodeStatus;
  terminalReason: TerminalReason | null;
  error: string | null;
  model: ModelInfo | null;
  requestedSlot: ModelSlot | null;
  /** The parent's `Task` call that spawned this node. */
  taskCallId: string | null;
  /** When the session first started (the Timeline draws the whole session from here). */
  startedMs: number | null;
  /**
   * When its latest run started. The runtime counts budgets, wall time included, per run, so a
   * follow-up's bars and elapsed time start again from here.
   */
  runStartedMs: number | null;
  endedMs: number | null;
  lastTs: number;
  /** What the views show: the larger of the two counts below. */
  toolCalls: number;
  /** `tool_call_begin` records of this node seen so far. */
  toolCallsSeen: number;
  /**
   * The count the parent (`subagent_*`) or the node's own `run_ended` reported. A floor, never a seed:
   * replay delivers the parent's report before the child's own records, which then count from zero.
   */
  toolCallsReported: number;
  budgets: Budgets | null;
  usage: BudgetUsage | null;
  /** Budgets that crossed the wrap-up threshold. */
  warned: BudgetKind[];
  /** The budget that ended this node, if any. */
  exhausted: BudgetKind | null;
  /** Tokens of this node's own model calls. */
  ownTokens: TokenPair;
  /** Tokens of this node and all descendants, split by the slot that served them (for pricing). */
  subtreeTokens: SlotTokens;
  result: SubagentResult | null;
  finalText: string | null;
  todos: TodoItem[];
  items: ConvItem[];
  spans: Span[];
  pendingApprovals: number;
  /** How its Bash calls were confined (`off`: without the OS sandbox); null when not recorded. */
  bashSandbox: SandboxMode | null;
  /** Its final answers' references as checked, one per run that cited any (main agent). */
  answerChecks: AnswerCheck[];
}

export interface TreeState {
  nodes: ReadonlyMap<string, SessionNode>;
  rootId: string | null;
  /** Ids in creation order (stable iteration for the timeline). */
  order: readonly string[];
  firstTs: number | null;
  lastTs: number | null;
  /** Bumped on every applied batch. */
  version: number;
  /** Records ignored because they could not be interpreted. */
  skipped: number;
}

export function emptyState(): TreeState {
  return { nodes: new Map(), rootId: null, order: [], firstTs: null, lastTs: null, version: 0, skipped: 0 };
}

const zeroPair = (): TokenPair => ({ input: 0, output: 0 });

function newNode(id: string, parentId: string | null, depth: number, ts: number): SessionNode {
  return {
    id,
    parentId,
    children: [],
    depth,
    label: '',
    profile: parentId === null ? 'main' : '',
    agent: parentId === null ? 'main' : 'subagent',
    prompt: null,
    status: 'queued',
    terminalReason: null,
    error: null,
    model: null,
    requestedSlot: null,
    taskCallId: null,
    startedMs: null,
    runStartedMs: null,
    endedMs: null,
    lastTs: ts,
    toolCalls: 0,
    toolCallsSeen: 0,
    toolCallsReported: 0,
    budgets: null,
    usage: null,
    warned: [],
    exhausted: null,
    ownTokens: zeroPair(),
    subtreeTokens: { main: zeroPair(), light: zeroPair() },
    result: null,
    finalText: null,
    todos: [],
    items: [],
    spans: [],
    pendingApprovals: 0,
    bashSandbox: null,
    answerChecks: [],
  };
}

/** Which budget a terminal reason points at. */
export function budgetOfReason(reason: TerminalReason | null): BudgetKind | null {
  switch (reason) {
    case 'max_steps':
      return 'steps';
    case 'token_budget':
      return 'total_tokens';
    case 'context_overflow':
      return 'context_tokens';
    case 'time_budget':
      return 'wall_time';
    default:
      return null;
  }
}

/** Status of a node that ended with `reason`. */
export function statusOfReason(
  reason: TerminalReason,
  result: SubagentResult | null,
  finalText: string | null,
): NodeStatus {
  switch (reason) {
    case 'completed':
      return result?.status === 'partial' ? 'partial' : 'completed';
    case 'cancelled':
      return 'cancelled';
    case 'interrupted':
      return 'interrupted';
    case 'max_steps':
    case 'token_budget':
    case 'context_overflow':
    case 'time_budget':
      return result !== null || (finalText !== null && finalText !== '') ? 'partial' : 'failed';
    default:
      return 'failed';
  }
}

/** Copy-on-write session of one batch. */
class Draft {
  readonly nodes: Map<string, SessionNode>;
  private readonly owned = new Set<string>();
  rootId: string | null;
  order: string[] | null = null;
  firstTs: number | null;
  lastTs: number | null;
  skipped: number;
  private readonly base: TreeState;

  constructor(base: TreeState) {
    this.base = base;
    this.nodes = new Map(base.nodes);
    this.rootId = base.rootId;
    this.firstTs = base.firstTs;
    this.lastTs = base.lastTs;
    this.skipped = base.skipped;
  }

  /** A node this batch may modify (copied on first write). */
  w(id: string): SessionNode | undefined {
    const n = this.nodes.get(id);
    if (n === undefined) return undefined;
    if (this.owned.has(id)) return n;
    const c: SessionNode = {
      ...n,
      children: n.children.slice(),
      items: n.items.slice(),
      spans: n.spans.slice(),
      warned: n.warned.slice(),
      ownTokens: { ...n.ownTokens },
      subtreeTokens: { main: { ...n.subtreeTokens.main }, light: { ...n.subtreeTokens.light } },
    };
    this.nodes.set(id, c);
    this.owned.add(id);
    return c;
  }

  private pushOrder(id: string): void {
    if (this.order === null) this.order = this.base.order.slice();
    this.order.push(id);
  }

  /** The node for `id`, created (and linked under `parentId`) when first seen. */
  ensure(id: string, parentId: string | null, ts: number): SessionNode {
    const existing = this.w(id);
    if (existing !== undefined) {
      if (existing.parentId === null && parentId !== null && this.rootId !== id) {
        this.link(existing, parentId, ts);
      }
      return existing;
    }
    const node = newNode(id, null, 0, ts);
    if (parentId !== null) {
      // A child seen first through its parent's events (queued for a slot) is a subagent whose profile
      // the next `subagent_*` event names; `main` would show on its row until it starts.
      node.profile = '';
      node.agent = 'subagent';
    }
    this.nodes.set(id, node);
    this.owned.add(id);
    this.pushOrder(id);
    if (parentId === null) {
      if (this.rootId === null) this.rootId = id;
    } else {
      this.link(node, parentId, ts);
    }
    return node;
  }

  private link(node: SessionNode, parentId: string, ts: number): void {
    const parent = this.ensure(parentId, null, ts);
    node.parentId = parentId;
    node.agent = 'subagent';
    node.depth = parent.depth + 1;
    if (!parent.children.includes(node.id)) parent.children.push(node.id);
    // Tokens seen before the link (out-of-order arrival) still have to reach the ancestors.
    const t = node.subtreeTokens;
    if (t.main.input + t.main.output + t.light.input + t.light.output > 0) {
      this.addUp(parentId, 'main', t.main.input, t.main.output);
      this.addUp(parentId, 'light', t.light.input, t.light.output);
    }
  }

  /** Adds tokens to `id` and every ancestor (depth is small, so this stays cheap). */
  addUp(id: string | null, slot: ModelSlot, input: number, output: number): void {
    let cur = id;
    let guard = 0;
    while (cur !== null && guard < 10_000) {
      const n = this.w(cur);
      if (n === undefined) return;
      n.subtreeTokens[slot].input += input;
      n.subtreeTokens[slot].output += output;
      cur = n.parentId;
      guard += 1;
    }
  }

  finish(): TreeState {
    return {
      nodes: this.nodes,
      rootId: this.rootId,
      order: this.order ?? this.base.order,
      firstTs: this.firstTs,
      lastTs: this.lastTs,
      version: this.base.version + 1,
      skipped: this.skipped,
    };
  }
}

function findItem(node: SessionNode, kind: ConvItem['kind'], id: string): number {
  // Updates almost always target recent items, so search from the end.
  for (let i = node.items.length - 1; i >= 0; i -= 1) {
    const it = node.items[i];
    if (it.kind === kind && it.id === id) return i;
  }
  return -1;
}

function findSpan(node: SessionNode, kind: Span['kind'], id: string): number {
  for (let i = node.spans.length - 1; i >= 0; i -= 1) {
    const s = node.spans[i];
    if (s.kind === kind && s.id === id) return i;
  }
  return -1;
}

type ToolItem = Extract<ConvItem, { kind: 'tool' }>;

function toolItem(node: SessionNode, callId: string, tool: string, ts: number): [ToolItem, number] {
  const i = findItem(node, 'tool', callId);
  if (i >= 0) {
    const copy = { ...(node.items[i] as ToolItem) };
    node.items[i] = copy;
    return [copy, i];
  }
  const item: ToolItem = {
    kind: 'tool',
    id: callId,
    tool,
    args: null,
    mutates: false,
    status: 'running',
    output: null,
    outputBytes: 0,
    truncated: false,
    outputElided: false,
    durationMs: null,
    permission: null,
    childSessionId: null,
    ts,
  };
  node.items.push(item);
  return [item, node.items.length - 1];
}

/** Raises the reported floor to `reported` and recomputes what the views show. */
function countToolCalls(node: SessionNode, reported: number): void {
  if (reported > node.toolCallsReported) node.toolCallsReported = reported;
  node.toolCalls = Math.max(node.toolCallsSeen, node.toolCallsReported);
}

function closeOpenSpans(node: SessionNode, ts: number): void {
  for (let i = 0; i < node.spans.length; i += 1) {
    if (node.spans[i].end === null) node.spans[i] = { ...node.spans[i], end: ts };
  }
}

function endNode(
  d: Draft,
  node: SessionNode,
  reason: TerminalReason,
  ts: number,
  result: SubagentResult | null,
  error: string | null,
): void {
  node.terminalReason = reason;
  if (result !== null) node.result = result;
  if (error !== null) node.error = error;
  node.status = statusOfReason(reason, node.result, node.finalText);
  node.endedMs = ts;
  const b = budgetOfReason(reason);
  if (b !== null) node.exhausted = b;
  closeOpenSpans(node, ts);
  if (node.pendingApprovals > 0) {
    node.pendingApprovals = 0;
    node.items = node.items.map((it) =>
      it.kind === 'tool' && it.permission?.state === 'pending'
        ? { ...it, permission: { ...it.permission, state: 'deny', reason: 'run ended' } }
        : it,
    );
  }
  void d;
}

function applyOne(d: Draft, r: TraceRecord): void {
  const ts = r.ts_ms;
  if (d.firstTs === null || ts < d.firstTs) d.firstTs = ts;
  if (d.lastTs === null || ts > d.lastTs) d.lastTs = ts;
  const node = d.ensure(r.session_id, r.parent_session_id, ts);
  if (ts > node.lastTs) node.lastTs = ts;
  const e = r.event;
  switch (e.type) {
    case 'session_started': {
      node.agent = e.agent;
      node.profile = e.profile;
      if (e.description !== null && e.description !== '') node.label = e.description;
      node.model = e.model;
      node.requestedSlot = e.model.requested_slot;
      node.budgets = e.budgets;
      node.bashSandbox = e.bash_sandbox ?? null;
      if (node.startedMs === null) node.startedMs = ts;
      if (node.status === 'queued') node.status = 'running';
      if (e.parent !== null) node.taskCallId = e.parent.tool_call_id;
      break;
    }
    case 'run_started': {
      node.items.push({ kind: 'user', id: `u${r.seq}`, text: e.prompt, ts });
      if (node.label === '') node.label = e.prompt.split('\n')[0].slice(0, 120);
      if (node.agent === 'main' || node.prompt === null) node.prompt = e.prompt;
      if (node.startedMs === null) node.startedMs = ts;
      // The latest run wins whatever order the records come in (replay gives a child's run after its end).
      if (node.runStartedMs === null || ts > node.runStartedMs) node.runStartedMs = ts;
      // A run that started before this node's recorded end is not a new run: replay delivers a child's own
      // records after its parent already ended it, and that must not make it look running again.
      if (node.endedMs !== null && ts < node.endedMs && TERMINAL_STATUSES.has(node.status)) break;
      node.status = 'running';
      node.terminalReason = null;
      node.exhausted = null;
      node.warned = [];
      node.endedMs = null;
      node.usage = null;
      break;
    }
    case 'model_call_begin': {
      node.spans.push({ kind: 'model', id: e.model_call_id, label: `step ${e.step}`, start: ts, end: null });
      if (node.status === 'queued') node.status = 'running';
      break;
    }
    case 'assistant_delta': {
      const i = findItem(node, 'assistant', e.model_call_id);
      if (i >= 0) {
        const it = node.items[i] as Extract<ConvItem, { kind: 'assistant' }>;
        node.items[i] = { ...it, text: it.text + e.text };
      } else {
        node.items.push({ kind: 'assistant', id: e.model_call_id, text: e.text, streaming: true, error: null, ts });
      }
      break;
    }
    case 'provider_adapted': {
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: 'info',
        text: `${e.model} at ${e.base_url}: ${e.change} (${e.reason})`,
        ts,
      });
      break;
    }
    case 'model_retry': {
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: 'warn',
        text: `Model call retry ${e.attempt} in ${Math.round(e.delay_ms / 100) / 10}s: ${e.error}`,
        ts,
      });
      break;
    }
    case 'model_call_end': {
      const i = findItem(node, 'assistant', e.model_call_id);
      // Traces written before reasoning was recorded have no such field.
      const reasoning = e.reasoning ?? '';
      if (e.text !== '' || e.error !== null || reasoning !== '') {
        const item: ConvItem = {
          kind: 'assistant',
          id: e.model_call_id,
          text: e.text,
          streaming: false,
          error: e.error,
          ts: i >= 0 ? node.items[i].ts : ts,
          ...(reasoning !== '' ? { reasoning, reasoningTokens: e.usage.reasoning_tokens ?? 0 } : {}),
        };
        if (i >= 0) node.items[i] = item;
        else node.items.push(item);
      } else if (i >= 0) {
        node.items.splice(i, 1);
      }
      const s = findSpan(node, 'model', e.model_call_id);
      if (s >= 0) node.spans[s] = { ...node.spans[s], end: ts };
      else node.spans.push({ kind: 'model', id: e.model_call_id, label: `step ${e.step}`, start: ts - e.latency_ms, end: ts });
      node.usage = e.totals;
      const inT = e.usage.input_tokens;
      const outT = e.usage.output_tokens;
      node.ownTokens.input += inT;
      node.ownTokens.output += outT;
      d.addUp(node.id, node.model?.slot ?? 'main', inT, outT);
      break;
    }
    case 'tool_call_begin': {
      const [it] = toolItem(node, e.call_id, e.tool, ts);
      it.tool = e.tool;
      it.args = e.arguments;
      it.mutates = e.mutates;
      it.status = 'running';
      node.toolCallsSeen += 1;
      countToolCalls(node, 0);
      node.spans.push({ kind: 'tool', id: e.call_id, label: e.tool, start: ts, end: null });
      break;
    }
    case 'permission_requested': {
      const [it] = toolItem(node, e.call_id, e.tool, ts);
      it.permission = { state: 'pending', summary: e.summary, source: null, scope: null, reason: null };
      node.pendingApprovals += 1;
      break;
    }
    case 'permission_decided': {
      const [it] = toolItem(node, e.call_id, e.tool, ts);
      const wasPending = it.permission?.state === 'pending';
      it.permission = {
        state: e.decision,
        summary: it.permission?.summary ?? '',
        source: e.source,
        scope: e.scope,
        reason: e.reason,
      };
      if (wasPending && node.pendingApprovals > 0) node.pendingApprovals -= 1;
      break;
    }
    case 'tool_call_end': {
      const [it] = toolItem(node, e.call_id, e.tool, ts);
      it.status = e.status;
      it.output = e.output;
      it.outputBytes = e.output_bytes;
      it.truncated = e.truncated;
      // Only replay elides; the field is absent in live records and older traces.
      it.outputElided = e.output_elided === true;
      it.durationMs = e.duration_ms;
      const s = findSpan(node, 'tool', e.call_id);
      if (s >= 0) node.spans[s] = { ...node.spans[s], end: ts };
      break;
    }
    case 'todo_updated': {
      node.todos = e.items;
      const i = findItem(node, 'todo', 'plan');
      // One live plan per session: move it to where it last changed so it stays near the action.
      if (i >= 0) node.items.splice(i, 1);
      node.items.push({ kind: 'todo', id: 'plan', items: e.items, ts });
      break;
    }
    case 'budget_warning': {
      if (!node.warned.includes(e.budget)) node.warned.push(e.budget);
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: 'warn',
        text: `Budget ${e.budget.replace('_', ' ')} at ${e.used} of ${e.limit}: wrapping up`,
        ts,
      });
      break;
    }
    case 'budget_exhausted': {
      node.exhausted = e.budget;
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: 'error',
        text: `Budget ${e.budget.replace('_', ' ')} exhausted (${e.used} of ${e.limit})`,
        ts,
      });
      break;
    }
    case 'compacted': {
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: 'info',
        text: `Context compacted: ${e.messages_before} → ${e.messages_after} messages, ~${e.tokens_before} → ~${e.tokens_after} tokens`,
        ts,
      });
      break;
    }
    case 'subagent_requested': {
      const child = d.ensure(e.child_session_id, node.id, ts);
      if (child.label === '') child.label = e.description;
      if (child.profile === '') child.profile = e.profile;
      child.prompt = e.prompt;
      child.requestedSlot = e.model_slot;
      child.taskCallId = e.tool_call_id;
      const [it] = toolItem(node, e.tool_call_id, DELEGATE_TOOL, ts);
      it.childSessionId = e.child_session_id;
      break;
    }
    case 'subagent_started': {
      const child = d.ensure(e.child_session_id, node.id, ts);
      if (child.profile === '') child.profile = e.profile;
      child.model = e.model;
      child.budgets = e.budgets;
      if (child.status === 'queued') child.status = 'running';
      if (child.startedMs === null) child.startedMs = ts;
      break;
    }
    case 'subagent_completed':
    case 'subagent_failed':
    case 'subagent_cancelled': {
      const child = d.ensure(e.child_session_id, node.id, ts);
      countToolCalls(child, e.tool_calls);
      // The child's own `run_ended` is authoritative; the parent's view fills in when it is missing.
      if (child.terminalReason === null || !TERMINAL_STATUSES.has(child.status)) {
        const reason: TerminalReason =
          e.type === 'subagent_cancelled' ? 'cancelled' : e.terminal_reason;
        const result = e.type === 'subagent_completed' ? e.result : null;
        const error = e.type === 'subagent_failed' ? e.error : null;
        endNode(d, child, reason, ts, result, error);
      } else if (e.type === 'subagent_completed' && child.result === null) {
        child.result = e.result;
      }
      break;
    }
    case 'result_rejected': {
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: e.attempt >= 2 ? 'error' : 'warn',
        text: `Result rejected (attempt ${e.attempt}): ${e.error}`,
        ts,
      });
      break;
    }
    case 'readonly_violation': {
      node.items.push({
        kind: 'notice',
        id: `n${r.seq}`,
        level: 'error',
        text: `Read-only violation: changed ${e.changed.join(', ')}`,
        ts,
      });
      break;
    }
    case 'cancel_requested': {
      node.items.push({ kind: 'notice', id: `n${r.seq}`, level: 'warn', text: `Cancel requested (${e.reason})`, ts });
      break;
    }
    case 'answer_checked': {
      let itemId: string | null = null;
      for (let i = node.items.length - 1; i >= 0; i -= 1) {
        const it = node.items[i];
        if (it.kind === 'assistant' && it.text !== '') {
          itemId = it.id;
          break;
        }
      }
      node.answerChecks = [...node.answerChecks, { itemId, references: e.references, trust: e.trust }];
      break;
    }
    case 'run_ended': {
      node.finalText = e.final_text;
      node.usage = e.totals;
      countToolCalls(node, e.tool_calls);
      // Streaming text that never got its model_call_end stays, but stops looking live.
      node.items = node.items.map((it) => (it.kind === 'assistant' && it.streaming ? { ...it, streaming: false } : it));
      endNode(d, node, e.terminal_reason, ts, e.result, e.error);
      break;
    }
    default: {
      d.skipped += 1;
    }
  }
}

/** Applies a batch of records in order; returns a new state and leaves `state` untouched. */
export function applyRecords(state: TreeState, records: readonly TraceRecord[]): TreeState {
  if (records.length === 0) return state;
  const d = new Draft(state);
  for (const r of records) {
    if (r === null || typeof r !== 'object' || typeof r.session_id !== 'string' || r.event === undefined) {
      d.skipped += 1;
      continue;
    }
    applyOne(d, r);
  }
  return d.finish();
}

/** Single-record form of [`applyRecords`]. */
export function reduce(state: TreeState, record: TraceRecord): TreeState {
  return applyRecords(state, [record]);
}

/**
 * Marks every node that never reached `run_ended` as interrupted: used when a live run is over (its
 * channel closed) and when a session is loaded from history, where a missing end means the app died.
 */
export function finalizeRun(state: TreeState, ts?: number): TreeState {
  let changed = false;
  const d = new Draft(state);
  for (const [id, n] of state.nodes) {
    const terminal = TERMINAL_STATUSES.has(n.status);
    // A node its parent already ended can still hold open work when its own trace was cut short: replay
    // applies the child's records after the parent's, so nothing closed them.
    if (terminal && !hasOpenWork(n)) continue;
    const w = d.w(id);
    if (w === undefined) continue;
    if (!terminal) {
      w.status = 'interrupted';
      w.terminalReason = 'interrupted';
      w.endedMs = ts ?? w.lastTs;
    }
    const end = w.endedMs ?? ts ?? w.lastTs;
    closeOpenSpans(w, end);
    w.items = w.items.map((it) => {
      if (it.kind === 'assistant' && it.streaming) return { ...it, streaming: false };
      if (it.kind === 'tool' && it.status === 'running') {
        const permission = it.permission?.state === 'pending' ? { ...it.permission, state: 'deny' as const, reason: 'run ended' } : it.permission;
        return { ...it, status: 'cancelled', permission };
      }
      return it;
    });
    w.pendingApprovals = 0;
    changed = true;
  }
  return changed ? d.finish() : state;
}

function hasOpenWork(n: SessionNode): boolean {
  return (
    n.pendingApprovals > 0 ||
    n.spans.some((s) => s.end === null) ||
    n.items.some((it) => (it.kind === 'assistant' && it.streaming) || (it.kind === 'tool' && it.status === 'running'))
  );
}

/** Parses JSONL text into records; reports the 1-based line of anything that is not a trace record. */
export function parseJsonl(text: string): { records: TraceRecord[]; errors: string[] } {
  const records: TraceRecord[] = [];
  const errors: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i].trim();
    if (line === '') continue;
    try {
      const v = JSON.parse(line) as TraceRecord;
      if (typeof v !== 'object' || v === null || typeof v.session_id !== 'string' || typeof v.event !== 'object') {
        errors.push(`line ${i + 1}: not a trace record (needs session_id and event)`);
      } else {
        records.push(v);
      }
    } catch (err) {
      errors.push(`line ${i + 1}: invalid JSON (${(err as Error).message})`);
    }
  }
  return { records, errors };
}
