/**
 * 2026-07-28 in the engine (issue #25): what a lane-B server actually receives. Every frame the
 * lane delivers is recorded at the server's door; under 2026-07-28 no error frame gets through,
 * and every refused round is told to the server only as its tool call failing at the host.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Frame, JsonRpcId } from '../../machine/types';
import { Simulation } from './engine';
import { parseScenario } from '../input/scenario';

function run(patch: (d: Record<string, unknown>) => void) {
  const data = JSON.parse(readFileSync('static/scenarios/who-hears.json', 'utf8')) as Record<
    string,
    unknown
  >;
  patch(data);
  const r = parseScenario(data);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const sim = new Simulation(r.scenario);
  const heard = { A: [] as Frame[], B: [] as Frame[] };
  const failed = { A: 0, B: 0 };
  for (const lane of ['A', 'B'] as const)
    for (const server of sim.lanes[lane].servers.values()) {
      const agent = server.agent!;
      const onFrame = agent.onFrame.bind(agent);
      const onFailed = agent.onToolCallFailed.bind(agent);
      agent.onFrame = (id: JsonRpcId, f: Frame) => (heard[lane].push(f), onFrame(id, f));
      agent.onToolCallFailed = (id: JsonRpcId) => (failed[lane]++, onFailed(id));
    }
  sim.runToEnd();
  return { sim, heard, failed };
}

describe('who hears the no', () => {
  it('2025-11-25 servers hear every refusal; 2026-07-28 servers hear none', () => {
    const { sim, heard, failed } = run(() => {});
    const errors = (fs: Frame[]) => fs.filter((f) => 'error' in f).length;
    expect(errors(heard.A)).toBe(sim.lanes.A.metrics.counters.frames.denied);
    expect(failed.A).toBe(0);
    expect(errors(heard.B)).toBe(0);
    // Each refused round failed a tool call at the host instead.
    expect(failed.B).toBe(sim.lanes.B.metrics.counters.frames.denied);
    expect(failed.B).toBe(
      sim.lanes.B.metrics.counters.hostRetries + sim.lanes.B.metrics.counters.abandoned
    );
  });

  it('silence under 2026-07-28 fails the tool call at the host as well', () => {
    const { sim, heard, failed } = run((d) => {
      const lanes = d.lanes as { B: { client: Record<string, unknown> } };
      lanes.B.client.silence = true;
    });
    expect(heard.B.filter((f) => 'error' in f)).toEqual([]);
    expect(failed.B).toBe(sim.lanes.B.metrics.counters.silenced);
    expect(sim.lanes.B.metrics.counters.timeouts).toBe(0);
  });
});
