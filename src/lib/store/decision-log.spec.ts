/**
 * The durable decision store's log (decision-log.ts): lines read back as written, a damaged line
 * or record loses nothing else, two tabs' commits replay in the order they committed, compaction
 * keeps exactly the live set and bounds the log, a database of the per-decision layout loads the
 * same decisions, a batch lands whole or not at all — and, over generated runs, a replay of the
 * disk is what the store says is saved after every commit.
 */
import 'fake-indexeddb/auto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { decision } from './decision.testing';
import { CachedDurableStore, DECISIONS_STORE } from './cached-durable-store';
import {
  COMPACT_SLACK,
  LOG_CHARS,
  LOG_LINES,
  decodeLine,
  encodeDel,
  encodePut,
  encodeServer,
  packLines,
  replayNamespace,
  type LogReplay
} from './decision-log';
import { inTransaction, openIdbStore, prefixRange, type IdbStore, type Namespace } from './idb';

let dbSeq = 0;
const uniqueDb = (label: string) => `decision-log-spec-${label}-${++dbSeq}`;
const NS: Namespace = ['run', 'B'];

async function openDb(dbName: string): Promise<IdbStore> {
  const r = await openIdbStore(dbName, DECISIONS_STORE);
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

/** A tab's store on the run's namespace, on a connection of its own. */
async function tab(dbName: string, ns = NS): Promise<CachedDurableStore> {
  const r = await CachedDurableStore.attach(await openDb(dbName), dbName, ns);
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

/** The namespace's records as they are on disk (keys and values), read on a connection of its own. */
async function records(dbName: string, ns = NS): Promise<[IDBValidKey[], unknown[]]> {
  const db = await openDb(dbName);
  return inTransaction(db, 'readonly', (s, done) => {
    const k = s.getAllKeys(prefixRange(ns));
    const v = s.getAll(prefixRange(ns));
    v.onsuccess = () => done([k.result, v.result]);
  });
}

async function replayDisk(dbName: string, ns = NS): Promise<LogReplay> {
  const [keys, values] = await records(dbName, ns);
  return replayNamespace(ns, keys, values);
}

const byKey = (ds: Iterable<StoredDecision>) =>
  [...ds].sort((a, b) =>
    a.server === b.server ? (a.identity < b.identity ? -1 : 1) : a.server < b.server ? -1 : 1
  );

const ids = (ds: Iterable<StoredDecision>) => byKey(ds).map((d) => d.identity);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('lines and records', () => {
  it('every change reads back as written', () => {
    const d = decision({
      message: 'line\nbreak "quoted"',
      approval: { decidedAt: 1, expiresAt: 9 }
    });
    expect(decodeLine(encodePut(d))).toEqual({ op: 'put', value: d });
    expect(decodeLine(encodeDel('s', 's:1'))).toEqual({ op: 'del', server: 's', identity: 's:1' });
    expect(decodeLine(encodeServer('s'))).toEqual({ op: 'server', server: 's' });
    // A line never holds a raw newline: a record splits on them.
    expect(encodePut(d)).not.toContain('\n');
  });

  it('a damaged line or record is skipped, the rest of the record and log is kept', () => {
    const good = encodePut(decision({ identity: 'kept' }));
    const later = encodePut(decision({ identity: 'later' }));
    const r = replayNamespace(
      NS,
      [
        [...NS, 0],
        [...NS, 1],
        [...NS, 2]
      ],
      [
        `${good}\nnot json\n{"hello":"world"}\n[1,2]`,
        { not: 'a string' },
        `${later}\n${encodeDel('release-notes', 'kept')}`
      ]
    );
    expect(ids(r.decisions())).toEqual(['later']);
    expect(r.damaged).toBe(4);
    expect(r.ops).toBe(7);
  });

  it('records hold at most LOG_LINES lines and, past one line, LOG_CHARS characters', () => {
    const short = Array.from({ length: 2 * LOG_LINES + 44 }, (_, i) => encodeDel('s', `s:${i}`));
    const packed = packLines(short);
    expect(packed.map((p) => p.split('\n').length)).toEqual([LOG_LINES, LOG_LINES, 44]);
    expect(packed.join('\n')).toBe(short.join('\n'));
    const long = Array.from({ length: 10 }, (_, i) =>
      encodePut(decision({ identity: `${i}`, message: 'x'.repeat(Math.ceil(LOG_CHARS / 3)) }))
    );
    const big = packLines(long);
    expect(big.length).toBeGreaterThan(3);
    for (const p of big) expect(p.length).toBeLessThanOrEqual(LOG_CHARS);
    expect(big.join('\n')).toBe(long.join('\n'));
  });
});

describe('the log on disk', () => {
  it('a commit of many decisions is a few records, not one a decision', async () => {
    const dbName = uniqueDb('few');
    const s = await tab(dbName);
    for (let i = 0; i < 1_000; i++) s.commit('c1', decision({ identity: `id-${i}` }));
    await s.flush();
    const [keys] = await records(dbName);
    expect(keys).toHaveLength(Math.ceil(1_000 / LOG_LINES));
    expect((await replayDisk(dbName)).size).toBe(1_000);
    expect((await tab(dbName)).status()).toMatchObject({ live: 1_000, saved: 1_000 });
  });

  it("two tabs on one namespace: tab A's server invalidation removes tab B's earlier puts, not its later ones", async () => {
    const dbName = uniqueDb('tabs');
    const a = await tab(dbName);
    const b = await tab(dbName);
    b.commit('c1', decision({ server: 'x', identity: 'x:before' }));
    b.commit('c1', decision({ server: 'y', identity: 'y:kept' }));
    await b.flush();
    a.commit('c1', decision({ server: 'x', identity: 'x:a-before' }));
    await a.flush();
    // Decided in B before A's edit, committed after it: later in the log, so it stays.
    b.commit('c1', decision({ server: 'x', identity: 'x:queued' }));
    a.invalidateServer('x');
    await a.flush();
    await b.flush();
    a.commit('c1', decision({ server: 'x', identity: 'x:a-after' }));
    await a.flush();
    const expected = ['x:a-after', 'x:queued', 'y:kept'];
    expect(ids((await replayDisk(dbName)).decisions())).toEqual(expected);
    expect(ids((await tab(dbName)).entries())).toEqual(expected);
  });

  it('a database of the per-decision layout loads the same decisions; a policy edit and a compaction remove them', async () => {
    const dbName = uniqueDb('legacy');
    const db = await openDb(dbName);
    const old = [
      decision({ server: 'x', identity: 'x:1' }),
      decision({ server: 'x', identity: 'x:2', verdict: 'allowed', reason: null }),
      decision({ server: 'y', identity: 'y:1', represented: 7 })
    ];
    // As the build before the log wrote them: one record a decision, keyed [...ns, server, identity].
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      for (const d of old) s.put(d, [...NS, d.server, d.identity]);
      s.put(decision({ identity: 'other-run' }), ['other', 'B', 'release-notes', 'other-run']);
      done(undefined);
    });
    const s = await tab(dbName);
    expect(byKey(s.entries())).toEqual(old);
    expect(s.status()).toMatchObject({ live: 3, saved: 3, heldInMemory: 0 });

    // A policy edit of x removes its records, old layout included.
    s.invalidateServer('x');
    s.commit('c1', decision({ server: 'z', identity: 'z:1' }));
    await s.flush();
    expect(ids((await tab(dbName)).entries())).toEqual(['y:1', 'z:1']);
    const [keys] = await records(dbName);
    expect(keys.filter((k) => (k as unknown[])[2] === 'x')).toEqual([]);

    // Churn until the log is compacted: y's old record is rewritten into the log.
    for (let i = 0; i < COMPACT_SLACK; i++)
      s.commit('c1', decision({ server: 'w', identity: `w:${i}`, expiresAt: 10 }));
    await s.flush();
    s.sweep(10);
    await s.flush();
    s.commit('c1', decision({ server: 'z', identity: 'z:2' }));
    await s.flush();
    const [after] = await records(dbName);
    expect(after.every((k) => typeof (k as unknown[])[2] === 'number')).toBe(true);
    expect(after).toHaveLength(1);
    expect(byKey((await tab(dbName)).entries())).toEqual(
      byKey([old[2]!, ...s.entries().filter((d) => d.server === 'z')])
    );
    // Another namespace's record is never touched.
    expect(ids((await tab(dbName, ['other', 'B'])).entries())).toEqual(['other-run']);
  });

  it('compaction keeps exactly the live set, and bounds the log over a long run', async () => {
    const dbName = uniqueDb('compact');
    const s = await tab(dbName);
    const other = await tab(dbName);
    // Another tab's decisions, which this one never loaded: compaction must keep them.
    other.commit('c1', decision({ server: 'o', identity: 'o:1' }));
    await other.flush();
    let written = 0;
    let maxRecords = 0;
    let compactions = 0;
    let lastOps = 0;
    for (let round = 0; round < 60; round++) {
      const now = round * 100;
      // 400 new decisions a round, living three rounds, and one hot identity re-presented.
      for (let i = 0; i < 400; i++)
        s.commit(
          'c1',
          decision({ identity: `r${round}-${i}`, decidedAt: now, expiresAt: now + 300 })
        );
      s.commit('c1', decision({ identity: 'hot', decidedAt: now }));
      written += 401 + s.sweep(now);
      await s.flush();
      const disk = await replayDisk(dbName);
      if (disk.ops < lastOps) compactions += 1;
      lastOps = disk.ops;
      const [keys] = await records(dbName);
      maxRecords = Math.max(maxRecords, keys.length);
      // The bound: what needsCompaction allows, plus the one batch that crossed it.
      expect(disk.ops).toBeLessThanOrEqual(2 * disk.size + COMPACT_SLACK + 2 * 401);
      expect(ids(disk.decisions())).toEqual(ids([...s.entries(), ...other.entries()]));
      expect(s.status()).toMatchObject({ saved: s.count(), heldInMemory: 0, removedOnDisk: 0 });
    }
    expect(compactions).toBeGreaterThanOrEqual(3);
    expect(written).toBeGreaterThan(20_000);
    // A few live sets' worth of records, where one a decision would be tens of thousands.
    expect(maxRecords).toBeLessThan((3 * 1_600 + COMPACT_SLACK) / LOG_LINES + 20);
    expect(ids((await tab(dbName)).entries())).toEqual(ids([...s.entries(), ...other.entries()]));
  });

  it('a batch that fails mid-way (a crash, a full disk) leaves the commits before it whole, and nothing of it', async () => {
    const dbName = uniqueDb('atomic');
    const s = await tab(dbName);
    for (let i = 0; i < 200; i++) s.commit('c1', decision({ identity: `first-${i}` }));
    await s.flush();
    const before = ids((await replayDisk(dbName)).decisions());
    // Enough changes for more than three records.
    for (let i = 0; i < 3 * LOG_LINES + 20; i++) {
      s.commit('c1', decision({ identity: `second-${i}` }));
    }
    s.invalidateServer('release-notes');
    const put = IDBObjectStore.prototype.put;
    let n = 0;
    // The third record of the batch fails: the two before it in the same transaction go too.
    vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
      this: IDBObjectStore,
      ...args: [unknown, IDBValidKey?]
    ) {
      if (++n === 3) throw new DOMException('quota', 'QuotaExceededError');
      return put.apply(this, args);
    });
    expect(await s.flush()).toBe(false);
    expect(n).toBe(3);
    expect(ids((await replayDisk(dbName)).decisions())).toEqual(before);
    expect(s.status()).toMatchObject({ live: 0, saved: 0, removedOnDisk: 200 });
    expect(s.status().failure?.kind).toBe('quota');
    vi.restoreAllMocks();
    expect(await s.retry()).toBe(true);
    expect((await replayDisk(dbName)).size).toBe(0);
    expect(s.status()).toMatchObject({ live: 0, saved: 0, removedOnDisk: 0 });
  });
});

type Step =
  | { t: 'commit'; server: string; id: number; ttl: number | null }
  | { t: 'many'; k: number; ttl: number }
  | { t: 'lookup'; server: string; id: number; stale: boolean }
  | { t: 'sweep'; dt: number }
  | { t: 'invalidate'; server: string }
  | { t: 'clear' }
  | { t: 'flush' };

const server = fc.constantFrom('a', 'b', 'c');
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('commit' as const),
      server,
      id: fc.nat(30),
      ttl: fc.option(fc.integer({ min: 1, max: 500 }))
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('many' as const),
      k: fc.integer({ min: 1, max: 2_500 }),
      ttl: fc.integer({ min: 1, max: 400 })
    })
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('lookup' as const),
      server,
      id: fc.nat(30),
      stale: fc.boolean()
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('sweep' as const), dt: fc.integer({ min: 0, max: 600 }) })
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('invalidate' as const), server }) },
  { weight: 1, arbitrary: fc.constant({ t: 'clear' as const }) },
  { weight: 4, arbitrary: fc.constant({ t: 'flush' as const }) }
);

describe('generated runs against the disk', () => {
  it('after every commit, a replay of the disk is exactly what the store says is saved', async () => {
    // Runs that compacted the log at least once (its ops on disk went down): the property must
    // cover compaction too, not only appends.
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 20, maxLength: 100, size: 'max' }),
        async (steps) => {
          const dbName = uniqueDb('model');
          const s = await tab(dbName);
          let now = 0;
          let fresh = 0;
          let ops = 0;
          let counted = false;
          /** A clear since the last check (it empties the log too: not a compaction). */
          let cleared = false;
          const check = async () => {
            expect(await s.flush()).toBe(true);
            const disk = await replayDisk(dbName);
            if (disk.ops < ops && !cleared && !counted) {
              compacted += 1;
              counted = true;
            }
            ops = disk.ops;
            cleared = false;
            // Every write committed: the disk holds exactly the live decisions, values included.
            expect(byKey(disk.decisions())).toEqual(byKey(s.entries()));
            expect(s.status()).toMatchObject({
              live: disk.size,
              saved: disk.size,
              heldInMemory: 0,
              removedOnDisk: 0,
              pending: 0
            });
          };
          for (const st of steps) {
            if (st.t === 'commit')
              s.commit(
                'c1',
                decision({
                  server: st.server,
                  identity: `${st.server}:${st.id}`,
                  decidedAt: now,
                  expiresAt: st.ttl === null ? null : now + st.ttl
                })
              );
            else if (st.t === 'many')
              for (let i = 0; i < st.k; i++)
                s.commit(
                  'c1',
                  decision({
                    server: 'm',
                    identity: `m:${fresh++}`,
                    decidedAt: now,
                    expiresAt: now + st.ttl
                  })
                );
            else if (st.t === 'lookup')
              s.lookup(st.server, 'c1', `${st.server}:${st.id}`, st.stale ? 'h2' : 'h1', now);
            else if (st.t === 'sweep') s.sweep((now += st.dt));
            else if (st.t === 'invalidate') s.invalidateServer(st.server);
            else if (st.t === 'clear') {
              s.clear();
              cleared = true;
            } else await check();
            const status = s.status();
            expect(status.saved + status.heldInMemory).toBe(status.live);
          }
          await check();
          // And a reload finds the same.
          expect(byKey((await tab(dbName)).entries())).toEqual(byKey(s.entries()));
        }
      ),
      { numRuns: 25 }
    );
    expect(compacted).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
