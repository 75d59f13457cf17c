// `bench:ui`'s yardsticks for its live figure (issue #9), in Node on the same scenario: the
// engine alone (no page, no IndexedDB, no audit index) and the identity floor (RFC 8785 +
// SHA-256 of the same requests with the project's own libraries). Prints one JSON line:
// { reqPerSimS, engineRps, floorRps, engineMs, requests }. BENCH_UI_FLOOR_HOURS: simulated hours
// (default 1). BENCH_UI_FLOOR_ENGINE_ONLY=1: the engine alone, counting requests without keeping
// them (a whole day's would take gigabytes), and no floor.
import { readFileSync } from 'node:fs';
import { requestIdentity } from '../src/lib/machine/identity';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario } from '../src/lib/sim/input/scenario';

const HOUR = 3_600_000;
const hours = Number(process.env.BENCH_UI_FLOOR_HOURS ?? 1);
const parsed = parseScenario(JSON.parse(readFileSync('bench/ui-50-servers.json', 'utf8')));
if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
const scenario = { ...parsed.scenario, durationMs: hours * HOUR };

const engineOnly = process.env.BENCH_UI_FLOOR_ENGINE_ONLY === '1';
const kept: [string, unknown][] = [];
let requests = 0;
const sim = new Simulation(scenario, {
  onFrame: (l) => {
    if (l.direction !== 'in') return;
    requests++;
    if (!engineOnly) kept.push([l.server, (l.frame as { params: unknown }).params]);
  }
});
const t0 = performance.now();
sim.runToEnd();
const engineMs = performance.now() - t0;

let n = 0;
const t1 = performance.now();
if (!engineOnly)
  do {
    for (const [s, p] of kept) requestIdentity(s, p);
    n += kept.length;
  } while (performance.now() - t1 < 400);
const floorMs = performance.now() - t1;

console.log(
  JSON.stringify({
    reqPerSimS: requests / (hours * 3600),
    engineRps: (requests / engineMs) * 1000,
    floorRps: engineOnly ? null : (n / floorMs) * 1000,
    engineMs,
    requests
  })
);
