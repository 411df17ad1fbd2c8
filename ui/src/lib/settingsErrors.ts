//! Errors on the Settings form. Errors the form finds itself block Save until fixed; an error the backend
//! returns on Save is kept beside them (never replacing them) and hides once its field is edited. An error
//! on a field the screen has no input for is spelled out as "field: reason" in the top bar, since there
//! is nothing to mark.

import { invalidField, type ApiError } from './api';

export type FieldErrors = Record<string, string>;

/** Key for an error that names no field (or not in "field: reason" form). */
export const GENERAL = '_';

/** A backend error with the value its field had when it was reported. */
export interface ServerError {
  field: string;
  reason: string;
  value: unknown;
}

export const SLOT_FIELDS = ['base_url', 'model', 'context_window', 'input_price_per_mtok', 'output_price_per_mtok'] as const;
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

/** What a failed Save reported, remembering the value it was about. */
export function serverError(err: ApiError, draft: unknown): ServerError {
  const f = invalidField(err);
  if (f === null || f.field === '') return { field: GENERAL, reason: f?.reason ?? err.message, value: undefined };
  return { field: f.field, reason: f.reason, value: valueAt(draft, f.field) };
}

/** The backend error, while its field still holds the value it was about. */
export function liveServerErrors(errs: readonly ServerError[], draft: unknown): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errs) {
    if (e.field === GENERAL || Object.is(valueAt(draft, e.field), e.value)) out[e.field] = e.reason;
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
export function parallelismError(v: unknown, max = 16): string | null {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) return `must be a whole number from 1 to ${max}`;
  return null;
}
