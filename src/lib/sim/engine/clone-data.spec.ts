/**
 * Engine checkpoints, the data half: each class that holds run state is copied by its copy rules
 * (clone.ts). For each, drive an instance, copy it mid-way, go on with the same calls on both and
 * get the same answers; then change the copy and find the original as it was.
 */
import { describe, expect, it } from 'vitest';
import { record, T0 } from '../checks/invariants/records.testing';
import type { AuthOutput } from '../../machine/authorize';
import type { AuditRecord, Frame, StoredDecision } from '../../machine/types';
import { ConnectionDecisionStore } from '../../store/connection-store';
import { ExpiryHeap } from '../../store/expiry';
import { CloneMap, copyable, NotCloneable } from '../../machine/clone';
import { sdkFrameProblem as conformanceCheck } from '../checks/conformance';
import { InvariantChecker, type ChargeContext } from '../checks/invariants';
import { Tally } from '../checks/invariants/catalogue';
import { SharedDecisionStore } from '../../store/shared-store';
import { isLive } from '../../store/decision-store';
import { CheckpointMemo, copyAsCheckpoint } from '../../store/checkpoint-memo';
import { tapStore } from './store-tap';
import { liveDecisions } from '../../store/decision-store';
import { LifetimeTracker } from '../checks/lifetimes';
import { LoopTracker } from '../checks/loops';
import { emptyCounters, LaneMetrics, type LaneCounters } from './metrics';
import { PresentationHistory } from '../../client/presentations';
import { DEFAULT_PROVIDER, cardsByModel } from '../actors/provider';
import { Rng } from '../world/rng';

const cards = cardsByModel(DEFAULT_PROVIDER.cards);
// Any object the engine copy copies, by its class's copy rules (copyable).
const copy = <T extends object>(x: T): T => new CloneMap().get(x);

function decision(over: Partial<StoredDecision> = {}): StoredDecision {
  return {
    server: 's',
    identity: 's:abc',
    verdict: 'denied',
    reason: 'user.denied',
    retryable: false,
    decidedAt: T0,
    expiresAt: null,
    policyHash: 'h',
    represented: 0,
    recent: [],
    ...over
  };
}

const denial = (id: number | string): Frame => ({
  jsonrpc: '2.0',
  id,
  error: {
    code: -32003,
    message: 'Sampling denied',
    data: { reason: 'user.denied', server: 's', retryable: false }
  }
});
const completion = (id: number | string, text = 'hello'): Frame => ({
  jsonrpc: '2.0',
  id,
  result: {
    role: 'assistant',
    content: { type: 'text', text },
    model: 'example-model-v2',
    stopReason: 'endTurn'
  }
});

describe('CloneMap', () => {
  it('copies an object once: asked twice, it gives the same copy', () => {
    const m = new CloneMap();
    const store = new ConnectionDecisionStore();
    const rng = new Rng(7);
    const a = m.get(store);
    expect(m.get(store)).toBe(a);
    expect(a).not.toBe(store);
    expect(m.get(rng)).toBe(m.get(rng));
    // A store shared by two owners stays shared in the copy.
    const shared = new SharedDecisionStore();
    expect(m.get(shared)).toBe(m.get(shared));
  });
});

describe('copy rules', () => {
  class Part {
    n = 1;
  }
  copyable(Part, { name: 'spec.Part' });
  class Owner {
    part = new Part();
    list = [new Part()];
    table = new Map([['k', { hits: 1 }]]);
    config = { limit: 3 };
    seen = [{ at: 1 }];
    handle: { close(): void } | undefined = { close() {} };
    cache: Map<string, number> = new Map([['x', 1]]);
    constructor(readonly name: string) {}
  }
  copyable(Owner, {
    name: 'spec.Owner',
    fields: {
      config: 'shared',
      seen: 'shallow',
      handle: 'dropped',
      cache: { fresh: () => new Map() }
    }
  });
  class Later extends Owner {
    extra = { added: 1 };
  }

  it('copies every field deep unless its rule says otherwise', () => {
    const a = new Owner('a');
    a.list.push(a.part);
    const b = copy(a);
    expect(b).toBeInstanceOf(Owner);
    expect(b.name).toBe('a');
    expect(b.part).not.toBe(a.part);
    expect(b.part).toBeInstanceOf(Part);
    // Sharing is kept: the part listed twice is one copy.
    expect(b.list[1]).toBe(b.part);
    expect(b.table.get('k')).toEqual({ hits: 1 });
    expect(b.table.get('k')).not.toBe(a.table.get('k'));
    expect(b.config).toBe(a.config);
    expect(b.seen).not.toBe(a.seen);
    expect(b.seen[0]).toBe(a.seen[0]);
    expect(b.handle).toBeUndefined();
    expect(b.cache.size).toBe(0);
    expect(a.cache.size).toBe(1);
  });

  it('a field a subclass adds is copied with the rules it inherits', () => {
    const a = new Later('later');
    const b = copy(a);
    expect(b).toBeInstanceOf(Later);
    expect(b.extra).toEqual({ added: 1 });
    expect(b.extra).not.toBe(a.extra);
    expect(b.config).toBe(a.config);
  });

  it('a function in a field cannot be copied: the error names the class and the field', () => {
    const a = new Owner('f');
    (a as unknown as { hook: () => void }).hook = () => {};
    expect(() => copy(a)).toThrow(NotCloneable);
    expect(() => copy(a)).toThrow(/Owner\.hook holds a function/);
    const b = new Owner('g');
    b.table.set('fn', (() => {}) as unknown as { hits: number });
    expect(() => copy(b)).toThrow(/Owner\.table holds a function/);
  });

  it('a `both` field is written into the copy and the original; `fresh` sees the map', () => {
    class Holder {
      owns = true;
      // Filled before `held`: the map copies `held` when the view asks for it.
      view: { of: { n: number } } | null = null;
      held = { n: 1 };
      constructor(readonly size: number) {}
    }
    const made: Holder[] = [];
    copyable(Holder, {
      name: 'spec.Holder',
      fields: {
        owns: { both: false },
        // The copy's view is of the copy's `held`, whatever the order the fields are filled in.
        view: { fresh: (h: Holder, m: CloneMap) => h.view && { of: m.get(h.view.of) } }
      },
      blank: (h) => {
        const c = new Holder(h.size);
        made.push(c);
        return c;
      }
    });
    const a = new Holder(4);
    a.view = { of: a.held };
    const b = copy(a);
    expect(made).toEqual([b]);
    expect(b.size).toBe(4);
    expect([a.owns, b.owns]).toEqual([false, false]);
    expect(b.view!.of).not.toBe(a.held);
    expect(b.view!.of).toBe(b.held);
  });

  it('a class that refuses a copy says why, and nothing is copied', () => {
    class Busy {
      busy = true;
    }
    copyable(Busy, { name: 'spec.Busy', refuse: (x) => (x.busy ? 'it is busy' : null) });
    const a = new Busy();
    expect(() => copy(a)).toThrow(NotCloneable);
    expect(() => copy(a)).toThrow(/it is busy/);
    a.busy = false;
    expect(copy(a)).toBeInstanceOf(Busy);
  });

  it('an object of a class without rules cannot be copied', () => {
    class Unknown {}
    const a = new Owner('u');
    (a as unknown as { other: Unknown }).other = new Unknown();
    expect(() => copy(a)).toThrow(/class Unknown is not copyable \(Owner\.other\)/);
  });
});

describe('Rng', () => {
  it('a copy draws the same numbers from where it was copied, independently', () => {
    const a = new Rng(42);
    for (let i = 0; i < 37; i++) a.next();
    const b = copy(a);
    expect(b.seed).toBe(a.seed);
    const drawA = [a.next(), a.int(1, 6), a.exponential(10), a.jitter(100, 0.2), a.nextUint32()];
    const drawB = [b.next(), b.int(1, 6), b.exponential(10), b.jitter(100, 0.2), b.nextUint32()];
    expect(drawB).toEqual(drawA);
    expect(b.fork('x').next()).toBe(a.fork('x').next());
    // Independent: draws on the copy leave the original's stream where it was.
    const c = copy(a);
    for (let i = 0; i < 5; i++) b.next();
    expect(a.next()).toBe(c.next());
  });
});

describe('LaneMetrics', () => {
  const out = (over: Partial<AuditRecord>, path: string[]): AuthOutput => ({
    frame: null,
    audit: record(over),
    path,
    verdict: null
  });
  const feed = (x: LaneMetrics, k: number) => {
    x.request();
    x.decided(
      out({ outcome: 'denied', reason: `r${k % 3}`, alert: k % 2 === 0, identity: `i${k % 4}` }, [
        'idle',
        'checking',
        'denied'
      ]),
      k % 2 === 0
    );
    x.decided(
      out({ outcome: 'trimmed', reason: null, tokensIn: k, tokensOut: 2 * k }, [
        'idle',
        'calling',
        'done'
      ]),
      false
    );
    x.charge(100 * k);
    x.report({ type: 'task.completed', task: k, degradedAware: k % 3 === 0 });
    x.report({ type: 'retry', task: k });
    x.sample(T0 + k * 1_000);
  };

  it('a copy counts, samples and charts as the original would', () => {
    const a = new LaneMetrics();
    for (let k = 0; k < 10; k++) feed(a, k);
    const b = copy(a);
    expect(b.counters).toEqual(a.counters);
    expect(b.series).toEqual(a.series);
    expect(b.edges).toEqual(a.edges);
    for (let k = 10; k < 20; k++) {
      feed(a, k);
      feed(b, k);
    }
    expect(b.counters).toEqual(a.counters);
    expect(b.series).toEqual(a.series);
    expect(b.edges).toEqual(a.edges);
    expect(b.seriesAt(T0 + 60_000)).toEqual(a.seriesAt(T0 + 60_000));
    // #alerted is copied: identities alerted before the copy are not counted again.
    expect(b.counters.alertedIdentities).toBe(2);
  });

  it('changing the copy leaves the original as it was', () => {
    const a = new LaneMetrics();
    for (let k = 0; k < 5; k++) feed(a, k);
    const before = structuredClone({ c: a.counters, s: a.series, e: a.edges });
    const b = copy(a);
    expect(b.counters).not.toBe(a.counters);
    expect(b.counters.frames).not.toBe(a.counters.frames);
    expect(b.counters.denials).not.toBe(a.counters.denials);
    expect(b.series.t).not.toBe(a.series.t);
    for (let k = 5; k < 9; k++) feed(b, k);
    b.decided(out({ alert: true, identity: 'new' }, ['idle', 'elsewhere']), true);
    expect({ c: a.counters, s: a.series, e: a.edges }).toEqual(before);
    // The original still counts an identity first alerted on the copy as new.
    a.decided(out({ alert: true, identity: 'new' }, ['idle', 'elsewhere']), true);
    expect(a.counters.alertedIdentities).toBe(before.c.alertedIdentities + 1);
  });
});

describe('PresentationHistory', () => {
  const cfg = { threshold: 2, windowMs: 10_000 };
  it('a copy alerts as the original would, with the same least-recent eviction', () => {
    const a = new PresentationHistory(3);
    a.record('k1', 0, cfg);
    a.record('k2', 1_000, cfg);
    a.record('k1', 2_000, cfg);
    a.record('k3', 3_000, cfg);
    const b = copy(a);
    expect(b.maxIdentities).toBe(3);
    expect(b.size).toBe(a.size);
    const steps: [string, number][] = [
      ['k4', 4_000], // evicts k2 (least recently presented)
      ['k1', 5_000],
      ['k2', 6_000],
      ['k1', 7_000],
      ['k3', 20_000]
    ];
    for (const [k, t] of steps) expect(b.record(k, t, cfg)).toEqual(a.record(k, t, cfg));
    expect(b.size).toBe(a.size);
  });

  it('changing the copy leaves the original as it was', () => {
    const a = new PresentationHistory();
    a.record('k', 0, cfg);
    a.record('k', 1_000, cfg);
    const b = copy(a);
    b.record('k', 2_000, cfg);
    b.clear();
    expect(b.size).toBe(0);
    expect(a.size).toBe(1);
    expect(a.record('k', 2_000, cfg)).toEqual({ inWindow: 3, alert: true });
  });
});

describe('LoopTracker', () => {
  const alert = { threshold: 3, windowMs: 10_000 };
  const at = (t: number, identity = 's:loop', durationMs = 0) =>
    record({ t: T0 + t, identity, durationMs });

  it('a copy counts presentations as the original would, independently', () => {
    const a = new LoopTracker();
    a.presented('A', at(0), alert);
    a.presented('A', at(4_000), alert);
    a.presented('B', at(4_500), alert);
    const b = copy(a);
    const next = [at(8_000), at(9_000, 's:loop', 6_000), at(9_500, 's:other'), at(40_000)];
    for (const r of next) expect(b.presented('A', r, alert)).toEqual(a.presented('A', r, alert));
    // The copy's extra presentations are not the original's.
    const c = copy(a);
    for (let i = 0; i < 5; i++) c.presented('B', at(41_000 + i), alert);
    expect(a.presented('B', at(42_000), alert)).toEqual({ inWindow: 1, loop: false });
  });

  it('a copy sweeps when the original would (its counters are copied)', () => {
    const a = new LoopTracker();
    for (let i = 0; i < 4090; i++) a.presented('A', at(i, `s:${i}`), alert);
    const b = copy(a);
    // The 4096th presentation sweeps identities idle for more than two windows.
    for (let i = 0; i < 10; i++) {
      const r = at(100_000 + i * 1_000, `s:${i % 2}`);
      expect(b.presented('A', r, alert)).toEqual(a.presented('A', r, alert));
    }
    // Both swept the idle identities: under a window wide enough to reach back, neither counts
    // the forgotten presentation (an unswept tracker would say 2).
    const wide = { threshold: 3, windowMs: 10_000_000 };
    expect(a.presented('A', at(200_000, 's:5'), wide)).toEqual({ inWindow: 1, loop: false });
    expect(b.presented('A', at(200_000, 's:5'), wide)).toEqual({ inWindow: 1, loop: false });
  });
});

describe('LifetimeTracker', () => {
  const dialog = (over: Partial<AuditRecord>) =>
    record({ consentShown: true, consent: 'denied', durationMs: 3_000, ...over });

  const commit = (x: LifetimeTracker, t: number, policyHash: string, expiresAt: number | null) =>
    x.store('A', t, {
      type: 'commit',
      scope: 'durable',
      connection: 's#1',
      decision: decision({ expiresAt, policyHash })
    });
  /** The steps after the copy: a repeat while the decision is live, an edit, a fresh lifetime. */
  const tail = (x: LifetimeTracker) => [
    x.dialog('A', dialog({ requestId: 2, t: T0 + 30_000 })),
    x.store('A', T0 + 40_000, { type: 'invalidate', server: 's' }),
    // Decided under the old policy, committed after the edit: starts no lifetime.
    commit(x, T0 + 41_000, 'old', null),
    x.dialog('A', dialog({ requestId: 3, t: T0 + 45_000, durationMs: 10_000 })),
    x.dialog('A', dialog({ requestId: 4, t: T0 + 50_000 })),
    commit(x, T0 + 52_000, 'new', T0 + 90_000),
    x.dialog('A', dialog({ requestId: 5, t: T0 + 60_000 })),
    x.store('A', T0 + 70_000, { type: 'opened', scope: 'connection', held: [] }),
    x.dialog('A', dialog({ requestId: 6, t: T0 + 75_000 }))
  ];

  it('a copy judges dialogs as the original would', () => {
    const a = new LifetimeTracker();
    a.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    commit(a, T0 + 3_000, 'old', T0 + 63_000);
    expect(a.dialog('A', dialog({ requestId: 1, t: T0 + 3_000 }))).toBeNull();
    const b = copy(a);
    const fromA = tail(a);
    expect(tail(b)).toEqual(fromA);
    // The run judges something: two dialogs while the first decision was live (the second one
    // started before the edit), one while the decision committed under the new policy is live.
    expect(fromA.map((x) => x?.kind ?? null)).toEqual([
      'stored',
      null,
      null,
      'stored',
      null,
      null,
      'stored',
      null,
      null
    ]);
  });

  it('changing the copy leaves the original as it was', () => {
    const a = new LifetimeTracker();
    a.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    commit(a, T0 + 3_000, 'old', T0 + 63_000);
    a.dialog('A', dialog({ requestId: 1, t: T0 + 3_000 }));
    const twin = copy(a);
    const b = copy(a);
    tail(b);
    b.store('A', T0 + 80_000, { type: 'clear' });
    for (let i = 0; i < 5_000; i++)
      b.dialog('A', dialog({ requestId: 100 + i, t: T0 + 90_000 + i }));
    expect(tail(a)).toEqual(tail(twin));
  });

  it('the original going on leaves a copy as it was (they share spans until either changes one)', () => {
    const a = new LifetimeTracker();
    a.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    commit(a, T0 + 3_000, 'old', T0 + 63_000);
    a.dialog('A', dialog({ requestId: 1, t: T0 + 3_000 }));
    const checkpoint = copy(a);
    // The lifetime ends at 10 s in the original only: written into a shared span, it would end
    // the copy's too, and its dialog at 30 s would no longer be a repeat.
    a.store('A', T0 + 10_000, { type: 'clear' });
    expect(a.dialog('A', dialog({ requestId: 2, t: T0 + 30_000 }))).toBeNull();
    commit(a, T0 + 31_000, 'old', null);
    for (let i = 0; i < 5_000; i++)
      a.dialog('A', dialog({ requestId: 100 + i, t: T0 + 90_000 + i }));
    expect(tail(checkpoint).map((x) => x?.kind ?? null)).toEqual([
      'stored',
      null,
      null,
      'stored',
      null,
      null,
      'stored',
      null,
      null
    ]);
  });
});

describe('Tally', () => {
  it('a copy counts and keeps offenders on its own', () => {
    const a = new Tally();
    a.checked = 3;
    a.add({ lane: 'A', seq: 1, request: 'c/1', t: 1, what: 'x' });
    const b = copy(a);
    expect(b).toEqual(a);
    expect(b.offenders).not.toBe(a.offenders);
    expect(b.offenders[0]).not.toBe(a.offenders[0]);
    b.add({ lane: 'A', seq: 2, request: 'c/2', t: 2, what: 'y' });
    b.checked++;
    b.offenders[0]!.what = 'changed';
    expect(a.violations).toBe(1);
    expect(a.checked).toBe(3);
    expect(a.offenders).toEqual([{ lane: 'A', seq: 1, request: 'c/1', t: 1, what: 'x' }]);
  });
});

describe('InvariantChecker', () => {
  const alert = { threshold: 3, windowMs: 10_000 };
  const limits: ChargeContext = {
    budget: { micros: 500, windowMs: 60_000, currency: 'USD' },
    pool: { micros: 700, currency: 'USD' },
    alert
  };

  /** The run as a list of steps, so both checkers can be fed the same tail. */
  function steps(): ((c: InvariantChecker) => void)[] {
    const out: ((c: InvariantChecker) => void)[] = [];
    const answer = (r: AuditRecord, frame: Frame | null, silence = false) =>
      out.push((c) => {
        c.request(r.lane!, r.connection, r.requestId, r.t - r.durationMs, { silence });
        c.audit(r, limits);
        if (frame) c.frame(r.lane!, r.connection, frame, r.t);
      });
    const store = (...args: Parameters<InvariantChecker['store']>) =>
      out.push((c) => c.store(...args));
    store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    let id = 0;
    // A retry loop on one identity, flagged late: loops-flagged broken once.
    for (let i = 0; i < 6; i++) {
      const r = record({ requestId: ++id, t: T0 + i * 2_000, identity: 's:loop', alert: i >= 3 });
      answer(r, denial(r.requestId));
    }
    // A consent dialog, its decision stored, then a repeat while it is live (one-consent broken).
    const first = record({
      requestId: ++id,
      t: T0 + 13_000,
      durationMs: 3_000,
      consentShown: true,
      consent: 'denied'
    });
    store('A', T0 + 13_000, {
      type: 'commit',
      scope: 'durable',
      connection: 's#1',
      decision: decision({ expiresAt: T0 + 70_000 })
    });
    answer(first, denial(first.requestId));
    // A request left in flight across the copy, answered after it.
    const open = record({ requestId: 'open', t: T0 + 20_000, durationMs: 5_000 });
    out.push((c) =>
      c.request('A', open.connection, open.requestId, T0 + 15_000, { silence: false })
    );
    const early = record({
      requestId: ++id,
      t: T0 + 30_000,
      durationMs: 3_000,
      consentShown: true,
      consent: 'denied'
    });
    answer(early, denial(early.requestId));
    out.push((c) => c.audit(open, limits));
    // Money: calls charged against the window and the pool, one overdrawing both.
    for (let i = 0; i < 4; i++) {
      const r = record({
        requestId: ++id,
        t: T0 + 31_000 + i * 1_000,
        outcome: 'allowed',
        reason: null,
        model: 'example-model-v2',
        tokensIn: 10,
        tokensOut: 5,
        cost: '0.000200'
      });
      answer(r, completion(r.requestId));
    }
    out.push((c) => c.frame('A', open.connection, denial(open.requestId), T0 + 20_000));
    // A silenced denial with silence on, a policy edit, a fresh dialog after it.
    const quiet = record({ requestId: ++id, t: T0 + 40_000, silenced: true });
    answer(quiet, null, true);
    store('A', T0 + 50_000, { type: 'invalidate', server: 's' });
    const again = record({
      requestId: ++id,
      t: T0 + 55_000,
      durationMs: 3_000,
      consentShown: true,
      consent: 'approved',
      outcome: 'allowed',
      reason: null
    });
    store('A', T0 + 55_000, {
      type: 'commit',
      scope: 'durable',
      connection: 's#1',
      decision: decision({ verdict: 'allowed', reason: null, policyHash: 'h2' })
    });
    answer(again, denial(again.requestId));
    // A second frame for a request already answered.
    out.push((c) => c.frame('A', 's#1', denial(again.requestId), T0 + 56_000));
    return out;
  }

  const results = (c: InvariantChecker, now: number) =>
    c.results(now, { A: emptyCounters() } as Record<string, LaneCounters>, 180_000);

  it('a copy made at any step goes on to the same results as the original', () => {
    const all = steps();
    for (let cut = 0; cut <= all.length; cut++) {
      const a = new InvariantChecker({ cards, validate: conformanceCheck });
      for (const s of all.slice(0, cut)) s(a);
      const b = copy(a);
      expect(results(b, T0 + 30_000)).toEqual(results(a, T0 + 30_000));
      for (const s of all.slice(cut)) {
        s(a);
        s(b);
      }
      expect(results(b, T0 + 60_000)).toEqual(results(a, T0 + 60_000));
      expect(results(b, T0 + 600_000)).toEqual(results(a, T0 + 600_000));
    }
    // The run above breaks what it means to (so the comparison compares something).
    const a = new InvariantChecker({ cards, validate: conformanceCheck });
    for (const s of all) s(a);
    const broken = results(a, T0 + 60_000)
      .filter((r) => r.status === 'broken')
      .map((r) => r.id);
    expect(broken).toEqual(
      expect.arrayContaining(['one-frame', 'one-consent', 'no-overdraw', 'loops-flagged'])
    );
  });

  it('changing the copy leaves the original as it was', () => {
    const all = steps();
    const half = Math.floor(all.length / 2);
    const a = new InvariantChecker({ cards });
    for (const s of all.slice(0, half)) s(a);
    const before = results(a, T0 + 60_000);
    const b = copy(a);
    for (const s of all.slice(half)) s(b);
    // More of the same on the copy only: new loops, repeats, spend, a second run's bytes.
    for (const s of all) s(b);
    b.sameBytes({ frames: 'a', audit: 'b' }, { frames: 'a', audit: 'c' });
    expect(results(b, T0 + 60_000)).not.toEqual(before);
    expect(results(a, T0 + 60_000)).toEqual(before);
    // And the original goes on as a fresh run of the same steps would.
    const fresh = new InvariantChecker({ cards });
    for (const s of all) {
      s(fresh);
    }
    for (const s of all.slice(half)) s(a);
    expect(results(a, T0 + 60_000)).toEqual(results(fresh, T0 + 60_000));
  });
});

describe('ExpiryHeap', () => {
  it('a copy drains the same items in the same order, and its tuples are its own', () => {
    const a = new ExpiryHeap<[string, string]>();
    const r = new Rng(3);
    for (let i = 0; i < 200; i++) a.push(r.int(0, 1_000), [`c${i}`, `s${i % 7}`]);
    const b = copy(a);
    expect(b.size).toBe(a.size);
    const drained = (h: ExpiryHeap<[string, string]>, now: number) => {
      const out: [number, string, string][] = [];
      h.drain(now, ([x, y], at) => out.push([at, x, y]));
      return out;
    };
    expect(drained(b, 300)).toEqual(drained(a, 300));
    for (let i = 0; i < 50; i++) {
      const at = r.int(200, 2_000);
      a.push(at, [`d${i}`, 's']);
      b.push(at, [`d${i}`, 's']);
    }
    expect(drained(b, 1_500)).toEqual(drained(a, 1_500));
    // Independent: the copy's tuples are not the original's, and clearing one keeps the other.
    const c = copy(a);
    let fromA: [string, string] | undefined;
    let fromC: [string, string] | undefined;
    a.drain(1_600, (ref) => (fromA ??= ref));
    expect(c.size).toBeGreaterThan(a.size);
    c.drain(1_600, (ref) => (fromC ??= ref));
    expect(fromC).toEqual(fromA);
    expect(fromC).not.toBe(fromA);
    c.clear();
    expect(a.size).toBeGreaterThan(0);
  });

  it('copies references that copy themselves through the map, and other objects once', () => {
    const m = new CloneMap();
    const tally = new Tally();
    const box = { k: 'x' };
    const a = new ExpiryHeap<Tally | { k: string }>();
    a.push(2, tally);
    a.push(1, box);
    a.push(3, box);
    const b = m.get(a);
    const refs: unknown[] = [];
    b.drain(10, (ref) => refs.push(ref));
    expect(refs).toEqual([box, tally, box]);
    expect(refs[0]).not.toBe(box);
    expect(refs[2]).toBe(refs[0]);
    expect(refs[1]).toBe(m.get(tally));
    expect(a.size).toBe(3);
  });
});

describe('the decision stores', () => {
  function drive(s: ConnectionDecisionStore | SharedDecisionStore, r: Rng) {
    for (let i = 0; i < 60; i++) {
      const server = `s${r.int(0, 2)}`;
      const connection = `${server}#${r.int(1, 3)}`;
      const expiresAt = r.chance(0.6) ? T0 + r.int(1, 120) * 1_000 : null;
      s.commit(
        connection,
        decision({
          server,
          identity: `${server}:${r.int(0, 9)}`,
          expiresAt,
          policyHash: r.chance(0.9) ? 'h' : 'old',
          recent: [T0]
        })
      );
    }
  }
  type Op = (s: ConnectionDecisionStore | SharedDecisionStore) => unknown;
  function ops(r: Rng): Op[] {
    const out: Op[] = [];
    for (let i = 0; i < 300; i++) {
      const server = `s${r.int(0, 2)}`;
      const connection = `${server}#${r.int(1, 3)}`;
      const identity = `${server}:${r.int(0, 9)}`;
      const now = T0 + i * 500;
      const k = r.int(0, 19);
      if (k < 10) out.push((s) => s.lookup(server, connection, identity, 'h', now));
      else if (k < 13) {
        const expiresAt = r.chance(0.5) ? now + r.int(1, 60) * 1_000 : null;
        out.push((s) => s.commit(connection, decision({ server, identity, expiresAt })));
      } else if (k < 16) out.push((s) => s.sweep(now));
      else if (k < 17) out.push((s) => s.invalidateServer(server));
      else if (k < 19) out.push((s) => s.closeConnection(server, connection));
      else out.push((s) => s.count());
    }
    out.push((s) => s.entries());
    return out;
  }

  for (const [name, make] of [
    ['ConnectionDecisionStore', () => new ConnectionDecisionStore()],
    ['SharedDecisionStore', () => new SharedDecisionStore()]
  ] as const) {
    it(`${name}: a copy answers every lookup, sweep and invalidation as the original`, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const a = make();
        drive(a, new Rng(seed));
        // Bump `represented` on some before the copy.
        for (const d of a.entries()) a.lookup(d.server, 's0#1', d.identity, 'h', T0);
        const b = new CloneMap().get(a);
        expect(b.entries()).toEqual(a.entries());
        expect(b.count()).toBe(a.count());
        for (const op of ops(new Rng(100 + seed))) expect(op(b)).toEqual(op(a));
        expect(b.entries()).toEqual(a.entries());
        expect(b.count()).toBe(a.count());
        expect(b.sweep(T0 + 10_000_000)).toBe(a.sweep(T0 + 10_000_000));
        expect(b.entries()).toEqual(a.entries());
      }
    });

    it(`${name}: changing the copy leaves the original as it was`, () => {
      const a = make();
      drive(a, new Rng(9));
      const before = structuredClone(a.entries());
      const count = a.count();
      const b = new CloneMap().get(a);
      // Lookups bump `represented` on the copy's entries only.
      for (const d of b.entries()) b.lookup(d.server, `${d.server}#1`, d.identity, 'h', T0);
      for (const d of b.entries()) d.recent.push(1);
      b.sweep(T0 + 60_000);
      b.invalidateServer('s1');
      b.closeConnection('s0', 's0#1');
      b.commit('s2#1', decision({ server: 's2', identity: 's2:new' }));
      expect(a.entries()).toEqual(before);
      expect(a.count()).toBe(count);
      b.clear();
      expect(b.count()).toBe(0);
      expect(a.entries()).toEqual(before);
      // The original's heap still sweeps its own expired entries.
      const live = before.filter((d) => d.expiresAt === null || d.expiresAt > T0 + 200_000).length;
      a.sweep(T0 + 200_000);
      expect(a.count()).toBe(live);
    });
  }

  it('liveCount counts the entries that still answer, as entries() filtered: store, copy, checkpoint copy, tap', () => {
    const live = (s: ConnectionDecisionStore | SharedDecisionStore, now: number) =>
      s.entries().filter((d) => isLive(d, now)).length;
    for (const make of [() => new ConnectionDecisionStore(), () => new SharedDecisionStore()]) {
      for (let seed = 1; seed <= 4; seed++) {
        const a = make();
        drive(a, new Rng(seed));
        const copy = new CloneMap().get(a);
        const frozen = copyAsCheckpoint(new CheckpointMemo(), () => new CloneMap().get(a));
        expect((frozen as unknown as { frozen: unknown }).frozen).not.toBeNull();
        const tap = tapStore(a, () => {});
        let some = 0;
        // Before, across and after the entries' expiries (some expired entries linger: no sweep).
        for (let now = T0; now <= T0 + 130_000; now += 10_000) {
          const want = live(a, now);
          some += want;
          expect(a.liveCount(now)).toBe(want);
          expect(copy.liveCount(now)).toBe(want);
          expect(frozen.liveCount(now)).toBe(want);
          expect(tap.liveCount!(now)).toBe(want);
          expect(liveDecisions(tap, now)).toBe(want);
        }
        expect(some).toBeGreaterThan(0);
        expect(a.liveCount(T0 + 130_000)).toBeLessThan(a.count());
      }
    }
  });

  it('a live entry held elsewhere (a lookup in flight) and the store share one copy', () => {
    const a = new ConnectionDecisionStore();
    a.commit('c1', decision());
    const held = a.lookup('s', 'c1', 's:abc', 'h', T0)!.decision;
    const m = new CloneMap();
    const b = m.get(a);
    const heldCopy = m.box(held);
    expect(b.lookup('s', 'c1', 's:abc', 'h', T0)!.decision).toBe(heldCopy);
    expect(heldCopy.represented).toBe(2);
    expect(held.represented).toBe(1);
    expect(heldCopy.recent).not.toBe(held.recent);
  });
});
