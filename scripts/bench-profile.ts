/**
 * `node --cpu-prof --cpu-prof-dir=DIR --import tsx scripts/bench-profile.ts [hours] [guarded]`:
 * the small-request retry storm (bench.ts's "small" class) for a CPU profile; summarise the
 * profile with `node scripts/bench-profile-summary.mjs DIR/*.cpuprofile`.
 */
import { readFileSync } from 'node:fs';
import { sdkFrameProblem } from '../src/lib/sim/conformance';
import { Simulation } from '../src/lib/sim/engine';
import { guardedSimulation } from '../src/lib/sim/guard';
import { parseScenario, type Scenario } from '../src/lib/sim/scenario';

const parsed = parseScenario(readFileSync('bench/retry-storm.json', 'utf8'));
if (!parsed.ok) throw new Error('bench/retry-storm.json does not parse');
const hours = Number(process.argv[2] ?? 0.5);
const guarded = process.argv[3] === 'guarded';
const s: Scenario = {
  ...parsed.scenario,
  durationMs: hours * 3_600_000,
  servers: parsed.scenario.servers.map((x) => ({
    ...x,
    request: { ...x.request, promptTokens: 0 }
  }))
};
let requests = 0;
const opts = {
  onFrame: (l: { direction: string }) => {
    if (l.direction === 'in') requests++;
  }
};
const sim = guarded
  ? guardedSimulation(s, opts, { validate: sdkFrameProblem }).sim
  : new Simulation(s, opts);
const t0 = performance.now();
sim.runToEnd();
console.log(`${requests} requests in ${(performance.now() - t0).toFixed(0)} ms`);
