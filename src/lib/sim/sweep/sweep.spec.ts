import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  gridPoints,
  paretoFront,
  parseConstraint,
  parsePath,
  parseSweep,
  planSweep,
  pointsCsv,
  requireGate,
  runOnce,
  setPath,
  sweepResults,
  type PointResult,
  type Sweep
} from '.';

const SCENARIOS = fileURLToPath(new URL('../../../../static/scenarios/', import.meta.url));
const reconnect = () =>
  JSON.parse(readFileSync(`${SCENARIOS}reconnect-bypass.json`, 'utf8')) as Record<string, unknown>;

/** A scenario read loosely, to look a set value up. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reaching into JSON
type Loose = any;

function sweep(over: Record<string, unknown> = {}): Sweep {
  const r = parseSweep({
    version: 1,
    scenario: 'static/scenarios/reconnect-bypass.json',
    grid: {
      'lanes.A.client.store': ['connection', 'durable'],
      'lanes.A.policy.defaults.rateLimit': [null, { requests: 5, windowMs: 60000 }]
    },
    seeds: [1, 2],
    objectives: { 'A.consentPrompts': 'min', 'A.spendMicros': 'min' },
    constraints: ['A.abandoned <= 5'],
    ...over
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.sweep;
}

function errorsOf(input: unknown): string[] {
  const r = parseSweep(input);
  if (r.ok) throw new Error('parsed');
  return r.errors.map((e) => `${e.path}: ${e.message}`);
}

describe('the sweep file', () => {
  const base = {
    version: 1,
    scenario: 'x.json',
    grid: { 'lanes.A.client.store': ['connection'] },
    seeds: 2,
    objectives: { 'A.consentPrompts': 'min' }
  };

  it('reads a grid, seeds as a list or a count, objectives and constraints', () => {
    const s = sweep();
    expect(s.grid.map((a) => a.key)).toEqual([
      'lanes.A.client.store',
      'lanes.A.policy.defaults.rateLimit'
    ]);
    expect(s.seeds).toEqual([1, 2]);
    expect(s.objectives).toEqual([
      { metric: 'A.consentPrompts', direction: 'min' },
      { metric: 'A.spendMicros', direction: 'min' }
    ]);
    expect(s.constraints[0]).toMatchObject({
      metric: 'A.abandoned',
      op: '<=',
      value: 5,
      aggregate: 'mean'
    });
    const counted = parseSweep(base);
    expect(counted.ok && counted.sweep.seeds).toEqual({ count: 2 });
  });

  it('names where and what for each kind of mistake', () => {
    expect(errorsOf('{"version": 1,')[0]).toMatch(/^\$/);
    expect(errorsOf({ ...base, grid: { 'lanes..A': [1] } })[0]).toBe(
      '$.grid["lanes..A"]: not a path: an empty segment at character 7 (write a.b.c, with ["name.with.dots"] or [0] for an index)'
    );
    expect(errorsOf({ ...base, grid: { a: [] } })[0]).toMatch(/^\$\.grid\.a: /);
    expect(errorsOf({ ...base, grid: {} })[0]).toBe('$.grid: names no path: give at least one');
    expect(errorsOf({ ...base, objectives: { 'A.prompts': 'min' } })[0]).toMatch(
      /^\$\.objectives\["A\.prompts"\]: "A\.prompts": an unknown metric; known metrics: requests, /
    );
    expect(errorsOf({ ...base, objectives: { 'A.consentPrompts': 'least' } })[0]).toMatch(
      /^\$\.objectives\["A\.consentPrompts"\]: /
    );
    expect(errorsOf({ ...base, constraints: ['A.abandoned =< 5'] })[0]).toMatch(
      /^\$\.constraints\[0\]: "A\.abandoned =< 5" is not a constraint: write METRIC OP NUMBER/
    );
    expect(errorsOf({ ...base, seeds: [3, 3] })[0]).toBe('$.seeds[1]: seed 3 is listed twice');
    expect(errorsOf({ ...base, extra: 1 })[0]).toMatch(/extra/);
    expect(errorsOf({ ...base, grid: { a: Array(200).fill(1), b: Array(200).fill(1) } })[0]).toBe(
      "$.grid: 40,000 points (the values' counts multiplied); the limit is 10,000"
    );
  });

  it('parses constraints with every operator and an aggregate', () => {
    for (const op of ['<', '<=', '>', '>=', '=='])
      expect(parseConstraint(`B.spendMicros ${op} 10`)).toMatchObject({
        ok: true,
        constraint: { op }
      });
    expect(parseConstraint('max(A.abandoned)<1')).toMatchObject({
      ok: true,
      constraint: { aggregate: 'max', metric: 'A.abandoned', op: '<', value: 1 }
    });
    expect(parseConstraint('guarantee.one-consent == 0').ok).toBe(true);
    expect(parseConstraint('guarantee.one-consnt == 0')).toMatchObject({ ok: false });
    expect(parseConstraint('A.abandoned <= five')).toMatchObject({ ok: false });
  });
});

describe('paths into the scenario', () => {
  it('reads dots, quoted segments with dots in them, and indices', () => {
    expect(parsePath('lanes.A.client.reasons["user.denied"].ttl')).toEqual({
      ok: true,
      segments: ['lanes', 'A', 'client', 'reasons', 'user.denied', 'ttl']
    });
    expect(parsePath('servers[0].params["a\\"b"]')).toEqual({
      ok: true,
      segments: ['servers', 0, 'params', 'a"b']
    });
    for (const bad of ['', 'a.', '.a', 'a["b"', 'a[x]', 'a[""]', 'a["b"]c'])
      expect(parsePath(bad).ok, bad).toBe(false);
  });

  it('sets a value on a copy, creating missing objects, and says where a path stops fitting', () => {
    const s = reconnect();
    const copy = structuredClone(s);
    const p = parsePath('lanes.A.client.reasons["user.denied"].ttl');
    expect(p.ok && setPath(copy, p.segments, { kind: 'session' })).toBeNull();
    expect((copy as Loose).lanes.A.client.reasons['user.denied'].ttl).toEqual({ kind: 'session' });
    expect((s as Loose).lanes.A.client.reasons).toBeUndefined();
    const idx = parsePath('servers[3].intervalMs');
    expect(idx.ok && setPath(copy, idx.segments, 1)).toBe(
      'servers has 1 element, so [3] names nothing'
    );
    const deep = parsePath('seed.x');
    expect(deep.ok && setPath(copy, deep.segments, 1)).toBe(
      'seed is not an object, so .x names nothing'
    );
    const proto = parsePath('lanes.A.policy.servers.__proto__');
    expect(proto.ok && setPath(copy, proto.segments, {})).toBeNull();
    expect(Object.hasOwn((copy as Loose).lanes.A.policy.servers, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).sampling).toBeUndefined();
  });
});

describe('planning a sweep', () => {
  it('expands the grid in order, the first key varying slowest', () => {
    const s = sweep({ grid: { a: [1, 2], b: ['x', 'y', 'z'] } });
    expect(gridPoints(s).map((p) => p.map(([, v]) => v).join(''))).toEqual([
      '1x',
      '1y',
      '1z',
      '2x',
      '2y',
      '2z'
    ]);
  });

  it('validates every point as a scenario and names the point and the path of a bad one', () => {
    const r = planSweep(
      sweep({ grid: { 'lanes.A.client.store': ['connection', 'disk'] } }),
      reconnect()
    );
    expect(r).toEqual({
      ok: false,
      errors: [
        {
          path: 'point 1 (lanes.A.client.store = "disk")',
          message: expect.stringMatching(
            /^makes an invalid scenario: \$\.lanes\.A\.client\.store: /
          )
        }
      ]
    });
    const bad = planSweep(sweep({ grid: { 'servers[4].intervalMs': [1] } }), reconnect());
    expect(bad.ok || bad.errors[0]).toEqual({
      path: '$.grid["servers[4].intervalMs"]',
      message: 'servers has 1 element, so [4] names nothing'
    });
  });

  it("counts seeds from the scenario's own, and estimates the work as points × seeds × one run", () => {
    const r = planSweep(sweep({ seeds: 3 }), reconnect());
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.plan.seeds).toEqual([7, 8, 9]);
    expect(r.plan.runs).toBe(12);
    const one = planSweep(sweep({ seeds: 1, grid: { seed: [7] } }), reconnect());
    if (!one.ok) throw new Error('one');
    expect(r.plan.work.requests).toBe(one.plan.work.requests * 12);
    expect(r.plan.metrics.slice(0, 2)).toEqual(['A.requests', 'A.denied']);
  });

  it('refuses a sweep whose runs together pass the limits of one run, with the estimate', () => {
    const r = planSweep(
      sweep({
        seeds: 1000,
        grid: { 'lanes.A.client.store': ['connection', 'durable', 'connection', 'durable'] }
      }),
      reconnect()
    );
    expect(r.ok || r.errors[0]!.message).toMatch(
      /^this sweep would be about 12,480,000 requests \/ .* \(4 points × 1000 seeds\); the limit is 8,000,000 requests/
    );
  });
});

describe('running a sweep', () => {
  // Ten minutes of the reconnect-bypass lesson: enough to see the store make a difference.
  const short = () => ({ ...reconnect(), durationMs: 600_000, restarts: [] });

  it('reports every lane counter over the seeds, its guarantees, feasibility and the front', () => {
    const r = planSweep(
      sweep({
        grid: { 'lanes.A.client.store': ['connection', 'durable'] },
        constraints: ['A.consentPrompts <= 1000']
      }),
      short()
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const plan = r.plan;
    const runs = plan.points.map((p) =>
      plan.seeds.map((s) => runOnce(p.scenario, s, plan.metrics))
    );
    const res = sweepResults(plan, runs);
    expect(res.points.map((p) => p.settings)).toEqual([
      { 'lanes.A.client.store': 'connection' },
      { 'lanes.A.client.store': 'durable' }
    ]);
    const [conn, durable] = res.points as [PointResult, PointResult];
    // What the lesson teaches: a connection-scoped store asks again on every reconnect.
    expect(conn.metrics['A.consentPrompts']!.mean).toBeGreaterThan(
      durable.metrics['A.consentPrompts']!.mean
    );
    expect(conn.metrics['A.consentPrompts']!.bySeed).toHaveLength(2);
    // 25 lane counters × 2 lanes (consentSkipped and unaskedSpendMicros came with askAbove).
    expect(Object.keys(conn.metrics)).toHaveLength(50);
    expect(conn.guarantees['one-consent']).toBe('held');
    expect(conn.broken).toEqual([]);
    // A durable lane A is the same client as lane B: same prompts, on each seed.
    expect(durable.metrics['A.consentPrompts']!.bySeed).toEqual(
      durable.metrics['B.consentPrompts']!.bySeed
    );
    expect(res.pareto).toContain(1);
    const csv = pointsCsv(plan, res).split('\n');
    expect(csv[0]).toMatch(
      /^point,lanes\.A\.client\.store,feasible,pareto,broken,A\.requests mean,/
    );
    expect(csv[1]).toMatch(/^0,connection,true,/);
    expect(csv).toHaveLength(4);
  });
});

describe('the Pareto front', () => {
  /** What the front is, by definition: feasible points no feasible point is at least as good as on
   * every objective and strictly better on one — written the slow, obvious way. */
  function bruteForce(vs: (number[] | null)[], dirs: ('min' | 'max')[]): number[] {
    const better = (a: number, b: number, d: 'min' | 'max') => (d === 'min' ? a < b : a > b);
    const worse = (a: number, b: number, d: 'min' | 'max') => (d === 'min' ? a > b : a < b);
    const front: number[] = [];
    vs.forEach((v, i) => {
      if (v === null) return;
      let dominated = false;
      vs.forEach((w, j) => {
        if (w === null || i === j) return;
        const noWorse = dirs.every((d, k) => !worse(w[k]!, v[k]!, d));
        const someBetter = dirs.some((d, k) => better(w[k]!, v[k]!, d));
        if (noWorse && someBetter) dominated = true;
      });
      if (!dominated) front.push(i);
    });
    return front;
  }

  it('matches the definition on generated point sets (ties and infeasible points included)', () => {
    const dirs = fc.array(fc.constantFrom<'min' | 'max'>('min', 'max'), {
      minLength: 1,
      maxLength: 4
    });
    fc.assert(
      fc.property(
        dirs.chain((d) =>
          fc.tuple(
            fc.constant(d),
            fc.array(
              fc.option(
                fc.array(fc.integer({ min: 0, max: 5 }), {
                  minLength: d.length,
                  maxLength: d.length
                }),
                { freq: 5 }
              ),
              { maxLength: 40 }
            )
          )
        ),
        ([d, vs]) => {
          expect(paretoFront(vs, d)).toEqual(bruteForce(vs, d));
        }
      ),
      { numRuns: 300 }
    );
  });

  it('keeps both of two equal points, drops a dominated one, and ignores infeasible ones', () => {
    expect(paretoFront([[1, 1], [1, 1], [2, 1], null, [0, 5]], ['min', 'min'])).toEqual([0, 1, 4]);
    expect(
      paretoFront(
        [
          [1, 1],
          [2, 2]
        ],
        ['max', 'max']
      )
    ).toEqual([1]);
    expect(paretoFront([null, null], ['min'])).toEqual([]);
  });
});

describe('the --require gate', () => {
  const point = (prompts: number, feasible = true): PointResult => ({
    settings: {},
    metrics: {
      'A.consentPrompts': { mean: prompts, min: prompts - 1, max: prompts + 1, bySeed: [] }
    },
    feasible,
    unmet: [],
    guarantees: {},
    broken: []
  });
  const req = (t: string) => {
    const c = parseConstraint(t);
    if (!c.ok) throw new Error(c.error);
    return c.constraint;
  };

  it('passes on the first feasible point that meets every requirement, and fails when none does', () => {
    const points = [point(30), point(10, false), point(20), point(15)];
    expect(requireGate(points, [req('A.consentPrompts <= 20')])).toBe(2);
    expect(requireGate(points, [req('A.consentPrompts < 15')])).toBeNull();
    expect(requireGate(points, [req('max(A.consentPrompts) <= 16')])).toBe(3);
    expect(requireGate(points, [req('A.consentPrompts <= 20'), req('A.consentPrompts > 15')])).toBe(
      2
    );
    expect(requireGate(points, [req('A.consentPrompts == 15')])).toBe(3);
  });
});
