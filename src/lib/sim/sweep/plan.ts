/**
 * A sweep made concrete: every point of the grid as a validated scenario, the seeds, the metrics
 * every point reports, and the work estimate of the whole sweep, refused past the same limits as
 * one run (limits.ts). Deterministic: the CLI, each worker thread and each page worker plan the
 * same sweep to the same points, so a worker is handed only (point, seed) indices.
 */
import { LIMITS, type WorkEstimate } from '../input/limits';
import { jsonInput } from '../input/json-input';
import { parseScenario, type Scenario, type ScenarioError } from '../input/scenario';
import type { Constraint } from './metrics';
import { LANE_METRICS } from './metrics';
import type { Sweep } from './file';
import { setPath } from './path';

export interface PlannedPoint {
  /** The grid's value at each key, in the grid's order. */
  settings: [key: string, value: unknown][];
  scenario: Scenario;
}

export interface SweepPlan {
  sweep: Sweep;
  points: PlannedPoint[];
  seeds: number[];
  /** Every metric a point reports: the lane counters, then objectives, constraints and extras. */
  metrics: string[];
  /** `--require` constraints, kept beside the file's own (they add metrics, not feasibility). */
  require: Constraint[];
  runs: number;
  /** The whole sweep: each point's estimate times the seeds. */
  work: WorkEstimate;
}

export type PlanResult = { ok: true; plan: SweepPlan } | { ok: false; errors: ScenarioError[] };

/** `lanes.A.client.store = "durable", …`: a point as its errors and the page's hover name it. */
export function settingsText(settings: readonly [string, unknown][]): string {
  return settings.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ');
}

/** Every combination of the grid's values, the first key varying slowest. */
export function gridPoints(sweep: Sweep): [string, unknown][][] {
  let out: [string, unknown][][] = [[]];
  for (const axis of sweep.grid) {
    const next: [string, unknown][][] = [];
    for (const prefix of out) for (const v of axis.values) next.push([...prefix, [axis.key, v]]);
    out = next;
  }
  return out;
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/**
 * The sweep over `base` (the scenario object or text the sweep names): each point a copy of it
 * with the grid's values set, validated as a scenario; an invalid one is an error naming the
 * point and where. `require`: the CLI's `--require` constraints (their metrics are reported too).
 */
export function planSweep(sweep: Sweep, base: unknown, require: Constraint[] = []): PlanResult {
  const json = jsonInput(base);
  if (!json.ok)
    return { ok: false, errors: json.errors.map((e) => ({ ...e, path: `scenario: ${e.path}` })) };
  const first = parseScenario(json.value);
  if (!first.ok)
    return {
      ok: false,
      errors: first.errors.map((e) => ({ path: `scenario: ${e.path}`, message: e.message }))
    };
  const raw = json.value;
  const seeds = Array.isArray(sweep.seeds)
    ? sweep.seeds
    : Array.from(
        { length: sweep.seeds.count },
        (_, i) => (first.scenario.seed + i) % 0x1_0000_0000
      );
  // A path that does not fit the scenario is the grid key's error, reported once.
  for (const axis of sweep.grid) {
    const problem = setPath(structuredClone(raw), axis.segments, axis.values[0]);
    if (problem)
      return {
        ok: false,
        errors: [{ path: `$.grid[${JSON.stringify(axis.key)}]`, message: problem }]
      };
  }
  const points: PlannedPoint[] = [];
  const work: WorkEstimate = { requests: 0, megabytes: 0, events: 0 };
  const grid = gridPoints(sweep);
  for (let i = 0; i < grid.length; i++) {
    const settings = grid[i]!;
    const copy = structuredClone(raw);
    sweep.grid.forEach((axis, k) => setPath(copy, axis.segments, settings[k]![1]));
    const r = parseScenario(copy);
    if (!r.ok) {
      const e = r.errors[0]!;
      const more = r.errors.length > 1 ? ` (and ${r.errors.length - 1} more)` : '';
      return {
        ok: false,
        errors: [
          {
            path: `point ${i} (${settingsText(settings)})`,
            message: `makes an invalid scenario: ${e.path}: ${e.message}${more}`
          }
        ]
      };
    }
    points.push({ settings, scenario: r.scenario });
    work.requests += r.work.requests * seeds.length;
    work.megabytes += r.work.megabytes * seeds.length;
    work.events += r.work.events * seeds.length;
  }
  const runs = points.length * seeds.length;
  if (
    work.requests > LIMITS.requests ||
    work.megabytes > LIMITS.megabytes ||
    work.events > LIMITS.events
  )
    return {
      ok: false,
      errors: [
        {
          path: '$',
          message:
            `this sweep would be about ${count(work.requests)} requests / ${count(work.megabytes)} MB / ${count(work.events)} clock events ` +
            `(${points.length} points × ${seeds.length} seeds); the limit is ${count(LIMITS.requests)} requests / ${count(LIMITS.megabytes)} MB / ${count(LIMITS.events)} events, as for one run ` +
            '(fewer values in the grid, fewer seeds, or a shorter scenario)'
        }
      ]
    };
  const metrics: string[] = [...LANE_METRICS];
  const add = (m: string) => {
    if (!metrics.includes(m)) metrics.push(m);
  };
  for (const o of sweep.objectives) add(o.metric);
  for (const c of [...sweep.constraints, ...require]) add(c.metric);
  for (const m of sweep.metrics) add(m);
  return { ok: true, plan: { sweep, points, seeds, metrics, require, runs, work } };
}
