/**
 * A run to profile: `npm run bench:profile -- [hours] [scenario.json] [--guarded] [--as-written]
 * [--memo-off]`
 * bundles this script (so the profile names source modules, see bench-profile-summary.mjs), runs
 * it under `node --cpu-prof` and prints where the time went.
 *
 * Default: 1 simulated hour of bench/retry-storm.json as bench.ts's "small" class (its requests'
 * padding removed: ~200 bytes of params). `--as-written` keeps the scenario's request sizes;
 * `--guarded` checks the run's invariants as the CLI does; `--memo-off` hashes every request (as
 * bench.ts's "memo off" classes).
 */
import { identityMemoStats, useIdentityMemo } from '../src/lib/machine/authorize/fast-identity';
import { scenarioRun } from './bench-scenario-run';

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith('--')));
const [hoursArg, file = 'bench/retry-storm.json'] = args.filter((a) => !a.startsWith('--'));
const hours = Number(hoursArg ?? 1);
if (flags.has('--memo-off')) useIdentityMemo(false);
const run = scenarioRun(file, hours, {
  guarded: flags.has('--guarded'),
  servers: flags.has('--as-written')
    ? undefined
    : (servers) => servers.map((x) => ({ ...x, request: { ...x.request, promptTokens: 0 } }))
});
const sim = run.sim;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
sim.runToEnd();
const ms = performance.now() - t0;
// CPU time as well: on a shared machine the wall time waits for other processes too.
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const requests = run.requests();
console.log(
  `${file}: ${requests} requests, ${hours} h simulated in ${ms.toFixed(0)} ms (${((ms * 1000) / requests).toFixed(1)} µs/request; CPU ${((cpuMs * 1000) / requests).toFixed(1)} µs/request)`
);
console.log(`identity memo: ${JSON.stringify(identityMemoStats)}`);
