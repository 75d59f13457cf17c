/**
 * The run `bench:profile` and `bench:guard` both time: `hours` of a scenario file, unguarded or
 * guarded (the invariants as the playground checks them, with the SDK frame validator), counting
 * the requests it receives. One place, so the two benches time the same run.
 */
import { readFileSync } from 'node:fs';
import { sdkFrameProblem } from '../src/lib/sim/checks/conformance';
import { guardedSimulation } from '../src/lib/sim/checks/guard';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario, type LaneId, type Scenario } from '../src/lib/sim/input/scenario';

export function scenarioRun(
  file: string,
  hours: number,
  opts: {
    guarded: boolean;
    servers?: (s: Scenario['servers']) => Scenario['servers'];
    /** The lanes whose population runs (default both: the engine's `lanes`). */
    lanes?: LaneId[];
  }
): { sim: Simulation; requests: () => number } {
  const parsed = parseScenario(readFileSync(file, 'utf8'));
  if (!parsed.ok)
    throw new Error(`${file}: ${parsed.errors[0]?.path}: ${parsed.errors[0]?.message}`);
  const s: Scenario = {
    ...parsed.scenario,
    durationMs: hours * 3_600_000,
    servers: opts.servers ? opts.servers(parsed.scenario.servers) : parsed.scenario.servers
  };
  let requests = 0;
  const hooks = {
    onFrame: (l: { direction: string }) => {
      if (l.direction === 'in') requests++;
    },
    ...(opts.lanes ? { lanes: opts.lanes } : {})
  };
  const sim = opts.guarded
    ? guardedSimulation(s, hooks, { validate: sdkFrameProblem }).sim
    : new Simulation(s, hooks);
  return { sim, requests: () => requests };
}
