import { describe, expect, it } from 'vitest';
import { ApiError } from './api';
import { fieldsOnScreen, liveServerErrors, mergeErrors, parallelismError, serverError, topBarMessage } from './settingsErrors';

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
    expect(shown.has('main.max_output_tokens')).toBe(false);
    expect(shown.has('light.model')).toBe(false);
    expect(fieldsOnScreen(true, []).has('light.model')).toBe(true);
  });

  it('spells out an error on a field with no input instead of "Fix the marked field"', () => {
    const e = serverError(new ApiError('invalid_settings', 'main.max_output_tokens: must be > 0'), draft());
    const msg = topBarMessage(liveServerErrors([e], draft()), shown);
    expect(msg).toBe('main.max_output_tokens: must be > 0');
  });

  it('points at the marked field when the error is on one, and names both kinds together', () => {
    expect(topBarMessage({ 'main.context_window': 'too small' }, shown)).toBe('Fix the marked field');
    expect(topBarMessage({ 'main.context_window': 'a', 'profiles.explore.max_steps': 'b' }, shown)).toBe('Fix the marked fields');
    expect(topBarMessage({ 'main.context_window': 'a', 'light.model': 'must not be empty' }, shown)).toBe('light.model: must not be empty · fix the marked field');
    expect(topBarMessage({ _: 'could not write settings.json' }, shown)).toBe('could not write settings.json');
    expect(topBarMessage({}, shown)).toBeNull();
  });

  it('an error that is not "field: reason" is shown whole', () => {
    const e = serverError(new ApiError('io', 'permission denied: settings.json'), draft());
    expect(topBarMessage(liveServerErrors([e], draft()), shown)).toBe('permission denied: settings.json');
  });

  it("a backend error hides once its field is edited, and a client error is never replaced by it", () => {
    const d = draft();
    const e = serverError(new ApiError('invalid_settings', 'main.context_window: 8192 is too small: it must exceed max output tokens (8192)'), d);
    expect(liveServerErrors([e], d)).toEqual({ 'main.context_window': '8192 is too small: it must exceed max output tokens (8192)' });
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
});
