import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Simulation } from './engine';
import { guardedSimulation } from '../checks/guard';
import { restartNotice } from './restart';
import { parseScenario, type Scenario } from '../input/scenario';

function load(name: string, patch: (d: Record<string, unknown>) => void = () => {}): Scenario {
  const data = JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
  patch(data);
  const r = parseScenario(data);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

const HOUR = 3_600_000;

describe('a client restart', () => {
  it('drops the connection-scoped lane’s decisions, keeps the durable lane’s, and says so', () => {
    const scenario = load('restart-client', (d) => delete d.restarts);
    const sim = new Simulation(scenario);
    sim.advanceTo(sim.start + 16 * HOUR);
    const before = {
      A: sim.lanes.A.host.store.count() as number,
      B: sim.lanes.B.host.store.count() as number
    };
    expect(before.A).toBe(2);
    expect(before.B).toBe(2);
    const connections = [...sim.lanes.A.servers.values()].map((s) => s.connection);
    const r = sim.restartClient();
    expect(r.t).toBe(sim.start + 16 * HOUR);
    expect(r.lanes.A).toMatchObject({ scope: 'connection', before: 2, kept: 0, lost: 2 });
    expect(r.lanes.B).toMatchObject({ scope: 'durable', before: 2, kept: 2, lost: 0 });
    expect(r.lanes.A.reconnected).toBe(2);
    expect(restartNotice(r)).toBe(
      'Client restarted: lane A lost 2 stored decisions, lane B kept 2 stored decisions'
    );
    expect(sim.lanes.A.host.store.count()).toBe(0);
    expect(sim.lanes.B.host.store.count()).toBe(2);
    // Every server is on a new connection.
    const after = [...sim.lanes.A.servers.values()].map((s) => s.connection);
    after.forEach((c, i) => expect(c).not.toBe(connections[i]));
    expect(sim.marks.filter((m) => m.kind === 'restart').map((m) => [m.lane, m.what])).toEqual([
      ['A', 'client restarted (lost 2 stored decisions)'],
      ['B', 'client restarted (kept 2 stored decisions)']
    ]);
    expect(sim.actions).toEqual([{ kind: 'restart', t: r.t, events: sim.events }]);
  });

  it('asks again on Tuesday only where the decision lived on the connection', () => {
    const run = (s: Scenario) => {
      const { sim, guard } = guardedSimulation(s);
      sim.runToEnd();
      expect(guard.results().filter((g) => g.status === 'broken')).toEqual([]);
      return sim;
    };
    const restarted = run(load('restart-client'));
    const never = run(load('restart-client', (d) => delete d.restarts));
    expect(restarted.restarts).toHaveLength(1);
    expect(restarted.lanes.A.metrics.counters.consentPrompts).toBe(4);
    expect(restarted.lanes.B.metrics.counters.consentPrompts).toBe(2);
    expect(never.lanes.A.metrics.counters.consentPrompts).toBe(2);
    expect(never.lanes.B.metrics.counters.consentPrompts).toBe(2);
  });

  it.each(['reconnect-bypass', 'in-flight-duplicates', 'budget-window', 'rfc-budget-caps'])(
    '%s: requests in flight get their one frame and record, and every guarantee holds',
    (name) => {
      const scenario = load(name);
      const every = Math.floor(scenario.durationMs / 7);
      const restartAt = [1, 2, 3, 4, 5, 6].map((k) => k * every + 137);
      const { sim, guard } = guardedSimulation(scenario, { restartAt });
      sim.runToEnd();
      // Six asked for, and the scenario's own (reconnect-bypass restarts at 30 min).
      expect(sim.restarts).toHaveLength(6 + (scenario.data.restarts?.length ?? 0));
      expect(guard.results().filter((g) => g.status === 'broken')).toEqual([]);
      const cancelled = sim.restarts.reduce((n, r) => n + r.lanes.A.cancelled, 0);
      // In-flight duplicates keeps requests waiting on each other: restarts land on some.
      if (name === 'in-flight-duplicates') expect(cancelled).toBeGreaterThan(0);
    }
  );

  it('cancels what is in flight: consent dialogs and model calls stop, each answered once', () => {
    const scenario = load('in-flight-duplicates');
    const sim = new Simulation(scenario);
    // Find a moment with requests in flight in lane A.
    let t = sim.start;
    while (sim.lanes.A.inFlight.size === 0 && !sim.done) sim.advanceTo((t += 250));
    const flying = sim.lanes.A.inFlight.size;
    expect(flying).toBeGreaterThan(0);
    const answered = sim.lanes.A.metrics.counters.requests;
    const r = sim.restartClient();
    expect(r.lanes.A.cancelled).toBe(flying);
    expect(sim.lanes.A.inFlight.size).toBe(0);
    const c = sim.lanes.A.metrics.counters;
    const frames = Object.values(c.frames).reduce((a, b) => a + b, 0) + c.silenced;
    expect(frames).toBe(answered);
  });
});
