import { describe, expect, it } from 'vitest';
import { keyOrigin } from './keyOrigin';

describe('keyOrigin', () => {
  it('keeps scheme, host and port, and drops paths and default ports', () => {
    expect(keyOrigin('https://api.openai.com/v1')).toEqual({ origin: 'https://api.openai.com', label: 'api.openai.com' });
    expect(keyOrigin('https://API.openai.com:443/other')?.origin).toBe('https://api.openai.com');
    expect(keyOrigin('http://127.0.0.1:4000/v1')).toEqual({ origin: 'http://127.0.0.1:4000', label: '127.0.0.1:4000' });
    expect(keyOrigin('http://models.example.com/v1')?.label).toBe('http://models.example.com');
  });

  it('tells two ports and two schemes apart', () => {
    expect(keyOrigin('http://127.0.0.1:4000/v1')?.origin).not.toBe(keyOrigin('http://127.0.0.1:4001/v1')?.origin);
    expect(keyOrigin('http://api.openai.com/v1')?.origin).not.toBe(keyOrigin('https://api.openai.com/v1')?.origin);
  });

  it('refuses what the backend refuses', () => {
    for (const bad of ['', 'localhost:11434', 'ftp://example.com', 'https://x.com/v1?a=1', 'not a url']) {
      expect(keyOrigin(bad), bad).toBeNull();
    }
  });
});
