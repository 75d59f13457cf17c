/**
 * One worker thread of `lab sweep` (sweep.ts): plans the sweep it is given exactly as the main
 * thread did (plan.ts is deterministic, so point i is the same scenario everywhere), then runs the
 * (point, seed) pairs it is handed, one at a time, and posts each run's numbers back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { planSweep, runOnce, type Sweep } from '../lib/sim/sweep';
import type { Constraint } from '../lib/sim/sweep/metrics';

export interface SweepWorkerData {
  sweep: Sweep;
  /** The base scenario's text (or value), as the main thread read it. */
  scenario: unknown;
  require: Constraint[];
}

export type SweepTask = { point: number; seed: number };

const port = parentPort!;
const data = workerData as SweepWorkerData;
const planned = planSweep(data.sweep, data.scenario, data.require);
if (!planned.ok)
  throw new Error(`the worker could not plan the sweep: ${planned.errors[0]!.message}`);
const plan = planned.plan;

port.on('message', (t: SweepTask) => {
  const run = runOnce(plan.points[t.point]!.scenario, plan.seeds[t.seed]!, plan.metrics);
  port.postMessage({ ...t, run });
});
port.postMessage('ready');
