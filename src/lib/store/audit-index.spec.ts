import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../machine/types';
import { AuditIndex, AuditSelection, type AuditIndexOptions, type ChunkData } from './audit-index';
import { mapChunkStore } from './chunk-store.testing';
import { NONE_KEY, auditTotals, queryAudit, type AuditQuery } from './audit-query';
import { runLog } from '../sim/session/run-log.testing';

const log = runLog('reconnect-bypass.json', 60);

function indexOf(records: readonly AuditRecord[], opts?: AuditIndexOptions): AuditIndex {
  const ix = new AuditIndex(opts);
  for (const r of records) ix.append(r);
  return ix;
}

describe('the audit index (the audit log in columns)', () => {
  it('holds every row in 36 bytes while each string column has at most 256 values', () => {
    const ix = indexOf(log);
    expect(log.length).toBeGreaterThan(100);
    expect(ix.size).toBe(log.length);
    // 8 (time) + 4 (seq) + 4 + 4 (tokens) + 8 (cost) + 1 (flags) + 7 × 1 (string columns) bytes,
    // for every row the arrays have room for: at least the rows, fewer than twice as many.
    expect(ix.bytes % 36).toBe(0);
    expect(ix.bytes / 36).toBeGreaterThanOrEqual(ix.size);
    expect(ix.bytes / 36).toBeLessThan(2 * Math.max(1024, ix.size));
    // Without a chunk store every chunk stays in memory.
    expect(ix.residentChunks).toBe(ix.chunkCount);
    expect(ix.firstTime).toBe(log[0]!.time);
  });

  it('widens a string column past 256 and 65,536 values without losing any row', async () => {
    const ix = new AuditIndex();
    const n = 70_000;
    const base = log[0]!;
    for (let i = 0; i < n; i++)
      ix.append({ ...base, seq: i + 1, server: `s${i}`, model: `m${i % 300}` });
    // A chunk widens its own columns: the first (65,536 rows) to 16 bits for the server and the
    // model, 8 + 4 + 4 + 4 + 8 + 1 + 2 + 2 + 5 × 1 bytes a row; the second (4,464 rows, room for
    // 8,192) to 32 bits for the server: 8 + 4 + 4 + 4 + 8 + 1 + 4 + 2 + 5 bytes.
    expect(ix.bytes).toBe(65_536 * 38 + 8_192 * 40);
    expect(ix.options().server).toHaveLength(n);
    for (const i of [0, 255, 256, 65_535, 65_536, n - 1]) {
      const sel = AuditSelection.now(ix, { server: `s${i}` });
      expect(sel.length).toBe(1);
      const [row] = await sel.slice(0, 1);
      const k = Math.floor(row! / ix.chunkRows);
      expect(ix.facts(ix.resident(k)!, row! - k * ix.chunkRows).seq).toBe(i + 1);
    }
    expect(AuditSelection.now(ix, { model: 'm299' }).length).toBe(Math.ceil((n - 299) / 300));
    expect(AuditSelection.now(ix, { model: 'm0', server: 's300' }).length).toBe(1);
  });

  it('offers the values each filter can take, sorted, as the log has them', () => {
    const opts = indexOf(log).options();
    const values = (f: (r: AuditRecord) => string) => [...new Set(log.map(f))].sort();
    expect(opts.server).toEqual(values((r) => r.server));
    expect(opts.outcome).toEqual(values((r) => r.outcome));
    expect(opts.reason).toEqual(values((r) => r.reason ?? NONE_KEY));
    expect(opts.lane).toEqual(['A', 'B']);
  });

  it('answers every filter with the rows and totals queryAudit/auditTotals give', async () => {
    const ix = indexOf(log);
    const t0 = log[0]!.t;
    const queries: AuditQuery[] = [
      {},
      { lane: 'A' },
      { lane: 'B', outcome: 'denied' },
      { outcome: log.at(-1)!.outcome },
      { server: log[0]!.server, from: t0 + 5 * 60_000, to: t0 + 30 * 60_000 },
      { reason: NONE_KEY },
      { model: NONE_KEY },
      { server: 'no-such-server' }
    ];
    for (const q of queries) {
      const sel = AuditSelection.now(ix, q);
      const want = queryAudit(log, q);
      expect(sel.length, JSON.stringify(q)).toBe(want.length);
      expect(Array.from(await sel.slice(0, sel.length), (i) => log[i])).toEqual(want);
      expect(sel.totals(), JSON.stringify(q)).toEqual(auditTotals(want));
    }
  });

  it('keeps a selection exact as rows are appended, a few at a time', () => {
    const ix = new AuditIndex();
    const q: AuditQuery = { lane: 'A' };
    // Built before any row: values the filter names appear later.
    const sel = AuditSelection.now(ix, q);
    for (let i = 0; i < log.length; i += 7) {
      for (const r of log.slice(i, i + 7)) ix.append(r);
      sel.update();
      const want = queryAudit(log.slice(0, ix.size), q);
      expect(sel.length).toBe(want.length);
    }
    expect(sel.totals()).toEqual(auditTotals(queryAudit(log, q)));
  });

  it('counts an unreadable cost as zero and says how many, as auditTotals does', () => {
    const odd = [...log.slice(0, 3), { ...log[3]!, cost: 'twelve' }];
    const sel = AuditSelection.now(indexOf(odd), {});
    expect(sel.totals().invalidCosts).toBe(1);
    expect(sel.totals()).toEqual(auditTotals(odd));
  });

  it('rebuilds the facts a guarantee reads from a row', () => {
    const ix = indexOf(log, { chunkRows: 100 });
    log.forEach((r, i) => {
      const k = Math.floor(i / 100);
      const f = ix.facts(ix.resident(k)!, i - k * 100);
      expect(f).toMatchObject({
        seq: r.seq,
        lane: r.lane ?? null,
        outcome: r.outcome,
        consent: r.consent,
        consentShown: r.consentShown,
        replayed: r.replayed,
        alert: r.alert,
        silenced: r.silenced,
        tokensOut: r.tokensOut,
        hasActualCost: r.budgetDecision?.actualCost !== undefined
      });
    });
  });
});

// Issue #19: a week's run in bounded memory. Full chunks go to a store and leave memory; every
// answer stays the unbounded index's, on a fixed-seed run's log crossing the bound many times.
describe('the audit index in bounded memory (chunks written out)', () => {
  const C = 64;
  /** Let the store's writes settle (their promises resolve in microtasks). */
  const settle = () => new Promise<void>((r) => setImmediate(r));

  async function bounded(records = log) {
    const store = mapChunkStore();
    const ix = new AuditIndex({ chunkRows: C, cacheChunks: 2, store });
    for (let i = 0; i < records.length; i += 50) {
      for (const r of records.slice(i, i + 50)) ix.append(r);
      await settle();
    }
    return { ix, store };
  }

  const t0 = log[0]!.t;
  const queries: AuditQuery[] = [
    {},
    { lane: 'A' },
    { lane: 'B', outcome: 'denied' },
    { outcome: log.at(-1)!.outcome },
    { server: log[0]!.server, from: t0 + 5 * 60_000, to: t0 + 30 * 60_000 },
    { from: t0 + 7 * 60_000 },
    { to: t0 + 41 * 60_000 },
    { reason: NONE_KEY },
    { server: 'no-such-server' }
  ];

  async function expectSame(b: AuditIndex, u: AuditIndex, q: AuditQuery, replays = false) {
    const extra = replays ? (d: ChunkData, j: number) => b.facts(d, j).replayed : undefined;
    const uExtra = replays ? (d: ChunkData, j: number) => u.facts(d, j).replayed : undefined;
    const got = await AuditSelection.over(b, q, extra);
    const want = AuditSelection.now(u, q, uExtra);
    const what = JSON.stringify(q) + (replays ? ' replays' : '');
    expect(got.length, what).toBe(want.length);
    expect(got.totals(), what).toEqual(want.totals());
    expect(Array.from(await got.slice(0, got.length)), what).toEqual(
      Array.from(await want.slice(0, want.length))
    );
    const mid = Math.floor(want.length / 3);
    expect(Array.from(await got.slice(mid, mid + 37)), what).toEqual(
      Array.from(await want.slice(mid, mid + 37))
    );
    // The tail comes from chunks in memory: the same rows, as many as those hold.
    const tail = got.tail(10, 0);
    const full = want.tail(10, 0);
    expect(tail.rows, what).toEqual(full.rows.slice(full.rows.length - tail.rows.length));
    expect(tail.start, what).toBe(want.length - tail.rows.length);
  }

  it('holds the chunk being filled and at most `cacheChunks` more, however long the log', async () => {
    const { ix, store } = await bounded();
    const unbounded = indexOf(log);
    expect(ix.size).toBe(log.length);
    expect(ix.chunkCount).toBe(Math.ceil(log.length / C));
    expect(ix.storedChunks).toBe(Math.floor(log.length / C));
    expect(store.chunks.size).toBe(Math.floor(log.length / C));
    expect(ix.residentChunks).toBeLessThanOrEqual(1 + 2);
    // 36 bytes a row for at most three chunks' rows, against every row's.
    expect(ix.bytes).toBeLessThanOrEqual(3 * C * 36);
    expect(unbounded.bytes).toBeGreaterThanOrEqual(log.length * 36);
    // Reading chunks back keeps the bound.
    await AuditSelection.over(ix, { lane: 'A' });
    await settle();
    expect(ix.residentChunks).toBeLessThanOrEqual(1 + 2);
  });

  it('answers every query, its totals, its rows and its tail as the unbounded index does', async () => {
    const { ix, store } = await bounded();
    const u = indexOf(log);
    store.reads.length = 0;
    for (const q of queries) await expectSame(ix, u, q);
    await expectSame(ix, u, { lane: 'B' }, true);
    // The filters did read the chunks that had left memory back.
    expect(new Set(store.reads).size).toBe(ix.storedChunks);
    // The whole table and a time window over whole chunks are answered from the chunks'
    // summaries: nothing is read back for the totals.
    store.reads.length = 0;
    const all = await AuditSelection.over(ix, {});
    expect(all.totals()).toEqual(auditTotals(log));
    expect(store.reads).toEqual([]);
  });

  it('counts rows appended while chunks are read back', async () => {
    const { ix } = await bounded(log.slice(0, 600));
    const pending = AuditSelection.over(ix, { lane: 'A' });
    for (const r of log.slice(600)) ix.append(r);
    const sel = await pending;
    sel.update();
    const want = queryAudit(log, { lane: 'A' });
    expect(sel.length).toBe(want.length);
    expect(sel.totals()).toEqual(auditTotals(want));
  });

  it('a cut inside a chunk that left memory reads it back, and the log grows again from there', async () => {
    for (const cut of [300, 5 * C, 1, 0]) {
      const { ix, store } = await bounded();
      const u = indexOf(log);
      await ix.truncate(cut);
      await u.truncate(cut);
      expect(ix.size).toBe(cut);
      expect(store.chunks.size).toBeLessThanOrEqual(Math.floor(cut / C));
      for (const q of queries) await expectSame(ix, u, q);
      // Another branch's rows after the cut (the same rows with other sequence numbers).
      const branch = log.slice(cut).map((r) => ({ ...r, seq: r.seq + 10_000 }));
      for (let i = 0; i < branch.length; i += 50) {
        for (const r of branch.slice(i, i + 50)) {
          ix.append(r);
          u.append(r);
        }
        await settle();
      }
      expect(ix.residentChunks).toBeLessThanOrEqual(3);
      for (const q of queries) await expectSame(ix, u, q);
      expect(ix.lastT).toBe(u.lastT);
    }
  });

  it('a chunk that cannot be written stays in memory and says why; one not read back says which rows', async () => {
    const store = mapChunkStore();
    const ix = new AuditIndex({ chunkRows: C, cacheChunks: 1, store });
    store.fail = 'QuotaExceededError: the disk is full';
    for (const r of log.slice(0, 3 * C)) ix.append(r);
    await settle();
    expect(ix.spillFailure).toBe('QuotaExceededError: the disk is full');
    expect(ix.residentChunks).toBe(3);
    expect((await AuditSelection.over(ix, { lane: 'A' })).totals()).toEqual(
      auditTotals(queryAudit(log.slice(0, 3 * C), { lane: 'A' }))
    );

    const { ix: ok, store: gone } = await bounded();
    gone.chunks.clear();
    await expect(AuditSelection.over(ok, { lane: 'A' })).rejects.toThrow(
      /^the audit table's index of rows 1–64 could not be read back from this browser's storage \(not there\)$/
    );
  });
});
