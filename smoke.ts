import { readFileSync } from 'node:fs';
import { parseScenario } from './src/lib/sim/scenario';
import { Simulation } from './src/lib/sim/engine';
const r = parseScenario(readFileSync(process.argv[2]!, 'utf8'));
if (!r.ok) { console.error(r.errors); process.exit(2); }
let frames = 0;
const t0 = performance.now();
const sim = new Simulation(r.scenario, { onFrame: () => frames++ });
sim.runToEnd();
console.log('wall ms', (performance.now() - t0).toFixed(0), 'frames', frames);
for (const id of ['A', 'B'] as const) console.log(id, JSON.stringify(sim.lanes[id].metrics.counters));
