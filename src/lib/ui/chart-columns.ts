/**
 * What uPlot is given for a chart (Charts.svelte, chart-options.ts): its columns, the elapsed
 * axis's tick spacings, the value axis's labels. Loaded with uPlot, when the run first moves, not
 * with the page (issue #24).
 */
import type { LaneSeries, SeriesKey } from '../sim/engine/metrics';
import { compactCount } from './chart-data';

const MIN = 60_000;
/** Tick spacings for the elapsed-time axis, so ticks fall on whole minutes and hours. */
export const ELAPSED_INCRS = [
  MIN,
  2 * MIN,
  5 * MIN,
  10 * MIN,
  15 * MIN,
  30 * MIN,
  60 * MIN,
  2 * 60 * MIN,
  3 * 60 * MIN,
  6 * 60 * MIN,
  12 * 60 * MIN,
  24 * 60 * MIN,
  48 * 60 * MIN,
  7 * 24 * 60 * MIN
];

/**
 * The columns uPlot draws for a chart: elapsed ms since `start`, then per key lane A and lane B.
 * The lanes are sampled on one clock, but should their sample times ever differ, they are merged
 * and each cumulative series carries its last value forward.
 */
export function alignedColumns(
  series: { A: LaneSeries; B: LaneSeries },
  keys: readonly SeriesKey[],
  start: number,
  scale = 1
): number[][] {
  const { A, B } = series;
  const same = A.t.length === B.t.length && A.t.every((t, i) => t === B.t[i]);
  const t = same ? A.t : [...new Set([...A.t, ...B.t])].sort((x, y) => x - y);
  const at = (s: LaneSeries, key: SeriesKey) => {
    if (same) return s.values[key].map((v) => v * scale);
    const out: number[] = [];
    let j = -1;
    for (const ti of t) {
      while (j + 1 < s.t.length && s.t[j + 1]! <= ti) j++;
      out.push(j < 0 ? 0 : s.values[key][j]! * scale);
    }
    return out;
  };
  const cols = [t.map((ti) => ti - start)];
  for (const k of keys) cols.push(at(A, k), at(B, k));
  return cols;
}

/**
 * Tick labels for a chart's value axis. Dollars get as many decimals as the tick spacing needs,
 * the same on every tick ($0.0025, $0.0050); counts are whole, so fractional ticks go unlabelled.
 */
export function valueTicks(splits: readonly number[], usd: boolean): string[] {
  if (!usd) return splits.map((v) => (Number.isInteger(v) ? compactCount(v) : ''));
  if (splits.some((v) => v >= 1000)) return splits.map((v) => `$${compactCount(Math.round(v))}`);
  let d = 0;
  while (d < 6 && !splits.every((v) => Math.abs(Number(v.toFixed(d)) - v) < 1e-9)) d++;
  return splits.map((v) => (v === 0 ? '$0' : `$${v.toFixed(d)}`));
}
