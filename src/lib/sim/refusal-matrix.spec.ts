import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DENIAL_STYLES } from '../machine/refusal-styles';
import { Simulation } from './engine';
import { refusalMatrix } from './refusal-matrix';
import { parseScenario } from './scenario';

const file = 'static/scenarios/refusal-codes.json';
const data = JSON.parse(readFileSync(file, 'utf8')) as {
  lanes: { B: { client: Record<string, unknown> } };
};

describe('the refusal matrix: one population, six refusal styles', () => {
  const m = refusalMatrix(data, 'B');
  if (!m.ok) throw new Error(JSON.stringify(m.errors));
  const row = (s: string) => m.rows.find((r) => r.style === s)!;

  it('has one row per style, in the styles’ order, each its own code', () => {
    expect(m.rows.map((r) => [r.style, r.code])).toEqual([
      ['lab', -32003],
      ['spec', -1],
      ['vscode', -32000],
      ['inspector', -32603],
      ['python-default', -32600],
      ['cursor', -32601]
    ]);
  });

  it('each row is the lane’s own run with that style', () => {
    for (const style of DENIAL_STYLES) {
      const d = structuredClone(data);
      d.lanes.B.client = { ...d.lanes.B.client, denialStyle: style };
      const r = parseScenario(d);
      if (!r.ok) throw new Error('bad');
      const sim = new Simulation(r.scenario);
      sim.runToEnd();
      const c = sim.lanes.B.metrics.counters;
      expect(row(style)).toMatchObject({
        requests: c.requests,
        retries: c.retries,
        reconnects: c.reconnects,
        consentPrompts: c.consentPrompts,
        abandoned: c.abandoned,
        spendMicros: c.spendMicros
      });
    }
  });

  it('only the lab’s typed refusal lets every server stop; only -32000 makes them reconnect', () => {
    expect(row('lab').reconnects).toBe(0);
    expect(row('vscode').reconnects).toBe(row('vscode').refusals);
    for (const s of ['spec', 'inspector', 'python-default', 'cursor']) {
      expect(row(s).reconnects).toBe(0);
      // The well-behaved servers retry a code they cannot read; the lab's refusal they obey.
      expect(row(s).retries).toBeGreaterThan(row('lab').retries);
    }
    expect(row('vscode').consentPrompts).toBeGreaterThan(row('lab').consentPrompts);
  });
});
