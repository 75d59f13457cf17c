/**
 * Lesson files (static/lessons/*.json): a guided walk through one scenario — Predict, Run,
 * Explain, Try — for a presenter on a projector. A lesson is data: it names its scenario, the
 * chart and the numbers that matter, the question, an explanation written as a template whose
 * `{A.consentPrompts}`-style placeholders are filled from the run's own metrics (no number is ever
 * typed into the text), and one change to try as a JSON merge patch on the scenario.
 *
 * Validated in zod like the scenario file; every error names its JSON path.
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../../machine/names';
import { z } from 'zod';
import { fromMicros } from '../../machine/money';
import { formatPath } from '../../machine/policy';
import { SERIES_KEYS, type LaneCounters } from '../engine/metrics';
import { quote } from '../../machine/excerpt';
import { jsonInput } from './json-input';
import { matrixTemplateErrors } from '../report/refusal-matrix-text';
import type { LaneId, ScenarioError } from './scenario';

/** The numbers a lesson may show or quote: every lane counter, and `denied` (frames + silenced). */
const METRIC_KEYS = [
  'requests',
  'denied',
  'silenced',
  'consentPrompts',
  'consentSkipped',
  'unaskedSpendMicros',
  'providerCalls',
  'spendMicros',
  'serverSpendMicros',
  'fresh',
  'replays',
  'alerts',
  'alertedIdentities',
  'trimmed',
  'trimmedSilently',
  'tokensIn',
  'tokensOut',
  'tasks',
  'completed',
  'abandoned',
  'degradedAware',
  'retries',
  'hostRetries',
  'reconnects',
  'timeouts'
] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];

/** How each number reads on screen and in the Explain text. */
export const METRIC_LABELS: Record<MetricKey, string> = {
  requests: 'Requests',
  denied: 'Denials',
  silenced: 'Silenced (no frame)',
  consentPrompts: 'Consent prompts',
  consentSkipped: 'Allowed unasked (under askAbove)',
  unaskedSpendMicros: 'Spend no person saw',
  providerCalls: 'Provider calls',
  spendMicros: "Spend on the user's bill",
  serverSpendMicros: "Spend on the servers' own keys",
  fresh: 'Fresh evaluations',
  replays: 'Replayed decisions',
  alerts: 'Retry-loop alerts',
  alertedIdentities: 'Flagged retry loops',
  trimmed: 'Trimmed completions',
  trimmedSilently: 'Trimmed silently',
  tokensIn: 'Input tokens',
  tokensOut: 'Output tokens',
  tasks: 'Tasks started',
  completed: 'Tasks completed',
  abandoned: 'Tasks abandoned',
  degradedAware: 'Knew their answer was degraded',
  retries: 'Retries by servers',
  hostRetries: 'Tool calls retried by the host',
  reconnects: 'Reconnects',
  timeouts: 'Server timeouts'
};

const Metric = z.enum(METRIC_KEYS);
const LaneMetric = z
  .string()
  .regex(/^[AB]\.[A-Za-z]+$/, 'a lane and a metric, such as "A.consentPrompts"')
  .refine((s) => (METRIC_KEYS as readonly string[]).includes(s.slice(2)), {
    message: `an unknown metric; known metrics: ${METRIC_KEYS.join(', ')}`
  });

const PredictSchema = z.discriminatedUnion('kind', [
  /** Guess one lane's number. */
  z.strictObject({ kind: z.literal('number'), question: z.string().min(1), metric: LaneMetric }),
  /** Which lane ends with more of a metric (or the same). */
  z.strictObject({ kind: z.literal('lane'), question: z.string().min(1), metric: Metric })
]);

const TrySchema = z.strictObject({
  /** The button's text: "Make lane A durable". */
  label: z.string().min(1).max(80),
  /** An RFC 7396 merge patch on the scenario JSON. */
  patch: z.record(z.string(), z.unknown()),
  /** What to look for after the change, as a template. */
  explain: z.string().min(1)
});

export const LessonSchema = z
  .strictObject({
    version: z.literal(1),
    name: z.string().regex(/^[a-z0-9-]+$/, 'lower-case letters, digits and hyphens'),
    /** The scenario file (static/scenarios/<scenario>.json) the lesson runs. */
    scenario: z.string().regex(/^[a-z0-9-]+$/, 'lower-case letters, digits and hyphens'),
    /** Teaching order on the lessons page (lower first). */
    order: z.int().min(0),
    title: z.string().min(1).max(120),
    /** The one-line promise on the lessons page. */
    promise: z.string().min(1).max(200),
    /** How long the lesson takes in the room, in minutes. */
    minutes: z.int().min(1).max(60),
    /** Wall-clock seconds the Run step takes to play the whole scenario at its default pace. */
    runSeconds: z.number().min(2).max(120).default(30),
    predict: PredictSchema,
    /** The one chart the Run step draws: a series, both lanes. */
    chart: z.enum(SERIES_KEYS),
    /** The two or three numbers that matter, shown large for both lanes. */
    metrics: z.array(Metric).min(1).max(3),
    explain: z.string().min(1),
    /**
     * A ready-made sweep (static/sweeps/<sweep>.json) the Explain step runs in the page, and the
     * text it shows when done, whose placeholders quote the sweep's results (sweep/lesson.ts).
     * Both or neither; the name and the placeholders are checked against the sweep by
     * `parseLessonWithSweeps`, which knows the ready-made sweeps.
     */
    sweep: z
      .string()
      .regex(/^[a-z0-9-]+$/, 'lower-case letters, digits and hyphens')
      .optional(),
    sweepExplain: z.string().min(1).optional(),
    /**
     * "Same refusal, six codes" (issue #25): after the two-lane run, the Explain step runs the
     * lesson's scenario once per refusal style, lane `lane` refusing as each client does (as
     * `lab styles` does), shows the matrix and fills `explain` from it with `{STYLE.COLUMN}`
     * placeholders (refusal-matrix-text.ts).
     */
    matrix: z
      .strictObject({
        lane: z.enum(['A', 'B']),
        explain: z.string().min(1)
      })
      .optional(),
    try: TrySchema
  })
  .describe('A Sampling Policy Lab lesson.');

export type LessonData = z.output<typeof LessonSchema>;
export type LessonInput = z.input<typeof LessonSchema>;
export type Predict = LessonData['predict'];

export type LessonParse = { ok: true; lesson: LessonData } | { ok: false; errors: ScenarioError[] };

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The placeholders of a template that do not name a lane and a known metric. */
export function templateErrors(template: string): string[] {
  const bad: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const r = LaneMetric.safeParse(m[1]);
    if (!r.success) bad.push(`{${m[1]}}`);
  }
  return bad;
}

/** Validate a lesson (an object, or JSON text); every problem comes back with its JSON path. */
export function parseLesson(input: unknown): LessonParse {
  const json = jsonInput(input);
  if (!json.ok) return json;
  const raw = json.value;
  const r = LessonSchema.safeParse(raw);
  if (!r.success) {
    return {
      ok: false,
      errors: r.error.issues.map((i) => ({
        path: formatPath(i.path as (string | number)[]),
        message: i.message
      }))
    };
  }
  const errors: ScenarioError[] = [];
  const check = (path: (string | number)[], template: string) => {
    for (const p of templateErrors(template))
      errors.push({
        path: formatPath(path),
        message: `unknown placeholder ${quote(p)}: write {A.metric} or {B.metric} with one of ${METRIC_KEYS.join(', ')}`
      });
  };
  check(['explain'], r.data.explain);
  check(['try', 'explain'], r.data.try.explain);
  if (r.data.matrix)
    for (const e of matrixTemplateErrors(r.data.matrix.explain))
      errors.push({
        path: formatPath(['matrix', 'explain']),
        message: `unknown placeholder ${quote(e.placeholder)}: ${e.why}`
      });
  if ((r.data.sweep === undefined) !== (r.data.sweepExplain === undefined))
    errors.push(
      r.data.sweep === undefined
        ? { path: '$.sweepExplain', message: 'needs "sweep": the ready-made sweep it quotes' }
        : { path: '$.sweep', message: 'needs "sweepExplain": the text that quotes the sweep' }
    );
  return errors.length ? { ok: false, errors } : { ok: true, lesson: r.data };
}

/** One lane metric as a number. */
export function metricValue(c: LaneCounters, key: MetricKey): number {
  if (key === 'denied') return c.frames.denied + c.silenced;
  return c[key];
}

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** How a metric reads: money to four decimals as the CLI prints it ($0.2857), counts with commas. */
export function formatMetric(key: MetricKey, v: number): string {
  return key.endsWith('Micros') ? `$${fromMicros(v)}` : count.format(v);
}

/** Fill `{A.metric}` / `{B.metric}` from the lanes' counters. Unknown placeholders stay as written. */
export function fillTemplate(template: string, lanes: Record<LaneId, LaneCounters>): string {
  return template.replace(PLACEHOLDER, (whole, ref: string) => {
    if (!LaneMetric.safeParse(ref).success) return whole;
    const lane = ref[0] as LaneId;
    const key = ref.slice(2) as MetricKey;
    return formatMetric(key, metricValue(lanes[lane], key));
  });
}

/** What actually happened, in the Predict step's terms. */
export type Outcome = { kind: 'number'; value: number } | { kind: 'lane'; lane: LaneId | 'same' };

export function predictOutcome(p: Predict, lanes: Record<LaneId, LaneCounters>): Outcome {
  if (p.kind === 'number') {
    const lane = p.metric[0] as LaneId;
    return { kind: 'number', value: metricValue(lanes[lane], p.metric.slice(2) as MetricKey) };
  }
  const a = metricValue(lanes.A, p.metric);
  const b = metricValue(lanes.B, p.metric);
  return { kind: 'lane', lane: a === b ? 'same' : a > b ? 'A' : 'B' };
}

/** A learner's committed answer: a number, or a lane. */
export type Answer = number | LaneId | 'same';

/** The answer and the result side by side, in words. */
export function compareAnswer(p: Predict, answer: Answer | undefined, outcome: Outcome): string {
  if (outcome.kind === 'number') {
    const key = (p.kind === 'number' ? p.metric.slice(2) : p.metric) as MetricKey;
    const got = formatMetric(key, outcome.value);
    if (typeof answer !== 'number' || !Number.isFinite(answer)) return `This run: ${got}.`;
    const said = formatMetric(key, answer);
    if (answer === outcome.value) return `You said ${said}; this run: ${got}. Exactly right.`;
    const off = Math.abs(answer - outcome.value) / Math.max(1, outcome.value);
    const near = off <= 0.25 ? ' Close.' : '';
    return `You said ${said}; this run: ${got}.${near}`;
  }
  const word = (l: Answer) => (l === 'same' ? 'about the same' : `lane ${String(l)}`);
  if (answer === undefined || typeof answer === 'number') return `This run: ${word(outcome.lane)}.`;
  const right = answer === outcome.lane;
  return `You said ${word(answer)}; this run: ${word(outcome.lane)}.${right ? ' Right.' : ''}`;
}

/** RFC 7396 JSON merge patch: objects merge, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
