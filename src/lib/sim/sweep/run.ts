/**
 * One run of a sweep: a point's scenario on one seed, to the end, under the invariants — what
 * `lab run` does (cli/run.ts: a RunGuard with the MCP SDK's frame schemas), keeping only the
 * numbers the sweep reports and the guarantees. Plain data out, so a worker can post it.
 */
import { sdkFrameProblem } from '../checks/conformance';
import { RunGuard } from '../checks/guard';
import {
  brokenLine,
  type FrameValidator,
  type GuaranteeStatus,
  type InvariantId
} from '../checks/invariants';
import { metricValue } from '../input/lessons';
import type { Scenario } from '../input/scenario';
import { parseMetric } from './metrics';

export interface SeedRun {
  /** The plan's metrics, in its order. */
  values: number[];
  guarantees: { id: InvariantId; status: GuaranteeStatus; violations: number }[];
  /** The first broken guarantee as `lab run` prints it, or null. */
  broken: string | null;
}

/** `validate`: how frames are checked, the MCP SDK's schemas unless a test says otherwise. */
export function runOnce(
  scenario: Scenario,
  seed: number,
  metrics: readonly string[],
  validate: FrameValidator = sdkFrameProblem
): SeedRun {
  const guard = new RunGuard(scenario, { validate });
  const sim = guard.simulate(scenario, { seed });
  sim.advanceTo(sim.end);
  const results = guard.results();
  const values = metrics.map((name) => {
    const m = parseMetric(name);
    if (!m.ok) throw new Error(m.error); // planned metrics were parsed when the file was read
    const ref = m.ref;
    if (ref.kind === 'lane') return metricValue(sim.lanes[ref.lane].metrics.counters, ref.key);
    return results.find((g) => g.id === ref.id)?.violations ?? 0;
  });
  return {
    values,
    guarantees: results.map((g) => ({ id: g.id, status: g.status, violations: g.violations })),
    broken: brokenLine(results)
  };
}
