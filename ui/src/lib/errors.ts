//! How a backend failure looks to the UI: one error with the backend's stable code, whatever threw it
//! (a command's `CommandError`, Tauri itself, the webview, the in-browser fake). Kept apart from the
//! backend seam (api.ts) so views can read an error without importing the backend.

import type { CommandError, ErrorCode, FieldError } from './types';

/** `internal`: Tauri itself rejected the call (a plain string), or the webview threw. */
export type ApiErrorCode = ErrorCode | 'internal';

/**
 * A command failure with the backend's stable `code` (e.g. `invalid_settings`, `outside_project`) and,
 * for `invalid_settings`, the fields at fault (`{ field, message }`, field a dotted path).
 */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly fieldErrors: readonly FieldError[];
  constructor(code: ApiErrorCode, message: string, fieldErrors: readonly FieldError[] = []) {
    super(message);
    this.code = code;
    this.fieldErrors = fieldErrors;
    this.name = 'ApiError';
  }
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (typeof e === 'object' && e !== null && 'code' in e && 'message' in e) {
    const ce = e as CommandError;
    return new ApiError(ce.code, String(ce.message), Array.isArray(ce.field_errors) ? ce.field_errors : []);
  }
  if (e instanceof Error) return new ApiError('internal', e.message);
  return new ApiError('internal', String(e));
}
