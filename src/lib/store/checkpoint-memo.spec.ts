import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CloneMap } from '../machine/clone';
import type { StoredDecision } from '../machine/types';
import { PresentationHistory } from '../client/presentations';
import {
  CheckpointMemo,
  checkListedCopies,
  copyAsCheckpoint,
  type ListRules
} from './checkpoint-memo';
import { ConnectionDecisionStore, engineCloneMap } from './connection-store';
import { SharedDecisionStore } from './shared-store';
import { decision as storedDecision } from './decision.testing';

const decision = (over: Partial<StoredDecision> = {}): StoredDecision =>
  storedDecision({ reason: 'user.denied', ...over });

/** A copy of `x` as an engine checkpoint holds it. */
function checkpoint<T extends object>(memo: CheckpointMemo, x: T): T {
  return copyAsCheckpoint(memo, () => new CloneMap().get(x));
}

/** A copy of a checkpoint, to run (a restore). */
const restore = <T extends object>(x: T): T => new CloneMap().get(x);

/** A store with decisions on two connections and two servers, some expiring. */
function filled(): ConnectionDecisionStore {
  const s = new ConnectionDecisionStore();
  for (let i = 0; i < 12; i++) {
    const server = `s${i % 2}`;
    s.commit(
      `c${i % 3}`,
      decision({ server, identity: `${server}:${i}`, expiresAt: i % 4 === 0 ? 100 + i : null })
    );
  }
  return s;
}

describe('stores in engine checkpoints', () => {
  it('a checkpoint keeps the value it was taken with: a lookup after it changes only the run', () => {
    const memo = new CheckpointMemo();
    const live = filled();
    const cp = checkpoint(memo, live);
    const hit = live.lookup('s1', 'c1', 's1:1', 'h1', 1);
    expect(hit?.decision.represented).toBe(1);
    const [before] = cp.entries().filter((d) => d.identity === 's1:1');
    expect(before?.represented).toBe(0);
    // Restored, it answers as the run did at the checkpoint: the first re-presentation counts 1.
    expect(restore(cp).lookup('s1', 'c1', 's1:1', 'h1', 1)?.decision.represented).toBe(1);
  });

  it('the next checkpoint shares the decisions that did not change and copies those that did', () => {
    const memo = new CheckpointMemo();
    const live = filled();
    const a = checkpoint(memo, live);
    live.lookup('s0', 'c0', 's0:0', 'h1', 1);
    live.commit('c2', decision({ server: 's1', identity: 's1:new' }));
    const b = checkpoint(memo, live);
    const byId = (s: ConnectionDecisionStore) => new Map(s.entries().map((d) => [d.identity, d]));
    const [x, y] = [byId(a), byId(b)];
    expect(y.size).toBe(x.size + 1);
    for (const [id, d] of y) {
      if (id === 's0:0' || id === 's1:new') expect(d).not.toBe(x.get(id));
      else expect(d).toBe(x.get(id));
    }
    expect(x.get('s0:0')?.represented).toBe(0);
    expect(y.get('s0:0')?.represented).toBe(1);
  });

  it('a restored store is the run at the checkpoint: same entries in the same order, its own', () => {
    const memo = new CheckpointMemo();
    const live = filled();
    // A map emptied by a lookup stays in its place: a later commit lands there in both.
    live.lookup('s0', 'c0', 's0:0', 'h1', 200);
    const cp = checkpoint(memo, live);
    const copy = restore(cp);
    expect(copy.entries()).toEqual(live.entries());
    for (const s of [live, copy]) s.commit('c0', decision({ server: 's0', identity: 's0:late' }));
    expect(copy.entries()).toEqual(live.entries());
    expect(copy.sweep(150)).toBe(live.sweep(150));
    expect(copy.entries()).toEqual(live.entries());
    expect(copy.count()).toBe(live.count());
    // Its decisions are its own: a lookup on the copy changes neither the run nor the checkpoint.
    copy.lookup('s1', 'c1', 's1:1', 'h1', 1);
    expect(live.entries().find((d) => d.identity === 's1:1')?.represented).toBe(0);
    expect(cp.entries().find((d) => d.identity === 's1:1')?.represented).toBe(0);
  });

  it('a request holding a live entry holds the store’s entry in the checkpoint and after a restore', () => {
    const memo = new CheckpointMemo();
    const live = new SharedDecisionStore();
    live.commit('c1', decision({ identity: 'held' }));
    const held = live.lookup('release-notes', 'c1', 'held', 'h1', 1)!.decision;
    const world = { store: live, inFlight: { stored: held } };
    // As an engine's copy does: the store first (engine.ts), then the requests' runs (fast.ts).
    const copy = (w: typeof world) => {
      const m = engineCloneMap();
      const store = m.get(w.store);
      return { store, inFlight: { stored: m.box(w.inFlight.stored) } };
    };
    const cp = copyAsCheckpoint(memo, () => copy(world));
    expect(cp.inFlight.stored).toBe(cp.store.entries()[0]);
    const back = copy(cp);
    back.store.lookup('release-notes', 'c1', 'held', 'h1', 2);
    expect(back.inFlight.stored.represented).toBe(2);
    expect(cp.inFlight.stored.represented).toBe(1);
  });

  it('a checkpoint is never run: changing its store throws', () => {
    const cp = checkpoint(new CheckpointMemo(), filled());
    expect(() => cp.commit('c0', decision())).toThrow(/never run/);
    expect(() => cp.lookup('s1', 'c1', 's1:1', 'h1', 1)).toThrow(/never run/);
    expect(cp.count()).toBe(12);
  });
});

describe('presentation histories in engine checkpoints', () => {
  it('a checkpoint taken before a presentation still reads the old times; a restore goes on from them', () => {
    const memo = new CheckpointMemo();
    const live = new PresentationHistory();
    for (let i = 0; i < 5; i++) live.record(`k${i % 2}`, i, { threshold: 3, windowMs: 100 });
    const a = checkpoint(memo, live);
    live.record('k0', 10, { threshold: 3, windowMs: 100 });
    const b = checkpoint(memo, live);
    const times = (h: PresentationHistory) =>
      (h['frozen'] as { keys: string[]; times: number[][] } | null)!;
    expect(times(a).keys).toEqual(['k1', 'k0']);
    expect(times(a).times).toEqual([
      [1, 3],
      [0, 2, 4]
    ]);
    expect(times(b).times).toEqual([
      [1, 3],
      [0, 2, 4, 10]
    ]);
    // k1 did not change: one list for both checkpoints.
    expect(times(b).times[0]).toBe(times(a).times[0]);
    // Restored from the first, the next presentation of k0 is the fourth in the window, as it was.
    const r = restore(a);
    expect(r.size).toBe(2);
    expect(r.record('k0', 10, { threshold: 3, windowMs: 100 })).toEqual({
      inWindow: 4,
      alert: true
    });
    expect(times(a).times[1]).toEqual([0, 2, 4]);
    expect(() => a.record('k0', 11, undefined)).toThrow(/never run/);
  });
});

describe('lists a checkpoint copies (CheckpointMemo.listed)', () => {
  interface Rec {
    key: string;
    /** Changed in place by the program (as a decision's `represented`). */
    n: number;
    /** Never changed in place: a change is a new record. */
    tag: string;
  }
  const RULES: ListRules<Rec> = {
    same: (a, b) => a.key === b.key && a.n === b.n && a.tag === b.tag,
    sameInPlace: (a, b) => a.n === b.n,
    copy: (r) => ({ ...r }),
    bytes: () => 1
  };
  const op = fc.oneof(
    fc.record({ t: fc.constant('add' as const), s: fc.nat(1), k: fc.nat(30) }),
    fc.record({ t: fc.constant('replace' as const), s: fc.nat(1), k: fc.nat(30) }),
    fc.record({ t: fc.constant('delete' as const), s: fc.nat(1), k: fc.nat(30) }),
    fc.record({ t: fc.constant('bump' as const), s: fc.nat(1), k: fc.nat(30) }),
    fc.record({ t: fc.constant('move' as const), s: fc.nat(1), k: fc.nat(30) }),
    fc.record({ t: fc.constant('checkpoint' as const) })
  );

  it('each copy holds its value, is the memo’s for it, and is shared exactly while unchanged', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 120, size: 'max' }), (ops) => {
        const memo = new CheckpointMemo();
        const owner = {};
        const sections = [new Map<string, Rec>(), new Map<string, Rec>()];
        let made = 0;
        // The copy the last checkpoint had for each live record, and its value then.
        let before = new Map<Rec, { copy: Rec; value: string }>();
        for (const o of [...ops, { t: 'checkpoint' as const }]) {
          if (o.t === 'checkpoint') {
            const live = sections.flatMap((m) => [...m.values()]);
            const listed = memo.listed(owner, RULES, live.length);
            const out: Rec[] = [];
            for (const m of sections) {
              listed.section(m);
              for (const r of m.values()) out.push(listed.copy(r));
            }
            listed.done();
            const now = new Map<Rec, { copy: Rec; value: string }>();
            live.forEach((r, i) => {
              const c = out[i]!;
              expect(c).not.toBe(r);
              expect(c).toEqual(r);
              // A request holding `r` gets this same copy (engineCloneMap's box).
              expect(memo.reuse(r, RULES.same, RULES.copy, 1)).toBe(c);
              const was = before.get(r);
              const value = JSON.stringify(r);
              if (was && was.value === value) expect(c).toBe(was.copy);
              if (was && was.value !== value) expect(c).not.toBe(was.copy);
              now.set(r, { copy: c, value });
            });
            before = now;
            continue;
          }
          const m = sections[o.s]!;
          const key = `k${o.k}`;
          const r = m.get(key);
          if (o.t === 'add' && !r) m.set(key, { key, n: 0, tag: `t${made++}` });
          else if (o.t === 'replace' && r) m.set(key, { ...r, tag: `t${made++}` });
          else if (o.t === 'delete') m.delete(key);
          else if (o.t === 'bump' && r) r.n++;
          else if (o.t === 'move' && r) {
            m.delete(key);
            m.set(key, r);
          }
        }
      })
    );
  });

  it('a field changed in place that sameInPlace does not compare fails the checks', () => {
    const memo = new CheckpointMemo();
    const owner = {};
    const r: Rec = { key: 'a', n: 0, tag: 'x' };
    const list = (): Rec[] => {
      const listed = memo.listed(owner, RULES, 1);
      listed.section('s');
      const out = [listed.copy(r)];
      listed.done();
      return out;
    };
    list();
    r.tag = 'changed in place';
    expect(list).toThrow(/changed in place/);
    // Unchecked (the playground), such a copy is reused: what the checks exist to catch.
    checkListedCopies(false);
    try {
      expect(list()[0]!.tag).toBe('changed in place');
      r.tag = 'again';
      expect(list()[0]!.tag).toBe('changed in place');
    } finally {
      checkListedCopies(true);
    }
  });
});
