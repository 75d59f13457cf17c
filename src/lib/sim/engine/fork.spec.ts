import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Simulation, type FrameLine } from './engine';
import { parseFork, type ForkSpec } from './fork';
import { forkRun } from './fork-run';
import { frameLineJson } from '../report/report';
import { parseScenario, type LaneId, type Scenario } from '../input/scenario';

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

const MIN = 60_000;

function lines() {
  const frames: FrameLine[] = [];
  return {
    frames,
    onFrame: (l: FrameLine) => void frames.push(l),
    lane: (id: LaneId, keep: (l: FrameLine) => boolean = () => true) =>
      frames
        .filter((l) => l.lane === id && keep(l))
        .map(frameLineJson)
        .join('\n')
  };
}

describe('fork from t', () => {
  it('re-runs one lane from t; the other lane’s frames and numbers equal the unforked run', () => {
    const scenario = load('reconnect-bypass');
    const base = lines();
    const u = new Simulation(scenario, { onFrame: base.onFrame });
    u.runToEnd();

    const fork: ForkSpec = {
      version: 1,
      atMs: 20 * MIN,
      lane: 'A',
      change: { kind: 'config', client: { store: 'durable' }, what: 'lane A made durable' }
    };
    const forked = lines();
    const f = forkRun(scenario, { onFrame: forked.onFrame }, [], fork);
    expect(f.now).toBe(scenario.start + 20 * MIN);
    f.runToEnd();

    const at = scenario.start + fork.atMs;
    expect(forked.lane('B')).toBe(base.lane('B'));
    expect(f.lanes.B.metrics.counters).toEqual(u.lanes.B.metrics.counters);
    expect(f.lanes.B.metrics.series).toEqual(u.lanes.B.metrics.series);
    // Lane A: the shared history up to t, then its own.
    expect(forked.lane('A', (l) => l.t <= at)).toBe(base.lane('A', (l) => l.t <= at));
    expect(forked.lane('A', (l) => l.t > at)).not.toBe(base.lane('A', (l) => l.t > at));
    expect(f.lanes.A.metrics.counters.consentPrompts).toBeLessThan(
      u.lanes.A.metrics.counters.consentPrompts
    );
    expect(f.marks.filter((m) => m.kind === 'fork')).toEqual([
      { t: at, lane: 'A', what: 'forked: lane A made durable', kind: 'fork' }
    ]);
  });

  it('keeps the other lane’s history around the fork: its edits, and restarts', () => {
    const scenario = load('in-flight-duplicates');
    const base = lines();
    const u = new Simulation(scenario, { onFrame: base.onFrame });
    u.advanceTo(scenario.start + 5 * MIN);
    const policy = structuredClone(u.lanes.B.host.policy);
    policy.defaults.consent = 'allow';
    u.setLanePolicy('B', policy);
    u.advanceTo(scenario.start + 9 * MIN);
    u.restartClient();
    u.advanceTo(scenario.start + 12 * MIN);
    u.setLaneConfig('A', { store: 'connection' }, 'A: an edit the fork abandons');
    u.advanceTo(scenario.start + 16 * MIN);
    u.setLaneConfig('B', { store: 'connection' }, 'B: later history');
    u.runToEnd();

    const forked = lines();
    const pol = structuredClone(u.lanes.A.host.policy);
    pol.defaults.consent = 'deny';
    const f = forkRun(scenario, { onFrame: forked.onFrame }, u.actions, {
      version: 1,
      atMs: 10 * MIN,
      lane: 'A',
      change: { kind: 'policy', policy: pol }
    });
    f.runToEnd();
    expect(forked.lane('B')).toBe(base.lane('B'));
    expect(f.lanes.B.metrics.counters).toEqual(u.lanes.B.metrics.counters);
    expect(f.restarts).toHaveLength(1);
    expect(f.marks.map((m) => m.what)).not.toContain('A: an edit the fork abandons');
    expect(f.marks.map((m) => m.what)).toContain('B: later history');
    expect(f.lanes.A.metrics.counters.consentPrompts).not.toBe(
      u.lanes.A.metrics.counters.consentPrompts
    );
  });
});

describe('a fork as data', () => {
  const policy = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')).lanes.A
    .policy;

  it('parses from JSON text and round-trips', () => {
    const fork = { version: 1, atMs: 600_000, lane: 'B', change: { kind: 'policy', policy } };
    const r = parseFork(JSON.stringify(fork));
    expect(r.ok && r.fork).toEqual(fork);
  });

  it('names the path of every error', () => {
    const r = parseFork({
      version: 1,
      atMs: -5,
      lane: 'C',
      change: {
        kind: 'policy',
        policy: { ...policy, defaults: { ...policy.defaults, budget: { amount: 5 } } }
      }
    });
    expect(r.ok).toBe(false);
    const paths = !r.ok ? r.errors.map((e) => e.path) : [];
    expect(paths).toContain('$.atMs');
    expect(paths).toContain('$.lane');
    expect(paths.some((p) => p.startsWith('$.change.policy.defaults.budget'))).toBe(true);
    const bad = parseFork({
      version: 1,
      atMs: 0,
      lane: 'A',
      change: { kind: 'config', client: { store: 'disk' } }
    });
    expect(!bad.ok && bad.errors[0]!.path).toBe('$.change.client.store');
    expect(parseFork('{"version": 1,')).toMatchObject({ ok: false, errors: [{ path: '$' }] });
  });

  it('refuses a fork past the scenario’s end, in words', () => {
    const scenario = load('reconnect-bypass');
    const r = parseFork(
      { version: 1, atMs: 2 * 3_600_000, lane: 'A', change: { kind: 'config', client: {} } },
      scenario
    );
    expect(r).toEqual({
      ok: false,
      errors: [{ path: '$.atMs', message: 'the scenario ends at 1 h; a fork at 2 h is past it' }]
    });
  });
});
