import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { resolveClientConfig } from '../../machine/config';
import { ConnectionDecisionStore } from '../../store/connection-store';
import { isExpired, type DecisionStore } from '../../store/decision-store';
import { Simulation } from './engine';
import { SharedDecisionStore } from '../../store/shared-store';
import { buildLaneStore } from './lane-store';
import { parseScenario } from '../input/scenario';

function scenario(name: string, hours: number) {
  const data = JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
  data.durationMs = hours * 3_600_000;
  const r = parseScenario(data);
  if (!r.ok) throw new Error(r.errors[0]?.message);
  return r.scenario;
}

describe('buildLaneStore', () => {
  it('builds from the lane config: scope and fallback', () => {
    const durable = resolveClientConfig({ store: 'durable' });
    expect(buildLaneStore('B', durable).store).toBeInstanceOf(SharedDecisionStore);
    const fell = buildLaneStore('B', durable, () => null);
    expect(fell).toMatchObject({ fellBack: true });
    expect(fell.store).toBeInstanceOf(ConnectionDecisionStore);
    const given = new SharedDecisionStore();
    expect(buildLaneStore('B', durable, () => given)).toEqual({ store: given, fellBack: false });
    expect(buildLaneStore('A', resolveClientConfig({ store: 'connection' })).store.scope).toBe(
      'connection'
    );
  });

  it('a live change of scope builds the new store in the same place, and back', () => {
    const sim = new Simulation(scenario('reconnect-bypass', 1));
    const before = sim.lanes.B.host.store;
    sim.setLaneConfig('B', { store: 'connection' });
    expect(sim.lanes.B.host.store.scope).toBe('connection');
    sim.setLaneConfig('B', { store: 'durable' });
    expect(sim.lanes.B.host.store).toBeInstanceOf(SharedDecisionStore);
    expect(sim.lanes.B.host.store).not.toBe(before);
  });
});

describe('memory over a long run', () => {
  it('sweeps expired decisions on the virtual clock: the stores hold live entries only', () => {
    const sim = new Simulation(scenario('prompt-mutator', 2));
    let peak = 0;
    for (let t = sim.start; t < sim.end; t += 600_000) {
      sim.advanceTo(t);
      for (const id of ['A', 'B'] as const)
        peak = Math.max(peak, sim.lanes[id].host.store.count() as number);
    }
    sim.runToEnd();
    for (const id of ['A', 'B'] as const) {
      const store: DecisionStore = sim.lanes[id].host.store;
      const entries = store.entries() as ReturnType<ConnectionDecisionStore['entries']>;
      // Expired entries are gone up to the last sample; only what expired since may remain.
      const stale = entries.filter((d) => isExpired(d, sim.now - sim.scenario.sampleMs));
      expect(stale).toHaveLength(0);
    }
    expect(peak).toBeLessThan(2_000);
  });
});
