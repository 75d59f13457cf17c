// `npm run bench:guard -- [pairs] [hours] [scenario.json] [--before=DIR]`: what the run's
// invariant checks (the RunGuard, sim/checks/) cost per request. Bundles
// scripts/bench-guard-run.ts once and runs it unguarded and guarded (with the SDK frame validator)
// in alternating fresh processes, so both see the same machine load (the load average is printed
// with each pair). A pair's figure for each is the best of three alternating runs (a shared
// machine only ever slows a run down), in the main thread's CPU time per request (steadier than
// wall time on a shared machine, and what a worker's frame waits for; Linux); the process's CPU
// time (its compiler's and garbage collector's helper threads too) and the wall time are
// printed beside it. `--before=DIR`: a checkout of another commit (with this runner copied into its
// scripts/ and node_modules linked) is run too, interleaved with this one, for a before/after.
// Default: 5 pairs of 0.5 h of bench/ui-50-servers.json, the live-play benchmark of issue #24.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { bundleRunner } from './bench-bundle.mjs';

const args = process.argv.slice(2);
const before = args.find((a) => a.startsWith('--before='))?.slice('--before='.length);
const [pairs = '5', hours = '0.5', file = 'bench/ui-50-servers.json'] = args.filter(
  (a) => !a.startsWith('--')
);

/** The runner of the checkout at `root`, bundled. */
const bundle = (root, name) => bundleRunner(root, 'scripts/bench-guard-run.ts', name);

const trees = [...(before ? [{ name: 'before', js: bundle(before, 'before') }] : [])];
trees.push({ name: before ? 'after' : 'this', js: bundle('.', 'this') });

/** CPU and wall µs per request of one fresh run. */
function run(js, guarded) {
  const a = [js, hours, file, ...(guarded ? ['--guarded'] : [])];
  return JSON.parse(execFileSync(process.execPath, a, { encoding: 'utf8' }));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figures = new Map(trees.map((t) => [t.name, { plain: [], guarded: [], cpu: [] }]));
for (let i = 0; i < Number(pairs); i++) {
  const load = loadavg()[0].toFixed(2);
  const best = new Map(
    trees.map((t) => [
      t.name,
      {
        p: { mainUs: Infinity, cpuUs: Infinity, wallUs: Infinity },
        g: { mainUs: Infinity, cpuUs: Infinity, wallUs: Infinity }
      }
    ])
  );
  for (let k = 0; k < 3; k++)
    for (const t of trees) {
      const b = best.get(t.name);
      for (const [into, r] of [
        [b.p, run(t.js, false)],
        [b.g, run(t.js, true)]
      ]) {
        into.mainUs = Math.min(into.mainUs, r.mainUs);
        into.cpuUs = Math.min(into.cpuUs, r.cpuUs);
        into.wallUs = Math.min(into.wallUs, r.wallUs);
      }
    }
  for (const t of trees) {
    const { p, g } = best.get(t.name);
    const f = figures.get(t.name);
    f.plain.push(p.mainUs);
    f.guarded.push(g.mainUs);
    f.cpu.push(g.cpuUs - p.cpuUs);
    console.log(
      `pair ${i + 1} ${t.name}: load ${load}  main thread unguarded ${p.mainUs.toFixed(1)}  guarded ${g.mainUs.toFixed(1)}  overhead ${(g.mainUs - p.mainUs).toFixed(1)} µs/request  (process CPU ${p.cpuUs.toFixed(1)} / ${g.cpuUs.toFixed(1)}, wall ${p.wallUs.toFixed(1)} / ${g.wallUs.toFixed(1)})`
    );
  }
}
for (const t of trees) {
  const { plain, guarded, cpu } = figures.get(t.name);
  const overheads = guarded.map((g, i) => g - plain[i]);
  console.log(
    `median ${t.name}, main thread: unguarded ${median(plain).toFixed(1)}  guarded ${median(guarded).toFixed(1)}  overhead ${median(overheads).toFixed(1)} µs/request; process CPU overhead ${median(cpu).toFixed(1)} (${file}, ${hours} h, ${pairs} pairs)`
  );
}
