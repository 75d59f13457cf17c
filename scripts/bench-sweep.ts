/**
 * `npm run bench:sweep`: what `lab sweep` costs (issue #23). A sweep of 48 points × 5 seeds of the
 * reconnect-bypass lesson (bench/sweep-48x5.json, a simulated hour each: lane A's store × rate
 * limit × how long and whether a user's refusal is kept) runs with 1 worker thread, then with 2, as `lab sweep --workers N` runs
 * it; the wall time of each, the speedup, and the load average before and after each (the
 * machine is shared: read the figures beside it). The two outputs are also compared byte for
 * byte. Goals: at most 30 s with 2 workers on a 2-core machine; a speedup of at least 1.7.
 *
 * Figures, not assertions. `-- --workers=1,2,4` to try other counts.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepAndWrite } from '../src/cli/sweep';

const counts = (
  process.argv.find((a) => a.startsWith('--workers='))?.slice('--workers='.length) ?? '1,2'
)
  .split(',')
  .map(Number);

const dir = mkdtempSync(join(tmpdir(), 'bench-sweep-'));
const file = 'bench/sweep-48x5.json';

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

console.log(
  `bench:sweep: 48 points × 5 seeds of reconnect-bypass (1 h simulated); ${availableParallelism()} cores`
);
const times: number[] = [];
const outputs: string[] = [];
for (const n of counts) {
  const before = load();
  const out = join(dir, `w${n}`);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await sweepAndWrite({ file, workers: n, out, require: [] });
  const s = (performance.now() - t0) / 1000;
  // Every thread's CPU time: over the wall time, how many cores the sweep actually had.
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  times.push(s);
  outputs.push(
    ['points.json', 'points.csv', 'pareto.json']
      .map((f) => readFileSync(join(out, f), 'utf8'))
      .join('\0')
  );
  console.log(
    `  ${n} worker${n === 1 ? ' ' : 's'}: ${s.toFixed(1)} s wall, ${r.plan.runs} runs (${((s * 1000) / r.plan.runs).toFixed(0)} ms/run), ${cpu.toFixed(1)} s CPU (${(cpu / s).toFixed(2)} cores busy); load average before ${before}, after ${load()}`
  );
}
for (let i = 1; i < counts.length; i++)
  console.log(
    `  speedup ${counts[0]} → ${counts[i]} workers: ${(times[0]! / times[i]!).toFixed(2)}× (goal ≥ 1.7× from 1 to 2)`
  );
console.log(
  `  outputs byte-identical across worker counts: ${outputs.every((o) => o === outputs[0]) ? 'yes' : 'NO'}`
);
