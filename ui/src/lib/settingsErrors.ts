//! Errors and unsaved state of the Settings form. Errors the form finds itself block Save until fixed; an
//! error the backend returns on Save is kept beside them (never replacing them) and hides once its field
//! (or a field it is about, like max output tokens for the context window) is edited. The backend names
//! the field in its structured `field_errors`, never only in the message text. An error on a field the
//! screen has no input for is spelled out as "field: reason" in the top bar, since there is nothing to
//! mark. A draft is "unsaved" only when it would save something different from what is saved.

import type { ApiError } from './errors';
import { MAX_PARALLELISM } from '../generated/constants';

export type FieldErrors = Record<string, string>;

/** Key for an error that names no field. */
export const GENERAL = '_';

/** A backend error with the value its field (and the fields it is about) had when it was reported. */
export interface ServerError {
  field: string;
  reason: string;
  value: unknown;
  /** Values of other fields the error is about, by dotted path: editing any of them also hides it. */
  related?: Record<string, unknown>;
}

export const SLOT_FIELDS = ['base_url', 'model', 'context_window', 'max_output_tokens', 'input_price_per_mtok', 'output_price_per_mtok'] as const;
export const PROFILE_FIELDS = ['max_steps', 'max_context_tokens', 'max_total_tokens', 'max_wall_time_ms'] as const;

/** The dotted fields the Settings screen shows an error under. */
export function fieldsOnScreen(hasLight: boolean, profiles: readonly string[]): Set<string> {
  const shown = new Set<string>(['parallelism']);
  for (const slot of hasLight ? ['main', 'light'] : ['main']) for (const f of SLOT_FIELDS) shown.add(`${slot}.${f}`);
  for (const p of profiles) for (const f of PROFILE_FIELDS) shown.add(`profiles.${p}.${f}`);
  return shown;
}

/** The value at a dotted path ("main.context_window"), or undefined. */
export function valueAt(root: unknown, field: string): unknown {
  let v: unknown = root;
  for (const part of field.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Fields whose value an error on `field` also depends on (the backend reports a pair on one of them). */
function relatedFields(field: string): string[] {
  const m = /^(main|light)\.context_window$/.exec(field);
  return m === null ? [] : [`${m[1]}.max_output_tokens`];
}

/** What a failed Save reported, remembering the values it was about. */
export function serverError(err: ApiError, draft: unknown): ServerError {
  const f = err.fieldErrors[0];
  if (f === undefined || f.field === '') return { field: GENERAL, reason: err.message, value: undefined };
  const related: Record<string, unknown> = {};
  for (const r of relatedFields(f.field)) related[r] = valueAt(draft, r);
  return { field: f.field, reason: f.message, value: valueAt(draft, f.field), related };
}

/** The backend error, while its field and the fields it is about still hold the values it was about. */
export function liveServerErrors(errs: readonly ServerError[], draft: unknown): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errs) {
    const unchanged = Object.is(valueAt(draft, e.field), e.value) && Object.entries(e.related ?? {}).every(([f, v]) => Object.is(valueAt(draft, f), v));
    if (e.field === GENERAL || unchanged) out[e.field] = e.reason;
  }
  return out;
}

/** Client errors win over a backend error on the same field: they describe what is typed now. */
export function mergeErrors(client: FieldErrors, server: FieldErrors): FieldErrors {
  return { ...server, ...client };
}

/** The top bar's line: every error no input shows, in full; otherwise a pointer to the marked fields. */
export function topBarMessage(errors: FieldErrors, shown: ReadonlySet<string>): string | null {
  const hidden: string[] = [];
  let marked = 0;
  for (const [field, reason] of Object.entries(errors)) {
    if (field === GENERAL) hidden.push(reason);
    else if (shown.has(field)) marked += 1;
    else hidden.push(`${field}: ${reason}`);
  }
  const pointer = marked === 0 ? null : `Fix the marked field${marked > 1 ? 's' : ''}`;
  if (hidden.length === 0) return pointer;
  return pointer === null ? hidden.join(' · ') : `${hidden.join(' · ')} · ${pointer.toLowerCase()}`;
}

/** Parallelism as typed (a number input gives null when empty): a whole number 1..=max, or why not. */
export function parallelismError(v: unknown, max = MAX_PARALLELISM): string | null {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) return `must be a whole number from 1 to ${max}`;
  return null;
}

/** Max output tokens as typed (a number input gives NaN or 0 when emptied): a whole number of at least 1. */
export function maxOutputError(v: unknown): string | null {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 4_294_967_295) return 'must be a whole number of tokens, at least 1';
  return null;
}

/** The form's own errors on the model slots' fields, keyed like the backend's ("main.max_output_tokens"). */
export function slotErrors(draft: { main: { max_output_tokens: number }; light: { max_output_tokens: number } | null }): FieldErrors {
  const out: FieldErrors = {};
  const slots: [string, { max_output_tokens: number } | null][] = [
    ['main', draft.main],
    ['light', draft.light],
  ];
  for (const [name, slot] of slots) {
    const why = slot === null ? null : maxOutputError(slot.max_output_tokens);
    if (why !== null) out[`${name}.max_output_tokens`] = why;
  }
  return out;
}

interface ProfilesHolder {
  profiles: Record<string, Record<string, unknown> | undefined>;
}

/**
 * A copy without override entries that override nothing: touching a budget field and emptying it again
 * leaves such an entry behind, and it saves to the same thing as no entry.
 */
export function withoutEmptyOverrides<T extends ProfilesHolder>(s: T): T {
  const profiles: Record<string, Record<string, unknown>> = {};
  for (const [name, o] of Object.entries(s.profiles)) {
    if (o !== undefined && Object.values(o).some((v) => v !== null && v !== undefined)) profiles[name] = o;
  }
  return { ...s, profiles };
}

/** Deep equality with object keys in any order. */
function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** True when saving `draft` would store what `saved` already holds (the "Unsaved changes" test). */
export function sameSettings<T extends ProfilesHolder>(draft: T, saved: T): boolean {
  return same(withoutEmptyOverrides(draft), withoutEmptyOverrides(saved));
}
