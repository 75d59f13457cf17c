/**
 * Engine copies (clone.ts, issue #10): a copy taken at any position continues exactly as the run
 * it was taken from — frames, audit records, metrics and guarantees, byte for byte — and the two
 * never touch each other's state afterwards.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NotCloneable } from '../../machine/clone';
// One case runs on actors (which do not copy).
import '../../client/actor-executor';
import { copyEngine, Simulation, type SimulationOptions } from './engine';
import { RunGuard } from '../checks/guard';
import { auditLineJson, frameLineJson, metricsJson } from '../report/report';
import { parseScenario, type Scenario } from '../input/scenario';

const SCENARIOS = readdirSync('static/scenarios')
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.replace(/\.json$/, ''));

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

/** Hooks writing frames.jsonl and audit.jsonl lines, checked by a guard of their own. */
function capture(scenario: Scenario) {
  const frames: string[] = [];
  const audit: string[] = [];
  const guard = new RunGuard(scenario);
  const opts: SimulationOptions = guard.options({
    onFrame: (l) => void frames.push(frameLineJson(l)),
    onAudit: (r) => void audit.push(auditLineJson(r))
  });
  return { frames, audit, opts, guard };
}

/**
 * The learner's session on `sim`, stopping at each of `stops` (0 … 1 of the run) to call `at`:
 * slices cut mid-instant, a policy edit, a restart, a change of scope, single steps.
 */
function drive(sim: Simulation, at: (i: number) => void): void {
  const span = sim.end - sim.start;
  const to = (f: number) => sim.start + Math.round(span * f);
  sim.advanceTo(to(0.1) + 3);
  at(0);
  const policy = structuredClone(sim.lanes.A.host.policy);
  policy.defaults.consent = 'deny';
  sim.setLanePolicy('A', policy);
  sim.advanceTo(to(0.3), 137); // a slice cut mid-instant
  at(1);
  sim.restartClient();
  sim.advanceTo(to(0.45));
  at(2);
  sim.setLaneConfig('B', { store: 'connection' }, 'lane B made connection-scoped');
  sim.advanceTo(to(0.6) + 7);
  for (let i = 0; i < 40; i++) sim.step();
  at(3);
  sim.advanceTo(to(0.85));
  at(4);
  sim.runToEnd();
}

describe('engine copies', () => {
  it.each(SCENARIOS)(
    '%s: a copy at any position continues as the run it was taken from',
    (name) => {
      const scenario = load(name);
      const whole = capture(scenario);
      const u = new Simulation(scenario, whole.opts);
      whole.guard.attach(u);
      drive(u, () => {});

      const first = capture(scenario);
      const a = new Simulation(scenario, first.opts);
      first.guard.attach(a);
      drive(a, () => {
        const rest = capture(scenario);
        const before = { frames: first.frames.length, audit: first.audit.length };
        const b = copyEngine(a, rest.opts);
        rest.guard.attach(b);
        expect(b.position).toEqual(a.position);
        expect(metricsJson(b)).toBe(metricsJson(a));
        // The copy runs the rest of the original's session: the same actions at the same places.
        for (const x of u.actions.slice(a.actions.length)) {
          if (b.events < x.events) b.advanceTo(x.t, x.events - b.events);
          if (b.now < x.t) b.advanceTo(x.t);
          if (x.kind === 'policy') b.setLanePolicy(x.lane, x.policy);
          else if (x.kind === 'config') b.setLaneConfig(x.lane, x.client, x.what);
          else if (x.kind === 'restart') b.restartClient();
        }
        b.runToEnd();
        expect(first.frames.slice(0, before.frames).concat(rest.frames).join('\n')).toBe(
          whole.frames.join('\n')
        );
        expect(first.audit.slice(0, before.audit).concat(rest.audit).join('\n')).toBe(
          whole.audit.join('\n')
        );
        expect(metricsJson(b)).toBe(metricsJson(u));
      });
      // The original went on after each copy as if none had been made.
      expect(first.frames.join('\n')).toBe(whole.frames.join('\n'));
      expect(first.audit.join('\n')).toBe(whole.audit.join('\n'));
      expect(metricsJson(a, first.guard.results())).toBe(metricsJson(u, whole.guard.results()));
    },
    60_000
  );

  it('a copy of a copy continues too, and its guarantees are those of the run', () => {
    const scenario = load('reconnect-bypass');
    const whole = capture(scenario);
    const u = new Simulation(scenario, whole.opts);
    whole.guard.attach(u);
    u.runToEnd();

    const first = capture(scenario);
    const a = new Simulation(scenario, first.opts);
    first.guard.attach(a);
    a.advanceTo(a.start + 600_000, 5_000);
    const second = capture(scenario);
    // The guard's own state travels with the engine's: the copy's guard is copied from the first.
    const b = copyEngine(a, second.opts);
    second.guard.attach(b);
    b.advanceTo(b.start + 1_500_000);
    const third = capture(scenario);
    const c = copyEngine(b, third.opts);
    third.guard.attach(c);
    c.runToEnd();
    expect(metricsJson(c)).toBe(metricsJson(u));
    expect([...first.audit, ...second.audit, ...third.audit].join('\n')).toBe(
      whole.audit.join('\n')
    );
  });

  it('says so when a run cannot be copied (requests run as XState actors)', () => {
    const sim = new Simulation(load('tired-user'), { executor: 'actor' });
    sim.advanceTo(sim.start + 60_000);
    expect(() => copyEngine(sim)).toThrow(NotCloneable);
    expect(() => copyEngine(sim)).toThrow(/XState actors/);
  });
});
