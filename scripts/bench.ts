/**
 * `npm run bench`: the engine's throughput on the standard retry-storm scenario, against the
 * bare per-request floor (canonicalise + SHA-256 of the same requests), and the wall time to
 * fast-forward a simulated 24 hours of it. The last line is `ratio R`, R = engine / floor.
 *
 * Figures, not assertions: run it on a quiet machine and read them.
 */
import { readFileSync } from 'node:fs';
import { requestIdentity } from '../src/lib/machine/identity';
import { Simulation } from '../src/lib/sim/engine';
import { parseScenario } from '../src/lib/sim/scenario';

const file = process.argv[2] ?? 'bench/retry-storm.json';
const parsed = parseScenario(readFileSync(file, 'utf8'));
if (!parsed.ok) {
  console.error(`${file}: ${parsed.errors[0]?.path}: ${parsed.errors[0]?.message}`);
  process.exit(2);
}
const scenario = parsed.scenario;
const HOUR = 3_600_000;

/** Run `hours` of simulated time; keep every `keepEvery`-th request for the floor. */
function run(hours: number, keepEvery: number) {
  const kept: [string, unknown][] = [];
  let requests = 0;
  const sim = new Simulation(
    { ...scenario, durationMs: hours * HOUR },
    {
      onFrame: (l) => {
        if (l.direction !== 'in') return;
        if (requests++ % keepEvery === 0)
          kept.push([l.server, (l.frame as { params: unknown }).params]);
      }
    }
  );
  const t0 = performance.now();
  sim.runToEnd();
  return { ms: performance.now() - t0, requests, kept, sim };
}

// Warm the JIT on a short run first, so neither side pays for compilation.
run(0.05, 1);

const engine = run(1, 4);
const engineRps = (engine.requests / engine.ms) * 1000;

// The floor: identity alone (RFC 8785 canonical JSON + SHA-256) of the same requests.
const reps = 4;
const t0 = performance.now();
for (let r = 0; r < reps; r++) for (const [s, p] of engine.kept) requestIdentity(s, p);
const floorMs = performance.now() - t0;
const floorRps = ((engine.kept.length * reps) / floorMs) * 1000;

const bytes =
  engine.kept.reduce((n, [, p]) => n + JSON.stringify(p).length, 0) / engine.kept.length;
console.log(`scenario          ${scenario.name} (${scenario.servers.length} servers, 2 lanes)`);
console.log(`mean request      ${Math.round(bytes)} bytes of params`);
console.log(
  `engine            ${engine.requests} requests in ${engine.ms.toFixed(0)} ms of wall time for 1 simulated hour = ${engineRps.toFixed(0)} requests/s`
);
console.log(
  `floor             ${floorRps.toFixed(0)} requests/s (canonicalise + SHA-256 of the same requests)`
);

const day = run(24, 1_000_000);
console.log(
  `simulated 24 h    ${(day.ms / 1000).toFixed(1)} s of wall time, ${day.requests} requests`
);
console.log(`ratio ${(engineRps / floorRps).toFixed(2)}`);
