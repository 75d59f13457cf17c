// `npm run bench:lanes -- [rounds] [hours] [scenario.json] [--plain]`: what a lane per thread
// would buy live play (issue #24). The worker plays both lanes on one thread, so a run's speed is
// bounded by one core; the lanes are independent in the engine (engine-lanes.spec.ts), so each
// could run on a thread of its own. This times, in fresh Node processes, the same guarded run
// (the invariants as the playground checks them, with the SDK frame validator; `--plain`:
// unguarded) two ways, alternating so both see the same machine load:
//   one thread: both lanes in one process, as the worker does today;
//   two threads: lane A and lane B each alone (`--lane=`), in two processes at once.
// Each prints its wall time for the simulated span and the speed that is (× real time: 1000×
// plays a day in 86.4 s), and the two threads' speed-up. The engine only: no page, no storage,
// no audit index — what the split itself gives, on this machine's cores.
// Default: 1 round of the whole day of bench/ui-50-servers.json (a few minutes).
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { bundleRunner } from './bench-bundle.mjs';

const args = process.argv.slice(2);
const guarded = !args.includes('--plain');
const [rounds = '1', hours = '24', file = 'bench/ui-50-servers.json'] = args.filter(
  (a) => !a.startsWith('--')
);
const js = bundleRunner('.', 'scripts/bench-guard-run.ts', 'lanes');
const exec = promisify(execFile);

/** One fresh run: its engine's wall ms and requests. */
async function run(lane) {
  const a = [
    js,
    hours,
    file,
    ...(guarded ? ['--guarded'] : []),
    ...(lane ? [`--lane=${lane}`] : [])
  ];
  const { stdout } = await exec(process.execPath, a, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout);
}

const simS = Number(hours) * 3600;
const speed = (ms) => `${(simS / (ms / 1000)).toFixed(0)}×`;
const line = (what, ms, requests) =>
  `  ${what.padEnd(34)} ${(ms / 1000).toFixed(1).padStart(6)} s  ${speed(ms).padStart(6)}  ${Math.round(
    (requests / ms) * 1000
  )
    .toLocaleString('en')
    .padStart(7)} requests/s`;

console.log(
  `${file}, ${hours} h simulated, ${guarded ? 'guarded (invariants + SDK frame checks)' : 'unguarded'}`
);
for (let i = 0; i < Number(rounds); i++) {
  const load0 = loadavg()[0].toFixed(2);
  const one = await run();
  const load1 = loadavg()[0].toFixed(2);
  const [a, b] = await Promise.all([run('A'), run('B')]);
  const two = Math.max(a.wallMs, b.wallMs);
  console.log(`round ${i + 1} (load ${load0} / ${load1})`);
  console.log(line('one thread, both lanes', one.wallMs, one.requests));
  console.log(line('two threads: lane A alone', a.wallMs, a.requests));
  console.log(line('            lane B alone', b.wallMs, b.requests));
  console.log(line('two threads, both lanes (slower)', two, a.requests + b.requests));
  if (a.requests + b.requests !== one.requests)
    console.log(`  requests differ: ${one.requests} against ${a.requests} + ${b.requests}`);
  console.log(`  speed-up ${(one.wallMs / two).toFixed(2)}×`);
}
