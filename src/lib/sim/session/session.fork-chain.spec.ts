/**
 * A fork of a fork (issue #10): forking a forked run keeps the first fork's history of the lane
 * the second leaves alone — including the later changes the first fork scheduled for it — and
 * drops the first fork's history of the lane the second changes. Seeks and reloads re-create the
 * chain.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ForkSpec } from '../engine/fork';
import type { LaneId, StoreScope } from '../../machine/vocabulary';
import { Session } from './session';
import { only, snap } from './replies.testing';

const data = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
  string,
  unknown
>;
const MIN = 60_000;

const config = (store: StoreScope, threshold = 40) => ({
  store,
  alert: { threshold, windowMs: 600_000 }
});
const fork = (atMin: number, lane: LaneId, store: StoreScope, threshold = 40) =>
  ({
    version: 1,
    atMs: atMin * MIN,
    lane,
    change: { kind: 'config', client: config(store, threshold), what: `fork ${atMin}` }
  }) satisfies ForkSpec;

/** F1: lane A made durable at 10 min, on a base run whose lane B goes connection-scoped at 40. */
const F1 = fork(10, 'A', 'durable');

function load() {
  const s = new Session();
  const [r] = s.handle({ type: 'load', scenario: data });
  if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
  return { s, start: r.start, end: r.end };
}

/** The base run: lane B's store made connection-scoped at 40 min. */
function base() {
  const run = load();
  run.s.handle({ type: 'advance', to: run.start + 40 * MIN });
  run.s.handle({ type: 'setConfig', lane: 'B', client: config('connection'), what: 'B at 40' });
  return run;
}

/** The base run, played to 12 min, back to 10 and forked there (F1). */
function firstFork() {
  const run = base();
  run.s.handle({ type: 'seek', t: run.start + 10 * MIN });
  expect(only(run.s.handle({ type: 'fork', fork: F1 }), 'forked')[0]).toMatchObject({ ok: true });
  return run;
}

function secondFork(f2: ForkSpec) {
  const run = firstFork();
  run.s.handle({ type: 'advance', to: run.start + 20 * MIN });
  const [r] = only(run.s.handle({ type: 'fork', fork: f2 }), 'forked');
  expect(r).toMatchObject({ ok: true, t: run.start + 20 * MIN });
  return run;
}

const atEnd = (run: { s: Session; end: number }) =>
  snap(run.s.handle({ type: 'advance', to: run.end }));

describe('a fork of a fork', () => {
  it('keeps the first fork’s scheduled history of the other lane (lane B’s change at 40 min)', () => {
    const unforked = atEnd(base());
    const f2 = secondFork(fork(20, 'A', 'connection', 5));
    const end = atEnd(f2);
    // Lane B was never forked: its numbers are the base run's, its 40-minute change included.
    expect(end.lanes.B.scope).toBe('connection');
    expect(end.lanes.B.counters).toEqual(unforked.lanes.B.counters);
    expect(end.marks.filter((m) => m.kind === 'fork').map((m) => m.lane)).toEqual(['A', 'A']);
  });

  it('keeps lane A’s first-fork numbers when the second fork changes lane B', () => {
    const f1 = atEnd(firstFork());
    const f2 = secondFork(fork(20, 'B', 'durable', 5));
    const end = atEnd(f2);
    expect(end.lanes.A.counters).toEqual(f1.lanes.A.counters);
    expect(end.lanes.A.scope).toBe('durable');
    // Lane B's base-run change at 40 min belonged to the branch the second fork left.
    expect(end.lanes.B.scope).toBe('durable');
    expect(end.marks.some((m) => m.what === 'B at 40')).toBe(false);
  });

  it('a reload re-creates the chain: the same numbers as the live run with a restart there', () => {
    const f2 = secondFork(fork(20, 'B', 'durable', 5));
    const { s, start, end } = f2;
    s.handle({ type: 'advance', to: start + 30 * MIN });
    const [tl] = only(s.handle({ type: 'timeline' }), 'timeline');
    expect(tl!.fork?.parents?.map((p) => p.spec)).toEqual([F1]);
    s.handle({ type: 'restart' });
    const want = snap(s.handle({ type: 'advance', to: end }));

    const reloaded = new Session();
    reloaded.handle({
      type: 'load',
      scenario: data,
      at: { t: tl!.t, actions: tl!.actions, fork: tl!.fork }
    });
    const got = snap(reloaded.handle({ type: 'advance', to: end }));
    expect(got.lanes.A.counters).toEqual(want.lanes.A.counters);
    expect(got.lanes.B.counters).toEqual(want.lanes.B.counters);
    const [state] = only(reloaded.handle({ type: 'fork?' }), 'forkState');
    expect(state!.forks.map((f) => f.atMs)).toEqual([10 * MIN, 20 * MIN]);
  });

  it('seeks walk down the chain: second fork, first fork, base run — and back up', () => {
    const f1End = atEnd(firstFork());
    const f2 = secondFork(fork(20, 'B', 'durable', 5));
    const { s, start } = f2;
    const at45 = snap(s.handle({ type: 'advance', to: start + 45 * MIN }));
    const [within] = only(s.handle({ type: 'seek', t: start + 25 * MIN }), 'seeked');
    expect(within!.forks.map((f) => f.lane)).toEqual(['A', 'B']);
    expect(snap(s.handle({ type: 'seek', t: start + 45 * MIN })).lanes).toEqual(at45.lanes);

    const [first] = only(s.handle({ type: 'seek', t: start + 15 * MIN }), 'seeked');
    expect(first!.fork).toEqual(F1);
    expect(first!.forks).toEqual([F1]);
    // On the first fork again: its end is the first fork's end.
    const again = snap(s.handle({ type: 'seek', t: f2.end }));
    expect(again.lanes.A.counters).toEqual(f1End.lanes.A.counters);
    expect(again.lanes.B.counters).toEqual(f1End.lanes.B.counters);

    const [none] = only(s.handle({ type: 'seek', t: start + 5 * MIN }), 'seeked');
    expect(none!.forks).toEqual([]);
  });

  it('a fork made before the run’s fork point is made on the run that fork was made from', () => {
    const run = firstFork();
    run.s.handle({ type: 'advance', to: run.start + 20 * MIN });
    const early = fork(5, 'B', 'durable', 5);
    expect(only(run.s.handle({ type: 'fork', fork: early }), 'forked')[0]).toMatchObject({
      ok: true,
      t: run.start + 5 * MIN
    });
    const [state] = only(run.s.handle({ type: 'fork?' }), 'forkState');
    expect(state!.forks).toEqual([early]);
    // Lane A is the base run's again (connection-scoped); lane B is the forked lane, so the base
    // run's later change to it (40 min) belonged to the branch left behind.
    const end = atEnd(run);
    expect(end.lanes.A.scope).toBe('connection');
    expect(end.lanes.B.scope).toBe('durable');
  });
});
