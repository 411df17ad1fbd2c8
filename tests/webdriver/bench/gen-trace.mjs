// Writes a large, realistic trace tree (schema v1, docs/trace-format.md) into a project's trace folder:
// one main session whose single run fans out to `agents` explore subagents in batches of Task calls, each
// subagent doing many steps of parallel read-only tool calls with real-looking outputs. The records are
// shaped exactly like the runtime's (compare tests/fixtures/traces/parallel-explore/); only their number
// and sizes are chosen here. Not a test: used by history-open.mjs, or on its own:
//
//   node tests/webdriver/bench/gen-trace.mjs <trace_dir> [records=100000] [agents=50]

import fs from 'node:fs';
import path from 'node:path';

/** FNV-1a (64-bit) over bytes, as `canopy_config::paths::fnv1a64`. */
function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

/** `<data_dir>/traces/<name>-<12 hex>` for a project, as `canopy_config::trace_dir_in` computes it. */
export function traceDirIn(dataDir, projectRoot) {
  const canonical = fs.realpathSync(projectRoot);
  let name = Array.from(path.basename(canonical))
    .map((c) => (/^[A-Za-z0-9._-]$/.test(c) ? c : '_'))
    .slice(0, 40)
    .join('');
  if (name.replace(/^[._]+|[._]+$/g, '') === '') name = 'project';
  const hash = fnv1a64(Buffer.from(canonical)) >> 16n;
  return path.join(dataDir, 'traces', `${name}-${hash.toString(16).padStart(12, '0')}`);
}

/** Deterministic pseudo-random numbers (mulberry32), so every run writes the same trace. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FILES = ['src/auth.rs', 'src/config.rs', 'src/cart.rs', 'src/orders.rs', 'src/db/pool.rs', 'src/http/routes.rs', 'src/payment/stripe.rs', 'src/inventory.rs'];
const CODE = [
  'pub fn login(user: &str, password: &str) -> bool {',
  '    let hash = hash_password(password, &user_salt(user));',
  '    match db::users::find_by_name(&pool, user).await? {',
  '        Some(row) => verify(&row.password_hash, &hash),',
  '    pub session_timeout_secs: u64,',
  'impl Cart { pub fn total(&self) -> Money { self.items.iter().map(|i| i.price * i.qty).sum() } }',
  '    // Orders are immutable once paid; refunds create a new order with negative lines.',
  '    tracing::info!(order_id = %id, "order submitted");',
];

export function generateTrace(traceDir, { records = 100000, agents = 50, batch = 10, toolsPerStep = 4, avgOutputBytes = 1200, startMs = 1796022800000 } = {}) {
  const rand = rng(42);
  const hex = (n) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
  const pick = (a) => a[Math.floor(rand() * a.length)];
  let callNo = 0;
  const callId = () => `call_${(++callNo).toString().padStart(10, '0')}`;
  const rootId = `s-${hex(16)}`;
  const runId = `r-${hex(16)}`;
  const projectRoot = '/home/me/shop-fixture';
  const light = { slot: 'light', requested_slot: 'light', fallback: false, provider: 'openai', model_id: 'gpt-4.1-mini', base_url: 'https://api.openai.com/v1' };
  const main = { slot: 'main', requested_slot: 'main', fallback: false, provider: 'openai', model_id: 'gpt-4.1', base_url: 'https://api.openai.com/v1' };
  // Per-child record budget: session_started + run_started + run_ended + steps of (2 + 3 per tool) + final step (2).
  const perStep = 2 + 3 * toolsPerStep;
  const rootRecords = 2 + Math.ceil(agents / batch) * 2 + agents * 6 + 3;
  const perChild = Math.max(7, Math.floor((records - rootRecords) / agents));
  const steps = Math.max(1, Math.floor((perChild - 5) / perStep));
  const childBudgets = { max_steps: steps + 2, max_context_tokens: 120000, max_total_tokens: 8000000, max_wall_time_ms: 3600000 };
  fs.mkdirSync(traceDir, { recursive: true });
  let written = 0;
  let bytes = 0;

  function writer(sessionId, parent) {
    const lines = [];
    let seq = 0;
    return {
      rec(ts, event, run = runId) {
        lines.push(JSON.stringify({ v: 1, seq: seq++, ts_ms: ts, session_id: sessionId, run_id: run, parent_session_id: parent, event }));
      },
      close() {
        const text = lines.join('\n') + '\n';
        fs.writeFileSync(path.join(traceDir, `${sessionId}.jsonl`), text);
        written += lines.length;
        bytes += Buffer.byteLength(text);
      },
    };
  }

  function output(tool, file) {
    const size = Math.floor(avgOutputBytes * (0.2 + 1.6 * rand()));
    const out = [];
    let len = 0;
    let line = 1 + Math.floor(rand() * 200);
    while (len < size) {
      const l = tool === 'Read' ? `${String(line).padStart(6)}\t${pick(CODE)}` : `${file}:${line}:${pick(CODE)}`;
      out.push(l);
      len += l.length + 1;
      line += 1;
    }
    return out.join('\n');
  }

  /** One subagent's whole file; returns what its parent's `subagent_completed` reports. */
  function child(childId, parentCall, description, prompt, t0) {
    const w = writer(childId, rootId);
    let ts = t0;
    w.rec(ts, {
      type: 'session_started', agent: 'subagent', profile: 'explore', description, model: light, budgets: childBudgets, project_root: projectRoot,
      parent: { session_id: rootId, run_id: runId, tool_call_id: parentCall }, permission_mode: 'readonly_subagent', tools: ['Read', 'Grep', 'Glob'],
      system_prompt: 'You are an explore subagent: a read-only researcher working inside one project folder. Use Grep, Glob and Read to answer the task.',
    });
    w.rec((ts += 3), { type: 'run_started', prompt });
    let context = 1400;
    let total = 0;
    let tools = 0;
    let input = 0;
    let outputTok = 0;
    for (let step = 1; step <= steps + 1; step++) {
      const last = step === steps + 1;
      const mid = `m-${hex(16)}`;
      w.rec((ts += 1), { type: 'model_call_begin', model_call_id: mid, step, messages: 1 + 2 * (step - 1) * toolsPerStep, estimated_input_tokens: context, tools_offered: true });
      const calls = last ? [] : Array.from({ length: toolsPerStep }, (_, i) => {
        const tool = i % 2 === 0 ? 'Read' : 'Grep';
        const file = pick(FILES);
        const args = tool === 'Read' ? { path: file, offset: 1 + Math.floor(rand() * 300), limit: 80 } : { pattern: pick(['login', 'Config', 'total', 'order_id', 'pool']), path: 'src', output_mode: 'content' };
        return { id: callId(), name: tool, args, file };
      });
      const latency = 300 + Math.floor(rand() * 1500);
      const inTok = context;
      const outTok = last ? 180 : 20 * toolsPerStep;
      input += inTok;
      outputTok += outTok;
      total += inTok + outTok;
      const text = last
        ? JSON.stringify({ status: 'completed', summary: `${description}: found it in src/auth.rs`, findings: ['login() delegates to verify()'], evidence: ['src/auth.rs:3'], unresolved_questions: [] })
        : step % 3 === 0 ? `Step ${step}: narrowing down, next I read the callers.` : '';
      w.rec((ts += latency), {
        type: 'model_call_end', model_call_id: mid, step, text, tool_calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.args) })),
        finish_reason: last ? 'stop' : 'tool_calls', usage: { input_tokens: inTok, output_tokens: outTok, estimated: false }, model: light.model_id, latency_ms: latency, error: null,
        totals: { steps: step, context_tokens: inTok, total_tokens: total, wall_time_ms: ts - t0 },
      });
      for (const c of calls) {
        w.rec(ts, { type: 'tool_call_begin', call_id: c.id, tool: c.name, arguments: c.args, mutates: false });
        w.rec(ts, { type: 'permission_decided', call_id: c.id, tool: c.name, decision: 'allow', source: 'read_only', scope: null, reason: 'read-only tool' });
      }
      for (const c of calls) {
        const out = output(c.name, c.file);
        const dur = Math.floor(rand() * 8);
        w.rec((ts += dur), { type: 'tool_call_end', call_id: c.id, tool: c.name, status: 'ok', output: out, output_bytes: Buffer.byteLength(out), output_cap_bytes: 16384, truncated: false, duration_ms: dur });
        context = Math.min(100000, context + Math.floor(out.length / 4));
        tools += 1;
      }
    }
    const result = {
      status: 'completed', summary: `${description}: found it in src/auth.rs`, findings: ['login() delegates to verify()'],
      evidence: [{ raw: 'src/auth.rs:3', path: 'src/auth.rs', line: 3, end_line: null, state: 'valid', text: CODE[0] }], unresolved_questions: [], verdict: null, reasons: [],
    };
    const usage = { input_tokens: input, output_tokens: outputTok, estimated: false };
    w.rec((ts += 1), {
      type: 'run_ended', terminal_reason: 'completed', final_text: JSON.stringify({ status: 'completed', summary: result.summary }), result, error: null, usage, usage_with_descendants: usage,
      totals: { steps: steps + 1, context_tokens: context, total_tokens: total, wall_time_ms: ts - t0 }, tool_calls: tools,
    });
    w.close();
    return { result, usage, tools, end: ts, elapsed: ts - t0 };
  }

  const w = writer(rootId, null);
  let ts = startMs;
  w.rec(ts, {
    type: 'session_started', agent: 'main', profile: 'main', description: null, model: main,
    budgets: { max_steps: 60, max_context_tokens: 100000, max_total_tokens: 2000000, max_wall_time_ms: 1800000 }, project_root: projectRoot, parent: null,
    permission_mode: 'main', tools: ['Read', 'Grep', 'Glob', 'Edit', 'Write', 'Bash', 'TodoWrite', 'Task'], system_prompt: 'You are Canopy, a careful coding agent working inside one project folder.',
  }, '');
  const PROMPT = `HISTBENCH: map the whole shop codebase with ${agents} explore subagents`;
  w.rec((ts += 1), { type: 'run_started', prompt: PROMPT });
  let step = 0;
  let rootIn = 0;
  let rootOut = 0;
  let rootTotal = 0;
  let allIn = 0;
  let allOut = 0;
  let rootTools = 0;
  for (let first = 0; first < agents; first += batch) {
    step += 1;
    const mid = `m-${hex(16)}`;
    const n = Math.min(batch, agents - first);
    const tasks = Array.from({ length: n }, (_, i) => {
      const k = first + i + 1;
      return { id: callId(), child: `s-${hex(16)}`, args: { description: `Explore area ${k}`, prompt: `TASK-${k}: explain module ${k} of the shop and cite path:line.`, subagent_type: 'explore' } };
    });
    w.rec((ts += 1), { type: 'model_call_begin', model_call_id: mid, step, messages: 1 + 2 * (step - 1) * batch, estimated_input_tokens: 2400 * step, tools_offered: true });
    const inTok = 2400 * step;
    rootIn += inTok;
    rootOut += 60 * n;
    rootTotal += inTok + 60 * n;
    w.rec((ts += 900), {
      type: 'model_call_end', model_call_id: mid, step, text: `Batch ${step}: delegating ${n} areas.`, tool_calls: tasks.map((t) => ({ id: t.id, name: 'Task', arguments: JSON.stringify(t.args) })),
      finish_reason: 'tool_calls', usage: { input_tokens: inTok, output_tokens: 60 * n, estimated: false }, model: main.model_id, latency_ms: 900, error: null,
      totals: { steps: step, context_tokens: inTok, total_tokens: rootTotal, wall_time_ms: ts - startMs },
    });
    const ends = [];
    for (const t of tasks) {
      w.rec(ts, { type: 'tool_call_begin', call_id: t.id, tool: 'Task', arguments: t.args, mutates: false });
      w.rec(ts, { type: 'permission_decided', call_id: t.id, tool: 'Task', decision: 'allow', source: 'policy', scope: null, reason: 'policy allows `Task`' });
      w.rec(ts, { type: 'subagent_requested', tool_call_id: t.id, child_session_id: t.child, description: t.args.description, profile: 'explore', model_slot: 'light', prompt: t.args.prompt });
      w.rec((ts += 1), { type: 'subagent_started', tool_call_id: t.id, child_session_id: t.child, profile: 'explore', model: light, budgets: childBudgets });
      ends.push({ t, r: child(t.child, t.id, t.args.description, t.args.prompt, ts + 1) });
    }
    ends.sort((a, b) => a.r.end - b.r.end);
    for (const { t, r } of ends) {
      ts = Math.max(ts, r.end + 1);
      allIn += r.usage.input_tokens;
      allOut += r.usage.output_tokens;
      w.rec(ts, { type: 'subagent_completed', tool_call_id: t.id, child_session_id: t.child, result: r.result, usage: r.usage, tool_calls: r.tools, elapsed_ms: r.elapsed, terminal_reason: 'completed' });
      const out = `${r.result.summary}\n\n[subagent "${t.args.description}" (${t.child}) on ${light.model_id}: completed, ended completed, ${r.tools} tool calls.]`;
      w.rec(ts, { type: 'tool_call_end', call_id: t.id, tool: 'Task', status: 'ok', output: out, output_bytes: Buffer.byteLength(out), output_cap_bytes: 16384, truncated: false, duration_ms: r.elapsed });
      rootTools += 1;
    }
  }
  step += 1;
  const FINAL = `HISTBENCH-FINAL: all ${agents} areas are mapped.`;
  const mid = `m-${hex(16)}`;
  w.rec((ts += 1), { type: 'model_call_begin', model_call_id: mid, step, messages: 1 + 2 * agents, estimated_input_tokens: 30000, tools_offered: true });
  rootIn += 30000;
  rootOut += 40;
  rootTotal += 30040;
  w.rec((ts += 2000), {
    type: 'model_call_end', model_call_id: mid, step, text: FINAL, tool_calls: [], finish_reason: 'stop', usage: { input_tokens: 30000, output_tokens: 40, estimated: false }, model: main.model_id,
    latency_ms: 2000, error: null, totals: { steps: step, context_tokens: 30000, total_tokens: rootTotal, wall_time_ms: ts - startMs },
  });
  w.rec((ts += 1), {
    type: 'run_ended', terminal_reason: 'completed', final_text: FINAL, result: null, error: null, usage: { input_tokens: rootIn, output_tokens: rootOut, estimated: false },
    usage_with_descendants: { input_tokens: rootIn + allIn, output_tokens: rootOut + allOut, estimated: false }, totals: { steps: step, context_tokens: 30000, total_tokens: rootTotal, wall_time_ms: ts - startMs },
    tool_calls: rootTools,
  });
  w.close();
  return { rootId, records: written, bytes, sessions: agents + 1, prompt: PROMPT, finalText: FINAL };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const [dir, records, agents] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node gen-trace.mjs <trace_dir> [records=100000] [agents=50]');
    process.exit(2);
  }
  const r = generateTrace(dir, { records: Number(records ?? 100000), agents: Number(agents ?? 50) });
  console.log(JSON.stringify(r));
}
