/**
 * `liveCount(now)` — the stored-decision count the view checkpoints show — is the entries that
 * still answer at `now`, counted one by one, whatever ran before: commits (some expired as they
 * land, some denials over an approval), lookups, sweeps, closed connections, invalidated servers,
 * clears, and copies. The stores answer it from their size right after a sweep (nothing changed
 * since): this checks that shortcut against the count it replaces, in every store kind.
 */
import 'fake-indexeddb/auto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { CloneMap } from '../machine/clone';
import { decision } from './decision.testing';
import { ConnectionDecisionStore } from './connection-store';
import { SharedDecisionStore } from './shared-store';
import { CachedDurableStore } from './cached-durable-store';
import { isLive, type DecisionStore } from './decision-store';

type Op =
  | {
      kind: 'commit';
      conn: number;
      server: number;
      id: number;
      ttl: number | null;
      approval: number | null;
    }
  | { kind: 'lookup'; conn: number; server: number; id: number; stale: boolean }
  | { kind: 'sweep' }
  | { kind: 'close'; conn: number; server: number }
  | { kind: 'invalidate'; server: number }
  | { kind: 'clear' }
  | { kind: 'wait'; ms: number };

const small = (n: number) => fc.integer({ min: 0, max: n });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('commit' as const),
      conn: small(2),
      server: small(2),
      id: small(5),
      // 0: expired as it lands (a deadline already past).
      ttl: fc.option(small(4).map((k) => k * 500)),
      approval: fc.option(small(4).map((k) => k * 1_000))
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('lookup' as const),
      conn: small(2),
      server: small(2),
      id: small(5),
      stale: fc.boolean()
    })
  },
  { weight: 4, arbitrary: fc.constant({ kind: 'sweep' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('close' as const), conn: small(2), server: small(2) })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('invalidate' as const), server: small(2) })
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: small(4).map((k) => k * 250) })
  }
);

/** Every entry that still answers at `now`, counted one by one. */
const counted = (s: DecisionStore, now: number) =>
  (s.entries() as StoredDecision[]).filter((d) => isLive(d, now)).length;

function apply(s: DecisionStore, o: Op, now: number): void {
  const server = (k: number) => `s${k}`;
  switch (o.kind) {
    case 'commit': {
      const d = decision({
        server: server(o.server),
        identity: `${server(o.server)}:${o.id}`,
        decidedAt: now,
        expiresAt: o.ttl === null ? null : now + o.ttl,
        ...(o.approval === null
          ? {}
          : { approval: { decidedAt: now, expiresAt: o.approval === 0 ? null : now + o.approval } })
      });
      void s.commit(`c${o.conn}`, d);
      return;
    }
    case 'lookup':
      void s.lookup(
        server(o.server),
        `c${o.conn}`,
        `${server(o.server)}:${o.id}`,
        o.stale ? 'h2' : 'h1',
        now
      );
      return;
    case 'sweep':
      void s.sweep(now);
      return;
    case 'close':
      void s.closeConnection(server(o.server), `c${o.conn}`);
      return;
    case 'invalidate':
      void s.invalidateServer(server(o.server));
      return;
    case 'clear':
      void s.clear();
      return;
    case 'wait':
      return;
  }
}

let dbs = 0;
const STORES: [string, () => Promise<DecisionStore & { liveCount(now: number): number }>][] = [
  ['connection-scoped', async () => new ConnectionDecisionStore()],
  ['durable in memory', async () => new SharedDecisionStore()],
  [
    'durable on IndexedDB',
    async () => {
      const r = await CachedDurableStore.open({ dbName: `live-count-${++dbs}` });
      if (!r.ok) throw new Error(r.error);
      return r.store;
    }
  ]
];

describe('liveCount', () => {
  for (const [name, make] of STORES)
    it(`is the entries that still answer, counted, after any history: ${name}`, async () => {
      let shortcuts = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 10, maxLength: 60, size: 'max' }),
          async (ops) => {
            const s = await make();
            let now = 1_000;
            for (const o of ops) {
              if (o.kind === 'wait') now += o.ms;
              apply(s, o, now);
              expect(s.liveCount(now)).toBe(counted(s, now));
              // Later, before the next sweep: expiries since are not live.
              expect(s.liveCount(now + 600)).toBe(counted(s, now + 600));
              if (o.kind === 'sweep') shortcuts++;
            }
            // A copy counts the same (connection-scoped and in-memory durable stores copy).
            if (!(s instanceof CachedDurableStore)) {
              void s.sweep(now);
              const copy = new CloneMap().get(s);
              expect(copy.liveCount(now)).toBe(counted(s, now));
              expect(copy.liveCount(now + 600)).toBe(counted(s, now + 600));
            }
          }
        ),
        { numRuns: 100 }
      );
      expect(shortcuts).toBeGreaterThan(0);
    });
});
