/**
 * One Web Worker of the page's Sweep view (runner.ts): the browser's twin of `lab sweep`'s worker
 * thread (cli/sweep-worker.ts). It plans the sweep exactly as the page did, then runs the
 * (point, seed) pairs it is handed one at a time and posts each run's numbers back.
 */
import { planSweep, runOnce, type SweepPlan } from '../../sim/sweep';
import type { SweepWorkerIn, SweepWorkerOut } from './protocol';

let plan: SweepPlan | null = null;

function post(m: SweepWorkerOut): void {
  postMessage(m);
}

onmessage = (e: MessageEvent<SweepWorkerIn>) => {
  const m = e.data;
  try {
    if (m.type === 'init') {
      const r = planSweep(m.sweep, m.scenario, m.require);
      if (!r.ok) {
        post({ type: 'error', message: `${r.errors[0]!.path}: ${r.errors[0]!.message}` });
        return;
      }
      plan = r.plan;
      post({ type: 'ready' });
      return;
    }
    if (!plan) throw new Error('a run before the sweep was planned');
    const run = runOnce(plan.points[m.point]!.scenario, plan.seeds[m.seed]!, plan.metrics);
    post({ type: 'run', point: m.point, seed: m.seed, run });
  } catch (err) {
    post({ type: 'error', message: (err as Error).message });
  }
};
