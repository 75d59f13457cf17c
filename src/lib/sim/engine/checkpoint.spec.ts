import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CheckpointRecorder, replayTo } from './checkpoint';
import { Simulation, type SimulationOptions } from './engine';
import { auditLineJson, frameLineJson, metricsJson } from '../report/report';
import { parseScenario, type Scenario } from '../input/scenario';

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

/** Hooks writing frames.jsonl and audit.jsonl lines, silent while `quiet.on`. */
function capture(quiet = { on: false }) {
  const frames: string[] = [];
  const audit: string[] = [];
  const opts: SimulationOptions = {
    onFrame: (l) => void (quiet.on || frames.push(frameLineJson(l))),
    onAudit: (r) => void (quiet.on || audit.push(auditLineJson(r)))
  };
  return { frames, audit, opts, quiet };
}

const MIN = 60_000;

/** The learner's session: advances (one cut by an event limit), a policy edit, a restart. */
function drive(sim: Simulation, until: 'middle' | 'end'): void {
  sim.advanceTo(sim.start + 10 * MIN);
  const policy = structuredClone(sim.lanes.A.host.policy);
  policy.defaults.consent = 'deny';
  sim.setLanePolicy('A', policy);
  sim.advanceTo(sim.start + 20 * MIN, 137); // a slice cut mid-instant
  sim.restartClient();
  sim.advanceTo(sim.start + 25 * MIN);
  sim.setLaneConfig('B', { store: 'connection' }, 'lane B made connection-scoped');
  sim.advanceTo(sim.start + 31 * MIN + 7);
  for (let i = 0; i < 40; i++) sim.step();
  if (until === 'end') sim.runToEnd();
}

describe('slices cut at their target instant', () => {
  it('a slice cut at the very instant it was going to, then continued, runs as one advance', () => {
    const scenario = load('tired-user'); // eight events at its first instant
    const whole = new Simulation(scenario);
    whole.advanceTo(whole.start + 7_200);
    const cut = new Simulation(scenario);
    expect(cut.advanceTo(cut.start + 7_200, 3)).toBe(3);
    expect(cut.now).toBe(cut.start);
    // To the start again: the events still due there run, as the cut slice would have run them.
    cut.advanceTo(cut.start);
    expect(cut.events).toBe(8);
    cut.advanceTo(cut.start + 7_200, 5);
    cut.advanceTo(cut.start + 7_200);
    expect(cut.position).toEqual(whole.position);
    expect(metricsJson(cut)).toBe(metricsJson(whole));
    // A run that was never cut there does not run ahead of its own instant.
    const fresh = new Simulation(scenario);
    fresh.advanceTo(fresh.start);
    expect(fresh.events).toBe(0);
  });
});

describe('restore by re-simulation', () => {
  it.each(['in-flight-duplicates', 'reconnect-bypass'])(
    '%s: restore + continue = the uninterrupted run, byte for byte',
    (name) => {
      const scenario = load(name);
      const whole = capture();
      const u = new Simulation(scenario, whole.opts);
      drive(u, 'end');

      const first = capture();
      const a = new Simulation(scenario, first.opts);
      drive(a, 'middle');
      const at = a.position;
      const rest = capture({ on: true });
      const b = replayTo(scenario, rest.opts, a.actions, at);
      rest.quiet.on = false;
      expect(b.position).toEqual(at);
      expect(b.actions).toEqual(a.actions);
      b.runToEnd();

      expect([...first.frames, ...rest.frames].join('\n')).toBe(whole.frames.join('\n'));
      expect([...first.audit, ...rest.audit].join('\n')).toBe(whole.audit.join('\n'));
      expect(whole.audit.length).toBeGreaterThan(100);
      // Series, edge counts, marks: everything metrics.json holds.
      expect(metricsJson(b)).toBe(metricsJson(u));
    }
  );

  it('a bare time restores what a run left alone shows at that time', () => {
    const scenario = load('reconnect-bypass');
    const t = scenario.start + 17 * MIN + 3;
    const straight = new Simulation(scenario);
    straight.advanceTo(t);
    const b = replayTo(scenario, {}, [], { t });
    expect(b.position).toEqual(straight.position);
    expect(metricsJson(b)).toBe(metricsJson(straight));
  });

  it('refuses a position the run never reached instead of showing something else', () => {
    const scenario = load('reconnect-bypass');
    expect(() => replayTo(scenario, {}, [], { t: scenario.start + MIN, events: 10 ** 9 })).toThrow(
      /re-simulation diverged/
    );
  });
});

describe('view checkpoints', () => {
  it('hold at every checkpoint the numbers of a run stopped there', () => {
    const scenario = load('in-flight-duplicates');
    const rec = new CheckpointRecorder(5 * MIN);
    const sim = rec.attach(new Simulation(scenario, rec.options()));
    sim.runToEnd();
    const cps = rec.checkpoints;
    expect(cps.length).toBeGreaterThan(5);
    expect(cps[0]!.t).toBe(scenario.start);
    for (let i = 1; i < cps.length; i++)
      expect(cps[i]!.t - cps[i - 1]!.t).toBeGreaterThanOrEqual(5 * MIN);
    for (const cp of [cps[1]!, cps[Math.floor(cps.length / 2)]!, cps.at(-1)!]) {
      let audit = 0;
      let frames = 0;
      const stopped = new Simulation(scenario, {
        onAudit: () => void audit++,
        onFrame: () => void frames++
      });
      stopped.advanceTo(cp.t);
      expect(stopped.position).toEqual({ t: cp.t, events: cp.events });
      for (const id of ['A', 'B'] as const) {
        expect(cp.lanes[id].counters).toEqual(stopped.lanes[id].metrics.counters);
        expect(cp.lanes[id].edges).toEqual(stopped.lanes[id].metrics.edges);
        expect(cp.lanes[id].storedDecisions).toBe(stopped.lanes[id].host.store.count());
      }
      expect(cp.auditRows).toBe(audit);
      expect(cp.frames).toBe(frames);
      expect(cp.samples).toBe(stopped.lanes.A.metrics.series.t.length);
    }
  });

  it('are found by time, and dropped past a point a new branch starts from', () => {
    const scenario = load('reconnect-bypass');
    const rec = new CheckpointRecorder();
    const sim = rec.attach(new Simulation(scenario, rec.options()));
    sim.advanceTo(scenario.start + 30 * MIN);
    const mid = scenario.start + 12 * MIN + 1;
    const found = rec.at(mid)!;
    expect(found.t).toBeLessThanOrEqual(mid);
    expect(rec.checkpoints.find((c) => c.t > found.t)!.t).toBeGreaterThan(mid);
    expect(rec.at(scenario.start - 1)).toBeNull();
    rec.truncateAfter(mid);
    expect(rec.checkpoints.at(-1)).toBe(found);
  });
});
