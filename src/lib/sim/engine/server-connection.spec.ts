/**
 * A simulated server sends only on an open connection: while it is disconnected (after a refusal
 * closed it, until its reconnect) `send` hands nothing to the client and the server polls until it
 * is connected again (base.ts). A request let through on the closed connection changed a day of
 * reconnect-bypass from 16,282 audit rows to 16,236 (the page's storage tests saw it first).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Simulation } from './engine';
import type { LaneRuntime, ServerRuntime } from './lane';
import { parseScenario, type Scenario } from '../input/scenario';
import { LANE_IDS } from '../input/lanes';

function load(name: string, hours: number): Scenario {
  const data = JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
  data.durationMs = hours * 3_600_000;
  const r = parseScenario(data);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

/** Count the requests `lane` receives from a server that is not connected. */
function watchClosed(lane: LaneRuntime): { closed: number; all: number } {
  const seen = { closed: 0, all: 0 };
  const receive = lane.receive.bind(lane);
  lane.receive = (server: ServerRuntime, ...rest) => {
    seen.all++;
    if (!server.connected()) seen.closed++;
    receive(server, ...rest);
  };
  return seen;
}

describe('a server’s connection', () => {
  it('a disconnected server sends nothing: no id, no request at the client', () => {
    const sim = new Simulation(load('reconnect-bypass', 1));
    const lane = sim.lanes.B;
    const server = [...lane.servers.values()][0]!;
    const seen = watchClosed(lane);
    const requests = lane.metrics.counters.requests;
    server.disconnect();
    expect(server.connected()).toBe(false);
    const params = { messages: [], maxTokens: 1 } as never;
    expect(server.send(params, { n: 1, attempts: 1, startedAt: sim.now })).toBeNull();
    expect(seen.all).toBe(0);
    expect(lane.metrics.counters.requests).toBe(requests);
    server.connect();
    expect(server.send(params, { n: 1, attempts: 1, startedAt: sim.now })).not.toBeNull();
    expect(seen).toEqual({ all: 1, closed: 0 });
  });

  it('over a day of servers that reconnect after every refusal, no request arrives on a closed connection', () => {
    let rows = 0;
    const sim = new Simulation(load('reconnect-bypass', 24), { onAudit: () => rows++ });
    const seen = Object.fromEntries(LANE_IDS.map((id) => [id, watchClosed(sim.lanes[id])]));
    sim.advanceTo(sim.end);
    for (const id of LANE_IDS) {
      expect(seen[id]!.all).toBe(sim.lanes[id].metrics.counters.requests);
      expect(seen[id]!.closed, `lane ${id}`).toBe(0);
    }
    // The day tests/storage-loss.test.ts runs in the page: the CLI's rows, as before the copier.
    expect(rows).toBe(16_282);
  });
});
