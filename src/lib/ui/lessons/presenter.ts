/**
 * The presenter's side of a lesson, as plain data: the four steps and their order, what each key
 * does, the type-size steps, the Run step's pace and the one chart a lesson draws. No Svelte and
 * no DOM here, so all of it is unit-tested.
 */
import type { SeriesKey } from '$lib/sim/engine/metrics';
import { CHARTS, formatCount, formatUsd, type ChartSpec } from '../chart-data';

export const STEPS = ['predict', 'run', 'explain', 'try'] as const;
export type Step = (typeof STEPS)[number];

export const STEP_LABELS: Record<Step, string> = {
  predict: 'Predict',
  run: 'Run',
  explain: 'Explain',
  try: 'Try'
};

export function isStep(s: string): s is Step {
  return (STEPS as readonly string[]).includes(s);
}

/** The step before or after `step`, or null at either end. */
export function neighbour(step: Step, dir: 1 | -1): Step | null {
  return STEPS[STEPS.indexOf(step) + dir] ?? null;
}

export type PresenterAction =
  'next' | 'prev' | 'toggle' | 'fullscreen' | 'bigger' | 'smaller' | 'blank' | 'list';

export interface KeyInput {
  key: string;
  /** The key went to a text field, a select or an editor: it is typing, not a command. */
  editing: boolean;
  /** Ctrl, Meta or Alt was held: leave browser shortcuts alone. */
  modified: boolean;
}

/**
 * What a key does on a lesson page. Space only plays and pauses where nothing else claims it
 * (a focused button or radio uses Space to press or pick).
 */
export function keyAction(k: KeyInput, spaceFree: boolean): PresenterAction | null {
  if (k.modified) return null;
  if (k.key === 'Escape') return 'list';
  if (k.editing) return null;
  switch (k.key) {
    case 'ArrowRight':
      return 'next';
    case 'ArrowLeft':
      return 'prev';
    case ' ':
      return spaceFree ? 'toggle' : null;
    case 'f':
    case 'F':
      return 'fullscreen';
    case '+':
    case '=':
      return 'bigger';
    case '-':
    case '_':
      return 'smaller';
    case 'b':
    case 'B':
      return 'blank';
    default:
      return null;
  }
}

/** Type sizes `+` and `-` step through (a multiple of the projector layout's base size). */
export const SCALES = [0.75, 0.875, 1, 1.125, 1.25, 1.5, 1.75] as const;

export function nextScale(scale: number, dir: 1 | -1): number {
  const i = SCALES.findIndex((s) => s >= scale);
  const at = i < 0 ? SCALES.length - 1 : i;
  return SCALES[Math.min(SCALES.length - 1, Math.max(0, at + dir))]!;
}

/** Simulated ms per wall ms so the whole scenario plays in `runSeconds`. */
export function paceSpeed(durationMs: number, runSeconds: number): number {
  return Math.max(1, Math.round(durationMs / (runSeconds * 1000)));
}

const TITLES: Partial<Record<SeriesKey, string>> = {
  requests: 'Requests',
  abandoned: 'Abandoned tasks',
  silenced: 'Silenced (no frame)',
  trimmedSilently: 'Trimmed silently',
  fresh: 'Fresh evaluations',
  replays: 'Replayed decisions',
  retries: 'Retries by servers',
  hostRetries: 'Tool calls retried by the host'
};

/** The one chart of a lesson: the playground's own chart for that series where there is one. */
export function lessonChart(key: SeriesKey): ChartSpec {
  const own = CHARTS.find((c) => c.keys.length === 1 && c.keys[0] === key);
  if (own) return own;
  const title = TITLES[key] ?? key;
  const money = key === 'spendMicros';
  return {
    id: key,
    title,
    keys: [key],
    format: money ? formatUsd : formatCount,
    ...(money ? { scale: 1e-6 } : {}),
    compare: [(hi, r, lo) => `${hi} ${r} ${lo} (${title.toLowerCase()})`],
    none: `No ${title.toLowerCase()} yet`
  };
}
