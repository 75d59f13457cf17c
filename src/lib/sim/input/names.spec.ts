/**
 * Names are data (issue #12): every record keyed by a name that came from outside — policy
 * `servers`, scenario `servers`, behaviour `params`, client `reasons`, trace servers and trace
 * params, and the per-server maps downstream (invalidation counts) — treats `__proto__`,
 * `constructor`, `prototype`, `toString` and `hasOwnProperty` as ordinary names. One table, each
 * name through every record, compared with a name nobody would doubt (`plain`).
 */
import { describe, expect, it } from 'vitest';
import { requestIdentity } from '../../machine/identity';
import { DEFAULT_POLICY, effectiveBlock, parsePolicy, type Policy } from '../../machine/policy';
import { Simulation } from '../engine/engine';
import { parseScenario, type ScenarioInput } from './scenario';
import { parseTrace } from './trace';

export const HOSTILE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'plain'
] as const;

function policy(servers: Record<string, unknown>): unknown {
  return { ...DEFAULT_POLICY, defaults: { ...DEFAULT_POLICY.defaults, consent: 'allow' }, servers };
}

/** JSON text, so `__proto__` is an own member exactly as a file or a link delivers it. */
function scenarioText(name: string, laneAServers: string): string {
  const base: ScenarioInput = {
    version: 1,
    name: 'names',
    title: 'Names are data',
    seed: 7,
    durationMs: 3_600_000,
    servers: [
      {
        name: 'NAME',
        behaviour: 'well-behaved',
        request: { prompt: 'Summarise {n}.', maxTokens: 100 },
        intervalMs: 60_000,
        tasks: 10
      }
    ],
    lanes: {
      A: { label: 'blocked by name', policy: policy({}) as Policy },
      B: { label: 'defaults', policy: policy({}) as Policy }
    }
  };
  return JSON.stringify(base)
    .replace('"name":"NAME"', `"name":${JSON.stringify(name)}`)
    .replace('"servers":{}', `"servers":${laneAServers}`);
}

function run(text: string, trace?: string) {
  const r = parseScenario(text);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const t = trace === undefined ? undefined : parseTrace(trace);
  if (t && !t.ok) throw new Error(t.error);
  const sim = new Simulation(r.scenario, t ? { trace: t.events } : {});
  sim.runToEnd();
  return { A: sim.lanes.A.metrics.counters, B: sim.lanes.B.metrics.counters, sim };
}

describe.each(HOSTILE_NAMES)('the name %j is data', (name) => {
  const block = `{${JSON.stringify(name)}:{"sampling":false}}`;

  it('policy servers: the block applies to the server of that name, and only to it', () => {
    const p = parsePolicy(JSON.stringify(policy({})).replace('"servers":{}', `"servers":${block}`));
    if (!p.ok) throw new Error(JSON.stringify(p.errors));
    expect(Object.keys(p.policy.servers)).toEqual([name]);
    expect(effectiveBlock(p.policy, name).sampling).toBe(false);
    expect(effectiveBlock(p.policy, `${name}-other`).sampling).toBe(true);
  });

  it('scenario servers + lane policy: the run denies every request of that server in lane A', () => {
    const { A, B } = run(scenarioText(name, block));
    // Ten tasks, a minute apart on average, in an hour: all ten arrive in both lanes.
    expect(A.requests).toBe(10);
    expect(A.frames.denied).toBe(10);
    expect(A.providerCalls).toBe(0);
    expect(B.requests).toBe(10);
    expect(B.providerCalls).toBe(10);
  });

  it('params: an unknown parameter of that name is refused, with its path', () => {
    const text = scenarioText(name, '{}').replace(
      '"behaviour":"well-behaved"',
      `"behaviour":"well-behaved","params":{${JSON.stringify(name)}:1}`
    );
    const r = parseScenario(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]!.message).toMatch(/^unknown parameter for well-behaved; it takes /);
    expect(r.errors[0]!.path).toBe(`$.servers[0].params.${name}`);
  });

  it('reasons: an override for a reason of that name is refused, naming the reasons', () => {
    const text = scenarioText(name, '{}').replace(
      '"label":"defaults"',
      `"label":"defaults","client":{"reasons":{${JSON.stringify(name)}:{"retryable":true}}}`
    );
    const r = parseScenario(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]!.path).toBe(`$.lanes.B.client.reasons.${name}`);
    expect(r.errors[0]!.message).toMatch(/^unknown name ".+": expected one of "policy\./);
  });

  it('trace servers: a replayed trace from that server is denied by its block', () => {
    const lines = [`{"t":0,"server":${JSON.stringify(name)},"type":"connect"}`];
    for (let i = 0; i < 5; i++) {
      lines.push(
        `{"t":${1000 * (i + 1)},"server":${JSON.stringify(name)},"type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"q${i}"}}],"maxTokens":50}}`
      );
    }
    const { A, B } = run(scenarioText('someone-else', block), lines.join('\n'));
    expect(A.requests).toBe(5);
    expect(A.frames.denied).toBe(5);
    expect(A.providerCalls).toBe(0);
    expect(B.providerCalls).toBe(5);
  });

  it('trace params: a member of that name stays in the request and in its identity', () => {
    const line = (v: number) =>
      `{"t":0,"server":"s","type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"x",${JSON.stringify(name)}:${v}}}],"maxTokens":5}}`;
    const a = parseTrace(line(1));
    const b = parseTrace(line(2));
    if (!a.ok || !b.ok) throw new Error('trace refused');
    const content = a.events[0]!.params!.messages[0]!.content as unknown as Record<string, unknown>;
    expect(Object.hasOwn(content, name)).toBe(true);
    expect(requestIdentity('s', a.events[0]!.params)).not.toBe(
      requestIdentity('s', b.events[0]!.params)
    );
  });

  it('invalidation counts: a policy edit reports the server of that name', () => {
    const { sim } = run(scenarioText(name, '{}'));
    const p = parsePolicy(
      JSON.stringify(policy({})).replace(
        '"servers":{}',
        `"servers":{${JSON.stringify(name)}:{"maxInputTokens":10}}`
      )
    );
    if (!p.ok) throw new Error(JSON.stringify(p.errors));
    const counts = sim.lanes.B.setPolicy(p.policy);
    expect(Object.keys(counts)).toEqual([name]);
  });
});
