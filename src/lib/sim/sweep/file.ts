/**
 * The sweep file (README "Sweeps"): a base scenario, a grid of dotted paths into it with the
 * values each takes, seeds, objectives and constraints. Validated in zod like every input; every
 * error names its JSON path in the file. The scenario it names is read by the caller (the CLI from
 * disk, the page by fetch) and handed to `planSweep` (plan.ts).
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import { nameRecord } from '../../machine/names';
import { z } from 'zod';
import { formatPath, type PathSegment } from '../../machine/policy';
import { jsonInput } from '../input/json-input';
import type { ScenarioError } from '../input/scenario';
import { parseConstraint, parseMetric, type Constraint } from './metrics';
import { parsePath } from './path';

/** Bounds on a sweep, beside the work estimate (plan.ts) that bounds what its runs would do. */
export const SWEEP_LIMITS = {
  /** Grid keys: each is an axis; more than a few is no longer a grid anyone reads. */
  keys: 10,
  /** Values per key. */
  values: 1_000,
  /** Points (the product of the value counts). */
  points: 10_000,
  seeds: 1_000,
  /** Runs (points × seeds). */
  runs: 100_000,
  objectives: 10,
  constraints: 50,
  metrics: 100
} as const;

const Seed = z.int().min(0).max(0xffffffff);

const SweepSchema = z
  .strictObject({
    version: z.literal(1),
    name: z.string().min(1).max(200).optional(),
    title: z.string().min(1).max(200).optional(),
    description: z.string().max(20_000).optional(),
    /** A path (relative to the sweep file, then the working directory) or an inline scenario. */
    scenario: z.union([
      z.string().min(1).max(1_000),
      z.record(z.string(), z.unknown()).describe('an inline scenario')
    ]),
    grid: nameRecord(z.string(), z.array(z.unknown()).min(1).max(SWEEP_LIMITS.values)),
    /** A list of seeds, or a count: the scenario's own seed and the ones after it. */
    seeds: z.union([
      z.array(Seed).min(1).max(SWEEP_LIMITS.seeds),
      z.int().min(1).max(SWEEP_LIMITS.seeds)
    ]),
    objectives: nameRecord(z.string(), z.enum(['min', 'max'])),
    constraints: z.array(z.string().max(200)).max(SWEEP_LIMITS.constraints).default([]),
    /** More metrics to report, such as `guarantee.one-consent` (every lane counter always is). */
    metrics: z.array(z.string().max(200)).max(SWEEP_LIMITS.metrics).default([])
  })
  .describe('A Sampling Policy Lab sweep.');

export interface GridAxis {
  /** The key as written: `lanes.A.client.reasons["user.denied"].ttl`. */
  key: string;
  segments: PathSegment[];
  values: unknown[];
}

export interface Objective {
  metric: string;
  direction: 'min' | 'max';
}

export interface Sweep {
  name?: string;
  title?: string;
  description?: string;
  /** A path to resolve, or the scenario itself. */
  scenario: string | Record<string, unknown>;
  grid: GridAxis[];
  /** The seeds as listed, or a count to take from the scenario's own seed. */
  seeds: number[] | { count: number };
  objectives: Objective[];
  constraints: Constraint[];
  /** Extra metrics named in `metrics`. */
  metrics: string[];
}

export type SweepParse = { ok: true; sweep: Sweep } | { ok: false; errors: ScenarioError[] };

const at = (...s: PathSegment[]) => formatPath(s);

/** Validate a sweep file (an object, or JSON text); every problem comes back with its path. */
export function parseSweep(input: unknown): SweepParse {
  const json = jsonInput(input);
  if (!json.ok) return json;
  const raw = json.value;
  const r = SweepSchema.safeParse(raw);
  if (!r.success) {
    return {
      ok: false,
      errors: r.error.issues.map((i) => ({
        path: formatPath(i.path as PathSegment[]),
        message: i.message
      }))
    };
  }
  const d = r.data;
  const errors: ScenarioError[] = [];
  const grid: GridAxis[] = [];
  const keys = Object.keys(d.grid);
  if (keys.length === 0)
    errors.push({ path: at('grid'), message: 'names no path: give at least one' });
  if (keys.length > SWEEP_LIMITS.keys)
    errors.push({
      path: at('grid'),
      message: `${keys.length} paths; the limit is ${SWEEP_LIMITS.keys}`
    });
  for (const key of keys) {
    // An integer-like member name is moved first by every JSON object, so the grid's order (the
    // first key varies slowest) would not be the order written.
    if (/^\d+$/.test(key)) {
      errors.push({ path: at('grid', key), message: 'a path cannot be a bare number' });
      continue;
    }
    const p = parsePath(key);
    if (!p.ok) {
      errors.push({ path: at('grid', key), message: `not a path: ${p.error}` });
      continue;
    }
    grid.push({ key, segments: p.segments, values: d.grid[key]! });
  }
  const points = grid.reduce((n, a) => n * a.values.length, 1);
  if (points > SWEEP_LIMITS.points)
    errors.push({
      path: at('grid'),
      message: `${points.toLocaleString('en-US')} points (the values' counts multiplied); the limit is ${SWEEP_LIMITS.points.toLocaleString('en-US')}`
    });
  if (Array.isArray(d.seeds)) {
    const seen = new Set<number>();
    d.seeds.forEach((s, i) => {
      if (seen.has(s)) errors.push({ path: at('seeds', i), message: `seed ${s} is listed twice` });
      seen.add(s);
    });
  }
  const seedCount = Array.isArray(d.seeds) ? d.seeds.length : d.seeds;
  if (points * seedCount > SWEEP_LIMITS.runs)
    errors.push({
      path: at('seeds'),
      message: `${points.toLocaleString('en-US')} points × ${seedCount} seeds is ${(points * seedCount).toLocaleString('en-US')} runs; the limit is ${SWEEP_LIMITS.runs.toLocaleString('en-US')}`
    });
  const objectives: Objective[] = [];
  const names = Object.keys(d.objectives);
  if (names.length === 0)
    errors.push({
      path: at('objectives'),
      message: 'names no metric: give at least one, such as {"A.consentPrompts": "min"}'
    });
  if (names.length > SWEEP_LIMITS.objectives)
    errors.push({
      path: at('objectives'),
      message: `${names.length} objectives; the limit is ${SWEEP_LIMITS.objectives}`
    });
  for (const metric of names) {
    const m = parseMetric(metric);
    if (!m.ok) errors.push({ path: at('objectives', metric), message: m.error });
    else objectives.push({ metric, direction: d.objectives[metric]! });
  }
  const constraints: Constraint[] = [];
  d.constraints.forEach((text, i) => {
    const c = parseConstraint(text);
    if (!c.ok) errors.push({ path: at('constraints', i), message: c.error });
    else constraints.push(c.constraint);
  });
  d.metrics.forEach((name, i) => {
    const m = parseMetric(name);
    if (!m.ok) errors.push({ path: at('metrics', i), message: m.error });
  });
  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    sweep: {
      ...(d.name !== undefined ? { name: d.name } : {}),
      ...(d.title !== undefined ? { title: d.title } : {}),
      ...(d.description !== undefined ? { description: d.description } : {}),
      scenario: d.scenario,
      grid,
      seeds: Array.isArray(d.seeds) ? d.seeds : { count: d.seeds },
      objectives,
      constraints,
      metrics: d.metrics
    }
  };
}
