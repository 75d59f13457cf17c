/** What the lesson page and its matrix worker (matrix.worker.ts) say to each other. */
import type { MatrixRow } from '../../sim/report/refusal-matrix-text';

export type MatrixIn = { scenario: unknown; lane: 'A' | 'B' };

export type MatrixOut =
  | { type: 'row'; index: number }
  | { type: 'done'; rows: MatrixRow[] }
  | { type: 'error'; message: string };
