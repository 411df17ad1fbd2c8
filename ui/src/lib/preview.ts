//! What an approval prompt shows before the person answers: a pure model built from the pending call's
//! `tool_call_begin.arguments`, so "Allow" is a judgement of the actual edit, file or command.

import type { JsonValue } from '../generated/types';
import { toolKind } from './toolKind';

export interface DiffLine {
  kind: 'ctx' | 'del' | 'add';
  text: string;
}

export type ApprovalPreview =
  | {
      kind: 'edit';
      path: string;
      replaceAll: boolean;
      lines: DiffLine[];
      removed: number;
      added: number;
      /** Lines of the diff not rendered (it is capped to keep the DOM small). */
      hiddenLines: number;
    }
  | { kind: 'write'; path: string; head: string[]; totalLines: number; bytes: number }
  | { kind: 'bash'; command: string; timeoutMs: number | null; description: string | null; network: boolean }
  | { kind: 'json'; text: string };

/** Lines of a Write's content shown before "… N more lines". */
export const WRITE_HEAD_LINES = 20;
/** Diff lines rendered at most; the box scrolls, this only bounds the DOM. */
export const DIFF_MAX_LINES = 400;
/** Above this many changed lines on either side the diff is shown as all-removed/all-added. */
const LCS_LIMIT = 300;

function splitLines(s: string): string[] {
  if (s === '') return [];
  const lines = s.split('\n');
  // A trailing newline ends the last line rather than starting an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Line diff: common head and tail as context, the middle by LCS when small enough. */
export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre += 1;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf += 1;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const out: DiffLine[] = a.slice(0, pre).map((text) => ({ kind: 'ctx', text }));
  if (am.length > LCS_LIMIT || bm.length > LCS_LIMIT) {
    for (const text of am) out.push({ kind: 'del', text });
    for (const text of bm) out.push({ kind: 'add', text });
  } else {
    // lcs[i][j] = length of the LCS of am[i..] and bm[j..].
    const lcs: number[][] = Array.from({ length: am.length + 1 }, () => new Array<number>(bm.length + 1).fill(0));
    for (let i = am.length - 1; i >= 0; i -= 1) {
      for (let j = bm.length - 1; j >= 0; j -= 1) {
        lcs[i][j] = am[i] === bm[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < am.length || j < bm.length) {
      if (i < am.length && j < bm.length && am[i] === bm[j]) {
        out.push({ kind: 'ctx', text: am[i] });
        i += 1;
        j += 1;
      } else if (j >= bm.length || (i < am.length && lcs[i + 1][j] >= lcs[i][j + 1])) {
        out.push({ kind: 'del', text: am[i] });
        i += 1;
      } else {
        out.push({ kind: 'add', text: bm[j] });
        j += 1;
      }
    }
  }
  for (const text of a.slice(a.length - suf)) out.push({ kind: 'ctx', text });
  return out;
}

function asObject(args: JsonValue): Record<string, JsonValue> | null {
  let v: JsonValue = args;
  // Some providers hand the arguments over as a JSON string.
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as JsonValue;
    } catch {
      return null;
    }
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  return v as Record<string, JsonValue>;
}

function jsonPreview(args: JsonValue): ApprovalPreview {
  return { kind: 'json', text: typeof args === 'string' ? args : JSON.stringify(args, null, 2) ?? 'null' };
}

/** The preview of a pending call; arguments that do not fit the tool's shape fall back to their JSON. */
export function approvalPreview(tool: string, args: JsonValue): ApprovalPreview {
  const o = asObject(args);
  if (o === null) return jsonPreview(args);
  const kind = toolKind(tool);
  // Both file-changing tools are edits; their arguments tell a replacement from a whole new file.
  if (kind === 'edit' && typeof o.path === 'string' && typeof o.old_string === 'string' && typeof o.new_string === 'string') {
    const all = lineDiff(o.old_string, o.new_string);
    return {
      kind: 'edit',
      path: o.path,
      replaceAll: o.replace_all === true,
      lines: all.slice(0, DIFF_MAX_LINES),
      removed: all.filter((l) => l.kind === 'del').length,
      added: all.filter((l) => l.kind === 'add').length,
      hiddenLines: Math.max(0, all.length - DIFF_MAX_LINES),
    };
  }
  if (kind === 'edit' && typeof o.path === 'string' && typeof o.content === 'string') {
    const lines = splitLines(o.content);
    return {
      kind: 'write',
      path: o.path,
      head: lines.slice(0, WRITE_HEAD_LINES),
      totalLines: lines.length,
      bytes: new TextEncoder().encode(o.content).length,
    };
  }
  if (kind === 'execute' && typeof o.command === 'string') {
    return {
      kind: 'bash',
      command: o.command,
      timeoutMs: typeof o.timeout_ms === 'number' ? o.timeout_ms : null,
      description: typeof o.description === 'string' && o.description !== '' ? o.description : null,
      network: o.network === true,
    };
  }
  return jsonPreview(args);
}
