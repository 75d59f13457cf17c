/**
 * The page's sweep: every (point, seed) run spread over Web Workers, one per core, handed out one
 * at a time so a fast worker takes more; results are placed by point and seed, so what the page
 * shows is what `lab sweep` writes, whatever the number of workers or the order they finish in.
 * Cancel terminates every worker at once: nothing half-run is shown.
 */
import type { SeedRun, SweepPlan } from '../../sim/sweep';
import type { SweepWorkerIn, SweepWorkerOut } from './protocol';

export interface WorkerLike {
  postMessage(m: SweepWorkerIn): void;
  onmessage: ((e: MessageEvent<SweepWorkerOut>) => void) | null;
  onerror: ((e: ErrorEvent) => void) | null;
  terminate(): void;
}

export class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

export class SweepRunner {
  #workers: WorkerLike[] = [];
  #fail: ((e: unknown) => void) | null = null;
  /**
   * Cancelled before `run` began: the page makes the runner, then waits for the worker module, and
   * a Cancel in that wait had no run to stop — the sweep then ran to its end (a flaky CI run of
   * tests/sweep.test.ts found it).
   */
  #cancelled = false;

  /**
   * Run every point of `plan` on every seed on `count` workers made by `make`; `progress` hears
   * each finished run. Rejects with {@link Cancelled} after {@link cancel}.
   */
  run(
    plan: SweepPlan,
    scenario: unknown,
    count: number,
    make: () => WorkerLike,
    progress: (done: number) => void
  ): Promise<SeedRun[][]> {
    const runs: SeedRun[][] = plan.points.map(() => []);
    const tasks: { point: number; seed: number }[] = [];
    for (let point = 0; point < plan.points.length; point++)
      for (let seed = 0; seed < plan.seeds.length; seed++) tasks.push({ point, seed });
    const n = Math.max(1, Math.min(count, tasks.length));
    if (this.#cancelled) return Promise.reject(new Cancelled());
    return new Promise((resolve, reject) => {
      let next = 0;
      let finished = 0;
      const stop = () => {
        for (const w of this.#workers) w.terminate();
        this.#workers = [];
        this.#fail = null;
      };
      this.#fail = (e) => {
        stop();
        reject(e);
      };
      for (let i = 0; i < n; i++) {
        const w = make();
        this.#workers.push(w);
        const give = () => {
          if (next < tasks.length) w.postMessage({ type: 'run', ...tasks[next++]! });
        };
        w.onmessage = (e) => {
          const m = e.data;
          if (m.type === 'error') {
            this.#fail?.(new Error(m.message));
            return;
          }
          if (m.type === 'run') {
            runs[m.point]![m.seed] = m.run;
            finished++;
            progress(finished);
            if (finished === tasks.length) {
              stop();
              resolve(runs);
              return;
            }
          }
          give();
        };
        w.onerror = (e) => this.#fail?.(new Error(e.message || 'a sweep worker failed'));
        w.postMessage({ type: 'init', sweep: plan.sweep, scenario, require: plan.require });
      }
    });
  }

  /** Stop the run (every worker terminated at once), or the one about to start. */
  cancel(): void {
    this.#cancelled = true;
    this.#fail?.(new Cancelled());
  }
}
