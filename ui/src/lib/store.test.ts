import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeBackend } from './fake';
import { DEMO_ROOT } from './fixtures/demo';
import { AppStore } from './store.svelte';

// What a person sees when the shell reports things on its own: warnings at start, and a second
// `canopy FOLDER` switching the open project.
describe('app store', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows each startup warning as a dismissible notice', async () => {
    const warning = 'settings.json was unreadable (expected value at line 1 column 1); a backup was kept at /home/a/.config/canopy/settings.json.bak';
    const app = new AppStore(createFakeBackend({ startupWarnings: [warning, 'CANOPY_MODEL overrides the main model for runs'] }));
    await app.listen();
    expect(app.notices.map((n) => [n.kind, n.text])).toEqual([
      ['warning', warning],
      ['warning', 'CANOPY_MODEL overrides the main model for runs'],
    ]);
    app.dismiss(app.notices[0].id);
    expect(app.notices.map((n) => n.text)).toEqual(['CANOPY_MODEL overrides the main model for runs']);
  });

  it('follows a second launch to another project and drops the old run from view', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    await app.listen();
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    await app.send('look into the leak');
    await vi.advanceTimersByTimeAsync(5_000);
    app.flush();
    expect(app.tree.nodes.size).toBeGreaterThan(0);
    expect(app.running).toBe(true);

    const other = '/home/ada/work/billing-service';
    const second = be.secondLaunch(other);
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(app.project?.root).toBe(other);
    expect(app.project?.name).toBe('billing-service');
    expect(app.view).toBe('session');
    expect(app.sessionId).toBeNull();
    expect(app.notices.at(-1)?.text).toContain('The run in tiny-http is still going');

    // The old run keeps streaming into its channel; none of it may land in the new project's view.
    await vi.advanceTimersByTimeAsync(20_000);
    app.flush();
    expect(app.tree.nodes.size).toBe(0);
  });

  it('warns in the running window when a second launch names a folder that cannot be opened', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    await app.listen();
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    const second = be.secondLaunch('/nowhere/missing-project');
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(app.project?.root).toBe(DEMO_ROOT);
    expect(app.notices.at(-1)?.kind).toBe('warning');
    expect(app.notices.at(-1)?.text).toContain('Could not open /nowhere/missing-project');
  });

  it('tells the person which agent profile files were rejected when a project opens', async () => {
    const app = new AppStore(createFakeBackend());
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    expect(app.project?.profile_errors.length).toBe(1);
    expect(app.notices.map((n) => [n.kind, n.text])).toEqual([
      ['warning', '1 agent profile in tiny-http could not be loaded (fuzz.md); see Settings › Agent profiles for why.'],
    ]);
  });

  it('a second launch on the open project only refreshes its profiles', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    await app.listen();
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    app.selected = 'explore-loop-1c2d';
    const before = app.notices.length;
    const second = be.secondLaunch(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(app.selected).toBe('explore-loop-1c2d');
    expect(app.notices.length).toBe(before);
  });
});
