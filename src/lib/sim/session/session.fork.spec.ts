/** A forked run stays forked: a seek back within it, and a reload (run memory), re-create it. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ForkSpec } from '../engine/fork';
import { Session } from './session';
import { only, snap } from './replies.testing';

const data = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
  string,
  unknown
>;
const MIN = 60_000;
const laneA = (data.lanes as { A: { client: Record<string, unknown> } }).A.client;
const FORK: ForkSpec = {
  version: 1,
  atMs: 10 * MIN,
  lane: 'A',
  change: { kind: 'config', client: { ...laneA, store: 'durable' }, what: 'lane A made durable' }
};

function forked() {
  const s = new Session();
  const [r] = s.handle({ type: 'load', scenario: data });
  if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
  const start = r.start;
  // A lane B edit after the fork point, on the base run: the fork keeps it (lane B's history).
  s.handle({ type: 'advance', to: start + 20 * MIN });
  s.handle({ type: 'restart' });
  s.handle({ type: 'seek', t: start + 10 * MIN });
  const [f] = only(s.handle({ type: 'fork', fork: FORK }), 'forked');
  expect(f).toMatchObject({ ok: true, t: start + 10 * MIN });
  return { s, start, end: r.end };
}

describe('a forked run', () => {
  it('says what re-creates it: the fork, the actions it was made from, its own actions', () => {
    const { s, start } = forked();
    s.handle({ type: 'advance', to: start + 25 * MIN });
    s.handle({
      type: 'setPolicy',
      lane: 'B',
      policy: (data.lanes as { B: { policy: never } }).B.policy
    });
    const [tl] = only(s.handle({ type: 'timeline' }), 'timeline');
    expect(tl!.fork?.spec).toEqual(FORK);
    expect(tl!.fork?.base.map((a) => a.kind)).toEqual(['restart']);
    expect(tl!.actions.map((a) => a.kind)).toEqual(['policy']);
  });

  it('a reload resumes the fork: the numbers equal the forked run with a restart there', () => {
    const { s, start, end } = forked();
    s.handle({ type: 'advance', to: start + 30 * MIN });
    const [tl] = only(s.handle({ type: 'timeline' }), 'timeline');
    s.handle({ type: 'restart' });
    const want = snap(s.handle({ type: 'advance', to: end }));

    const reloaded = new Session();
    const rs = reloaded.handle({
      type: 'load',
      scenario: data,
      at: { t: tl!.t, actions: tl!.actions, fork: tl!.fork }
    });
    expect(only(rs, 'restarted')).toHaveLength(1);
    const view = snap(reloaded.handle({ type: 'advance', to: end }));
    expect(view.marks.filter((m) => m.kind === 'fork')).toHaveLength(1);
    expect(view.lanes.A.counters).toEqual(want.lanes.A.counters);
    expect(view.lanes.B.counters).toEqual(want.lanes.B.counters);
    // And it is still a fork: its timeline says so.
    const [again] = only(reloaded.handle({ type: 'timeline' }), 'timeline');
    expect(again!.fork?.spec).toEqual(FORK);
  });

  it('a seek back within the fork stays on it; before the fork point, the unforked run', () => {
    const { s, start } = forked();
    const at30 = snap(s.handle({ type: 'advance', to: start + 30 * MIN }));
    const [within] = only(s.handle({ type: 'seek', t: start + 15 * MIN }), 'seeked');
    expect(within!.fork).toEqual(FORK);
    const back = snap(s.handle({ type: 'seek', t: start + 30 * MIN }));
    expect(back.lanes).toEqual(at30.lanes);

    const [before] = only(s.handle({ type: 'seek', t: start + 5 * MIN }), 'seeked');
    expect(before!.fork).toBeNull();
    // On the run it was made from, the restart at 20 min is there again; lane A is not durable.
    const base = snap(s.handle({ type: 'seek', t: start + 30 * MIN }));
    expect(base.lanes.A.scope).toBe('connection');
    // Two marks each: the scenario's own restart at 30 min and this one.
    expect(base.marks.filter((m) => m.kind === 'restart')).toHaveLength(4);
    const [tl] = only(s.handle({ type: 'timeline' }), 'timeline');
    expect(tl!.fork).toBeNull();
  });
});

describe("a fork that changes a lane's budget window", () => {
  it('never lets the new window take more than its budget (the time-travel fuzz found it did)', () => {
    const scenario = JSON.parse(readFileSync('static/scenarios/budget-window.json', 'utf8'));
    const s = new Session();
    const [l] = only(s.handle({ type: 'load', scenario }), 'loaded');
    if (!l?.ok) throw new Error('not loaded');
    s.handle({ type: 'advance', to: l.start + 20 * MIN });
    const budget = { amount: '0.048139', currency: 'USD', windowMs: 3_054_301 };
    const defaults = {
      sampling: true,
      allowedModels: ['example-model-v2'],
      defaultModel: 'example-model-v2',
      maxInputTokens: 19_047,
      maxContext: 'thisServer',
      rateLimit: null,
      budget,
      perCallCap: { tokens: 2616 },
      consent: 'allow'
    };
    const [f] = only(
      s.handle({
        type: 'fork',
        fork: {
          version: 1,
          atMs: 20 * MIN,
          lane: 'A',
          change: { kind: 'policy', policy: { version: 1, defaults, servers: {} } }
        } as ForkSpec
      }),
      'forked'
    );
    expect(f).toMatchObject({ ok: true });
    const end = snap(s.handle({ type: 'seek', t: l.end }));
    const overdraw = end.guarantees.find((g) => g.id === 'no-overdraw');
    expect(overdraw).toMatchObject({ status: 'held', violations: 0 });
    expect(overdraw!.checked).toBeGreaterThan(0);
  });
});
