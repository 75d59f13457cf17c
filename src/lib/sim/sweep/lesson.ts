/**
 * A lesson whose Explain reads from a sweep (issue #23): the lesson names a ready-made sweep and
 * its `sweepExplain` text quotes the sweep's results with placeholders in the same braces as the
 * run's own `{A.consentPrompts}`:
 *
 * - `{A.consentPrompts @ store=durable}` — the mean over every seed of the points where the grid
 *   key `store` (its last segment, or the whole key as written) is `"durable"`; several keys are
 *   separated by commas, and with no `@` every point counts;
 * - `{max(A.consentPrompts) @ store=connection}` — the least or greatest value of any one run
 *   (`min(…)`, `max(…)`, `mean(…)`: the aggregates a constraint uses);
 * - `{sweep.points}`, `{sweep.seeds}`, `{sweep.runs}`, `{sweep.front}` — the grid's size, the
 *   seeds, the runs and how many points are on the Pareto front.
 *
 * A value is JSON (`rateLimit=null`, `requests=5`), a bare word taken as a string, or `#N`: the
 * key's Nth value as the grid lists it (an object, which braces cannot hold: `rateLimit=#3`).
 * No number is typed into the text: the page fills it from running the sweep. Kept out of
 * lessons.ts because the sweep's metric names (metrics.ts) are built from the lessons' own.
 */
import { quote as excerpt } from '../../machine/excerpt';
import { formatMetric, parseLesson, type LessonParse, type MetricKey } from '../input/lessons';
import type { ScenarioError } from '../input/scenario';
import type { Sweep } from './file';
import { parseMetric, type Aggregate } from './metrics';
import { gridPoints } from './plan';
import type { SweepResults } from './results';

const PLACEHOLDER = /\{([^{}]*)\}/g;
const COUNTS = ['points', 'seeds', 'runs', 'front'] as const;
type Count = (typeof COUNTS)[number];

export type SweepQuote =
  | { kind: 'count'; what: Count }
  | { kind: 'metric'; metric: string; aggregate: Aggregate; points: number[] };

const METRIC_QUOTE = /^\s*(?:(mean|min|max)\(\s*([^()\s]+)\s*\)|([^()\s@]+))\s*(?:@(.*))?$/;

/** The metrics every point of `sweep` reports (plan.ts): lane counters, and guarantees it names. */
function reports(sweep: Sweep, metric: string): boolean {
  const m = parseMetric(metric);
  if (!m.ok) return false;
  if (m.ref.kind === 'lane') return true;
  return (
    sweep.objectives.some((o) => o.metric === metric) ||
    sweep.constraints.some((c) => c.metric === metric) ||
    sweep.metrics.includes(metric)
  );
}

/** The grid axis a `where` key names: the key as written, or its last segment when unique. */
function axisFor(sweep: Sweep, key: string): number | string {
  const exact = sweep.grid.findIndex((a) => a.key === key);
  if (exact >= 0) return exact;
  const byLast = sweep.grid.flatMap((a, i) => (a.segments.at(-1) === key ? [i] : []));
  if (byLast.length === 1) return byLast[0]!;
  const keys = sweep.grid.map((a) => a.key).join(', ');
  return byLast.length > 1
    ? `${JSON.stringify(key)} names more than one grid key; write one of ${keys}`
    : `the sweep has no grid key ${JSON.stringify(key)}; its keys: ${keys}`;
}

/** One placeholder's text (between the braces) against `sweep`: what it quotes, or one line. */
export function parseSweepQuote(
  text: string,
  sweep: Sweep
): { ok: true; quote: SweepQuote } | { ok: false; error: string } {
  const count = /^\s*sweep\.([a-z]+)\s*$/.exec(text);
  if (count) {
    if ((COUNTS as readonly string[]).includes(count[1]!))
      return { ok: true, quote: { kind: 'count', what: count[1] as Count } };
    return {
      ok: false,
      error: `sweep.${count[1]} is not a count: write ${COUNTS.map((c) => `sweep.${c}`).join(', ')}`
    };
  }
  const m = METRIC_QUOTE.exec(text);
  if (!m)
    return {
      ok: false,
      error:
        'not a sweep quote: write METRIC or min(METRIC)/max(METRIC), then "@ key=value, …" to pick points (such as "A.consentPrompts @ store=durable"), or sweep.points, sweep.seeds, sweep.runs, sweep.front'
    };
  const metric = (m[2] ?? m[3])!;
  const parsed = parseMetric(metric);
  if (!parsed.ok) return parsed;
  if (!reports(sweep, metric))
    return {
      ok: false,
      error: `the sweep does not report ${metric}: name it in the sweep's "metrics"`
    };
  const want: [axis: number, value: string][] = [];
  for (const part of m[4]?.split(',') ?? []) {
    const eq = part.indexOf('=');
    if (eq < 0) return { ok: false, error: `${JSON.stringify(part.trim())} is not key=value` };
    const axis = axisFor(sweep, part.slice(0, eq).trim());
    if (typeof axis === 'string') return { ok: false, error: axis };
    const raw = part.slice(eq + 1).trim();
    const a = sweep.grid[axis]!;
    let value: unknown = raw;
    const nth = /^#(\d+)$/.exec(raw);
    if (nth) {
      // An object value cannot be written inside braces: `#3` is the axis's third value.
      const n = Number(nth[1]);
      if (n < 1 || n > a.values.length)
        return {
          ok: false,
          error: `${a.key} has ${a.values.length} values: #${n} is not one (write #1 to #${a.values.length})`
        };
      value = a.values[n - 1];
    } else {
      try {
        value = JSON.parse(raw);
      } catch {
        // A bare word: the string it spells, as `store=durable`.
      }
    }
    const json = JSON.stringify(value);
    if (!a.values.some((v) => JSON.stringify(v) === json))
      return {
        ok: false,
        error: `the sweep has no point with ${a.key} = ${json}; its values: ${a.values.map((v) => JSON.stringify(v)).join(', ')}`
      };
    want.push([axis, json]);
  }
  const points = gridPoints(sweep).flatMap((settings, i) =>
    want.every(([axis, json]) => JSON.stringify(settings[axis]![1]) === json) ? [i] : []
  );
  if (points.length === 0)
    return { ok: false, error: 'no point of the sweep has all of these settings' };
  return {
    ok: true,
    quote: {
      kind: 'metric',
      metric,
      aggregate: (m[1] as Aggregate | undefined) ?? 'mean',
      points
    }
  };
}

/** The placeholders of `template` that `sweep` cannot fill, each as an error at `path`. */
export function sweepTemplateErrors(template: string, sweep: Sweep, path: string): ScenarioError[] {
  const out: ScenarioError[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const q = parseSweepQuote(m[1]!, sweep);
    if (!q.ok) out.push({ path, message: `placeholder ${excerpt(m[0])}: ${q.error}` });
  }
  return out;
}

/**
 * A lesson file checked against the ready-made sweeps (by name): everything `parseLesson` checks,
 * then that its `sweep` exists and every placeholder of `sweepExplain` names a metric the sweep
 * reports and settings it has.
 */
export function parseLessonWithSweeps(input: unknown, sweeps: Record<string, Sweep>): LessonParse {
  const r = parseLesson(input);
  if (!r.ok || r.lesson.sweep === undefined) return r;
  const sweep = sweeps[r.lesson.sweep];
  if (!sweep)
    return {
      ok: false,
      errors: [
        {
          path: '$.sweep',
          message: `no ready-made sweep ${JSON.stringify(r.lesson.sweep)} in static/sweeps/; there are: ${Object.keys(sweeps).join(', ')}`
        }
      ]
    };
  const errors = sweepTemplateErrors(r.lesson.sweepExplain ?? '', sweep, '$.sweepExplain');
  return errors.length ? { ok: false, errors } : r;
}

const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** A quoted number: money as the CLI prints it, a mean over runs to one decimal. */
function formatQuote(metric: string, v: number): string {
  const m = parseMetric(metric);
  if (m.ok && m.ref.kind === 'lane' && m.ref.key.endsWith('Micros'))
    return formatMetric(m.ref.key as MetricKey, Math.round(v));
  return decimal.format(v);
}

function aggregate(values: number[], how: Aggregate): number {
  if (how === 'min') return Math.min(...values);
  if (how === 'max') return Math.max(...values);
  return values.reduce((s, v) => s + v, 0) / values.length;
}

/** Fill `sweepExplain` from a finished sweep's results; a placeholder it cannot fill stays. */
export function fillSweepTemplate(
  template: string,
  sweep: Sweep,
  seeds: number,
  results: SweepResults
): string {
  return template.replace(PLACEHOLDER, (whole, text: string) => {
    const q = parseSweepQuote(text, sweep);
    if (!q.ok) return whole;
    const quote = q.quote;
    if (quote.kind === 'count') {
      const n = {
        points: results.points.length,
        seeds,
        runs: results.points.length * seeds,
        front: results.pareto.length
      }[quote.what];
      return decimal.format(n);
    }
    const values = quote.points.flatMap((i) => results.points[i]!.metrics[quote.metric]!.bySeed);
    return formatQuote(quote.metric, aggregate(values, quote.aggregate));
  });
}
