/**
 * What a sweep measures, named as lessons name it: `A.consentPrompts`, `B.spendMicros` (a lane
 * and one of the lesson metrics, lessons.ts), or `guarantee.<id>` — how many violations of one
 * guarantee a run had (0 when it held). Constraints compare one of these, aggregated over the
 * seeds, with a number: `A.abandoned <= 5`, `max(A.abandoned) <= 5`.
 */
import { INVARIANTS, type InvariantId } from '../checks/invariants';
import { METRIC_LABELS, type MetricKey } from '../input/lessons';
import { LANE_IDS, type LaneId } from '../input/scenario';

export const LANE_METRIC_KEYS = Object.keys(METRIC_LABELS) as MetricKey[];
export const GUARANTEE_IDS = Object.keys(INVARIANTS) as InvariantId[];

/** Every lane counter of both lanes, in a fixed order: what every point reports. */
export const LANE_METRICS: readonly string[] = LANE_IDS.flatMap((lane) =>
  LANE_METRIC_KEYS.map((k) => `${lane}.${k}`)
);

export type MetricRef =
  { kind: 'lane'; lane: LaneId; key: MetricKey } | { kind: 'guarantee'; id: InvariantId };

/** `A.<metric>`: a lane id (the scenario's own list), a dot, a metric key. */
const LANE_METRIC = new RegExp(`^(${LANE_IDS.join('|')})\\.([A-Za-z]+)$`);

/** A metric name, or one line saying what names there are. */
export function parseMetric(
  name: string
): { ok: true; ref: MetricRef } | { ok: false; error: string } {
  const lane = LANE_METRIC.exec(name);
  if (lane) {
    if ((LANE_METRIC_KEYS as string[]).includes(lane[2]!))
      return {
        ok: true,
        ref: { kind: 'lane', lane: lane[1] as LaneId, key: lane[2] as MetricKey }
      };
    return {
      ok: false,
      error: `${JSON.stringify(name)}: an unknown metric; known metrics: ${LANE_METRIC_KEYS.join(', ')}`
    };
  }
  const g = /^guarantee\.([a-z-]+)$/.exec(name);
  if (g) {
    if ((GUARANTEE_IDS as string[]).includes(g[1]!))
      return { ok: true, ref: { kind: 'guarantee', id: g[1] as InvariantId } };
    return {
      ok: false,
      error: `${JSON.stringify(name)}: an unknown guarantee; known: ${GUARANTEE_IDS.join(', ')}`
    };
  }
  return {
    ok: false,
    error: `${JSON.stringify(name)} is not a metric: write A.metric or B.metric (such as A.consentPrompts), or guarantee.ID (such as guarantee.one-consent)`
  };
}

export const OPERATORS = ['<=', '>=', '==', '<', '>'] as const;
export type Operator = (typeof OPERATORS)[number];
export const AGGREGATES = ['mean', 'min', 'max'] as const;
export type Aggregate = (typeof AGGREGATES)[number];

export interface Constraint {
  /** As written: the CSV and the messages quote it. */
  text: string;
  metric: string;
  /** Which of the seeds' values is compared: their mean unless the constraint says min( or max(. */
  aggregate: Aggregate;
  op: Operator;
  value: number;
}

const CONSTRAINT =
  /^\s*(?:(mean|min|max)\(\s*([^()\s]+)\s*\)|([^()\s<>=]+))\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;

/** `A.abandoned <= 5`, `max(A.abandoned) < 1`: a constraint, or one line saying what is wrong. */
export function parseConstraint(
  text: string
): { ok: true; constraint: Constraint } | { ok: false; error: string } {
  const m = CONSTRAINT.exec(text);
  if (!m)
    return {
      ok: false,
      error: `${JSON.stringify(text)} is not a constraint: write METRIC OP NUMBER, such as "A.abandoned <= 5" (OP one of <, <=, >, >=, ==; METRIC may be wrapped in mean(), min() or max(), mean by default)`
    };
  const metric = (m[2] ?? m[3])!;
  const r = parseMetric(metric);
  if (!r.ok) return r;
  return {
    ok: true,
    constraint: {
      text: text.trim(),
      metric,
      aggregate: (m[1] as Aggregate | undefined) ?? 'mean',
      op: m[4] as Operator,
      value: Number(m[5])
    }
  };
}

export function compare(a: number, op: Operator, b: number): boolean {
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '==':
      return a === b;
  }
}
