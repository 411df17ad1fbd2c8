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
    const app = new AppStore(createFakeBackend({ startupWarnings: warnings }));
    await app.listen();
    expect(app.notices.map((n) => [n.kind, n.text])).toEqual([
      ['warning', moved],
      ['warning', '7 environment overrides in effect for runs (CANOPY_* variables, never saved)'],
    ]);
    expect(app.notices[1].lines).toEqual(overrides);
    // Read again (the listener set up anew), nothing is repeated.
    await app.listen();
    expect(app.notices.length).toBe(2);
    expect(app.notices[1].lines).toEqual(overrides);
    app.dismiss(app.notices[1].id);
    expect(app.notices.map((n) => n.text)).toEqual([moved]);
  });

  it('the session pane is one of blank, live, replay and still-running replay, never two at once', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    expect(app.pane).toEqual({ kind: 'blank' });
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    await app.send('look into the leak');
    expect(app.pane).toEqual({ kind: 'live' });
    expect([app.liveShown, app.readOnly, app.stillRunning]).toEqual([true, false, false]);
    await app.loadHistory('main-0c55', 'running');
    expect(app.pane).toEqual({ kind: 'replay_running' });
    expect([app.liveShown, app.readOnly, app.stillRunning]).toEqual([false, true, true]);
    await app.loadHistory('main-0c55', 'interrupted');
    expect(app.pane).toEqual({ kind: 'replay' });
    expect([app.liveShown, app.readOnly, app.stillRunning]).toEqual([false, true, false]);
    app.reset();
    expect(app.pane).toEqual({ kind: 'blank' });
    expect([app.liveShown, app.readOnly, app.stillRunning]).toEqual([false, false, false]);
    // The live run goes on meanwhile and is shown again on request.
    expect(app.showLive()).toBe(true);
    expect(app.pane).toEqual({ kind: 'live' });
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

  it('says a profile runs with lowered budgets rather than calling it rejected', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    const opening = be.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    const p = await opening;
    app.setProject({
      ...p,
      profile_errors: [{ path: `${DEMO_ROOT}/.canopy/agents/greedy.md`, reason: 'budgets lowered to the ceiling: max_steps 500 -> 60', loaded: true }],
    });
    expect(app.notices.map((n) => [n.kind, n.text])).toEqual([
      ['warning', 'Agent profiles of tiny-http in use with changes — greedy.md: budgets lowered to the ceiling: max_steps 500 -> 60'],
    ]);
  });

  it("records the answer about the project's own profiles for the digest shown, and stops reviewing", async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    app.reviewingProfiles = true;
    await app.answerProjectProfiles(false);
    expect(app.project?.profiles_trust).toBe('declined');
    expect(app.reviewingProfiles).toBe(false);
    await app.answerProjectProfiles(true);
    expect(app.project?.profiles_trust).toBe('trusted');
    // Files changed since they were shown: the answer is refused, nothing is recorded.
    app.project = { ...app.project!, profiles_digest: 'another-digest' };
    await app.answerProjectProfiles(false);
    expect(app.error).toContain('changed since they were shown');
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
    const app = new AppStore(be);
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    expect(await app.send('look into the leak')).toBe(true);
    await vi.advanceTimersByTimeAsync(3_000);
    app.flush();
    return { be, app, live: app.sessionId as string };
  }
  const statuses = (app: AppStore) => [...app.tree.nodes.values()].map((n) => n.status);

  it('opening the running session from History shows it live again, with what arrived meanwhile', async () => {
    const { be, app, live } = await running();
    const before = app.tree.version;
    const rows = await be.listSessions();
    expect(rows.find((r) => r.session_id === live)?.status).toBe('running');
    const past = rows.find((r) => r.status === 'completed');
    if (past === undefined) throw new Error('the demo history has no completed session');
    await app.loadHistory(past.session_id, past.status);
    expect(app.pane).toEqual({ kind: 'replay' });
    expect(app.readOnly).toBe(true);
    expect(app.sessionId).toBe(past.session_id);
    await vi.advanceTimersByTimeAsync(10_000);
    app.flush();
    // Still the replay on screen: the live records went to the live run only.
    expect(app.sessionId).toBe(past.session_id);

    await app.loadHistory(live, 'running');
    expect(app.pane).toEqual({ kind: 'live' });
    expect(app.liveShown).toBe(true);
    expect(app.readOnly).toBe(false);
    expect(app.sessionId).toBe(live);
    expect(app.running).toBe(true);
    expect(app.tree.version).toBeGreaterThan(before);
    expect(statuses(app)).not.toContain('interrupted');
    expect(app.tree.nodes.get(live)?.status).toBe('running');
  });

  it('a session the app still runs elsewhere opens read-only as running, not interrupted; Stop then shows how it ended', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    // main-0c55's trace stops mid-run; the app says whether a run of it is still going.
    await app.loadHistory('main-0c55', 'running');
    expect(app.pane).toEqual({ kind: 'replay_running' });
    expect(app.readOnly).toBe(true);
    expect(app.stillRunning).toBe(true);
    expect(app.running).toBe(true);
    expect(statuses(app)).not.toContain('interrupted');
    expect(statuses(app)).toContain('running');

    const stop = app.stopRun();
    await vi.advanceTimersByTimeAsync(1_000);
    await stop;
    // The app no longer lists it as running: read again, it is shown as it stands in its file.
    expect(app.pane).toEqual({ kind: 'replay' });
    expect(app.stillRunning).toBe(false);
    expect(app.running).toBe(false);
    expect(app.tree.nodes.get('main-0c55')?.status).toBe('interrupted');

    // Without a running status the same trace is an interrupted one, as before.
    await app.loadHistory('main-0c55', 'interrupted');
    expect(app.stillRunning).toBe(false);
    expect(statuses(app)).not.toContain('running');
  });

  it('a session whose trace file is gone says so in words, not with its id, and the view stays put', async () => {
    const be = createFakeBackend();
    const app = new AppStore(be);
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    const [row] = await be.listSessions();
    await be.deleteSession(row.session_id);
    app.view = 'history';
    await app.loadHistory(row.session_id, row.status);
    expect(app.error).toBe('This session is no longer in History: its trace file was deleted or moved.');
    expect(app.error).not.toContain(row.session_id);
    expect(app.view).toBe('history');
    expect(app.sessionId).toBeNull();
  });

  it('opening another project keeps the run; reopening its project shows it live', async () => {
    const { app, live } = await running();
    const other = app.openProject('/home/ada/work/billing-service');
    await vi.advanceTimersByTimeAsync(100);
    await other;
    expect(app.project?.name).toBe('billing-service');
    expect(app.sessionId).toBeNull();
    expect(app.tree.nodes.size).toBe(0);
    expect(app.liveRunning).toBe(true);
    const version = app.tree.version;
    await vi.advanceTimersByTimeAsync(10_000);
    app.flush();
    expect(app.tree.version).toBe(version);

    const back = app.backToLive();
    await vi.advanceTimersByTimeAsync(100);
    await back;
    expect(app.project?.root).toBe(DEMO_ROOT);
    expect(app.liveShown).toBe(true);
    expect(app.sessionId).toBe(live);
    expect(app.tree.nodes.get(live)?.status).toBe('running');
  });

  it('a failed send keeps the live run and says what to fix', async () => {
    const { be, app, live } = await running();
    app.reset();
    await be.deleteApiKey('main');
    expect(await app.send('a second task')).toBe(false);
    expect(app.sendError).toEqual({ code: 'missing_key', message: 'no API key for the main model; add one in Settings', settings: true });
    expect(app.running).toBe(false);
    expect(app.liveSessionId).toBe(live);
    expect(app.liveRunning).toBe(true);
    app.showLive();
    expect(app.sessionId).toBe(live);
    expect(app.sendError).toBeNull();
  });

  it('an approval is answered once, however often its buttons are clicked', async () => {
    const { be, app } = await running();
    await vi.advanceTimersByTimeAsync(60_000);
    app.flush();
    const root = app.tree.nodes.get(app.tree.rootId as string);
    expect(root?.pendingApprovals).toBe(1);
    const spy = vi.spyOn(be, 'answerApproval');
    expect(app.isAnswered('call_edit1')).toBe(false);
    const a = app.answerApproval('call_edit1', 'allow_once');
    const b = app.answerApproval('call_edit1', 'allow_once');
    expect(app.isAnswered('call_edit1')).toBe(true);
    await Promise.all([a, b]);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(app.error).toBeNull();
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
    const app = new AppStore(be);
    const open = app.openProject(DEMO_ROOT);
    await vi.advanceTimersByTimeAsync(100);
    await open;
    const spy = vi.spyOn(be, 'readProjectFile');
    const f = app.openFile('src/tables.rs', 7001, 7002);
    await vi.advanceTimersByTimeAsync(100);
    await f;
    expect(spy).toHaveBeenCalledWith('src/tables.rs', 6801, 9002);
    const w = app.file?.window;
    if (w == null) throw new Error(`no window: ${app.file?.error}`);
    expect(w.start_line).toBe(6801);
    expect(w.lines[7001 - w.start_line]).toBe('/// Status codes the parser accepts; anything else is a 400.');
    expect(w.lines[7002 - w.start_line]).toBe('pub const STATUS: [u16; 63] = [');

    // Near the top the window starts at line 1.
    const g = app.openFile('src/pool.rs', 30, null);
    await vi.advanceTimersByTimeAsync(100);
    await g;
    expect(app.file?.window?.start_line).toBe(1);
    expect(app.file?.window?.lines[29]).toBe('    pub fn remove(&mut self, id: usize) -> Option<Connection> {');
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
    const app = new AppStore(be);
    app.settings = await be.getSettings();
    app.settingsDraft = structuredClone(app.settings);
    return { app, be };
  }

  it('keeps what was typed while the save was in flight, still unsaved', async () => {
    const { app, be } = await withDraft();
    const draft = app.settingsDraft;
    if (draft === null) throw new Error('no draft');
    draft.parallelism = 6;
    const p = app.saveSettingsDraft();
    // Typed after Save was pressed, before the backend answered.
    draft.main.model = 'claude-opus-4-1';
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(app.settings?.parallelism).toBe(6);
    expect(app.settings?.main.model).toBe('claude-sonnet-4-5');
    expect(app.settingsDraft?.main.model).toBe('claude-opus-4-1');
    expect(app.settingsDraft?.parallelism).toBe(6);
    expect(app.settingsDirty).toBe(true);

    // Saving again stores the late edit too, and then nothing is left unsaved.
    const q = app.saveSettingsDraft();
    await vi.advanceTimersByTimeAsync(100);
    expect(await q).toBe(true);
    expect((await be.getSettings()).main.model).toBe('claude-opus-4-1');
    expect(app.settingsDirty).toBe(false);
  });

  it('starts no second save while one is in flight, wherever Save is pressed from', async () => {
    const { app, be } = await withDraft();
    const spy = vi.spyOn(be, 'saveSettings');
    if (app.settingsDraft === null) throw new Error('no draft');
    app.settingsDraft.parallelism = 6;
    const p = app.saveSettingsDraft();
    expect(app.settingsSaving).toBe(true);
    // Leaving Settings and coming back gives a new form; its Save must not race the first one.
    app.settingsDraft.parallelism = 7;
    expect(await app.saveSettingsDraft()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(app.settingsSaving).toBe(false);
    expect(app.settings?.parallelism).toBe(6);
    expect(app.settingsDraft?.parallelism).toBe(7);
    expect(app.settingsDirty).toBe(true);
  });

  it('takes what was stored as the draft when nothing changed meanwhile, empty overrides included', async () => {
    const { app } = await withDraft();
    const draft = app.settingsDraft;
    if (draft === null) throw new Error('no draft');
    draft.parallelism = 2;
    // A profile row that was touched and emptied again is sent as no entry at all.
    draft.profiles.explore = { model: null, max_steps: null, max_context_tokens: null, max_total_tokens: null, max_wall_time_ms: null };
    const p = app.saveSettingsDraft();
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(true);
    expect(app.settingsDraft).toEqual(app.settings);
    expect(app.settingsDraft?.profiles).toEqual({});
    expect(app.settingsDirty).toBe(false);
  });

  it('keeps the draft and says why when the backend refuses it', async () => {
    const { app } = await withDraft();
    const draft = app.settingsDraft;
    if (draft === null) throw new Error('no draft');
    draft.main.base_url = 'ftp://example.com';
    const p = app.saveSettingsDraft();
    await vi.advanceTimersByTimeAsync(100);
    expect(await p).toBe(false);
    expect(app.settings?.main.base_url).toBe('https://api.anthropic.com');
    expect(app.settingsDraft?.main.base_url).toBe('ftp://example.com');
    expect(app.settingsDirty).toBe(true);
    expect(app.settingsServerErrors).toHaveLength(1);
    expect(JSON.stringify(app.settingsServerErrors[0])).toContain('must be an http:// or https:// URL');
  });
});
