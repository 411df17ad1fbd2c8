// Summarises an ab-frames.sh run: per variant, the median (and min–max) over runs of each frame statistic.
//   node ab-summary.mjs OUTDIR NAME...
import fs from 'node:fs';
import path from 'node:path';

const [dir, ...names] = process.argv.slice(2);
const med = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (a) => (a.length === 0 ? '—' : `${+med(a).toFixed(1)} (${Math.min(...a)}–${Math.max(...a)})`);
const rows = [
  ['frame p50 ms', (r) => r.framesDuring.p50],
  ['frame p95 ms', (r) => r.framesDuring.p95],
  ['frame p99 ms', (r) => r.framesDuring.p99],
  ['frames > 50 ms, %', (r) => +((100 * r.framesDuring.over50) / r.framesDuring.n).toFixed(1)],
  ['frames during stream', (r) => r.framesDuring.n],
  // Under load the web process takes whatever CPU it gets and renders more frames when each is cheaper,
  // so CPU per frame says more about the work than CPU seconds do.
  ['web process CPU ms per frame', (r) => (r.cpuDuring?.WebKitWebProces == null ? NaN : Math.round(r.cpuDuring.WebKitWebProces / r.framesDuring.n))],
  ['CPU s during stream, all programs', (r) => (r.cpuTotalMs == null ? NaN : +(r.cpuTotalMs / 1000).toFixed(2))],
  ['… WebKitWebProcess', (r) => (r.cpuDuring?.WebKitWebProces == null ? NaN : +(r.cpuDuring.WebKitWebProces / 1000).toFixed(2))],
  ['… Xvfb', (r) => (r.cpuDuring?.Xvfb == null ? NaN : +(r.cpuDuring.Xvfb / 1000).toFixed(2))],
  ['worst frame ms', (r) => r.framesDuring.max],
  ['idle after p50 ms', (r) => r.framesIdleAfter.p50],
  ['app JS per frame p95 ms', (r) => r.appFrameTotal.p95],
  ['click → painted p50 ms', (r) => r.clickPainted?.p50 ?? NaN],
];
const runs = {};
for (const n of names) {
  runs[n] = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(`${n}-`) && f.endsWith('.json') && /^\d+$/.test(f.slice(n.length + 1, -5)))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).results[0]);
}
const bad = Object.entries(runs).flatMap(([n, rs]) => rs.filter((r) => !r.finalShown).map(() => n));
console.log(`| median (min–max) | ${names.map((n) => `${n} (${runs[n].length} runs)`).join(' | ')} |`);
console.log(`|---|${names.map(() => '---').join('|')}|`);
for (const [label, f] of rows) console.log(`| ${label} | ${names.map((n) => fmt(runs[n].map(f).filter((x) => !Number.isNaN(x)))).join(' | ')} |`);
if (bad.length > 0) console.log(`WARNING: the final answer was not in view at the end in runs of: ${bad.join(', ')}`);
