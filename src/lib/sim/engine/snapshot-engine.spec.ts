/**
 * Engine snapshots (snapshot-engine.ts, issue #21): a run saved at any point as a plain value,
 * copied as IndexedDB copies it (structuredClone) or as v8.serialize does, and restored, goes on
 * exactly as the run left alone — frames, audit records, metrics and guarantees, byte for byte.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
// One case runs on actors (which are not saved).
import '../../client/actor-executor';
import { RunGuard } from '../checks/guard';
import { auditLineJson, frameLineJson, metricsJson } from '../report/report';
import { parseScenario, type Scenario } from '../input/scenario';
import type { Simulation, SimulationOptions } from './engine';
import { restoreEngine, snapshotEngine, type EngineSnapshot } from './snapshot-engine';
import { CLASS, SnapshotError } from './snapshot';
import { copyableClasses } from '../../machine/clone';

/** The class names a snapshot's records carry. */
function classNames(root: unknown): Set<string> {
  const out = new Set<string>();
  const seen = new Set<object>();
  const work: unknown[] = [root];
  while (work.length) {
    const v = work.pop();
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (v instanceof Map) for (const [k, e] of v) work.push(k, e);
    else if (v instanceof Set || Array.isArray(v)) work.push(...v);
    else {
      const r = v as Record<string, unknown>;
      if (typeof r[CLASS] === 'string') out.add(r[CLASS]);
      work.push(...Object.values(r));
    }
  }
  return out;
}

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

/** Hooks writing frames.jsonl and audit.jsonl lines. */
function capture() {
  const frames: string[] = [];
  const audit: string[] = [];
  const opts: SimulationOptions = {
    onFrame: (l) => void frames.push(frameLineJson(l)),
    onAudit: (r) => void audit.push(auditLineJson(r))
  };
  return { frames, audit, opts };
}

function run(scenario: Scenario, seed: number) {
  const c = capture();
  const guard = new RunGuard(scenario);
  const sim = guard.simulate(scenario, { ...c.opts, seed });
  return { ...c, guard, sim };
}

const SCENARIOS = ['reconnect-bypass', 'tired-user', 'prompt-mutator', 'in-flight-duplicates'];
const via = {
  structuredClone: (s: EngineSnapshot) => structuredClone(s),
  'v8.serialize': (s: EngineSnapshot) => deserialize(serialize(s)) as EngineSnapshot
};

describe('engine snapshots', () => {
  it.each(SCENARIOS.flatMap((name) => [1, 2].map((k) => [name, k] as const)))(
    '%s (seed %i): saved at three points, restored, continued = the run left alone',
    (name, k) => {
      const scenario = load(name);
      const seed = k === 1 ? scenario.seed : scenario.seed + 7919;
      const whole = run(scenario, seed);
      whole.sim.runToEnd();
      const span = scenario.durationMs;
      for (const [i, f] of [0.2, 0.5, 0.8].entries()) {
        const first = run(scenario, seed);
        // One point is a slice cut mid-instant (events still due at its time).
        if (i === 1) first.sim.advanceTo(scenario.start + Math.round(span * f), 2_000);
        else first.sim.advanceTo(scenario.start + Math.round(span * f));
        const at = first.sim.position;
        const copy = (k === 1 ? via.structuredClone : via['v8.serialize'])(
          snapshotEngine(first.sim, first.guard)
        );
        expect(copy.meta.at).toEqual(at);
        const rest = capture();
        const back = restoreEngine(copy, scenario, rest.opts);
        const b: Simulation = back.sim;
        expect(b.position).toEqual(at);
        expect(metricsJson(b)).toBe(metricsJson(first.sim));
        b.runToEnd();
        expect([...first.frames, ...rest.frames].join('\n')).toBe(whole.frames.join('\n'));
        expect([...first.audit, ...rest.audit].join('\n')).toBe(whole.audit.join('\n'));
        expect(metricsJson(b, back.guard.results())).toBe(
          metricsJson(whole.sim, whole.guard.results())
        );
        // The original is untouched by its snapshot: it goes on as the run left alone too.
        first.sim.runToEnd();
        expect(first.frames.join('\n')).toBe(whole.frames.join('\n'));
      }
    },
    120_000
  );

  it.each(readdirSync('static/scenarios').map((f) => f.replace(/\.json$/, '')))(
    '%s: every class in a snapshot is named by its copy rules; restored, the run goes on the same',
    (name) => {
      const scenario = load(name);
      const whole = run(scenario, scenario.seed);
      whole.sim.runToEnd();
      const first = run(scenario, scenario.seed);
      first.sim.advanceTo(scenario.start + Math.round(scenario.durationMs * 0.4), 1_000);
      const snap = structuredClone(snapshotEngine(first.sim, first.guard));
      const named = classNames(snap.root);
      expect(named.size).toBeGreaterThan(10);
      for (const n of named) expect(copyableClasses().has(n), n).toBe(true);
      const rest = capture();
      const back = restoreEngine(snap, scenario, rest.opts);
      back.sim.runToEnd();
      expect([...first.audit, ...rest.audit].join('\n')).toBe(whole.audit.join('\n'));
      expect(metricsJson(back.sim, back.guard.results())).toBe(
        metricsJson(whole.sim, whole.guard.results())
      );
    },
    60_000
  );

  it('a run on XState actors (the actor executor) is not saved, and the error says why', () => {
    const scenario = load('tired-user');
    const guard = new RunGuard(scenario);
    const sim = guard.simulate(scenario, { executor: 'actor' });
    for (const t of [0, 60_000]) {
      sim.advanceTo(sim.start + t);
      expect(() => snapshotEngine(sim, guard)).toThrow(SnapshotError);
      expect(() => snapshotEngine(sim, guard)).toThrow(/XState actors/);
    }
  });

  it('a snapshot restored twice gives two independent runs', () => {
    const scenario = load('reconnect-bypass');
    const first = run(scenario, scenario.seed);
    first.sim.advanceTo(scenario.start + 900_000);
    const snap = structuredClone(snapshotEngine(first.sim, first.guard));
    const a = restoreEngine(snap, scenario, {});
    const b = restoreEngine(snap, scenario, {});
    a.sim.runToEnd();
    expect(b.sim.position).toEqual(first.sim.position);
    b.sim.runToEnd();
    expect(metricsJson(b.sim)).toBe(metricsJson(a.sim));
  });
});
