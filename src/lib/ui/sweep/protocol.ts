/** What the page and its sweep workers say to each other (sweep.worker.ts, runner.ts). */
import type { Constraint, SeedRun, Sweep } from '../../sim/sweep';

export type SweepWorkerIn =
  | { type: 'init'; sweep: Sweep; scenario: unknown; require: Constraint[] }
  | { type: 'run'; point: number; seed: number };

export type SweepWorkerOut =
  | { type: 'ready' }
  | { type: 'run'; point: number; seed: number; run: SeedRun }
  | { type: 'error'; message: string };
