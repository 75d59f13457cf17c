/**
 * One run for `npm run bench:guard` (scripts/bench-guard.mjs): `hours` of `scenario.json` as
 * written, unguarded or `--guarded` (the invariants as the playground checks them, with the SDK
 * frame validator). Prints wall and CPU time per request: on a shared machine the CPU time (all
 * of the process's threads, the garbage collector's included) is the steadier of the two.
 */
import { readFileSync } from 'node:fs';
import { sdkFrameProblem } from '../src/lib/sim/checks/conformance';
import { guardedSimulation } from '../src/lib/sim/checks/guard';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario } from '../src/lib/sim/input/scenario';

const args = process.argv.slice(2);
const [hoursArg = '0.5', file = 'bench/ui-50-servers.json'] = args.filter(
  (a) => !a.startsWith('--')
);
const parsed = parseScenario(readFileSync(file, 'utf8'));
if (!parsed.ok) throw new Error(`${file}: ${parsed.errors[0]?.path}: ${parsed.errors[0]?.message}`);
const s = { ...parsed.scenario, durationMs: Number(hoursArg) * 3_600_000 };
let requests = 0;
const opts = {
  onFrame: (l: { direction: string }) => {
    if (l.direction === 'in') requests++;
  }
};
const sim = args.includes('--guarded')
  ? guardedSimulation(s, opts, { validate: sdkFrameProblem }).sim
  : new Simulation(s, opts);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
sim.runToEnd();
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(
  JSON.stringify({ requests, wallUs: (wall * 1000) / requests, cpuUs: (cpuMs * 1000) / requests })
);
