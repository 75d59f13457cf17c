/**
 * A sweep's results: each point's metrics over the seeds (mean, min, max, every seed's value),
 * whether it meets the constraints, its guarantees; the Pareto front of the feasible points under
 * the objectives; the `--require` gate; and the CSV. Everything here depends only on the runs'
 * numbers in grid and seed order, never on which worker ran what or when: the same sweep gives the
 * same bytes whatever the worker count.
 */
import type { GuaranteeStatus, InvariantId } from '../checks/invariants';
import { compare, type Constraint } from './metrics';
import type { SweepPlan } from './plan';
import type { SeedRun } from './run';

export interface MetricSummary {
  mean: number;
  min: number;
  max: number;
  bySeed: number[];
}

export interface PointResult {
  settings: Record<string, unknown>;
  metrics: Record<string, MetricSummary>;
  /** Meets every constraint of the sweep file. */
  feasible: boolean;
  /** The constraints it does not meet, as written. */
  unmet: string[];
  /** Each guarantee's worst status over the seeds (broken over held over waived). */
  guarantees: Record<string, GuaranteeStatus>;
  /** Every run of this point that broke a guarantee: its seed and the first broken one. */
  broken: { seed: number; guarantee: string }[];
}

export interface SweepResults {
  points: PointResult[];
  /** Indices into `points` of the non-dominated feasible points. */
  pareto: number[];
}

const RANK: Record<GuaranteeStatus, number> = { waived: 0, held: 1, broken: 2 };

export function summarise(values: number[]): MetricSummary {
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { mean: sum / values.length, min, max, bySeed: values };
}

/** The number a constraint compares: the seeds' mean, min or max of its metric. */
export function constraintValue(p: PointResult, c: Constraint): number {
  const m = p.metrics[c.metric];
  if (!m) throw new Error(`${c.metric} was not measured`); // planSweep adds every named metric
  return m[c.aggregate];
}

export function meets(p: PointResult, c: Constraint): boolean {
  return compare(constraintValue(p, c), c.op, c.value);
}

/** `runs[point][seedIndex]` → the points and their front. */
export function sweepResults(plan: SweepPlan, runs: readonly (readonly SeedRun[])[]): SweepResults {
  const points = plan.points.map((pp, i) => {
    const seedRuns = runs[i]!;
    const metrics = Object.fromEntries(
      plan.metrics.map((name, k) => [name, summarise(seedRuns.map((r) => r.values[k]!))])
    );
    const guarantees: Record<string, GuaranteeStatus> = {};
    for (const r of seedRuns)
      for (const g of r.guarantees) {
        const was = guarantees[g.id as InvariantId];
        if (!was || RANK[g.status] > RANK[was]) guarantees[g.id] = g.status;
      }
    const point: PointResult = {
      settings: Object.fromEntries(pp.settings),
      metrics,
      feasible: true,
      unmet: [],
      guarantees,
      broken: seedRuns.flatMap((r, s) =>
        r.broken ? [{ seed: plan.seeds[s]!, guarantee: r.broken }] : []
      )
    };
    point.unmet = plan.sweep.constraints.filter((c) => !meets(point, c)).map((c) => c.text);
    point.feasible = point.unmet.length === 0;
    return point;
  });
  const vectors = points.map((p) =>
    p.feasible ? plan.sweep.objectives.map((o) => p.metrics[o.metric]!.mean) : null
  );
  return {
    points,
    pareto: paretoFront(
      vectors,
      plan.sweep.objectives.map((o) => o.direction)
    )
  };
}

/** `a` dominates `b`: no worse on every objective and better on one. */
function dominates(
  a: readonly number[],
  b: readonly number[],
  dirs: readonly ('min' | 'max')[]
): boolean {
  let better = false;
  for (let k = 0; k < dirs.length; k++) {
    const d = dirs[k] === 'min' ? b[k]! - a[k]! : a[k]! - b[k]!;
    if (d < 0) return false;
    if (d > 0) better = true;
  }
  return better;
}

/**
 * The indices (ascending) of the vectors no other dominates; `null` (an infeasible point) is never
 * on the front and dominates nothing. Equal vectors do not dominate each other: both stay.
 */
export function paretoFront(
  vectors: readonly (readonly number[] | null)[],
  dirs: readonly ('min' | 'max')[]
): number[] {
  const out: number[] = [];
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i];
    if (!v) continue;
    if (!vectors.some((w, j) => j !== i && w !== null && dominates(w, v, dirs))) out.push(i);
  }
  return out;
}

/**
 * The CI gate: the first feasible point that meets every `require` constraint, or null — `lab
 * sweep --require` exits 1 on null.
 */
export function requireGate(
  points: readonly PointResult[],
  require: readonly Constraint[]
): number | null {
  const i = points.findIndex((p) => p.feasible && require.every((c) => meets(p, c)));
  return i < 0 ? null : i;
}

/** The runs that broke a guarantee, in grid and seed order: `lab sweep` exits 3 on any. */
export function brokenRuns(
  points: readonly PointResult[]
): { point: number; seed: number; guarantee: string }[] {
  return points.flatMap((p, point) => p.broken.map((b) => ({ point, ...b })));
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function cell(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * `points.csv`: one row per point in grid order — the index, each setting, feasible, on the
 * front, the broken runs, then each metric's mean, min, max and its seeds' values (space-separated).
 */
export function pointsCsv(plan: SweepPlan, r: SweepResults): string {
  const keys = plan.sweep.grid.map((a) => a.key);
  const front = new Set(r.pareto);
  const header = [
    'point',
    ...keys,
    'feasible',
    'pareto',
    'broken',
    ...plan.metrics.flatMap((m) => [`${m} mean`, `${m} min`, `${m} max`, `${m} by seed`])
  ];
  const rows = r.points.map((p, i) => [
    String(i),
    ...keys.map((k) => cell(p.settings[k])),
    String(p.feasible),
    String(front.has(i)),
    p.broken.map((b) => `seed ${b.seed}: ${b.guarantee}`).join('; '),
    ...plan.metrics.flatMap((m) => {
      const s = p.metrics[m]!;
      return [String(s.mean), String(s.min), String(s.max), s.bySeed.join(' ')];
    })
  ]);
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\n') + '\n';
}

export function pointsJson(r: SweepResults): string {
  return JSON.stringify(r.points, null, 2) + '\n';
}

export function paretoJson(r: SweepResults): string {
  return JSON.stringify(r.pareto) + '\n';
}
