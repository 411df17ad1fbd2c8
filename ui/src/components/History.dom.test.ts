import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import History from './History.svelte';
import { storesContext } from '../lib/context';
import { createFakeBackend } from '../lib/fake';
import { DEMO_ROOT } from '../lib/fixtures/demo';
import { createStores } from '../lib/stores';

// A view mounted the way App mounts it: no props, its store from context, the backend reached only
// through the store's services. The list it shows is the backend's, and Delete goes through the seam.
describe('History under the context stores', () => {
  let view: Record<string, unknown> | null = null;
  afterEach(() => {
    if (view !== null) unmount(view);
    view = null;
    document.body.innerHTML = '';
  });

  async function settle(): Promise<void> {
    for (let i = 0; i < 10; i++) await tick();
    flushSync();
  }

  it('lists the sessions the backend has and deletes one after the second click', async () => {
    const backend = createFakeBackend();
    await backend.openProject(DEMO_ROOT);
    const expected = (await backend.listSessions()).map((s) => s.session_id);
    expect(expected.length).toBeGreaterThan(1);
    const stores = createStores(backend);
    const target = document.createElement('div');
    document.body.appendChild(target);
    view = mount(History, { target, context: storesContext(stores) });
    await settle();
    const ids = () => [...target.querySelectorAll('[data-testid="history-row"]')].map((r) => r.getAttribute('data-session-id'));
    expect(ids()).toEqual(expected);

    const gone = expected[expected.length - 1];
    const del = () => target.querySelector<HTMLButtonElement>(`[data-session-id="${gone}"] [data-testid="history-delete"]`);
    del()?.click();
    await settle();
    expect(ids()).toContain(gone);
    del()?.click();
    await settle();
    expect(ids()).not.toContain(gone);
    expect((await backend.listSessions()).map((s) => s.session_id)).not.toContain(gone);
  });

  it('says what is missing when mounted without the stores', () => {
    const target = document.createElement('div');
    document.body.appendChild(target);
    expect(() => mount(History, { target })).toThrow(/no Canopy stores in context/);
  });
});
