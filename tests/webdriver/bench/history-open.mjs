// Benchmark (not a test; run it with scripts/bench-history.sh): how long the real app, in real WebKit,
// takes to open a ~100,000-record session from History. Writes a large trace tree (gen-trace.mjs) into
// the fixture project's trace folder, then per repetition launches the app on that project, opens
// History, clicks the session and measures, inside the page, from the click to the first animation
// frame in which the agent tree shows every agent (header "N agents", none running or queued, rows rendered) and the
// conversation has rows; then the frame after that (painted). It then opens the session a second time in
// the same window (warm), and splits the cost: `load_session` over IPC (Rust read + serialise + transfer
// + JSON parse, timed around `__TAURI_INTERNALS__.invoke`), JSON.parse alone on the same data, and the
// UI's real reducer (ui/src/lib/reducer.ts, transpiled and injected) on the same records.
//
// Environment: what tests/webdriver/harness.mjs needs, plus BENCH_REPS (default 5), BENCH_RECORDS
// (default 100000), BENCH_AGENTS (default 50), BENCH_OUT (JSON results file, optional).

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { byTestId, config, copyFixture, launch, repoRoot, screenshot, waitFor, writeSettings } from '../harness.mjs';
import { generateTrace, traceDirIn } from './gen-trace.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 5);
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100000);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 50);
const log = (...a) => console.log('bench-history:', ...a);

/**
 * ui/src/lib/reducer.ts as a plain script defining `window.__benchReducer`, with the modules it imports
 * (relative `.ts` files: the tool kinds, the generated constants) transpiled alongside and linked by a
 * small CommonJS loader, so the page runs the UI's real reducer whatever it imports from the UI's own code.
 */
function reducerScript() {
  const require = createRequire(path.join(repoRoot, 'ui', 'package.json'));
  const ts = require('typescript');
  const lib = path.join(repoRoot, 'ui', 'src', 'lib');
  const modules = new Map(); // absolute path → transpiled CommonJS
  const load = (file) => {
    if (modules.has(file)) return;
    const src = fs.readFileSync(file, 'utf8');
    const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    modules.set(file, js);
    for (const [, spec] of js.matchAll(/\brequire\("([^"]+)"\)/g)) {
      if (!spec.startsWith('.')) throw new Error(`reducer.ts imports the package "${spec}" at run time; the bench injects only the UI's own modules`);
      load(path.resolve(path.dirname(file), spec.endsWith('.ts') ? spec : `${spec}.ts`));
    }
  };
  const entry = path.join(lib, 'reducer.ts');
  load(entry);
  const defs = [...modules].map(([file, js]) => `${JSON.stringify(file)}: function (exports, require) { ${js}\n }`).join(',\n');
  return `(function () {
  const defs = {${defs}};
  const cache = {};
  const dirname = (f) => f.slice(0, f.lastIndexOf('/'));
  const resolve = (from, spec) => {
    const parts = (dirname(from) + '/' + spec).split('/');
    const out = [];
    for (const p of parts) { if (p === '..') out.pop(); else if (p !== '.' && p !== '') out.push(p); }
    const f = '/' + out.join('/');
    return f.endsWith('.ts') ? f : f + '.ts';
  };
  const load = (file) => {
    if (cache[file]) return cache[file];
    const exports = (cache[file] = {});
    defs[file](exports, (spec) => load(resolve(file, spec)));
    return exports;
  };
  window.__benchReducer = load(${JSON.stringify(entry)});
})();`;
}

/** Page-side probe: stamps the click on a history entry and the first frames in which the replay is shown. */
function installProbe(browser, agents, finalText) {
  return browser.execute(
    (agents, finalText) => {
      const b = { t0: null, shown: null, painted: null, final: null };
      window.__bench = b;
      document.addEventListener(
        'click',
        (e) => {
          if (b.t0 === null && e.target instanceof Element && e.target.closest('[data-testid="history-open"]')) b.t0 = performance.now();
        },
        { capture: true },
      );
      const frame = () => {
        if (b.t0 !== null && b.shown === null) {
          const head = document.querySelector('.tree-panel header .muted')?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
          const rows = document.querySelectorAll('[data-testid="tree-node"]').length;
          const conv = document.querySelectorAll('[data-testid="conversation"] [data-testid^="msg-"], [data-testid="conversation"] [data-testid="tool-call"]').length;
          // The header reads "51 agents" once all are in and none is running or queued.
          if (head === `${agents} agents` && rows > 0 && conv > 0) {
            void document.body.offsetHeight; // force layout, so "shown" includes it
            b.shown = performance.now();
          }
        } else if (b.shown !== null && b.painted === null) {
          b.painted = performance.now();
        }
        if (b.t0 !== null && b.final === null) {
          const last = Array.from(document.querySelectorAll('[data-testid="msg-assistant"]')).some((m) => m.textContent.includes(finalText));
          if (last) b.final = performance.now();
        }
        if (b.painted === null || b.final === null) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    },
    agents,
    finalText,
  );
}

async function openOnce(browser, gen, label, cfg) {
  const t0 = Date.now();
  await (await byTestId(browser, 'nav-history')).click();
  const row = await byTestId(browser, 'history-row', { timeout: 60000 });
  const listMs = Date.now() - t0;
  const rows = await browser.$$('[data-testid="history-row"]');
  if (rows.length !== 1) throw new Error(`History lists ${rows.length} sessions, expected the one generated`);
  await installProbe(browser, gen.sessions, gen.finalText);
  await (await row.$('[data-testid="history-open"]')).click();
  const b = await waitFor(
    browser,
    'the replayed session to be shown',
    async () => {
      const s = await browser.execute(() => window.__bench);
      return s.painted !== null ? s : false;
    },
    { timeout: 120000, interval: 50, state: () => browser.execute(() => [window.__bench, document.querySelector('.tree-panel header')?.textContent]) },
  );
  // The final answer is at the end of the conversation, which a replay shows pinned to the end.
  const fin = await waitFor(browser, 'the final answer to be rendered', async () => {
    const s = await browser.execute(() => window.__bench);
    return s.final !== null ? s : false;
  }, { timeout: 10000, interval: 50 }).catch(() => null);
  await screenshot(browser, cfg, `bench-history-${label}`);
  return {
    listMs,
    shownMs: b.shown - b.t0,
    paintedMs: b.painted - b.t0,
    finalMs: fin === null ? null : fin.final - fin.t0,
  };
}

/** list_sessions and load_session (IPC) vs parse vs reducer for the same session, timed in the page. */
async function breakdown(browser, rootId, script) {
  await browser.execute(script);
  return browser.execute(async (rootId) => {
    const tl = performance.now();
    await window.__TAURI_INTERNALS__.invoke('list_sessions');
    const list = performance.now() - tl;
    const t0 = performance.now();
    const recs = await window.__TAURI_INTERNALS__.invoke('load_session', { sessionId: rootId });
    const ipc = performance.now() - t0;
    const text = JSON.stringify(recs);
    const t1 = performance.now();
    JSON.parse(text);
    const parse = performance.now() - t1;
    const R = window.__benchReducer;
    const t2 = performance.now();
    const tree = R.finalizeRun(R.applyRecords(R.emptyState(), recs));
    const reduce = performance.now() - t2;
    return { list, ipc, parse, reduce, records: recs.length, jsonBytes: text.length, nodes: tree.nodes.size };
  }, rootId);
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (a) => (a.length === 0 ? 'n/a' : `median ${median(a).toFixed(0)} ms, min ${Math.min(...a).toFixed(0)}, max ${Math.max(...a).toFixed(0)}  [${a.map((x) => x.toFixed(0)).join(', ')}]`);

async function main() {
  const cfg = config();
  writeSettings(cfg);
  const project = copyFixture();
  const dir = traceDirIn(cfg.dataDir, project);
  const g0 = Date.now();
  const gen = generateTrace(dir, { records: RECORDS, agents: AGENTS });
  log(`wrote ${gen.records} records (${(gen.bytes / 1e6).toFixed(1)} MB) in ${gen.sessions} files to ${dir} in ${Date.now() - g0} ms`);
  const script = reducerScript();
  const results = [];
  for (let rep = 1; rep <= REPS; rep++) {
    const app = await launch(cfg, project);
    try {
      const first = await openOnce(app.browser, gen, `${rep}-first`, cfg);
      const second = await openOnce(app.browser, gen, `${rep}-second`, cfg);
      const parts = await breakdown(app.browser, gen.rootId, script);
      if (parts.records !== gen.records) throw new Error(`load_session returned ${parts.records} records, ${gen.records} were written (unparsed lines?)`);
      if (parts.nodes !== gen.sessions) throw new Error(`the reducer built ${parts.nodes} nodes, expected ${gen.sessions}`);
      const r = { rep, first, second, parts };
      log(JSON.stringify(r));
      results.push(r);
    } finally {
      await app.close();
    }
  }
  const pick = (f) => results.map(f).filter((x) => x !== null);
  const summary = {
    records: gen.records,
    sessions: gen.sessions,
    traceMB: +(gen.bytes / 1e6).toFixed(1),
    ipcJsonMB: +(results[0].parts.jsonBytes / 1e6).toFixed(1),
    reps: REPS,
  };
  log('summary', JSON.stringify(summary));
  log(`History list shown (click → first row, via WebDriver): ${fmt(pick((r) => r.first.listMs))}`);
  log(`first open:  click → tree + conversation shown: ${fmt(pick((r) => r.first.shownMs))}`);
  log(`first open:  click → next frame (painted):      ${fmt(pick((r) => r.first.paintedMs))}`);
  log(`first open:  click → final answer rendered:     ${fmt(pick((r) => r.first.finalMs))}`);
  log(`second open: click → next frame (painted):      ${fmt(pick((r) => r.second.paintedMs))}`);
  log(`load_session invoke (Rust + IPC + JSON parse):  ${fmt(pick((r) => r.parts.ipc))}`);
  log(`list_sessions invoke (first lines + root head/tail): ${fmt(pick((r) => r.parts.list))}`);
  log(`JSON.parse of the same data alone:              ${fmt(pick((r) => r.parts.parse))}`);
  log(`reducer (applyRecords + finalizeRun) in WebKit: ${fmt(pick((r) => r.parts.reduce))}`);
  if (process.env.BENCH_OUT) fs.writeFileSync(process.env.BENCH_OUT, JSON.stringify({ summary, results }, null, 2));
}

main().catch((e) => {
  console.error('bench-history: FAILED:', e.stack ?? e);
  process.exitCode = 1;
});
