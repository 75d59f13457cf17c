/**
 * A lane run alone (`lanes: ['A']`) gives exactly the bytes it gives beside the other lane: its
 * frames, its audit records, its counters, series and edges, and its guarantees. What a lane per
 * thread would rest on (issue #24: a run's speed is bounded by one core).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Simulation, type SimulationOptions } from './engine';
import { auditLineJson, frameLineJson } from '../report/report';
import { parseScenario, type Scenario } from '../input/scenario';
import { guardedSimulation } from '../checks/guard';
import { sdkFrameProblem } from '../checks/conformance';
import type { LaneId } from '../input/scenario';
import { parseTrace, type TraceEvent } from '../input/trace';
import fc from 'fast-check';
import { applyEdits, caseArb, edgeCaseArb } from '../input/fuzz-cases';

function parse(path: string): Scenario {
  const r = parseScenario(readFileSync(path, 'utf8'));
  if (!r.ok) throw new Error(`${path}: ${JSON.stringify(r.errors)}`);
  return r.scenario;
}

const MIN = 60_000;
/** Long enough for every lesson's story, short enough for CI (the big ones are cut). */
const AT_MOST = 20 * MIN;

const SCENARIOS = [
  ...readdirSync('static/scenarios')
    .filter((f) => f.endsWith('.json'))
    .map((f) => `static/scenarios/${f}`),
  'bench/ui-50-servers.json',
  'bench/retry-storm.json'
].map((path) => {
  const s = parse(path);
  return { path, scenario: { ...s, durationMs: Math.min(s.durationMs, AT_MOST) } };
});

/** One lane's lines and numbers from a run. */
interface LaneBytes {
  frames: string[];
  audit: string[];
  numbers: string;
}

/** What `lane` did in `sim`, and where its lines were collected. */
function laneNumbers(sim: Simulation, lane: LaneId): string {
  const l = sim.lanes[lane];
  return JSON.stringify({
    counters: l.metrics.counters,
    series: l.metrics.series,
    edges: l.metrics.edges,
    user: l.userStats,
    provider: l.providerStats,
    marks: sim.marks.filter((m) => m.lane === lane)
  });
}

/** Hooks sorting frames and audit lines by lane. */
function collect(): { opts: SimulationOptions; by: Record<LaneId, LaneBytes> } {
  const by: Record<LaneId, LaneBytes> = {
    A: { frames: [], audit: [], numbers: '' },
    B: { frames: [], audit: [], numbers: '' }
  };
  return {
    by,
    opts: {
      onFrame: (l) => void by[l.lane].frames.push(frameLineJson(l)),
      onAudit: (r) => void by[r.lane as LaneId].audit.push(auditLineJson(r))
    }
  };
}

/** The learner's session, the same in every run: edits in each lane, a restart, a slice cut short. */
function drive(sim: Simulation): void {
  const at = (m: number) => sim.start + Math.min(m * MIN, sim.scenario.durationMs);
  sim.advanceTo(at(4));
  const policy = structuredClone(sim.lanes.A.host.policy);
  policy.defaults.consent = 'deny';
  sim.setLanePolicy('A', policy);
  sim.advanceTo(at(8), 53);
  sim.advanceTo(at(8));
  sim.restartClient();
  sim.advanceTo(at(12));
  sim.setLaneConfig('B', { store: 'connection' }, 'lane B made connection-scoped');
  sim.runToEnd();
}

function run(
  scenario: Scenario,
  lanes?: LaneId[],
  driven: boolean | ((sim: Simulation) => void) = false,
  trace?: TraceEvent[]
): Record<LaneId, LaneBytes> {
  const { opts, by } = collect();
  const sim = new Simulation(scenario, {
    ...opts,
    ...(lanes ? { lanes } : {}),
    ...(trace ? { trace } : {})
  });
  if (typeof driven === 'function') driven(sim);
  else if (driven) drive(sim);
  sim.runToEnd();
  for (const id of ['A', 'B'] as const) by[id].numbers = laneNumbers(sim, id);
  return by;
}

/**
 * Run `scenario` with both lanes, then each lane alone, the same way (`driven`, `trace`): each
 * lane alone gives the bytes and numbers it gave beside the other, and the other lane's
 * population never ran. Returns the run with both.
 */
function sameAlone(
  scenario: Scenario,
  driven: boolean | ((sim: Simulation) => void) = false,
  trace?: TraceEvent[]
): Record<LaneId, LaneBytes> {
  const both = run(scenario, undefined, driven, trace);
  for (const lane of ['A', 'B'] as const) {
    const alone = run(scenario, [lane], driven, trace);
    expect(alone[lane].audit.length).toBe(both[lane].audit.length);
    expect(alone[lane].frames).toEqual(both[lane].frames);
    expect(alone[lane].audit).toEqual(both[lane].audit);
    expect(alone[lane].numbers).toBe(both[lane].numbers);
    const other = lane === 'A' ? 'B' : 'A';
    expect(alone[other].frames).toEqual([]);
    expect(alone[other].audit).toEqual([]);
  }
  return both;
}

describe('a lane run alone', () => {
  for (const { path, scenario } of SCENARIOS)
    it(`gives the bytes it gives beside the other: ${path}`, () => {
      const both = sameAlone(scenario);
      // Not trivially equal: the scenario's lanes did something.
      expect(both.A.frames.length + both.B.frames.length).toBeGreaterThan(0);
    });

  it('and under a learner’s edits, a restart and a slice cut short', () => {
    const { scenario } = SCENARIOS.find((s) => s.path.endsWith('ui-50-servers.json'))!;
    const both = sameAlone(scenario, true);
    // The edits changed what the lanes did: lane A denies by default from minute 4.
    expect(both.A.audit.join('\n')).not.toBe(both.B.audit.join('\n'));
  });

  it('and replaying a trace', () => {
    const trace = parseTrace(readFileSync('static/traces/reconnect-storm.jsonl', 'utf8'));
    if (!trace.ok) throw new Error(trace.error);
    const { scenario } = SCENARIOS.find((s) => s.path.endsWith('reconnect-bypass.json'))!;
    const both = sameAlone(scenario, false, trace.events);
    expect(both.A.audit.length).toBeGreaterThan(0);
  });

  it('in random scenarios with a learner’s edits, and in the edge cases new users broke', () => {
    const same = (data: unknown, edits: Parameters<typeof applyEdits>[2] = []) => {
      const parsed = parseScenario(data);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
      const scenario = parsed.scenario;
      sameAlone(scenario, (sim) => applyEdits(sim, scenario.durationMs, edits));
    };
    fc.assert(
      fc.property(caseArb, ({ scenario, edits }) => same(scenario, edits)),
      { numRuns: 25 }
    );
    fc.assert(
      fc.property(edgeCaseArb, ({ scenario, edits }) => same(scenario, edits)),
      { numRuns: 15 }
    );
  });

  it('keeps its guarantees, checked as the playground checks them', () => {
    const { scenario } = SCENARIOS.find((s) => s.path.endsWith('retry-storm.json'))!;
    for (const lane of ['A', 'B'] as const) {
      const { sim, guard } = guardedSimulation(
        scenario,
        { lanes: [lane] },
        { validate: sdkFrameProblem }
      );
      sim.runToEnd();
      const results = guard.results();
      expect(results.length).toBeGreaterThan(0);
      expect(results.filter((r) => r.status === 'broken').map((r) => r.id)).toEqual([]);
      expect(sim.lanes[lane].metrics.counters).toEqual(
        (() => {
          const both = new Simulation(scenario);
          both.runToEnd();
          return both.lanes[lane].metrics.counters;
        })()
      );
    }
  });
});
