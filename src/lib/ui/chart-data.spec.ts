import { describe, expect, it } from 'vitest';
import { SERIES_KEYS, type LaneSeries, type SeriesKey } from '../sim/engine/metrics';
import {
  markSummary,
  CHARTS,
  chartDivergence,
  compactCount,
  divergence,
  formatElapsed,
  formatRatio,
  formatUsd
} from './chart-data';
import { alignedColumns, valueTicks } from './chart-columns';

const chart = (id: string) => {
  const spec = CHARTS.find((c) => c.id === id)!;
  return { ...spec, compare: spec.compare[0]! };
};

function series(t: number[], values: Partial<Record<SeriesKey, number[]>>): LaneSeries {
  const all = Object.fromEntries(
    SERIES_KEYS.map((k) => [k, values[k] ?? t.map(() => 0)])
  ) as Record<SeriesKey, number[]>;
  return { t, values: all };
}

describe('divergence', () => {
  it('names the lane that spent more and by how much', () => {
    expect(divergence(chart('spend'), 1_000_000, 14_000_000)).toBe('B spent 14× A');
    expect(divergence(chart('spend'), 2_000_000, 5_000_000)).toBe('B spent 2.5× A');
  });

  it('reads the other way round when A is ahead', () => {
    expect(divergence(chart('consent'), 36, 3)).toBe('A showed 12× the consent prompts of B');
    expect(divergence(chart('provider-calls'), 10, 4)).toBe('A made 2.5× the provider calls of B');
    expect(divergence(chart('fresh-replayed'), 7, 306)).toBe('B evaluated 44× as many afresh as A');
  });

  it('gives both values, zero first, when one lane is at zero', () => {
    expect(divergence(chart('consent'), 35, 0)).toBe('B: 0, A: 35');
    expect(divergence(chart('denials'), 0, 1200)).toBe('A: 0, B: 1,200');
    expect(divergence(chart('spend'), 0, 3_520_000)).toBe('A: $0, B: $3.52');
  });

  it('says so when nothing has happened in either lane', () => {
    expect(divergence(chart('spend'), 0, 0)).toBe('Nothing spent yet');
    expect(divergence(chart('alerts'), 0, 0)).toBe('No alerts yet');
  });

  it('calls lanes level when the ratio rounds to 1×', () => {
    expect(divergence(chart('denials'), 35, 35)).toBe('A and B level: 35 · 35');
    expect(divergence(chart('denials'), 100, 104)).toBe('A and B level: 100 · 104');
  });

  it('picks, on a chart of two measures, the one on which the lanes differ most', () => {
    const spec = CHARTS.find((c) => c.id === 'fresh-replayed')!;
    expect(
      chartDivergence(spec, [
        [3, 3],
        [20, 473]
      ])
    ).toBe('B replayed 24× as many as A');
    expect(
      chartDivergence(spec, [
        [7, 306],
        [20, 30]
      ])
    ).toBe('B evaluated 44× as many afresh as A');
    expect(
      chartDivergence(spec, [
        [35, 36],
        [0, 12]
      ])
    ).toBe('replayed A: 0, B: 12');
    expect(
      chartDivergence(spec, [
        [0, 0],
        [0, 0]
      ])
    ).toBe('No evaluations yet');
  });

  it('rounds large ratios to whole numbers with separators', () => {
    expect(formatRatio(1234.4)).toBe('1,234×');
    expect(formatRatio(9.96)).toBe('10×');
    expect(formatRatio(3)).toBe('3×');
  });
});

describe('formats', () => {
  it('shows spend in dollars', () => {
    expect(formatUsd(0)).toBe('$0');
    expect(formatUsd(4_000)).toBe('<$0.01');
    expect(formatUsd(3_520_000)).toBe('$3.52');
    expect(formatUsd(1_204_400_000)).toBe('$1,204');
  });

  it('keeps counts to four characters for edge labels', () => {
    expect(compactCount(0)).toBe('0');
    expect(compactCount(999)).toBe('999');
    expect(compactCount(1_250)).toBe('1.2k');
    expect(compactCount(12_900)).toBe('12k');
    expect(compactCount(3_400_000)).toBe('3.4M');
  });

  it('writes elapsed simulated time in minutes, hours and days', () => {
    expect(formatElapsed(0)).toBe('0');
    expect(formatElapsed(45 * 60_000)).toBe('45m');
    // Before: "NaNd".
    expect(formatElapsed(NaN)).toBe('–');
    expect(formatElapsed(2 * 3_600_000)).toBe('2h');
    expect(formatElapsed(90 * 60_000)).toBe('1h30');
    expect(formatElapsed(28 * 3_600_000)).toBe('1d 4h');
  });
});

describe('valueTicks', () => {
  it('gives dollars the decimals the tick spacing needs, the same on every tick', () => {
    expect(valueTicks([0, 0.0025, 0.005, 0.0075], true)).toEqual([
      '$0',
      '$0.0025',
      '$0.0050',
      '$0.0075'
    ]);
    expect(valueTicks([0, 0.5, 1, 1.5], true)).toEqual(['$0', '$0.5', '$1.0', '$1.5']);
    expect(valueTicks([0, 5, 10], true)).toEqual(['$0', '$5', '$10']);
    expect(valueTicks([0, 1000, 2000], true)).toEqual(['$0', '$1k', '$2k']);
  });

  it('labels only whole counts', () => {
    expect(valueTicks([0, 0.5, 1, 1.5, 2], false)).toEqual(['0', '', '1', '', '2']);
    expect(valueTicks([0, 5000, 10000], false)).toEqual(['0', '5k', '10k']);
  });
});

describe('alignedColumns', () => {
  it('puts elapsed time first, then lane A and lane B for each key', () => {
    const A = series([1000, 2000], { spendMicros: [0, 2_000_000], fresh: [1, 2] });
    const B = series([1000, 2000], { spendMicros: [1_000_000, 3_000_000], fresh: [3, 4] });
    expect(alignedColumns({ A, B }, ['spendMicros'], 1000, 1e-6)).toEqual([
      [0, 1000],
      [0, 2],
      [1, 3]
    ]);
    expect(alignedColumns({ A, B }, ['fresh'], 0)).toEqual([
      [1000, 2000],
      [1, 2],
      [3, 4]
    ]);
  });

  it('merges differing sample times, carrying each cumulative value forward', () => {
    const A = series([10, 30], { denied: [1, 3] });
    const B = series([20], { denied: [5] });
    expect(alignedColumns({ A, B }, ['denied'], 0)).toEqual([
      [10, 20, 30],
      [1, 1, 3],
      [0, 5, 5]
    ]);
  });
});

describe('markSummary', () => {
  it('counts edits per lane and a restart once per instant, by kind', () => {
    expect(markSummary([])).toBe('0 config changes');
    expect(
      markSummary([
        { t: 10, lane: 'A', what: 'store: durable' },
        { t: 20, lane: 'A', what: 'restart', kind: 'restart' },
        { t: 20, lane: 'B', what: 'restart', kind: 'restart' }
      ])
    ).toBe('1 config change · 1 restart');
    expect(
      markSummary([
        { t: 20, lane: 'A', what: 'restart', kind: 'restart' },
        { t: 20, lane: 'B', what: 'restart', kind: 'restart' },
        { t: 30, lane: 'A', what: 'restart', kind: 'restart' },
        { t: 30, lane: 'B', what: 'restart', kind: 'restart' },
        { t: 40, lane: 'B', what: 'fork', kind: 'fork' }
      ])
    ).toBe('2 restarts · 1 fork');
  });
});
