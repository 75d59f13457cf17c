/**
 * The ready-made sweeps (static/sweeps/*.json): each parses, names a scenario beside it, plans
 * every point as a valid scenario within the limits, and runs. In CI each point runs on its first
 * seed only (seconds); `lab sweep` runs them whole.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseSweep, planSweep, runOnce, sweepResults, type SweepPlan } from '.';

const DIR = fileURLToPath(new URL('../../../../static/sweeps/', import.meta.url));
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.json'));

function plan(file: string): SweepPlan {
  const r = parseSweep(readFileSync(join(DIR, file), 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  expect(typeof r.sweep.scenario).toBe('string');
  const scenario = readFileSync(join(dirname(join(DIR, file)), r.sweep.scenario as string), 'utf8');
  const p = planSweep(r.sweep, scenario);
  if (!p.ok) throw new Error(JSON.stringify(p.errors));
  return p.plan;
}

/** Every point on the first seed only. */
function firstSeed(p: SweepPlan) {
  const one = { ...p, seeds: p.seeds.slice(0, 1) };
  return sweepResults(
    one,
    one.points.map((pt) => [runOnce(pt.scenario, one.seeds[0]!, one.metrics)])
  );
}

describe("the benchmark's sweep", () => {
  it('bench/sweep-48x5.json plans 48 points × 5 seeds within the limits', () => {
    const file = fileURLToPath(new URL('../../../../bench/sweep-48x5.json', import.meta.url));
    const r = parseSweep(readFileSync(file, 'utf8'));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const scenario = readFileSync(join(dirname(file), r.sweep.scenario as string), 'utf8');
    const p = planSweep(r.sweep, scenario);
    if (!p.ok) throw new Error(JSON.stringify(p.errors));
    expect([p.plan.points.length, p.plan.seeds.length]).toEqual([48, 5]);
  });
});

describe('the ready-made sweeps', () => {
  it('include the reconnect-bypass and budget-window lessons', () => {
    expect(FILES).toEqual(expect.arrayContaining(['reconnect-bypass.json', 'budget-window.json']));
  });

  it.each(FILES)('%s is named for its file and has at least two points and seeds', (f) => {
    const p = plan(f);
    expect(`${p.sweep.name}.json`).toBe(f);
    expect(p.points.length).toBeGreaterThan(1);
    expect(p.seeds.length).toBeGreaterThan(1);
  });

  it('reconnect-bypass: a durable store asks fewer times than any connection-scoped one', () => {
    const p = plan('reconnect-bypass.json');
    const r = firstSeed(p);
    const prompts = (i: number) => r.points[i]!.metrics['A.consentPrompts']!.mean;
    const durable = p.points.flatMap((pt, i) => (pt.settings[0]![1] === 'durable' ? [i] : []));
    const connection = p.points.flatMap((pt, i) =>
      pt.settings[0]![1] === 'connection' ? [i] : []
    );
    expect(durable.length).toBeGreaterThan(0);
    for (const d of durable)
      for (const c of connection) expect(prompts(d)).toBeLessThan(prompts(c));
    for (const pt of r.points) expect(pt.broken).toEqual([]);
    // The front is made of durable points only.
    expect(r.pareto.length).toBeGreaterThan(0);
    for (const i of r.pareto) expect(durable).toContain(i);
  });

  it('budget-window: a refusal kept until resetsAt completes more than one kept for the session', () => {
    const p = plan('budget-window.json');
    const r = firstSeed(p);
    const at = (ttl: string, amount: string) =>
      r.points.find(
        (pt) =>
          (pt.settings['lanes.A.client.reasons["policy.budget_exhausted"].ttl'] as { kind: string })
            .kind === ttl && pt.settings['lanes.A.policy.defaults.budget.amount'] === amount
      )!;
    expect(at('window', '0.0300').metrics['A.completed']!.mean).toBeGreaterThan(
      at('session', '0.0300').metrics['A.completed']!.mean
    );
    for (const pt of r.points) expect(pt.broken).toEqual([]);
  });
});
