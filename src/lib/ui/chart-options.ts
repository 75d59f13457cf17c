/**
 * uPlot options for one live chart (Charts.svelte): two lanes per key on shared axes, elapsed
 * simulated time on x, and the run's marks drawn as vertical lines. Colours and the live values
 * (elapsed time, marks) are read through getters when uPlot draws, so a colour-scheme change or
 * new data needs no new chart.
 */
import type uPlot from 'uplot';
import type { LaneId } from '../machine/vocabulary';
import { ELAPSED_INCRS, valueTicks } from './chart-columns';
import { formatElapsed, type ChartSpec } from './chart-data';

// Charts.svelte takes the columns from here: they load together, with uPlot.
export { alignedColumns } from './chart-columns';

/** Canvas colours (from CSS custom properties, so they follow the colour scheme). */
export interface ChartTheme {
  a: string;
  b: string;
  text: string;
  grid: string;
}

/** A timeline mark at `x` ms since the start: a config change, or a fork (issue #10). */
export interface ChartMark {
  x: number;
  lane: LaneId;
  fork: boolean;
}

/** What the charts draw right now, read while drawing. */
export interface ChartLive {
  elapsed: number;
  marks: ChartMark[];
}

function marksPlugin(theme: ChartTheme, live: () => ChartLive, pxRatio: () => number) {
  return {
    hooks: {
      draw: (u: uPlot) => {
        const { ctx } = u;
        const { top, height, left, width } = u.bbox;
        const px = pxRatio();
        ctx.save();
        ctx.lineWidth = px;
        ctx.setLineDash([3 * px, 3 * px]);
        ctx.font = `600 ${9 * px}px system-ui, sans-serif`;
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        for (const m of live().marks) {
          const x = Math.round(u.valToPos(m.x, 'x', true));
          if (x < left - 0.5 || x > left + width + 0.5) continue;
          ctx.strokeStyle = ctx.fillStyle = m.lane === 'A' ? theme.a : theme.b;
          // A fork (issue #10): solid and wider — shared history left of it, divergence right.
          ctx.setLineDash(m.fork ? [] : [3 * px, 3 * px]);
          ctx.lineWidth = (m.fork ? 2 : 1) * px;
          ctx.beginPath();
          ctx.moveTo(x, top + 11 * px);
          ctx.lineTo(x, top + height);
          ctx.stroke();
          ctx.fillText(m.fork ? `fork ${m.lane}` : m.lane, x, top);
        }
        ctx.restore();
      }
    }
  } satisfies uPlot.Plugin;
}

/** The options of `spec`'s chart at `size`, its axis labels `px` CSS pixels high. */
export function chartOptions(
  spec: ChartSpec,
  size: { width: number; height: number },
  px: number,
  theme: ChartTheme,
  live: () => ChartLive,
  pxRatio: () => number
): uPlot.Options {
  const lanes = spec.keys.flatMap((_, i) =>
    (['A', 'B'] as const).map((lane) => ({
      label: `${lane} ${spec.keyLabels?.[i] ?? spec.title}`,
      stroke: () => (lane === 'A' ? theme.a : theme.b),
      width: i === 0 ? 1.75 : 1.5,
      dash: i === 0 ? undefined : [4, 3],
      points: { show: false }
    }))
  );
  const axis = {
    stroke: () => theme.text,
    font: `${px}px system-ui, sans-serif`,
    grid: { stroke: () => theme.grid, width: 1 },
    ticks: { stroke: () => theme.grid, width: 1, size: 3 }
  };
  return {
    ...size,
    padding: [10, 10, 0, 0],
    legend: { show: false },
    cursor: { show: false },
    series: [{}, ...lanes],
    scales: {
      x: {
        time: false,
        range: (_u, _min, max) => [0, Math.max(max, live().elapsed, 60_000)]
      },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] }
    },
    axes: [
      {
        ...axis,
        size: 2 * px,
        gap: 2,
        space: 4.4 * px,
        incrs: ELAPSED_INCRS,
        values: (_u, splits) => splits.map(formatElapsed)
      },
      {
        ...axis,
        // Wide enough for the longest tick label (system-ui: about 0.6 em a character).
        size: (_u, values) =>
          Math.max(
            2.2 * px,
            Math.ceil(
              Math.max(0, ...(values ?? []).map((v) => String(v).length)) * 0.6 * px + 0.9 * px
            )
          ),
        gap: 3,
        space: 2.2 * px,
        values: (_u, splits) => valueTicks(splits, spec.id === 'spend')
      }
    ],
    plugins: [marksPlugin(theme, live, pxRatio)]
  };
}
