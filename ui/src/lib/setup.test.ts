import { describe, expect, it } from 'vitest';
import { createFakeBackend } from './fake';
import { checkSetup, isLoopbackUrl } from './setup';
import { createStores } from './stores';

describe('isLoopbackUrl', () => {
  it('accepts local model servers and rejects hosted ones, including look-alike hosts', () => {
    expect(isLoopbackUrl('http://127.0.0.1:11434/v1')).toBe(true);
    expect(isLoopbackUrl('http://localhost:1234/v1')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:8080')).toBe(true);
    expect(isLoopbackUrl('http://localhost')).toBe(true);
    expect(isLoopbackUrl('https://api.openai.com/v1')).toBe(false);
    expect(isLoopbackUrl('http://localhost.example.com/v1')).toBe(false);
    expect(isLoopbackUrl('http://127.0.0.1.nip.io/v1')).toBe(false);
    // The host is what follows the `@`: this URL talks to api.example.com, so it needs a key.
    expect(isLoopbackUrl('http://127.0.0.1:1@api.example.com/v1')).toBe(false);
    expect(isLoopbackUrl('not a url')).toBe(false);
  });
});

describe('checkSetup follows the saved settings and the key, each time it is asked', () => {
  it('clears after a key is stored and comes back after it is deleted', async () => {
    const backend = createFakeBackend();
    // The settings store the Settings view and the header's "No model configured" read.
    const { settingsForm } = createStores(backend);
    await settingsForm.checkStartup();
    expect(settingsForm.needsSetup).toBe(false); // the demo starts with a main key

    await backend.deleteApiKey('main');
    await settingsForm.refreshSetup();
    expect(settingsForm.needsSetup).toBe(true);

    await backend.setApiKey('main', 'sk-test');
    await settingsForm.refreshSetup();
    expect(settingsForm.needsSetup).toBe(false);
  });

  it('needs no key once the saved main model is a local server, and needs one again when it is hosted', async () => {
    const backend = createFakeBackend();
    await backend.deleteApiKey('main');
    const s = await backend.getSettings();
    expect((await checkSetup(backend)).needsSetup).toBe(true);

    await backend.saveSettings({ ...s, main: { ...s.main, provider: 'openai', base_url: 'http://127.0.0.1:11434/v1' } });
    expect((await checkSetup(backend)).needsSetup).toBe(false);

    await backend.saveSettings(s);
    expect((await checkSetup(backend)).needsSetup).toBe(true);
  });

  it('a key stored for the light slot does not count for the main model', async () => {
    const backend = createFakeBackend();
    await backend.deleteApiKey('main');
    await backend.setApiKey('light', 'sk-light');
    expect((await checkSetup(backend)).needsSetup).toBe(true);
  });

  it('unreadable settings ask for set-up instead of hiding the hint', async () => {
    const backend = createFakeBackend();
    const broken = { ...backend, getSettings: () => Promise.reject(new Error('settings.json: bad')) };
    expect(await checkSetup(broken)).toEqual({ settings: null, needsSetup: true });
  });
});
