/**
 * What the live charts show, as plain data: which series each chart plots, how its values read,
 * the sentence that says how far the two lanes have diverged, the elapsed time (the columns uPlot
 * draws are chart-columns.ts). Pure, so the numbers on screen are unit-tested.
 */
import type { TimelineMark } from '../sim/engine/engine';
import type { LaneId } from '../machine/vocabulary';
import type { LaneSeries, SeriesKey } from '../sim/engine/metrics';

export interface ChartSpec {
  id: string;
  title: string;
  /** Plotted series: the first carries the divergence; a second is drawn dashed. */
  keys: readonly [SeriesKey] | readonly [SeriesKey, SeriesKey];
  /** Labels of the keys in the numbers line when a chart has two ("fresh", "replayed"). */
  keyLabels?: readonly [string, string];
  /** Formats a raw series value (spend is in micro-dollars). */
  format: (v: number) => string;
  /** Scale applied before plotting (micro-dollars → dollars). */
  scale?: number;
  /** How the larger lane compares with the smaller, per key: `(hi, '14×', lo)`. */
  compare: readonly Compare[];
  /** What to say while both lanes are at zero. */
  none: string;
}

export type Compare = (hi: LaneId, ratio: string, lo: LaneId) => string;

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A count with thousands separators: 12,345. */
export function formatCount(n: number): string {
  return count.format(n);
}

/** Micro-dollars as dollars: $0, <$0.01, $3.52, $1,204. */
export function formatUsd(micros: number): string {
  const d = micros / 1e6;
  if (d === 0) return '$0';
  if (Math.abs(d) < 0.01) return '<$0.01';
  if (Math.abs(d) >= 1000) return `$${count.format(d)}`;
  return `$${d.toFixed(2)}`;
}

/** A count in at most four characters, for tight labels: 999, 1.2k, 12k, 1.2M. */
export function compactCount(n: number): string {
  const a = Math.abs(n);
  const short = (v: number, unit: string) =>
    `${v < 10 ? (Math.floor(v * 10) / 10).toString() : Math.floor(v).toString()}${unit}`;
  if (a < 1000) return String(n);
  if (a < 1e6) return short(n / 1e3, 'k');
  return short(n / 1e6, 'M');
}

export const CHARTS: readonly ChartSpec[] = [
  {
    id: 'spend',
    title: 'Spend',
    keys: ['spendMicros'],
    format: formatUsd,
    scale: 1e-6,
    compare: [(hi, r, lo) => `${hi} spent ${r} ${lo}`],
    none: 'Nothing spent yet'
  },
  {
    id: 'provider-calls',
    title: 'Provider calls',
    keys: ['providerCalls'],
    format: formatCount,
    compare: [(hi, r, lo) => `${hi} made ${r} the provider calls of ${lo}`],
    none: 'No provider calls yet'
  },
  {
    id: 'consent',
    title: 'Consent prompts',
    keys: ['consentPrompts'],
    format: formatCount,
    compare: [(hi, r, lo) => `${hi} showed ${r} the consent prompts of ${lo}`],
    none: 'No consent prompts yet'
  },
  {
    id: 'fresh-replayed',
    title: 'Fresh vs replayed',
    keys: ['fresh', 'replays'],
    keyLabels: ['fresh', 'replayed'],
    format: formatCount,
    compare: [
      (hi, r, lo) => `${hi} evaluated ${r} as many afresh as ${lo}`,
      (hi, r, lo) => `${hi} replayed ${r} as many as ${lo}`
    ],
    none: 'No evaluations yet'
  },
  {
    id: 'denials',
    title: 'Denials',
    keys: ['denied'],
    format: formatCount,
    compare: [(hi, r, lo) => `${hi} denied ${r} as often as ${lo}`],
    none: 'No denials yet'
  },
  {
    id: 'retries',
    title: 'Who retried',
    keys: ['retries', 'hostRetries'],
    keyLabels: ['servers', 'the host'],
    format: formatCount,
    compare: [
      (hi, r, lo) => `${hi}'s servers retried ${r} as often as ${lo}'s`,
      (hi, r, lo) => `${hi}'s host called tools again ${r} as often as ${lo}'s`
    ],
    none: 'No retries yet'
  },
  {
    id: 'alerts',
    // Every presentation that tripped the alert; the lanes table counts the requests flagged.
    title: 'Retry-loop alerts (presentations)',
    keys: ['alerts'],
    format: formatCount,
    compare: [(hi, r, lo) => `${hi} raised ${r} the alerts of ${lo}`],
    none: 'No alerts yet'
  }
];

/** A ratio as people say it: 14×, 2.5×, 1,200×. */
export function formatRatio(r: number): string {
  if (r >= 10) return `${count.format(Math.round(r))}×`;
  return `${(Math.round(r * 10) / 10).toString()}×`;
}

/**
 * How far lane B has diverged from lane A on one measure, as a sentence with a number:
 * "B spent 14× A", "A showed 12× the consent prompts of B"; with a lane at zero no ratio exists,
 * so both values are given, the zero first ("B: 0, A: 35"). `prefix` names the measure in that
 * case, for charts of two measures ("replayed B: 0, A: 35").
 */
export function divergence(
  words: { compare: Compare; format: (v: number) => string; none: string },
  a: number,
  b: number,
  prefix = ''
): string {
  if (a === 0 && b === 0) return words.none;
  if (a === 0 || b === 0) {
    const [zero, other, v] = a === 0 ? (['A', 'B', b] as const) : (['B', 'A', a] as const);
    return `${prefix}${zero}: ${words.format(0)}, ${other}: ${words.format(v)}`;
  }
  const [hi, lo, r] = b >= a ? (['B', 'A', b / a] as const) : (['A', 'B', a / b] as const);
  const ratio = formatRatio(r);
  if (ratio === '1×') return `${prefix}A and B level: ${words.format(a)} · ${words.format(b)}`;
  return words.compare(hi, ratio, lo);
}

/** How far apart two values are, for picking a chart's most telling measure: one at zero is furthest. */
function spread(a: number, b: number): number {
  if (a === b) return 1;
  if (a === 0 || b === 0) return Infinity;
  return Math.max(a / b, b / a);
}

/**
 * A chart's divergence sentence from the lanes' latest values, one pair per key: for a chart of
 * two measures, the one on which the lanes differ most.
 */
export function chartDivergence(
  spec: ChartSpec,
  values: readonly (readonly [number, number])[]
): string {
  let pick = 0;
  values.forEach(([a, b], i) => {
    const [pa, pb] = values[pick]!;
    if (spread(a, b) > spread(pa, pb)) pick = i;
  });
  const [a, b] = values[pick]!;
  const prefix = pick > 0 && spec.keyLabels ? `${spec.keyLabels[pick]} ` : '';
  return divergence(
    { compare: spec.compare[pick] ?? spec.compare[0]!, format: spec.format, none: spec.none },
    a,
    b,
    prefix
  );
}

/** The last value of a series, 0 when it has none. */
export function latest(series: LaneSeries, key: SeriesKey): number {
  const v = series.values[key];
  return v[v.length - 1] ?? 0;
}

/** Elapsed simulated time on the axis: 0, 45m, 2h, 1h30, 1d 4h ("–" for a time that is not one). */
export function formatElapsed(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  const m = Math.round(ms / 60_000);
  if (m === 0) return '0';
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  const mm = m % 60;
  if (h < 24) return mm ? `${h}h${String(mm).padStart(2, '0')}` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/**
 * The legend's count of timeline marks, by kind: "2 config changes · 1 restart". A restart (or an
 * extension) is one moment marked on both lanes, so it is counted once per instant, not per lane;
 * calling it a config change would tell a learner something changed that did not.
 */
export function markSummary(marks: readonly TimelineMark[]): string {
  const changes = marks.filter((m) => m.kind === undefined).length;
  const instants = (kind: NonNullable<TimelineMark['kind']>) =>
    new Set(marks.filter((m) => m.kind === kind).map((m) => m.t)).size;
  const parts: string[] = [];
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  if (changes || !marks.length) parts.push(plural(changes, 'config change', 'config changes'));
  const restarts = instants('restart');
  if (restarts) parts.push(plural(restarts, 'restart', 'restarts'));
  const forks = instants('fork');
  if (forks) parts.push(plural(forks, 'fork', 'forks'));
  const extensions = instants('extend');
  if (extensions) parts.push(plural(extensions, 'extension', 'extensions'));
  return parts.join(' · ');
}
