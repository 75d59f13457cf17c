/**
 * "Open as a lane": a sweep point as a playground link (`#s=`, share.ts) that runs it beside the
 * base scenario. When the grid touches one lane only, that lane keeps the point's settings and
 * the other lane becomes the base scenario's version of the same lane, so the two lanes differ
 * by exactly the point's settings; otherwise (both lanes, or neither: the population, the
 * user) the point's scenario opens as it is. The link carries the sweep's first seed, so the
 * playground's run is the point's first run.
 */
import { LANE_IDS, type LaneId } from '../../sim/input/scenario';
import type { SweepPlan } from '../../sim/sweep';
import { settingsText } from '../../sim/sweep/plan';
import { setPath } from '../../sim/sweep/path';
import { encodeScenarioHash } from '../share';

const LABEL_CHARS = 80;

function clip(s: string): string {
  return s.length <= LABEL_CHARS ? s : s.slice(0, LABEL_CHARS - 1) + '…';
}

type Raw = Record<string, unknown> & { lanes: Record<LaneId, Record<string, unknown>> };

/** Which lanes the grid's paths reach into. */
export function sweptLanes(plan: SweepPlan): LaneId[] {
  const lanes = new Set<LaneId>();
  for (const a of plan.sweep.grid) {
    const lane = LANE_IDS.find((id) => id === a.segments[1]);
    if (a.segments[0] === 'lanes' && lane) lanes.add(lane);
  }
  return [...lanes].sort();
}

/** The scenario the link opens for point `i` of `plan` over `base` (the base scenario's JSON). */
export function pointScenario(plan: SweepPlan, base: unknown, i: number): Raw {
  const raw = (typeof base === 'string' ? JSON.parse(base) : structuredClone(base)) as Raw;
  const point = structuredClone(raw);
  const settings = plan.points[i]!.settings;
  plan.sweep.grid.forEach((a, k) => setPath(point, a.segments, settings[k]![1]));
  point.seed = plan.seeds[0]!;
  const swept = sweptLanes(plan);
  const only = swept.length === 1 ? swept[0]! : null;
  if (only) {
    const other = only === 'A' ? 'B' : 'A';
    point.lanes[other] = {
      ...structuredClone(raw.lanes[only]),
      label: clip(`Base: ${String(raw.lanes[only].label)}`)
    };
    point.lanes[only].label = clip(`Sweep point ${i}: ${settingsText(settings)}`);
  }
  return point;
}

/** The playground's address for point `i`: `root` (the playground's path) + `#s=…`. */
export function pointLink(plan: SweepPlan, base: unknown, i: number, root: string): string {
  return root + encodeScenarioHash(pointScenario(plan, base, i));
}
