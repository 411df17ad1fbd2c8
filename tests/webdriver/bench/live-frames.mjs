// Benchmark (not a test; run it with scripts/bench-frames.sh): is the real app, in real WebKit, still
// responsive while a live run streams 2,000 trace records per second and grows to 500 subagents?
//
// Method. The app is launched on the fixture project and a prompt is sent through the real UI, so the
// UI's own store creates its real Tauri `Channel` and calls `start_run`. The Rust run that starts (its
// model URL is a dead port) is irrelevant: the page-side hook below wraps every callback registered in
// `__TAURI_INTERNALS__.callbacks`, recognises the run's channel by its first message (`{index, message}`),
// swallows everything Rust sends on it, and instead feeds that same channel callback synthetic batches
// `{index, message: JSON.parse(batchJson)}`, exactly what Tauri's IPC hands it. Batches arrive every 33 ms
// (the Rust bridge's FLUSH_INTERVAL) holding whatever is due at 2,000 records/s. Everything after the
// channel callback is the product: Channel ordering, the store's sink and per-frame queue, the reducer,
// Svelte's updates, WebKit layout and paint. Left out: Rust and the Rust→WebView transport itself
// (JSON.parse of each batch is included, as the transport does it too).
//
// The records have the shape of tests/fixtures/traces/parallel-explore/*.jsonl: the root's run fans out
// to `agents` explore subagents in batches of 50 Task calls (tool_call_begin, subagent_requested,
// subagent_started, later subagent_completed and tool_call_end), each child doing session_started (with
// its parent link), run_started, then steps of model_call_begin, assistant_delta ×3, model_call_end with
// 2 tool calls, tool_call_begin/end ×2, a final answer and run_ended. Children are spawned over the first
// 60 % of the stream and each lives for 35 % of it, so several hundred run at once.
//
// Measured in the page: requestAnimationFrame deltas (idle before, during the stream, idle after with
// the 500-node tree), and click → details latency: WebDriver clicks a visible tree row every ~1.5 s
// while the stream runs; the page stamps the click (capture listener) and the first animation frame in
// which the details pane shows that agent, then the frame after it (painted).
//
// Environment: what tests/webdriver/harness.mjs needs, plus BENCH_AGENTS (500), BENCH_RATE (2000
// records/s), BENCH_SECONDS (15), BENCH_REPS (1), BENCH_OUT (JSON results file, optional), and for
// diagnosis only BENCH_HIDE: a CSS selector hidden (display: none) before streaming, to see which pane's
// rendering the frame time goes to (e.g. ".pane.conv" or ".tree-panel"; clicks on rows then fail), and
// BENCH_CSS: a style sheet added before streaming, to try a CSS change (containment, layers) without
// rebuilding the app. BENCH_SCROLL_CHECK=1 checks following as a person meets it: 5 s in, the conversation
// is scrolled to the top; 2 s later it must still be there (growth does not pull it back), then it is
// scrolled to the end and must follow again to the final answer (`scrollCheck` in the results).

import fs from 'node:fs';
import { byTestId, config, copyFixture, launch, screenshot, sendPrompt, sleep, waitFor, writeSettings } from '../harness.mjs';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 500);
const RATE = Number(process.env.BENCH_RATE ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const REPS = Number(process.env.BENCH_REPS ?? 1);
const HIDE = process.env.BENCH_HIDE ?? '';
const CSS = process.env.BENCH_CSS ?? '';
const SCROLL_CHECK = process.env.BENCH_SCROLL_CHECK === '1';
const log = (...a) => console.log('bench-frames:', ...a);

/** Page side, part 1: hijacks the next run channel before the prompt is sent. */
function armHijack() {
  const I = window.__TAURI_INTERNALS__;
  const fb = { target: null, rootId: null, runId: null, swallowed: 0 };
  window.__fb = fb;
  const set = I.callbacks.set.bind(I.callbacks);
  I.callbacks.set = (id, cb) => {
    const wrapped = (data) => {
      const isChannelMsg = data !== null && typeof data === 'object' && 'index' in data && ('message' in data || 'end' in data);
      if (isChannelMsg && (fb.target === null || fb.target === cb)) {
        if (fb.target === null) fb.target = cb;
        fb.swallowed += 1;
        const recs = Array.isArray(data.message) ? data.message : [];
        for (const r of recs) {
          if (r.parent_session_id === null && fb.rootId === null) fb.rootId = r.session_id;
          if (r.parent_session_id === null && r.run_id && fb.runId === null) fb.runId = r.run_id;
        }
        return;
      }
      cb(data);
    };
    return set(id, wrapped);
  };
}

/** Page side, part 2: builds the synthetic stream as pre-serialised 33 ms batches (runs in the page). */
function buildStream(agents, rate, seconds) {
  const fb = window.__fb;
  const root = fb.rootId;
  const run = fb.runId ?? 'r-framebench000000';
  const total = rate * seconds;
  const light = { slot: 'light', requested_slot: 'light', fallback: false, provider: 'openai', model_id: 'gpt-4.1-mini', base_url: 'https://api.openai.com/v1' };
  const main = { slot: 'main', requested_slot: 'main', fallback: false, provider: 'openai', model_id: 'gpt-4.1', base_url: 'https://api.openai.com/v1' };
  const budgets = { max_steps: 12, max_context_tokens: 120000, max_total_tokens: 800000, max_wall_time_ms: 600000 };
  const hex = (n, i) => (i.toString(16) + '0'.repeat(n)).slice(0, n);
  const events = []; // [fraction, session, parent, event]
  const rootStarted = { type: 'session_started', agent: 'main', profile: 'main', description: null, model: main, budgets: { max_steps: 60, max_context_tokens: 100000, max_total_tokens: 2000000, max_wall_time_ms: 1800000 }, project_root: '/home/me/shop-fixture', parent: null, permission_mode: 'main', tools: ['Read', 'Grep', 'Glob', 'Edit', 'Write', 'Bash', 'TodoWrite', 'Task'], system_prompt: 'You are Canopy, a careful coding agent.' };
  events.push([0, root, null, rootStarted], [0, root, null, { type: 'run_started', prompt: 'FRAMEBENCH: map the codebase with many explore subagents' }]);
  const SPAWN = 0.6, LIFE = 0.35, BATCH = 50;
  // Records per child and for the root, so the whole stream is about `total` records.
  const rootPer = 5, rootFixed = 2 + Math.ceil(agents / BATCH) * 2 + 3;
  const perChild = Math.max(12, Math.floor((total - rootFixed) / agents) - rootPer);
  const steps = Math.max(1, Math.floor((perChild - 2 - 6) / 9));
  let call = 0;
  const callId = () => `call_fb${String(++call).padStart(8, '0')}`;
  const kids = [];
  for (let i = 0; i < agents; i++) kids.push({ id: `s-${hex(12, 0xfb0000 + i)}c${String(i).padStart(3, '0')}`, task: callId(), start: (SPAWN * i) / agents, desc: `Explore area ${i + 1}` });
  for (let b = 0; b * BATCH < agents; b++) {
    const group = kids.slice(b * BATCH, (b + 1) * BATCH);
    const t = group[0].start;
    const mid = `m-root${b}`;
    events.push([t, root, null, { type: 'model_call_begin', model_call_id: mid, step: b + 1, messages: 1 + b * 2, estimated_input_tokens: 2400, tools_offered: true }]);
    events.push([t, root, null, { type: 'model_call_end', model_call_id: mid, step: b + 1, text: '', tool_calls: group.map((k) => ({ id: k.task, name: 'Task', arguments: JSON.stringify({ description: k.desc, prompt: `Look at ${k.desc}`, subagent_type: 'explore' }) })), finish_reason: 'tool_calls', usage: { input_tokens: 2400, output_tokens: 40 * group.length, estimated: false }, model: 'gpt-4.1', latency_ms: 900, error: null, totals: { steps: b + 1, context_tokens: 2400, total_tokens: 3000 * (b + 1), wall_time_ms: 1000 } }]);
  }
  const code = '    let hash = hash_password(password, &user_salt(user));\n    match db::users::find_by_name(&pool, user).await? {\n';
  for (const k of kids) {
    const t = k.start;
    const args = { description: k.desc, prompt: `Look at ${k.desc}`, subagent_type: 'explore' };
    events.push([t, root, null, { type: 'tool_call_begin', call_id: k.task, tool: 'Task', arguments: args, mutates: false }]);
    events.push([t, root, null, { type: 'subagent_requested', tool_call_id: k.task, child_session_id: k.id, description: k.desc, profile: 'explore', model_slot: 'light', prompt: args.prompt }]);
    events.push([t, root, null, { type: 'subagent_started', tool_call_id: k.task, child_session_id: k.id, profile: 'explore', model: light, budgets }]);
    const evs = [];
    evs.push({ type: 'session_started', agent: 'subagent', profile: 'explore', description: k.desc, model: light, budgets, project_root: '/home/me/shop-fixture', parent: { session_id: root, run_id: run, tool_call_id: k.task }, permission_mode: 'readonly_subagent', tools: ['Read', 'Grep', 'Glob'], system_prompt: 'You are an explore subagent.' });
    evs.push({ type: 'run_started', prompt: args.prompt });
    let tokens = 0;
    for (let s = 1; s <= steps + 1; s++) {
      const last = s === steps + 1;
      const mid = `m-${k.id}-${s}`;
      evs.push({ type: 'model_call_begin', model_call_id: mid, step: s, messages: 1 + 4 * (s - 1), estimated_input_tokens: 1400 + 600 * s, tools_offered: true });
      const text = last ? JSON.stringify({ status: 'completed', summary: `${k.desc}: found it in src/auth.rs`, findings: ['login() delegates to verify()'], evidence: ['src/auth.rs:3'], unresolved_questions: [] }) : `Step ${s}: reading the callers of login next.`;
      const parts = [text.slice(0, 12), text.slice(12, 30), text.slice(30)];
      for (const p of parts) evs.push({ type: 'assistant_delta', model_call_id: mid, text: p });
      const calls = last ? [] : [{ id: callId(), name: 'Read', args: { path: 'src/auth.rs', offset: 1, limit: 80 } }, { id: callId(), name: 'Grep', args: { pattern: 'login', path: 'src', output_mode: 'content' } }];
      tokens += 1400 + 600 * s + 80;
      evs.push({ type: 'model_call_end', model_call_id: mid, step: s, text, tool_calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.args) })), finish_reason: last ? 'stop' : 'tool_calls', usage: { input_tokens: 1400 + 600 * s, output_tokens: 80, estimated: false }, model: 'gpt-4.1-mini', latency_ms: 700, error: null, totals: { steps: s, context_tokens: 1400 + 600 * s, total_tokens: tokens, wall_time_ms: 700 * s } });
      for (const c of calls) evs.push({ type: 'tool_call_begin', call_id: c.id, tool: c.name, arguments: c.args, mutates: false });
      for (const c of calls) evs.push({ type: 'tool_call_end', call_id: c.id, tool: c.name, status: 'ok', output: code.repeat(6), output_bytes: code.length * 6, output_cap_bytes: 16384, truncated: false, duration_ms: 3 });
    }
    const result = { status: 'completed', summary: `${k.desc}: found it in src/auth.rs`, findings: ['login() delegates to verify()'], evidence: [{ raw: 'src/auth.rs:3', path: 'src/auth.rs', line: 3, end_line: null, state: 'valid', text: 'pub fn login(user: &str, password: &str) -> bool {' }], unresolved_questions: [], verdict: null, reasons: [] };
    const usage = { input_tokens: tokens - 80 * (steps + 1), output_tokens: 80 * (steps + 1), estimated: false };
    evs.push({ type: 'run_ended', terminal_reason: 'completed', final_text: JSON.stringify({ status: 'completed', summary: result.summary }), result, error: null, usage, usage_with_descendants: usage, totals: { steps: steps + 1, context_tokens: 1400 + 600 * (steps + 1), total_tokens: tokens, wall_time_ms: 700 * (steps + 1) }, tool_calls: 2 * steps });
    evs.forEach((e, j) => events.push([t + (LIFE * j) / (evs.length - 1), k.id, root, e]));
    const end = t + LIFE + 1e-6;
    events.push([end, root, null, { type: 'subagent_completed', tool_call_id: k.task, child_session_id: k.id, result, usage, tool_calls: 2 * steps, elapsed_ms: Math.round(LIFE * seconds * 1000), terminal_reason: 'completed' }]);
    events.push([end, root, null, { type: 'tool_call_end', call_id: k.task, tool: 'Task', status: 'ok', output: `${result.summary}\n\n[subagent "${k.desc}" (${k.id}) on gpt-4.1-mini: completed]`, output_bytes: 80, output_cap_bytes: 16384, truncated: false, duration_ms: Math.round(LIFE * seconds * 1000) }]);
  }
  events.push([0.999, root, null, { type: 'model_call_begin', model_call_id: 'm-rootfinal', step: 99, messages: 99, estimated_input_tokens: 30000, tools_offered: true }]);
  events.push([0.9995, root, null, { type: 'model_call_end', model_call_id: 'm-rootfinal', step: 99, text: 'FRAMEBENCH-DONE: all areas mapped.', tool_calls: [], finish_reason: 'stop', usage: { input_tokens: 30000, output_tokens: 10, estimated: false }, model: 'gpt-4.1', latency_ms: 900, error: null, totals: { steps: 99, context_tokens: 30000, total_tokens: 400000, wall_time_ms: seconds * 1000 } }]);
  events.push([1, root, null, { type: 'run_ended', terminal_reason: 'completed', final_text: 'FRAMEBENCH-DONE: all areas mapped.', result: null, error: null, usage: { input_tokens: 300000, output_tokens: 900, estimated: false }, usage_with_descendants: { input_tokens: 3000000, output_tokens: 90000, estimated: false }, totals: { steps: 99, context_tokens: 30000, total_tokens: 400000, wall_time_ms: seconds * 1000 }, tool_calls: agents }]);
  events.sort((a, b) => a[0] - b[0]);
  const t0 = Date.now() + 1500; // stream starts then; records carry real wall-clock times
  const seq = new Map();
  const recs = events.map(([f, sid, parent, event]) => {
    const n = seq.get(sid) ?? 0;
    seq.set(sid, n + 1);
    return { v: 1, seq: n, ts_ms: Math.round(t0 + f * seconds * 1000), session_id: sid, run_id: sid === root && event.type === 'session_started' ? '' : run, parent_session_id: parent, event };
  });
  // Records go out in order at `rate`; batch j is what is due by (j+1)·33 ms.
  const batches = [];
  const per = (rate * 33) / 1000;
  for (let j = 0, i = 0; i < recs.length; j++) {
    const end = Math.min(recs.length, Math.round((j + 1) * per));
    batches.push(JSON.stringify(recs.slice(i, end)));
    i = end;
  }
  fb.stream = { t0, batches, records: recs.length, bytes: batches.reduce((s, b) => s + b.length, 0) };
  return { records: recs.length, batches: batches.length, bytes: fb.stream.bytes, steps, nodes: agents + 1, t0 };
}

/** Page side, part 3: delivers the batches on a 33 ms timer and records frames and click latencies. */
function startStream(scrollCheck) {
  const fb = window.__fb;
  const s = fb.stream;
  const m = { idleBefore: [], during: [], idleAfter: [], deliverMs: [], lateTicks: 0, clicks: [], streamStart: null, streamEnd: null, done: false, scroll: null };
  fb.m = m;
  let phase = 'idleBefore';
  let last = null;
  // The app's own animation-frame callbacks (the store's flush: reducer + state writes) are timed, and
  // so is the microtask checkpoint right after each (Svelte's effect flush: DOM updates). What a long
  // frame spent beyond those two is style, layout and paint (or GC).
  const raf = window.requestAnimationFrame.bind(window);
  m.appFrames = [];
  window.requestAnimationFrame = (cb) => raf((ts) => {
    const t0 = performance.now();
    cb(ts);
    const t1 = performance.now();
    queueMicrotask(() => {
      if (phase === 'during') m.appFrames.push({ at: t0 - (m.streamStart ?? t0), sync: t1 - t0, micro: performance.now() - t1 });
    });
  });
  let pending = null;
  document.addEventListener('click', (e) => {
    const row = e.target instanceof Element ? e.target.closest('[data-testid="tree-node"]') : null;
    if (row !== null && phase === 'during') pending = { id: row.getAttribute('data-session-id'), t0: performance.now(), shown: null, painted: null };
  }, { capture: true });
  const frame = (now) => {
    if (last !== null) m[phase].push(now - last);
    last = now;
    if (pending !== null) {
      if (pending.shown === null && document.querySelector(`[data-testid="node-details"][data-session-id="${pending.id}"]`) !== null) pending.shown = now;
      else if (pending.shown !== null) {
        pending.painted = now;
        m.clicks.push({ id: pending.id, shownMs: pending.shown - pending.t0, paintedMs: pending.painted - pending.t0 });
        pending = null;
      }
    }
    if (!m.done) raf(frame);
  };
  raf(frame);
  const wait = Math.max(0, s.t0 - Date.now());
  setTimeout(() => {
    phase = 'during';
    last = null;
    m.streamStart = performance.now();
    let sent = 0;
    let index = 0;
    const tick = () => {
      const due = Math.min(s.batches.length, Math.floor((performance.now() - m.streamStart) / 33) + 1);
      if (due - sent > 1) m.lateTicks += 1;
      while (sent < due) {
        const t = performance.now();
        fb.target({ index: index++, message: JSON.parse(s.batches[sent]) });
        m.deliverMs.push(performance.now() - t);
        sent += 1;
      }
      if (sent < s.batches.length) setTimeout(tick, 33 - ((performance.now() - m.streamStart) % 33));
      else {
        m.streamEnd = performance.now();
        setTimeout(() => { phase = 'idleAfter'; last = null; }, 500);
        setTimeout(() => { m.done = true; }, 3500);
      }
    };
    tick();
    if (scrollCheck) {
      const conv = () => document.querySelector('[data-testid="conversation"] .vl');
      setTimeout(() => {
        conv().scrollTop = 0;
      }, 5000);
      setTimeout(() => {
        const el = conv();
        m.scroll = { topAfter2s: el.scrollTop, heightAfter2s: el.scrollHeight };
        el.scrollTop = el.scrollHeight;
      }, 7000);
    }
  }, wait);
}

/**
 * CPU time (ms, user + system) used so far by each program in this process's session, i.e. everything
 * bench-webkit.sh started for this run: the app, WebKit's web process, Xvfb. Work done rather than
 * wall-clock frame time, so it hardly moves when other builds share the cores.
 */
function sessionCpu() {
  const tick = 10; // ms per clock tick (USER_HZ = 100 on Linux)
  const field = (stat, i) => stat.slice(stat.lastIndexOf(')') + 2).split(' ')[i - 3];
  const own = fs.readFileSync('/proc/self/stat', 'utf8');
  const sid = field(own, 6);
  const out = {};
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    if (field(stat, 6) !== sid) continue;
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    out[`${comm}#${pid}`] = (Number(field(stat, 14)) + Number(field(stat, 15))) * tick;
  }
  return out;
}

/** CPU ms per program between two sessionCpu() snapshots (processes that started meanwhile count from 0). */
function cpuBetween(a, b) {
  const out = {};
  for (const [k, v] of Object.entries(b)) {
    const name = k.slice(0, k.lastIndexOf('#'));
    out[name] = (out[name] ?? 0) + v - (a[k] ?? 0);
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]));
}

const stats = (a) => {
  if (a.length === 0) return null;
  const s = [...a].sort((x, y) => x - y);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, p50: +q(0.5).toFixed(1), p95: +q(0.95).toFixed(1), p99: +q(0.99).toFixed(1), max: +s[s.length - 1].toFixed(1), over50: s.filter((x) => x > 50).length, over100: s.filter((x) => x > 100).length, sum: +s.reduce((x, y) => x + y, 0).toFixed(0) };
};

async function once(cfg, project, rep) {
  const app = await launch(cfg, project);
  const b = app.browser;
  try {
    await byTestId(b, 'prompt-input', { timeout: 60000 });
    await b.execute(armHijack);
    await sendPrompt(b, 'FRAMEBENCH: map the codebase with many explore subagents');
    await waitFor(b, 'the run channel to carry its first message', () => b.execute(() => window.__fb.target !== null && window.__fb.rootId !== null), { timeout: 20000, interval: 50 });
    const built = await b.execute(buildStream, AGENTS, RATE, SECONDS);
    log(`rep ${rep}: stream of ${built.records} records (${(built.bytes / 1e6).toFixed(1)} MB JSON) in ${built.batches} batches, ${built.steps} steps per child, ${built.nodes} nodes`);
    const extraCss = `${HIDE !== '' ? `${HIDE} { display: none !important; }\n` : ''}${CSS}`;
    if (extraCss !== '') {
      await b.execute((css) => {
        const st = document.createElement('style');
        st.textContent = css;
        document.head.appendChild(st);
      }, extraCss);
    }
    await b.execute(startStream, SCROLL_CHECK);
    // CPU used by the app's processes over the stream's 14.5 s window (t0 is the page's Date.now()).
    await sleep(Math.max(0, built.t0 - Date.now()));
    const cpu0 = sessionCpu();
    let cpuDuring = null;
    const cpuTimer = setTimeout(() => {
      cpuDuring = cpuBetween(cpu0, sessionCpu());
    }, SECONDS * 1000);
    // Click visible rows while it streams: one every ~1.5 s from 2 s in.
    const clickErrors = [];
    await sleep(2000);
    for (let i = 0; i < Math.floor((SECONDS - 3) / 1.5); i++) {
      try {
        const ids = await b.execute(() => Array.from(document.querySelectorAll('[data-testid="tree-node"]')).map((n) => n.getAttribute('data-session-id')));
        const id = ids[Math.min(ids.length - 1, 1 + ((i * 3) % Math.max(1, ids.length - 1)))];
        await (await b.$(`[data-testid="tree-node"][data-session-id="${id}"]`)).click();
      } catch (e) {
        clickErrors.push(String(e.message ?? e).slice(0, 200));
      }
      await sleep(1500);
    }
    await waitFor(b, 'the stream and the idle tail to finish', () => b.execute(() => window.__fb.m.done), { timeout: 120000, interval: 250 });
    clearTimeout(cpuTimer);
    const m = await b.execute(() => window.__fb.m);
    const head = await b.execute(() => document.querySelector('.tree-panel header .muted')?.textContent?.replace(/\s+/g, ' ').trim() ?? '');
    const rows = await b.execute(() => document.querySelectorAll('[data-testid="tree-node"]').length);
    const final = await b.execute(() => document.body.textContent.includes('FRAMEBENCH-DONE'));
    // Evidence only: without accelerated compositing WebKit's snapshot can time out under load.
    await screenshot(b, cfg, `bench-frames-${rep}`).catch((e) => log(`rep ${rep}: no screenshot: ${String(e.message ?? e).slice(0, 120)}`));
    if (head !== `${AGENTS + 1} agents`) throw new Error(`the tree header reads "${head}", expected "${AGENTS + 1} agents" (none running): the stream did not reach the UI`);
    const r = {
      rep,
      hidden: HIDE || null,
      css: CSS || null,
      header: head,
      renderedRows: rows,
      finalShown: final,
      // Scrolled up stays up (scrollTop still near 0 two seconds later) and scrolling back follows again.
      scrollCheck: m.scroll === null ? null : { ...m.scroll, stayedUp: m.scroll.topAfter2s < 100, followedAgain: final },
      streamMs: +(m.streamEnd - m.streamStart).toFixed(0),
      lateTicks: m.lateTicks,
      // CPU ms per program while the stream ran (the WebKit web process does JS, style, layout, paint).
      cpuDuring,
      cpuTotalMs: cpuDuring === null ? null : Object.values(cpuDuring).reduce((x, y) => x + y, 0),
      framesIdleBefore: stats(m.idleBefore),
      framesDuring: stats(m.during),
      framesIdleAfter: stats(m.idleAfter),
      deliverMs: stats(m.deliverMs),
      clicks: m.clicks,
      clickShown: stats(m.clicks.map((c) => c.shownMs)),
      clickPainted: stats(m.clicks.map((c) => c.paintedMs)),
      clickErrors,
      appFrameSync: stats(m.appFrames.map((f) => f.sync)),
      appFrameMicrotasks: stats(m.appFrames.map((f) => f.micro)),
      appFrameTotal: stats(m.appFrames.map((f) => f.sync + f.micro)),
      // The 10 costliest app frames: when (s into the stream), store flush, Svelte flush.
      costliestAppFrames: [...m.appFrames].sort((x, y) => y.sync + y.micro - (x.sync + x.micro)).slice(0, 10).map((f) => [+(f.at / 1000).toFixed(1), +f.sync.toFixed(0), +f.micro.toFixed(0)]),
      longestFramesDuring: [...m.during].sort((x, y) => y - x).slice(0, 10).map((x) => +x.toFixed(0)),
      // Where in the stream the long frames fell (seconds from its start), to tell build-up from steady state.
      slowFrameTimes: (() => { let t = 0; const out = []; for (const d of m.during) { t += d; if (d > 50) out.push(+(t / 1000).toFixed(1)); } return out; })(),
    };
    log(JSON.stringify(r));
    return r;
  } finally {
    await app.close();
  }
}

async function main() {
  const cfg = config();
  writeSettings(cfg);
  const project = copyFixture();
  const results = [];
  for (let rep = 1; rep <= REPS; rep++) results.push(await once(cfg, project, rep));
  if (process.env.BENCH_OUT) fs.writeFileSync(process.env.BENCH_OUT, JSON.stringify({ agents: AGENTS, rate: RATE, seconds: SECONDS, results }, null, 2));
}

main().catch((e) => {
  console.error('bench-frames: FAILED:', e.stack ?? e);
  process.exitCode = 1;
});
