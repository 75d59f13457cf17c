/**
 * One run for `npm run bench:guard` (scripts/bench-guard.mjs): `hours` of `scenario.json` as
 * written, unguarded or `--guarded` (the invariants as the playground checks them, with the SDK
 * frame validator). Prints wall and CPU time per request: on a shared machine the CPU time is
 * the steadier, and the main thread's (Linux: /proc, in 10 ms ticks) is what a worker's frame
 * waits for — the process's (`cpuUs`) adds the compiler's and the garbage collector's helper
 * threads. `--lane=A` (or B): that lane's population alone (the engine's `lanes`; bench:lanes).
 */
import { existsSync, readFileSync } from 'node:fs';
import { scenarioRun } from './bench-scenario-run';

const args = process.argv.slice(2);
const [hoursArg = '0.5', file = 'bench/ui-50-servers.json'] = args.filter(
  (a) => !a.startsWith('--')
);
const lane = args.find((a) => a.startsWith('--lane='))?.slice('--lane='.length);
if (lane !== undefined && lane !== 'A' && lane !== 'B') throw new Error(`--lane=${lane}: A or B`);
const run = scenarioRun(file, Number(hoursArg), {
  guarded: args.includes('--guarded'),
  ...(lane ? { lanes: [lane] } : {})
});
const sim = run.sim;
/** The main thread's CPU time so far, ms (null where /proc is not there). */
function mainThreadMs(): number | null {
  const stat = `/proc/self/task/${process.pid}/stat`;
  if (!existsSync(stat)) return null;
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const main0 = mainThreadMs();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
sim.runToEnd();
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const main1 = mainThreadMs();
const mainMs = main0 === null || main1 === null ? cpuMs : main1 - main0;
const requests = run.requests();
console.log(
  JSON.stringify({
    requests,
    wallMs: wall,
    wallUs: (wall * 1000) / requests,
    cpuUs: (cpuMs * 1000) / requests,
    mainUs: (mainMs * 1000) / requests
  })
);
