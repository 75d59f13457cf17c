import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSweep, planSweep, type PointResult } from '../../sim/sweep';
import { decodeScenarioHash } from '../share';
import { pointLink, pointScenario } from './open-link';
import { scatterModel, ticks } from './scatter';
import type { LaneId } from '../../machine/vocabulary';

const base = readFileSync('static/scenarios/reconnect-bypass.json', 'utf8');

function plan(grid: Record<string, unknown[]>) {
  const s = parseSweep({
    version: 1,
    scenario: 'x.json',
    grid,
    seeds: [11, 12],
    objectives: { 'A.consentPrompts': 'min' }
  });
  if (!s.ok) throw new Error(JSON.stringify(s.errors));
  const p = planSweep(s.sweep, base);
  if (!p.ok) throw new Error(JSON.stringify(p.errors));
  return p.plan;
}

describe('open a point as a lane', () => {
  it('puts the point beside the base version of the lane it sweeps, on the first seed', () => {
    const p = plan({ 'lanes.A.client.store': ['connection', 'durable'] });
    const s = pointScenario(p, base, 1) as unknown as {
      seed: number;
      lanes: Record<LaneId, { label: string; client: { store: string } }>;
    };
    expect(s.seed).toBe(11);
    expect(s.lanes.A.client.store).toBe('durable');
    expect(s.lanes.A.label).toBe('Sweep point 1: lanes.A.client.store = "durable"');
    expect(s.lanes.B.client.store).toBe('connection');
    expect(s.lanes.B.label).toBe('Base: Connection-scoped store');
    // The link carries exactly that scenario.
    const link = pointLink(p, base, 1, './');
    expect(link.startsWith('./#s=')).toBe(true);
    expect(decodeScenarioHash(link.slice(2))).toEqual({ ok: true, data: s });
  });

  it('opens the point as it is when the grid reaches both lanes or neither', () => {
    const p = plan({ durationMs: [600_000] });
    const s = pointScenario(p, base, 0) as unknown as {
      durationMs: number;
      lanes: Record<LaneId, { label: string }>;
    };
    expect(s.durationMs).toBe(600_000);
    expect(s.lanes.A.label).toBe('Connection-scoped store');
    expect(s.lanes.B.label).toBe('Durable store');
  });

  it('keeps a label within the 80 characters a lane label may have', () => {
    const p = plan({ 'lanes.A.policy.defaults.rateLimit': [{ requests: 5, windowMs: 60000 }] });
    const s = pointScenario(p, base, 0) as unknown as { lanes: { A: { label: string } } };
    expect(s.lanes.A.label).toHaveLength(80);
    expect(s.lanes.A.label.endsWith('…')).toBe(true);
  });
});

describe('the scatter', () => {
  const pt = (x: number, y: number, feasible = true): PointResult => ({
    settings: {},
    metrics: {
      x: { mean: x, min: x - 1, max: x + 1, bySeed: [] },
      y: { mean: y, min: y - 2, max: y + 2, bySeed: [] }
    },
    feasible,
    unmet: [],
    guarantees: {},
    broken: []
  });

  it("draws the front on the two chosen axes in x order, and spans the seeds' spread", () => {
    const m = scatterModel(
      [pt(5, 1), pt(1, 5), pt(3, 3), pt(4, 4), pt(0, 0, false)],
      { metric: 'x', direction: 'min' },
      { metric: 'y', direction: 'min' }
    );
    expect(m.frontLine).toEqual([1, 2, 0]);
    expect(m.dots[3]!.front).toBe(false);
    expect(m.dots[4]!.front).toBe(false);
    expect(m.x.extent.lo).toBeLessThanOrEqual(-1);
    expect(m.y.extent.hi).toBeGreaterThanOrEqual(7);
  });

  it('gives nice ticks, and an extent around a single value', () => {
    expect(ticks(0, 260)).toEqual({ extent: { lo: 0, hi: 300 }, ticks: [0, 100, 200, 300] });
    expect(ticks(12.6, 12.6).ticks.length).toBeGreaterThan(1);
  });
});
