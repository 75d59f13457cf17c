/**
 * The durable decision store: what a reload finds, what is counted as saved, how a failure is held
 * and said, and how `open()` fails in words. A plain reader on the same database checks the disk:
 * it reads the records and replays them with the log's pure decoder (decision-log.ts), so "on
 * disk" means the decisions a reload would find, not the records that hold them.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { decision } from './decision.testing';
import { CachedDurableStore, DECISIONS_STORE } from './cached-durable-store';
import { DurableAuditLog } from './audit-log';
import { replayNamespace } from './decision-log';
import { isLive } from './decision-store';
import { inTransaction, openIdbStore, type UseStore } from './idb';

let dbSeq = 0;
const uniqueDb = (label: string) => `durable-spec-${label}-${++dbSeq}`;

function unwrap<T>(r: { ok: true; store: T } | { ok: false; error: string }): T {
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

async function openCached(dbName: string, writeThrough = false) {
  return unwrap(await CachedDurableStore.open({ dbName, writeThrough }));
}

/** What is on disk, read on a connection of its own (another tab, a reload). */
async function openDisk(dbName: string) {
  const db: UseStore = unwrap(await openIdbStore(dbName, DECISIONS_STORE));
  const entries = async (): Promise<StoredDecision[]> => {
    const [keys, values] = await inTransaction<[IDBValidKey[], unknown[]]>(
      db,
      'readonly',
      (s, done) => {
        const k = s.getAllKeys();
        const v = s.getAll();
        v.onsuccess = () => done([k.result, v.result]);
      }
    );
    return [...replayNamespace([], keys, values).decisions()];
  };
  return {
    /** Decisions on disk. */
    count: async () => (await entries()).length,
    entries,
    /** Records on disk, whatever they hold. */
    records: () =>
      inTransaction<number>(db, 'readonly', (s, done) => {
        const req = s.count();
        req.onsuccess = () => done(req.result);
      }),
    put: (key: IDBValidKey, value: unknown) =>
      inTransaction<void>(db, 'readwrite', (s, done) => {
        s.put(value, key);
        done(undefined);
      })
  };
}

/** Run `fn` with no `indexedDB` global, as in a browser or context that offers none. */
async function withoutIndexedDB<T>(fn: () => Promise<T>): Promise<T> {
  const g = globalThis as { indexedDB?: IDBFactory };
  const saved = g.indexedDB;
  delete g.indexedDB;
  try {
    return await fn();
  } finally {
    g.indexedDB = saved;
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('opening the durable store', () => {
  it('without IndexedDB says so in plain words instead of throwing', async () => {
    const r = await withoutIndexedDB(() => CachedDurableStore.open({ dbName: uniqueDb('none') }));
    expect(r).toMatchObject({ ok: false, kind: 'unavailable' });
    if (r.ok) return;
    expect(r.error).toMatch(/not available/);
    expect(r.error).toMatch(/IndexedDB/);
  });

  it('an open that does not settle before the caller gives up is reported as blocked', async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    const r = await CachedDurableStore.open({ dbName: uniqueDb('blocked'), signal: ctrl.signal });
    expect(r).toMatchObject({ ok: false, kind: 'blocked' });
    if (!r.ok) expect(r.error).toMatch(/did not open in time/);
  });

  it('a private-mode SecurityError is said in plain words', async () => {
    vi.spyOn(indexedDB, 'open').mockImplementation(() => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    });
    const r = await CachedDurableStore.open({ dbName: uniqueDb('private') });
    expect(r).toMatchObject({ ok: false, kind: 'security' });
    if (!r.ok) expect(r.error).toMatch(/refused storage to this page/);
  });

  it('a database that holds another store is named as the problem', async () => {
    const dbName = uniqueDb('shared');
    expect((await DurableAuditLog.open({ dbName })).ok).toBe(true);
    const r = await CachedDurableStore.open({ dbName });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/has no 'decisions' store/);
  });

  it('skips malformed entries left by an older build, and leaves them for a commit to overwrite', async () => {
    const dbName = uniqueDb('malformed');
    const s = await openCached(dbName);
    s.commit('c1', decision());
    await s.flush();
    const disk = await openDisk(dbName);
    await disk.put(['release-notes', 'junk'], { hello: 'world' });
    const reloaded = await openCached(dbName);
    expect(reloaded.entries()).toHaveLength(1);
    expect(reloaded.lookup('release-notes', 'c1', 'junk', 'h1', 0)).toBeNull();
    expect(await disk.count()).toBe(1);
    expect(await disk.records()).toBe(2);
  });
});

describe('the durable store, write-through (/single/)', () => {
  it("commit resolves once the decision is on disk; another connection's lookup meets it", async () => {
    const dbName = uniqueDb('through');
    const s = await openCached(dbName, true);
    const disk = await openDisk(dbName);
    const d = decision();
    const committed = s.commit('c1', d);
    expect(committed).toBeInstanceOf(Promise);
    await committed;
    expect(await disk.count()).toBe(1);
    expect(s.status()).toMatchObject({ live: 1, saved: 1, heldInMemory: 0, pending: 0 });
    await s.closeConnection(d.server, 'c1');
    expect(s.lookup(d.server, 'c2', d.identity, 'h1', 1)?.decision.verdict).toBe('denied');
  });

  it('a commit that cannot be saved still resolves: held in memory, said in words; retry saves it', async () => {
    const dbName = uniqueDb('through-quota');
    const s = await openCached(dbName, true);
    const disk = await openDisk(dbName); // opened first: its open probe writes too
    await s.commit('c1', decision({ identity: 'kept' }));
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    await expect(s.commit('c1', decision({ identity: 'new' }))).resolves.toBeUndefined();
    expect(s.status()).toMatchObject({ live: 2, saved: 1, heldInMemory: 1 });
    expect(s.status().failure?.words).toMatch(/storage for this site is full/);
    // Memory still answers, on any connection: the page's results do not change, its guarantee does.
    expect(s.lookup('release-notes', 'c2', 'new', 'h1', 1)).not.toBeNull();
    expect(await disk.count()).toBe(1);
    expect(await s.retry()).toBe(false);
    put.mockRestore();
    expect(await s.retry()).toBe(true);
    expect(s.status()).toMatchObject({ saved: 2, heldInMemory: 0, failure: null });
    expect((await disk.entries()).map((e) => e.identity).sort()).toEqual(['kept', 'new']);
  });
});

describe('CachedDurableStore', () => {
  it('answers synchronously and is durable after flush: a fresh open sees the commit', async () => {
    const dbName = uniqueDb('flush');
    const s = await openCached(dbName);
    const d = decision();
    expect(s.commit('c1', d)).toBeUndefined();
    const hit = s.lookup(d.server, 'c2', d.identity, 'h1', 5);
    expect(hit).not.toBeInstanceOf(Promise);
    expect(hit?.decision.represented).toBe(1);
    expect(s.pendingWrites).toBe(1); // commit + hit on one key coalesce into one put

    // Before flush the decision lives only in memory: the documented trade-off.
    expect(await (await openDisk(dbName)).count()).toBe(0);

    await s.flush();
    expect(s.pendingWrites).toBe(0);
    const fresh = await openCached(dbName);
    expect(fresh.lookup(d.server, 'c3', d.identity, 'h1', 6)?.decision.represented).toBe(2);
    const plain = await openDisk(dbName);
    expect((await plain.entries())[0]?.represented).toBe(1);
  });

  it('liveCount counts the entries that still answer, as entries() filtered, across expiries', async () => {
    const s = await openCached(uniqueDb('live-count'));
    for (let i = 0; i < 30; i++)
      s.commit(
        'c1',
        decision({
          server: `s${i % 3}`,
          identity: `s${i % 3}:${i}`,
          expiresAt: i % 4 === 0 ? null : 1_000 * (i + 1)
        })
      );
    for (let now = 0; now <= 35_000; now += 2_500)
      expect(s.liveCount(now)).toBe(s.entries().filter((d) => isLive(d, now)).length);
    expect(s.liveCount(35_000)).toBeGreaterThan(0);
    expect(s.liveCount(35_000)).toBeLessThan(s.count());
  });

  it('coalesces a hot identity: 1,000 re-presentations become one write', async () => {
    const dbName = uniqueDb('coalesce');
    const s = await openCached(dbName);
    const d = decision();
    s.commit('c1', d);
    for (let i = 1; i <= 1_000; i++) s.lookup(d.server, 'c1', d.identity, 'h1', i);
    expect(s.pendingWrites).toBe(1);
    await s.flush();
    const reopened = await openCached(dbName);
    expect(reopened.entries()[0]?.represented).toBe(1_000);
  });

  it('coalesces by server and identity together: pairs that read alike joined are two writes', async () => {
    const dbName = uniqueDb('coalesce-pairs');
    const s = await openCached(dbName);
    // 'ab' + 'c:1' and 'a' + 'bc:1' join to the same text; they are different decisions.
    s.commit('c1', decision({ server: 'ab', identity: 'c:1' }));
    s.commit('c1', decision({ server: 'a', identity: 'bc:1' }));
    expect(s.pendingWrites).toBe(2);
    await s.flush();
    const reopened = await openCached(dbName);
    expect(reopened.entries().map((d) => [d.server, d.identity])).toEqual(
      expect.arrayContaining([
        ['ab', 'c:1'],
        ['a', 'bc:1']
      ])
    );
    expect(reopened.entries()).toHaveLength(2);
  });

  it("invalidateServer drops that server's entries on disk too, including ones written elsewhere", async () => {
    const dbName = uniqueDb('invalidate');
    const s = await openCached(dbName);
    s.commit('c1', decision({ server: 'a', identity: 'a:1' }));
    s.commit('c1', decision({ server: 'b', identity: 'b:1' }));
    await s.flush();
    // Another tab adds an entry for 'a' after this index was loaded.
    const other = await openCached(dbName);
    other.commit('c9', decision({ server: 'a', identity: 'a:other' }));
    await other.flush();
    expect((await (await openDisk(dbName)).entries()).map((e) => e.identity).sort()).toEqual([
      'a:1',
      'a:other',
      'b:1'
    ]);

    expect(s.invalidateServer('a')).toBe(1);
    s.commit('c1', decision({ server: 'a', identity: 'a:after-edit' }));
    await s.flush();
    const onDisk = (await (await openDisk(dbName)).entries()).map((e) => e.identity).sort();
    expect(onDisk).toEqual(['a:after-edit', 'b:1']);
  });

  it('drops expired and stale entries on disk as well as in memory', async () => {
    const dbName = uniqueDb('expire');
    const s = await openCached(dbName);
    s.commit('c1', decision({ identity: 'ttl', expiresAt: 100 }));
    s.commit('c1', decision({ identity: 'stale' }));
    await s.flush();
    expect(s.lookup('release-notes', 'c1', 'ttl', 'h1', 100)).toBeNull();
    expect(s.lookup('release-notes', 'c1', 'stale', 'h2', 0)).toBeNull();
    await s.flush();
    expect(await (await openDisk(dbName)).count()).toBe(0);
  });

  it('a failed flush holds the batch, says why, counts it as held in memory, and retry writes it in order', async () => {
    const dbName = uniqueDb('retry');
    const s = await openCached(dbName);
    const reader = await openDisk(dbName); // opened first: its open probe writes too
    s.commit('c1', decision({ identity: 'one' }));
    expect(await s.flush()).toBe(true);
    s.commit('c1', decision({ identity: 'two' }));
    s.commit('c1', decision({ identity: 'three' }));
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    expect(await s.flush()).toBe(false);
    expect(s.status()).toMatchObject({ live: 3, saved: 1, heldInMemory: 2, pending: 2 });
    expect(s.status().failure?.kind).toBe('quota');
    expect(s.status().failure?.error).toMatch(/Could not write 2 decision change\(s\)/);
    expect(s.count()).toBe(3); // memory still answers
    expect(await reader.count()).toBe(1); // disk untouched by the failure
    put.mockRestore();
    // Held: a later flush writes nothing until retry, so no batch lands ahead of the failed one.
    s.commit('c1', decision({ identity: 'four' }));
    expect(await s.flush()).toBe(false);
    expect(await reader.count()).toBe(1);
    expect(await s.retry()).toBe(true);
    expect(s.status()).toMatchObject({ saved: 4, heldInMemory: 0, failure: null });
    const onDisk = (await (await openDisk(dbName)).entries()).map((e) => e.identity).sort();
    expect(onDisk).toEqual(['four', 'one', 'three', 'two']);
  });

  it('counts as saved exactly what is on disk, through puts, deletes, invalidation and clear', async () => {
    const dbName = uniqueDb('saved');
    const s = await openCached(dbName);
    const reader = await openDisk(dbName);
    const check = async () => {
      const st = s.status();
      expect(st.saved + st.removedOnDisk).toBe(await reader.count());
      expect(st.saved + st.heldInMemory).toBe(st.live);
    };
    s.commit('c1', decision({ server: 'a', identity: 'a:1' }));
    s.commit('c1', decision({ server: 'a', identity: 'a:2', expiresAt: 50 }));
    s.commit('c1', decision({ server: 'b', identity: 'b:1' }));
    expect(s.status()).toMatchObject({ saved: 0, heldInMemory: 3 });
    await s.flush();
    await check();
    expect(s.sweep(50)).toBe(1);
    // The delete is not on disk yet: still there, but no longer one of the lane's saved decisions.
    expect(s.status()).toMatchObject({ live: 2, saved: 2, removedOnDisk: 1 });
    await check();
    await s.flush();
    await check();
    s.invalidateServer('a');
    await s.flush();
    await check();
    s.clear();
    await s.flush();
    await check();
    expect(s.status()).toMatchObject({ live: 0, saved: 0, heldInMemory: 0 });
  });

  it('keeps namespaces apart: a second run starts empty and a reload of the first finds its own', async () => {
    const dbName = uniqueDb('ns');
    const run1 = unwrap(await CachedDurableStore.open({ dbName, namespace: ['r1', 'B'] }));
    run1.commit('c1', decision({ identity: 'x' }));
    run1.commit('c1', decision({ identity: 'y' }));
    await run1.flush();
    const run2 = unwrap(await CachedDurableStore.open({ dbName, namespace: ['r2', 'B'] }));
    expect(run2.count()).toBe(0);
    run2.commit('c1', decision({ identity: 'z' }));
    run2.clear();
    await run2.flush();
    const again = unwrap(await CachedDurableStore.open({ dbName, namespace: ['r1', 'B'] }));
    expect(
      again
        .entries()
        .map((e) => e.identity)
        .sort()
    ).toEqual(['x', 'y']);
    expect(again.status()).toMatchObject({ live: 2, saved: 2, heldInMemory: 0 });
  });

  it('sweeps expired entries on the virtual clock, so a long loop keeps only live ones', async () => {
    const s = await openCached(uniqueDb('sweep'));
    for (let i = 0; i < 10_000; i++)
      s.commit('c1', decision({ identity: `id-${i}`, decidedAt: i, expiresAt: i + 60 }));
    expect(s.sweep(5_000)).toBe(4_941);
    expect(s.count()).toBe(10_000 - 4_941);
    expect(s.sweep(20_000)).toBe(10_000 - 4_941);
    expect(s.count()).toBe(0);
  });

  it('clear empties memory and disk', async () => {
    const dbName = uniqueDb('clear');
    const s = await openCached(dbName);
    s.commit('c1', decision({ identity: 'x' }));
    await s.flush();
    s.commit('c1', decision({ identity: 'y' }));
    expect(s.clear()).toBe(2);
    await s.flush();
    expect(await (await openDisk(dbName)).count()).toBe(0);
  });

  it('open() without IndexedDB gives { ok: false } in plain words', async () => {
    const r = await withoutIndexedDB(() => CachedDurableStore.open({ dbName: uniqueDb('none') }));
    expect(r).toMatchObject({ ok: false, kind: 'unavailable' });
  });
});
