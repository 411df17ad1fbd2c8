import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import About from './About.svelte';
import type { Backend } from '../lib/api';
import { ApiError } from '../lib/errors';
import { createFakeBackend } from '../lib/fake';
import { AboutService } from '../lib/services';

describe('About', () => {
  let app: Record<string, unknown> | null = null;
  afterEach(() => {
    if (app !== null) unmount(app);
    app = null;
    document.body.innerHTML = '';
  });

  function render(backend: Backend): HTMLElement {
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(About, { target, props: { about: new AboutService(backend) } });
    flushSync();
    return target;
  }

  async function settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await tick();
    flushSync();
  }

  it('shows the version the backend reports and where the person’s files are, and closes on Escape', async () => {
    const backend: Backend = { ...createFakeBackend(), appVersion: async () => '1.2.3' };
    const target = render(backend);
    expect(target.querySelector('[data-testid="about"]')).toBeNull();
    (target.querySelector('[data-testid="nav-about"]') as HTMLButtonElement).click();
    await settle();
    expect(target.querySelector('[data-testid="about-version"]')?.textContent).toBe('Version 1.2.3');
    const text = target.querySelector('[data-testid="about"]')?.textContent ?? '';
    expect(text).toContain('~/.config/canopy');
    expect(text).toContain('~/.local/share/canopy');
    target.querySelector('[data-testid="about"]')?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    flushSync();
    expect(target.querySelector('[data-testid="about"]')).toBeNull();
  });

  it('says so when the version cannot be read, instead of showing a blank', async () => {
    const backend: Backend = {
      ...createFakeBackend(),
      appVersion: async () => {
        throw new ApiError('internal', 'core:app:allow-version not allowed');
      },
    };
    const target = render(backend);
    (target.querySelector('[data-testid="nav-about"]') as HTMLButtonElement).click();
    await settle();
    expect(target.querySelector('[data-testid="about-error"]')?.textContent).toContain('core:app:allow-version not allowed');
    expect(target.querySelector('[data-testid="about-version"]')).toBeNull();
  });
});
