/**
 * The charts' samples for a long run, kept to a bounded number of points (issue #19). The worker
 * thins each snapshot's series before it goes to the page: the most recent half of the points at
 * full resolution, the older ones merged pairwise as often as needed (a stride that doubles, so an
 * old point stays put as the run grows). The series are cumulative, so a merged pair is its later
 * sample: every point drawn is an exact value at its time, only fewer of them are drawn. The
 * numbers beside the charts come from the lanes' counters, never from these points.
 */
import type { LaneSeries, SeriesKey } from '../sim/engine/metrics';

/** Points per lane the page is sent at most (`?chartPoints=N` for tests). */
export const MAX_CHART_POINTS = 2_000;

export interface ThinnedSeries {
  series: LaneSeries;
  /** Samples merged into one point before `fullFrom` (1: none). */
  stride: number;
  /** Virtual time from which every sample is drawn. */
  fullFrom: number;
}

/** `s` with at most about `max` points (see the module comment); as it is when it has fewer. */
export function thinSeries(s: LaneSeries, max = MAX_CHART_POINTS): ThinnedSeries {
  const n = s.t.length;
  if (n <= max || max < 4) return { series: s, stride: 1, fullFrom: s.t[0] ?? 0 };
  const recent = Math.floor(max / 2);
  const cut = n - recent;
  let stride = 2;
  while (Math.ceil(cut / stride) + 1 > max - recent) stride *= 2;
  const keep: number[] = [0];
  for (let i = stride - 1; i < cut; i += stride) if (i > 0) keep.push(i);
  for (let i = cut; i < n; i++) keep.push(i);
  const values = {} as Record<SeriesKey, number[]>;
  for (const k of Object.keys(s.values) as SeriesKey[]) {
    const v = s.values[k];
    values[k] = keep.map((i) => v[i]!);
  }
  return { series: { t: keep.map((i) => s.t[i]!), values }, stride, fullFrom: s.t[cut]! };
}
