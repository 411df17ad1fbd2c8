import { describe, expect, it } from 'vitest';
import { ApiError, toApiError } from './errors';

/** An `invalid_settings` error as the backend sends it: a sentence for people and the field apart. */
const invalid = (field: string, message: string) => new ApiError('invalid_settings', `${field}: ${message}`, [{ field, message }]);
import { fieldsOnScreen, liveServerErrors, maxOutputError, mergeErrors, parallelismError, sameSettings, serverError, slotErrors, topBarMessage, withoutEmptyOverrides } from './settingsErrors';

const draft = () => ({
  main: { base_url: 'http://127.0.0.1:11434/v1', context_window: 8192, max_output_tokens: 8192 },
  light: null,
  parallelism: 4,
  profiles: { explore: { max_steps: 0 } },
});

describe('settings errors', () => {
  const shown = fieldsOnScreen(false, ['explore', 'verify']);

  it('knows which fields have an input on screen', () => {
    expect(shown.has('main.context_window')).toBe(true);
    expect(shown.has('profiles.verify.max_wall_time_ms')).toBe(true);
    expect(shown.has('parallelism')).toBe(true);
    expect(shown.has('main.max_output_tokens')).toBe(true);
    expect(shown.has('main.version')).toBe(false);
    expect(shown.has('light.model')).toBe(false);
    expect(fieldsOnScreen(true, []).has('light.model')).toBe(true);
  });

  it('spells out an error on a field with no input instead of "Fix the marked field"', () => {
    const e = serverError(invalid('version', 'must be 1, found 2'), draft());
    const msg = topBarMessage(liveServerErrors([e], draft()), shown);
    expect(msg).toBe('version: must be 1, found 2');
  });

  it('points at the marked field when the error is on one, and names both kinds together', () => {
    expect(topBarMessage({ 'main.context_window': 'too small' }, shown)).toBe('Fix the marked field');
    expect(topBarMessage({ 'main.context_window': 'a', 'profiles.explore.max_steps': 'b' }, shown)).toBe('Fix the marked fields');
    expect(topBarMessage({ 'main.context_window': 'a', 'light.model': 'must not be empty' }, shown)).toBe('light.model: must not be empty · fix the marked field');
    expect(topBarMessage({ _: 'could not write settings.json' }, shown)).toBe('could not write settings.json');
    expect(topBarMessage({}, shown)).toBeNull();
  });

  it('an error that names no field is shown whole, whatever its text looks like', () => {
    const e = serverError(new ApiError('io', 'permission denied: settings.json'), draft());
    expect(topBarMessage(liveServerErrors([e], draft()), shown)).toBe('permission denied: settings.json');
    // A shape error has a colon in it but no field: it is not cut into a made-up field name.
    const shape = 'settings do not have the expected shape: invalid type: string "x", expected u32';
    const s = serverError(new ApiError('invalid_settings', shape), draft());
    expect(s.field).toBe('_');
    expect(topBarMessage(liveServerErrors([s], draft()), shown)).toBe(shape);
  });

  it('marks the field the backend names in field_errors, with its message', () => {
    const wire = { code: 'invalid_settings', message: 'main.context_window: must be at least 1024', field_errors: [{ field: 'main.context_window', message: 'must be at least 1024' }] };
    const e = serverError(toApiError(wire), draft());
    expect(e.field).toBe('main.context_window');
    expect(liveServerErrors([e], draft())).toEqual({ 'main.context_window': 'must be at least 1024' });
    expect(topBarMessage(liveServerErrors([e], draft()), shown)).toBe('Fix the marked field');
  });

  it("a backend error hides once its field is edited, and a client error is never replaced by it", () => {
    const d = draft();
    const why = '8192 is too small: it must be larger than Max output tokens (8192); raise it or lower Max output tokens';
    const e = serverError(invalid('main.context_window', why), d);
    expect(liveServerErrors([e], d)).toEqual({ 'main.context_window': why });
    d.main.context_window = 32768;
    expect(liveServerErrors([e], d)).toEqual({});

    const client = { 'profiles.explore.max_steps': 'must be a positive whole number' };
    const merged = mergeErrors(client, { parallelism: 'must be 1..=16, found 0', 'profiles.explore.max_steps': 'must be > 0' });
    expect(merged).toEqual({ parallelism: 'must be 1..=16, found 0', 'profiles.explore.max_steps': 'must be a positive whole number' });
  });

  it('checks parallelism as typed, including an emptied field', () => {
    expect(parallelismError(4)).toBeNull();
    expect(parallelismError(16)).toBeNull();
    expect(parallelismError(null)).toBe('must be a whole number from 1 to 16');
    expect(parallelismError(0)).not.toBeNull();
    expect(parallelismError(17)).not.toBeNull();
    expect(parallelismError(2.5)).not.toBeNull();
  });

  it('a context-window error also hides when the max output tokens it names is changed', () => {
    const d = draft();
    const e = serverError(invalid('main.context_window', '8192 is too small: it must be larger than Max output tokens (8192)'), d);
    expect(Object.keys(liveServerErrors([e], d))).toEqual(['main.context_window']);
    d.main.max_output_tokens = 4096;
    expect(liveServerErrors([e], d)).toEqual({});
    // An error on another field is not tied to max output tokens.
    const d2 = draft();
    const u = serverError(invalid('main.base_url', 'not a valid http(s) URL (no host)'), d2);
    d2.main.max_output_tokens = 4096;
    expect(liveServerErrors([u], d2)).toEqual({ 'main.base_url': 'not a valid http(s) URL (no host)' });
  });

  it('checks max output tokens as typed, on each slot that is shown', () => {
    expect(maxOutputError(4096)).toBeNull();
    expect(maxOutputError(0)).toBe('must be a whole number of tokens, at least 1');
    expect(maxOutputError(Number.NaN)).not.toBeNull();
    expect(maxOutputError(1.5)).not.toBeNull();
    expect(maxOutputError(2 ** 32)).not.toBeNull();
    expect(slotErrors({ main: { max_output_tokens: 8192 }, light: null })).toEqual({});
    expect(slotErrors({ main: { max_output_tokens: 8192 }, light: { max_output_tokens: 0 } })).toEqual({
      'light.max_output_tokens': 'must be a whole number of tokens, at least 1',
    });
  });
});

describe('unsaved settings', () => {
  const saved = () => ({
    version: 1,
    main: { model: 'gpt-4.1', context_window: 128000, max_output_tokens: 8192 },
    parallelism: 4,
    profiles: { explore: { model: null, max_steps: 5, max_total_tokens: null } } as Record<string, Record<string, unknown>>,
  });

  it('a draft equal to what is saved is not unsaved, whatever its key order', () => {
    const d = { parallelism: 4, profiles: { explore: { max_total_tokens: null, max_steps: 5, model: null } }, main: { max_output_tokens: 8192, context_window: 128000, model: 'gpt-4.1' }, version: 1 };
    expect(sameSettings(d, saved())).toBe(true);
  });

  it('an edited value is unsaved, and so is an added or cleared override', () => {
    const d = saved();
    d.main.max_output_tokens = 4096;
    expect(sameSettings(d, saved())).toBe(false);
    const main = saved();
    main.profiles.main = { model: null, max_steps: 2 };
    expect(sameSettings(main, saved())).toBe(false);
    const cleared = saved();
    cleared.profiles.explore.max_steps = null;
    expect(sameSettings(cleared, saved())).toBe(false);
  });

  it('an override typed and emptied again is not a change, and is not saved', () => {
    const d = saved();
    d.profiles.verify = { model: null, max_steps: null, max_context_tokens: null, max_total_tokens: null, max_wall_time_ms: null };
    expect(sameSettings(d, saved())).toBe(true);
    expect(Object.keys(withoutEmptyOverrides(d).profiles)).toEqual(['explore']);
    // The draft itself is left as it is: the form still holds the entry it edits.
    expect(Object.keys(d.profiles)).toEqual(['explore', 'verify']);
  });
});
