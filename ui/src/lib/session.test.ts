import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeBackend } from './fake';
import { DEMO_ROOT } from './fixtures/demo';
import type { SessionStore } from './session.svelte';
import { createStores } from './stores';

// What a person sees when the shell reports things on its own: warnings at start, and a second
// `canopy FOLDER` switching the open project.
describe('session store', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows each startup warning as a dismissible notice', async () => {
    const warning = 'settings.json was unreadable (expected value at line 1 column 1); a backup was kept at /home/a/.config/canopy/settings.json.bak';
    const stores = createStores(createFakeBackend({ startupWarnings: [warning, 'CANOPY_MODEL overrides the main model for runs'] }));
    await stores.listen();
    expect(stores.notices.items.map((n) => [n.kind, n.text])).toEqual([
      ['warning', warning],
      ['warning', 'CANOPY_MODEL overrides the main model for runs'],
    ]);
    stores.notices.dismiss(stores.notices.items[0].id);
    expect(stores.notices.items.map((n) => n.text)).toEqual(['CANOPY_MODEL overrides the main model for runs']);
  });

  it('gathers the CANOPY_* environment overrides into one notice that lists them', async () => {
    const overrides = [
      'main.provider = anthropic (from CANOPY_MAIN_PROVIDER)',
      'main.base_url = http://127.0.0.1:9/v1 (from CANOPY_MAIN_BASE_URL)',
      'main.model = claude-sonnet-4-5 (from CANOPY_MAIN_MODEL)',
      "light slot created from main's settings (because CANOPY_LIGHT_* is set)",
      'light.provider = openai (from CANOPY_LIGHT_PROVIDER)',
      'light.base_url = http://127.0.0.1:10/v1 (from CANOPY_LIGHT_BASE_URL)',
      'light.model = gpt-4.1-mini (from CANOPY_LIGHT_MODEL)',
    ];
    const moved = 'settings.json was unreadable; a backup was kept at /home/a/.config/canopy/settings.json.bak';
    const warnings = [moved, ...overrides.map((o) => `Environment override in effect: ${o}`)];
    const stores = createStores(createFakeBackend({ startupWarnings: warnings }));
    await stores.listen();
    expect(stores.notices.items.map((n) => [n.kind, n.text])).toEqual([
      ['warning', moved],
      ['warning', '7 environment overrides in effect for runs (CANOPY_* variables, never saved)'],
    ]);
    expect(stores.notices.items[1].lines).toEqual(overrides);
    // Read again (the listener set up anew), nothing is repeated.
    await stores.listen();
    expect(stores.notices.items.length).toBe(2);
    expect(stores.notices.items[1].lines).toEqual(overrides);
    stores.notices.dismiss(stores.notices.items[1].id);
    expect(stores.notices.items.map((n) => n.text)).toEqual([moved]);
  });

  it('the session pane is one of blank, live, replay and still-running replay, never two at once', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    expect(session.pane).toEqual({ kind: 'blank' });
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    await session.send('look into the leak');
    expect(session.pane).toEqual({ kind: 'live' });
    expect([session.liveShown, session.readOnly, session.stillRunning]).toEqual([true, false, false]);
    await session.loadHistory('main-0c55', 'running');
    expect(session.pane).toEqual({ kind: 'replay_running' });
    expect([session.liveShown, session.readOnly, session.stillRunning]).toEqual([false, true, true]);
    await session.loadHistory('main-0c55', 'interrupted');
    expect(session.pane).toEqual({ kind: 'replay' });
    expect([session.liveShown, session.readOnly, session.stillRunning]).toEqual([false, true, false]);
    session.reset();
    expect(session.pane).toEqual({ kind: 'blank' });
    expect([session.liveShown, session.readOnly, session.stillRunning]).toEqual([false, false, false]);
    // The live run goes on meanwhile and is shown again on request.
    expect(session.showLive()).toBe(true);
    expect(session.pane).toEqual({ kind: 'live' });
  });

  it('follows a second launch to another project and drops the old run from view', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    await stores.listen();
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    await session.send('look into the leak');
    await vi.advanceTimersByTimeAsync(5_000);
    session.flush();
    expect(session.tree.nodes.size).toBeGreaterThan(0);
    expect(session.running).toBe(true);

    const other = '/home/ada/work/billing-service';
    const second = be.secondLaunch(other);
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(session.project?.root).toBe(other);
    expect(session.project?.name).toBe('billing-service');
    expect(stores.nav.view).toBe('session');
    expect(session.sessionId).toBeNull();
    expect(stores.notices.items.at(-1)?.text).toContain('The run in tiny-http is still going');

    // The old run keeps streaming into its channel; none of it may land in the new project's view.
    await vi.advanceTimersByTimeAsync(20_000);
    session.flush();
    expect(session.tree.nodes.size).toBe(0);
  });

  it('warns in the running window when a second launch names a folder that cannot be opened', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    await stores.listen();
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    const second = be.secondLaunch('/nowhere/missing-project');
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(session.project?.root).toBe(DEMO_ROOT);
    expect(stores.notices.items.at(-1)?.kind).toBe('warning');
    expect(stores.notices.items.at(-1)?.text).toContain('Could not open /nowhere/missing-project');
  });

  it('tells the person which agent profile files were rejected when a project opens', async () => {
    const stores = createStores(createFakeBackend());
    const { session } = stores;
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    expect(session.project?.profile_errors.length).toBe(1);
    expect(stores.notices.items.map((n) => [n.kind, n.text])).toEqual([
      ['warning', '1 agent profile in tiny-http could not be loaded (fuzz.md); see Settings › Agent profiles for why.'],
    ]);
  });

  it('says a profile runs with lowered budgets rather than calling it rejected', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    const opening = be.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    const p = await opening;
    session.setProject({
      ...p,
      profile_errors: [{ path: `${DEMO_ROOT}/.canopy/agents/greedy.md`, reason: 'budgets lowered to the ceiling: max_steps 500 -> 60', loaded: true }],
    });
    expect(stores.notices.items.map((n) => [n.kind, n.text])).toEqual([
      ['warning', 'Agent profiles of tiny-http in use with changes — greedy.md: budgets lowered to the ceiling: max_steps 500 -> 60'],
    ]);
  });

  it("records the answer about the project's own profiles for the digest shown, and stops reviewing", async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    session.reviewingProfiles = true;
    await session.answerProjectProfiles(false);
    expect(session.project?.profiles_trust).toBe('declined');
    expect(session.reviewingProfiles).toBe(false);
    await session.answerProjectProfiles(true);
    expect(session.project?.profiles_trust).toBe('trusted');
    // Files changed since they were shown: the answer is refused, nothing is recorded.
    session.project = { ...session.project!, profiles_digest: 'another-digest' };
    await session.answerProjectProfiles(false);
    expect(stores.notices.error).toContain('changed since they were shown');
  });

  it('a second launch on the open project only refreshes its profiles', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    await stores.listen();
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    session.selected = 'explore-loop-1c2d';
    const before = stores.notices.items.length;
    const second = be.secondLaunch(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(session.selected).toBe('explore-loop-1c2d');
    expect(stores.notices.items.length).toBe(before);
  });
});

// A run started in this window must stay reachable and honest whatever else the person opens meanwhile.
describe('the live run while other things are shown', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function running() {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    expect(await session.send('look into the leak')).toBe(true);
    await vi.advanceTimersByTimeAsync(3_000);
    session.flush();
    return { be, stores, session, live: session.sessionId as string };
  }
  const statuses = (session: SessionStore) => [...session.tree.nodes.values()].map((n) => n.status);

  it('opening the running session from History shows it live again, with what arrived meanwhile', async () => {
    const { be, session, live } = await running();
    const before = session.tree.version;
    const rows = await be.listSessions();
    expect(rows.find((r) => r.session_id === live)?.status).toBe('running');
    const past = rows.find((r) => r.status === 'completed');
    if (past === undefined) throw new Error('the demo history has no completed session');
    await session.loadHistory(past.session_id, past.status);
    expect(session.pane).toEqual({ kind: 'replay' });
    expect(session.readOnly).toBe(true);
    expect(session.sessionId).toBe(past.session_id);
    await vi.advanceTimersByTimeAsync(10_000);
    session.flush();
    // Still the replay on screen: the live records went to the live run only.
    expect(session.sessionId).toBe(past.session_id);

    await session.loadHistory(live, 'running');
    expect(session.pane).toEqual({ kind: 'live' });
    expect(session.liveShown).toBe(true);
    expect(session.readOnly).toBe(false);
    expect(session.sessionId).toBe(live);
    expect(session.running).toBe(true);
    expect(session.tree.version).toBeGreaterThan(before);
    expect(statuses(session)).not.toContain('interrupted');
    expect(session.tree.nodes.get(live)?.status).toBe('running');
  });

  it('a session the session still runs elsewhere opens read-only as running, not interrupted; Stop then shows how it ended', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    // main-0c55's trace stops mid-run; the session says whether a run of it is still going.
    await session.loadHistory('main-0c55', 'running');
    expect(session.pane).toEqual({ kind: 'replay_running' });
    expect(session.readOnly).toBe(true);
    expect(session.stillRunning).toBe(true);
    expect(session.running).toBe(true);
    expect(statuses(session)).not.toContain('interrupted');
    expect(statuses(session)).toContain('running');

    const stop = session.stopRun();
    await vi.advanceTimersByTimeAsync(1_000);
    await stop;
    // The session no longer lists it as running: read again, it is shown as it stands in its file.
    expect(session.pane).toEqual({ kind: 'replay' });
    expect(session.stillRunning).toBe(false);
    expect(session.running).toBe(false);
    expect(session.tree.nodes.get('main-0c55')?.status).toBe('interrupted');

    // Without a running status the same trace is an interrupted one, as before.
    await session.loadHistory('main-0c55', 'interrupted');
    expect(session.stillRunning).toBe(false);
    expect(statuses(session)).not.toContain('running');
  });

  it('a session whose trace file is gone says so in words, not with its id, and the view stays put', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    const [row] = await be.listSessions();
    await be.deleteSession(row.session_id);
    stores.nav.view = 'history';
    await session.loadHistory(row.session_id, row.status);
    expect(stores.notices.error).toBe('This session is no longer in History: its trace file was deleted or moved.');
    expect(stores.notices.error).not.toContain(row.session_id);
    expect(stores.nav.view).toBe('history');
    expect(session.sessionId).toBeNull();
  });

  it('opening another project keeps the run; reopening its project shows it live', async () => {
    const { session, live } = await running();
    const other = session.openProject('/home/ada/work/billing-service');
    await vi.advanceTimersByTimeAsync(100);
    await other;
    expect(session.project?.name).toBe('billing-service');
    expect(session.sessionId).toBeNull();
    expect(session.tree.nodes.size).toBe(0);
    expect(session.liveRunning).toBe(true);
    const version = session.tree.version;
    await vi.advanceTimersByTimeAsync(10_000);
    session.flush();
    expect(session.tree.version).toBe(version);

    const back = session.backToLive();
    await vi.advanceTimersByTimeAsync(100);
    await back;
    expect(session.project?.root).toBe(DEMO_ROOT);
    expect(session.liveShown).toBe(true);
    expect(session.sessionId).toBe(live);
    expect(session.tree.nodes.get(live)?.status).toBe('running');
  });

  it('a failed send keeps the live run and says what to fix', async () => {
    const { be, session, live } = await running();
    session.reset();
    await be.deleteApiKey('main');
    expect(await session.send('a second task')).toBe(false);
    expect(session.sendError).toEqual({ code: 'missing_key', message: 'no API key for the main model; add one in Settings', settings: true });
    expect(session.running).toBe(false);
    expect(session.liveSessionId).toBe(live);
    expect(session.liveRunning).toBe(true);
    session.showLive();
    expect(session.sessionId).toBe(live);
    expect(session.sendError).toBeNull();
  });

  it('an approval is answered once, however often its buttons are clicked', async () => {
    const { be, stores, session } = await running();
    await vi.advanceTimersByTimeAsync(60_000);
    session.flush();
    const root = session.tree.nodes.get(session.tree.rootId as string);
    expect(root?.pendingApprovals).toBe(1);
    const spy = vi.spyOn(be, 'answerApproval');
    expect(session.isAnswered('call_edit1')).toBe(false);
    const a = session.answerApproval('call_edit1', 'allow_once');
    const b = session.answerApproval('call_edit1', 'allow_once');
    expect(session.isAnswered('call_edit1')).toBe(true);
    await Promise.all([a, b]);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(stores.notices.error).toBeNull();
  });
});

describe('file viewer window', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks for the lines around a citation past the first 5000, so the cited line is in the window', async () => {
    const be = createFakeBackend();
    const stores = createStores(be);
    const { session } = stores;
    const open = session.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    const spy = vi.spyOn(be, 'readProjectFile');
    const f = stores.fileViewer.open('src/tables.rs', 7001, 7002);
    await vi.advanceTimersByTimeAsync(100);
    await f;
    expect(spy).toHaveBeenCalledWith('src/tables.rs', 6801, 9002);
    const w = stores.fileViewer.file?.window;
    if (w == null) throw new Error(`no window: ${stores.fileViewer.file?.error}`);
    expect(w.start_line).toBe(6801);
    expect(w.lines[7001 - w.start_line]).toBe('/// Status codes the parser accepts; anything else is a 400.');
    expect(w.lines[7002 - w.start_line]).toBe('pub const STATUS: [u16; 63] = [');

    // Near the top the window starts at line 1.
    const g = stores.fileViewer.open('src/pool.rs', 30, null);
    await vi.advanceTimersByTimeAsync(100);
    await g;
    expect(stores.fileViewer.file?.window?.start_line).toBe(1);
    expect(stores.fileViewer.file?.window?.lines[29]).toBe('    pub fn remove(&mut self, id: usize) -> Option<Connection> {');
  });
});

describe('saving settings', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function withDraft() {
    const be = createFakeBackend();
    const stores = createStores(be);
    stores.settingsForm.saved = await be.getSettings();
    stores.settingsForm.draft = structuredClone(stores.settingsForm.saved);
    return { stores, be };
  }

  it('keeps what was typed while the save was in flight, still unsaved', async () => {
    const { stores, be } = await withDraft();
    const draft = stores.settingsForm.draft;
    if (draft === null) throw new Error('no draft');
    draft.parallelism = 6;
    const p = stores.settingsForm.save();
    // Typed after Save was pressed, before the backend answered.
    draft.main.model = 'claude-opus-4-1';
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(stores.settingsForm.saved?.parallelism).toBe(6);
    expect(stores.settingsForm.saved?.main.model).toBe('claude-sonnet-4-5');
    expect(stores.settingsForm.draft?.main.model).toBe('claude-opus-4-1');
    expect(stores.settingsForm.draft?.parallelism).toBe(6);
    expect(stores.settingsForm.dirty).toBe(true);

    // Saving again stores the late edit too, and then nothing is left unsaved.
    const q = stores.settingsForm.save();
    await vi.advanceTimersByTimeAsync(100);
    expect(await q).toBe(true);
    expect((await be.getSettings()).main.model).toBe('claude-opus-4-1');
    expect(stores.settingsForm.dirty).toBe(false);
  });

  it('starts no second save while one is in flight, wherever Save is pressed from', async () => {
    const { stores, be } = await withDraft();
    const spy = vi.spyOn(be, 'saveSettings');
    if (stores.settingsForm.draft === null) throw new Error('no draft');
    stores.settingsForm.draft.parallelism = 6;
    const p = stores.settingsForm.save();
    expect(stores.settingsForm.saving).toBe(true);
    // Leaving Settings and coming back gives a new form; its Save must not race the first one.
    stores.settingsForm.draft.parallelism = 7;
    expect(await stores.settingsForm.save()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(stores.settingsForm.saving).toBe(false);
    expect(stores.settingsForm.saved?.parallelism).toBe(6);
    expect(stores.settingsForm.draft?.parallelism).toBe(7);
    expect(stores.settingsForm.dirty).toBe(true);
  });

  it('takes what was stored as the draft when nothing changed meanwhile, empty overrides included', async () => {
    const { stores } = await withDraft();
    const draft = stores.settingsForm.draft;
    if (draft === null) throw new Error('no draft');
    draft.parallelism = 2;
    // A profile row that was touched and emptied again is sent as no entry at all.
    draft.profiles.explore = { model: null, max_steps: null, max_context_tokens: null, max_total_tokens: null, max_wall_time_ms: null };
    const p = stores.settingsForm.save();
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(stores.settingsForm.draft).toEqual(stores.settingsForm.saved);
    expect(stores.settingsForm.draft?.profiles).toEqual({});
    expect(stores.settingsForm.dirty).toBe(false);
  });

  it('keeps the draft and says why when the backend refuses it', async () => {
    const { stores } = await withDraft();
    const draft = stores.settingsForm.draft;
    if (draft === null) throw new Error('no draft');
    draft.main.base_url = 'ftp://example.com';
    const p = stores.settingsForm.save();
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(false);
    expect(stores.settingsForm.saved?.main.base_url).toBe('https://api.anthropic.com');
    expect(stores.settingsForm.draft?.main.base_url).toBe('ftp://example.com');
    expect(stores.settingsForm.dirty).toBe(true);
    expect(stores.settingsForm.serverErrors).toHaveLength(1);
    expect(JSON.stringify(stores.settingsForm.serverErrors[0])).toContain('must be an http:// or https:// URL');
  });
});
