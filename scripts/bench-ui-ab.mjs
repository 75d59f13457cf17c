// `npm run bench:ui:ab -- DIR [pairs]`: bench:ui's live play, this checkout against another one
// (DIR: a checkout of another commit, or of a change being tried, built, with node_modules), in
// alternating runs, each on its own port. Why: this machine's speed drifts by a third from run to
// run, so a figure taken on one build an hour before another compares nothing; and two builds
// served on one port measure whichever server answers. Each pair prints both runs' speed reached,
// the sim worker's CPU a request and a second, and the page's main thread; at the end, the median
// of each. Figures, not assertions. BENCH_UI_SECONDS sets each run's length (default 30).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';

const [other, pairsArg = '3'] = process.argv.slice(2);
if (!other || !existsSync(resolve(other, 'build/index.html')))
  throw new Error('bench:ui:ab DIR [pairs]: DIR must be a built checkout (npm run build there)');
const trees = [
  { name: 'other', dir: resolve(other), port: 4196 },
  { name: 'this', dir: resolve('.'), port: 4197 }
];
const seconds = process.env.BENCH_UI_SECONDS ?? '30';

/** The figures of one bench:ui run of `tree` (its own script, build and port). */
function run(tree) {
  const out = execFileSync(process.execPath, ['scripts/bench-ui.mjs'], {
    cwd: tree.dir,
    encoding: 'utf8',
    env: { ...process.env, BENCH_UI_PORT: String(tree.port), BENCH_UI_SECONDS: seconds }
  });
  const num = (re) => {
    const m = re.exec(out);
    if (!m) throw new Error(`bench:ui in ${tree.dir} printed no ${re}:\n${out}`);
    return Number(m[1].replace(/,/g, ''));
  };
  return {
    speed: num(/simulated\/wall (\d+)× achieved/),
    workerUs: num(/sim worker \d+ ms per s of play = ([\d.]+) µs per request/),
    workerMs: num(/sim worker (\d+) ms per s of play/),
    mainMs: num(/page main thread (\d+) ms per s/)
  };
}

const runs = new Map(trees.map((t) => [t.name, []]));
for (let i = 0; i < Number(pairsArg); i++) {
  // Which goes first alternates too: a machine that slows through a pair slows the second.
  for (const t of i % 2 ? [...trees].reverse() : trees) {
    const r = run(t);
    runs.get(t.name).push(r);
    console.log(
      `pair ${i + 1} ${t.name.padEnd(5)}  ${String(r.speed).padStart(4)}×  sim worker ${r.workerUs.toFixed(1)} µs a request, ${r.workerMs} ms a second  main thread ${r.mainMs} ms a second  [load ${loadavg()[0].toFixed(2)}]`
    );
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const t of trees) {
  const rs = runs.get(t.name);
  console.log(
    `median ${t.name.padEnd(5)} ${median(rs.map((r) => r.speed))}×  sim worker ${median(rs.map((r) => r.workerUs)).toFixed(1)} µs a request, ${median(rs.map((r) => r.workerMs))} ms a second  main thread ${median(rs.map((r) => r.mainMs))} ms a second  (${t.dir}, ${rs.length} runs of ${seconds} s)`
  );
}
