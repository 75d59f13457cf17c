/**
 * The Sweep view's scatter, as numbers: where each point sits on two chosen metrics (their means
 * over the seeds), its error bars (the seeds' min to max), the axes' ticks, and the Pareto front
 * as a line through its points in x order. Pure, so it is tested without a browser.
 */
import { paretoFront, type PointResult } from '../../sim/sweep';

export interface Axis {
  metric: string;
  direction: 'min' | 'max';
}

export interface Extent {
  lo: number;
  hi: number;
}

/** "Nice" ticks (1, 2, 5 × 10^k) covering lo..hi, and the extent rounded out to them. */
export function ticks(lo: number, hi: number, count = 5): { extent: Extent; ticks: number[] } {
  if (!(hi > lo)) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const start = Math.floor(lo / step) * step;
  const end = Math.ceil(hi / step) * step;
  const out: number[] = [];
  for (let v = start; v <= end + step / 2; v += step) out.push(Number(v.toPrecision(12)));
  return { extent: { lo: start, hi: end }, ticks: out };
}

export interface Dot {
  index: number;
  x: number;
  y: number;
  /** The seeds' spread on each axis. */
  xs: Extent;
  ys: Extent;
  feasible: boolean;
  front: boolean;
}

export interface ScatterModel {
  dots: Dot[];
  x: { extent: Extent; ticks: number[] };
  y: { extent: Extent; ticks: number[] };
  /** Indices of the front on these two axes, in x order (the line drawn through them). */
  frontLine: number[];
}

/**
 * The scatter of `points` on two axes. The front drawn is the front on these two metrics (a
 * point on the sweep's front over more objectives may be dominated on two of them).
 */
export function scatterModel(points: readonly PointResult[], x: Axis, y: Axis): ScatterModel {
  const front = new Set(
    paretoFront(
      points.map((p) =>
        p.feasible ? [p.metrics[x.metric]!.mean, p.metrics[y.metric]!.mean] : null
      ),
      [x.direction, y.direction]
    )
  );
  const dots = points.map((p, index): Dot => {
    const mx = p.metrics[x.metric]!;
    const my = p.metrics[y.metric]!;
    return {
      index,
      x: mx.mean,
      y: my.mean,
      xs: { lo: mx.min, hi: mx.max },
      ys: { lo: my.min, hi: my.max },
      feasible: p.feasible,
      front: front.has(index)
    };
  });
  const xr = dots.flatMap((d) => [d.xs.lo, d.xs.hi]);
  const yr = dots.flatMap((d) => [d.ys.lo, d.ys.hi]);
  return {
    dots,
    x: ticks(Math.min(...xr), Math.max(...xr)),
    y: ticks(Math.min(...yr), Math.max(...yr)),
    frontLine: [...front].sort((a, b) => dots[a]!.x - dots[b]!.x || dots[a]!.y - dots[b]!.y)
  };
}

/** A metric's value as the page shows it: money in micro-units reads as dollars, counts as they are. */
export function formatMetric(metric: string, v: number): string {
  if (metric.endsWith('Micros')) return `$${(v / 1e6).toFixed(v % 1e4 === 0 ? 2 : 4)}`;
  return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(1);
}
