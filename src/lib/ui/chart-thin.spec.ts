import { describe, expect, it } from 'vitest';
import { SERIES_KEYS, type LaneSeries, type SeriesKey } from '../sim/engine/metrics';
import { thinSeries } from './chart-thin';

/** A cumulative series of `n` samples every `step` ms: requests grow by i each sample. */
function series(n: number, step = 1000): LaneSeries {
  const t = Array.from({ length: n }, (_, i) => i * step);
  const values = {} as Record<SeriesKey, number[]>;
  let sum = 0;
  const requests = t.map((_, i) => (sum += i));
  for (const k of SERIES_KEYS) values[k] = k === 'requests' ? requests : t.map(() => 0);
  return { t, values };
}

describe('thinSeries: a long run charts a bounded number of exact points', () => {
  it('a series within the cap is sent as it is', () => {
    const s = series(50);
    expect(thinSeries(s, 100)).toEqual({ series: s, stride: 1, fullFrom: 0 });
  });

  it('past the cap: the newest half at full resolution, older samples merged pairwise', () => {
    const s = series(1000);
    const { series: out, stride, fullFrom } = thinSeries(s, 100);
    expect(out.t.length).toBeLessThanOrEqual(100);
    // The last 50 samples, every one.
    expect(out.t.slice(-50)).toEqual(s.t.slice(-50));
    expect(fullFrom).toBe(s.t[950]);
    // Older: the start, then one every `stride` samples (a power of two), each the later sample
    // of its group — the exact cumulative value at its time.
    expect(Math.log2(stride) % 1).toBe(0);
    expect(out.t[0]).toBe(0);
    const old = out.t.slice(1, -50);
    for (const t of old) expect((t / 1000 + 1) % stride).toBe(0);
    out.t.forEach((t, i) => expect(out.values.requests[i]).toBe(s.values.requests[t / 1000]));
    expect(out.values.requests.at(-1)).toBe(s.values.requests.at(-1));
  });

  it('an old point stays where it was as the run grows (strides only double)', () => {
    const a = thinSeries(series(1000), 100);
    const b = thinSeries(series(1400), 100);
    expect(b.stride).toBeGreaterThanOrEqual(a.stride);
    // Every older point drawn later was drawn before (only merged further, never moved).
    for (const t of b.series.t.filter((x) => x < a.fullFrom))
      expect(a.series.t.includes(t) || (t / 1000 + 1) % a.stride === 0).toBe(true);
    expect(b.series.t[0]).toBe(0);
  });
});
