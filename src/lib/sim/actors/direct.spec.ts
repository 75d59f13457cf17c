import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { directCard } from './direct';
import { Simulation, type FrameLine } from '../engine/engine';
import { metricsJson } from '../report/report';
import { parseScenario, type Scenario } from '../input/scenario';

function load(patch?: (d: Record<string, unknown>) => void): Scenario {
  const data = JSON.parse(readFileSync('static/scenarios/direct-provider.json', 'utf8')) as Record<
    string,
    unknown
  >;
  patch?.(data);
  const r = parseScenario(data);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

describe('a direct lane (SEP-2577: the server calls the provider with its own key)', () => {
  const frames: FrameLine[] = [];
  const sim = new Simulation(load(), { onFrame: (l) => frames.push(l) });
  sim.runToEnd();
  const A = sim.lanes.A.metrics.counters;
  const B = sim.lanes.B.metrics.counters;

  it('never reaches the client: no frames, no dialogs, nothing on the user’s bill', () => {
    expect(frames.some((f) => f.lane === 'B')).toBe(false);
    expect(B.requests).toBe(0);
    expect(B.consentPrompts).toBe(0);
    expect(B.spendMicros).toBe(0);
    expect(B.fresh + B.replays).toBe(0);
  });

  it('pays for every task on the servers’ own keys, which the sampling lane bounds', () => {
    expect(B.tasks).toBe(A.tasks);
    expect(B.completed).toBe(B.tasks);
    expect(B.providerCalls).toBe(B.tasks);
    expect(B.serverSpendMicros).toBeGreaterThan(A.spendMicros);
    expect(A.consentPrompts).toBeGreaterThan(0);
    expect(A.serverSpendMicros).toBe(0);
    expect(A.providerCalls).toBeLessThan(B.providerCalls);
  });

  it('is deterministic and reported in metrics.json', () => {
    const again = new Simulation(load());
    again.runToEnd();
    expect(metricsJson(again)).toBe(metricsJson(sim));
    const m = JSON.parse(metricsJson(sim)) as {
      lanes: { B: { counters: { serverSpendMicros: number } } };
    };
    expect(m.lanes.B.counters.serverSpendMicros).toBe(B.serverSpendMicros);
  });

  it('is a lane option: with both lanes direct they are identical', () => {
    const both = new Simulation(
      load((d) => {
        (d.lanes as { A: Record<string, unknown> }).A.direct = true;
      })
    );
    both.runToEnd();
    expect(both.lanes.A.metrics.counters).toEqual(both.lanes.B.metrics.counters);
  });

  it('rejects a non-boolean switch with its JSON path', () => {
    const data = JSON.parse(readFileSync('static/scenarios/direct-provider.json', 'utf8')) as {
      lanes: { B: { direct: unknown } };
    };
    data.lanes.B.direct = 'yes';
    const r = parseScenario(data);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.path).toBe('$.lanes.B.direct');
  });

  it('picks the model a hint names, else the first card', () => {
    const cards = [
      { model: 'big', version: '1', currency: 'USD', inputPerMtok: '3', outputPerMtok: '15' },
      { model: 'lite', version: '1', currency: 'USD', inputPerMtok: '1', outputPerMtok: '5' }
    ];
    const params = { messages: [], maxTokens: 10 };
    expect(directCard(cards, params).model).toBe('big');
    expect(
      directCard(cards, { ...params, modelPreferences: { hints: [{ name: 'lite' }] } }).model
    ).toBe('lite');
  });
});
