import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '$lib/machine/types';
import { toCsv, toJsonl } from '$lib/store/audit-export';
import { auditTotals, queryAudit } from '$lib/store/audit-query';
import { AuditService, type RecordReader } from './audit-service';
import { focusOf } from '../guarantee-focus';
import { runLog } from '$lib/sim/session/run-log.testing';
import { mapChunkStore } from '$lib/store/chunk-store.testing';
import type { AuditViewQuery } from '$lib/sim/session/protocol';

const log = runLog('reconnect-bypass.json', 60);

/** "IndexedDB": the log as written, counting reads, so a test sees what came from where. */
function disk(records: AuditRecord[]) {
  const reads: number[] = [];
  const reader: RecordReader = (rows) => {
    reads.push(...rows);
    return Promise.resolve(Array.from(rows, (r) => structuredClone(records[r]!)));
  };
  return { reader, reads };
}

/** Append the log in snapshot-sized batches, everything on disk at once. */
function filled(svc: AuditService, records = log): AuditService {
  for (let i = 0; i < records.length; i += 25) svc.append(records.slice(i, i + 25), 0);
  return svc;
}

describe('the worker-side audit service', () => {
  it('answers a query with the count, exact totals and the last rows', async () => {
    const svc = filled(new AuditService({ window: 50, tail: 10 }));
    svc.reset(disk(log).reader);
    filled(svc);
    const v = await svc.setQuery(3, { lane: 'B' });
    const want = queryAudit(log, { lane: 'B' });
    expect(v.queryId).toBe(3);
    expect(v.logSize).toBe(log.length);
    expect(v.matching).toBe(want.length);
    expect(v.totals).toEqual(auditTotals(want));
    expect(v.tail).toEqual(want.slice(-10));
    expect(v.tailStart).toBe(want.length - 10);
    expect(v.firstTime).toBe(log[0]!.time);
  });

  it('keeps only a window of full records and reads older rows back from disk', async () => {
    const d = disk(log);
    const svc = new AuditService({ window: 40, tail: 8 });
    svc.reset(d.reader);
    filled(svc);
    expect(svc.memory.recordsHeld).toBeLessThan(2 * 40 + 25);
    await svc.setQuery(1, {});
    const first = await svc.rows(0, 20);
    expect(first).toEqual({ queryId: 1, rows: log.slice(0, 20) });
    expect(d.reads).toEqual([...Array(20).keys()]);
    // The newest rows come from memory: no read.
    d.reads.length = 0;
    const last = await svc.rows(log.length - 5, 5);
    expect(last.rows).toEqual(log.slice(-5));
    expect(d.reads).toEqual([]);
  });

  it('never drops a record that is not on disk yet', async () => {
    const d = disk([]);
    const svc = new AuditService({ window: 10, tail: 4 });
    svc.reset(d.reader);
    // Storage failed: every row is held in memory only.
    for (let i = 0; i < log.length; i += 25) svc.append(log.slice(i, i + 25), i + 25);
    expect(svc.memory.recordsHeld).toBe(log.length);
    await svc.setQuery(1, {});
    expect((await svc.rows(0, 30)).rows).toEqual(log.slice(0, 30));
    expect(d.reads).toEqual([]);
  });

  it('with nothing on disk (no reader) keeps every record', async () => {
    const svc = new AuditService({ window: 5 });
    svc.reset(null);
    filled(svc);
    await svc.setQuery(1, {});
    expect(svc.memory.recordsHeld).toBe(log.length);
    expect((await svc.rows(0, log.length)).rows).toEqual(log);
  });

  it('says plainly when storage has fewer records than asked for', async () => {
    const svc = new AuditService({ window: 10 });
    svc.reset((rows) => Promise.resolve(Array.from(rows, () => undefined)));
    filled(svc);
    await svc.setQuery(1, {});
    const err = await svc.rows(0, 10).then(
      () => null,
      (e: unknown) => e as Error
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toMatch(
      /^rows 1–10 of the audit log are no longer in this browser's storage/
    );
    expect(err!.message).not.toMatch(/records asked for/);
  });

  it('measures the time window from the first row, also when set before any row', async () => {
    const svc = new AuditService();
    svc.reset(null);
    await svc.setQuery(1, { fromMin: 10, toMin: 20 });
    filled(svc);
    const t0 = log[0]!.t;
    const want = queryAudit(log, { from: t0 + 10 * 60_000, to: t0 + 20 * 60_000 });
    expect(want.length).toBeGreaterThan(0);
    expect(svc.view().matching).toBe(want.length);
    expect(svc.view().totals).toEqual(auditTotals(want));
  });

  it('finds the rows behind each guarantee as the Guarantees panel’s own test does', async () => {
    const svc = new AuditService();
    svc.reset(null);
    filled(svc);
    const ids = [
      'one-consent',
      'no-overdraw',
      'call-within-limit',
      'tokens-paid',
      'loops-flagged',
      'replays-no-model',
      'verdicts-only',
      'frames-conform'
    ] as const;
    for (const id of ids) {
      const f = focusOf({ id, status: 'held', summary: id, offenders: [] } as never);
      const v = await svc.setQuery(1, { focus: f.spec });
      expect(v.matching, id).toBe(log.filter(f.match).length);
    }
    const offenders = [log[3]!, log[9]!].map((r) => ({ lane: r.lane, seq: r.seq, request: '' }));
    const broken = focusOf({
      id: 'one-frame',
      status: 'broken',
      summary: 'x',
      offenders
    } as never);
    const v = await svc.setQuery(2, { focus: broken.spec, lane: log[3]!.lane ?? undefined });
    expect(v.matching).toBe(log.filter((r) => broken.match(r) && r.lane === log[3]!.lane).length);
    expect(v.matching).toBeGreaterThan(0);
  });

  it('exports the matching rows as the same JSONL and CSV the table gave before', async () => {
    const d = disk(log);
    const svc = new AuditService({ window: 30 });
    svc.reset(d.reader);
    filled(svc);
    await svc.setQuery(1, { lane: 'A' });
    const want = queryAudit(log, { lane: 'A' });
    const progress: number[] = [];
    const jsonl = await svc.exportFile('jsonl', (done) => progress.push(done));
    expect(jsonl.rows).toBe(want.length);
    expect(await jsonl.blob.text()).toBe(toJsonl(want));
    expect(progress.at(-1)).toBe(want.length);
    const csv = await svc.exportFile('csv', () => {});
    expect(await csv.blob.text()).toBe(toCsv(want));
  });

  it('a new run replaces the log; a read that spans it gives up instead of mixing runs', async () => {
    let release: () => void = () => {};
    const slow: RecordReader = (rows) =>
      new Promise((resolve) => {
        release = () => resolve(Array.from(rows, (r) => log[r]!));
      });
    const svc = new AuditService({ window: 10 });
    svc.reset(slow);
    filled(svc);
    await svc.setQuery(1, {});
    const pending = svc.rows(0, 10);
    svc.reset(null);
    release();
    await expect(pending).rejects.toThrow(/a new run replaced the audit log/);
    expect(svc.view()).toMatchObject({ logSize: 0, matching: 0, tail: [] });
  });

  // Issue #19, items 3 and 4: an export counts and reads what is really there, never fails on it.
  it('an export with rows missing from storage exports the rest and says how many and why', async () => {
    const stored = log.map((r, i) => (i >= 100 && i < 160 ? undefined : r));
    const svc = new AuditService({ window: 20 });
    const missing: number[] = [];
    svc.onMissing = (n) => missing.push(n);
    svc.reset((rows) => Promise.resolve(Array.from(rows, (r) => stored[r])));
    filled(svc);
    await svc.setQuery(1, {});
    const out = await svc.exportFile('jsonl', () => {});
    const want = log.filter((_, i) => i < 100 || i >= 160);
    expect(await out.blob.text()).toBe(toJsonl(want));
    expect(out).toMatchObject({ rows: want.length, missing: 60 });
    expect(out.why).toMatch(/no longer in this browser's storage/);
    // Told to the worker, which checks what else is gone (a failed read-back).
    expect(missing.reduce((a, b) => a + b, 0)).toBe(60);
  });

  it('a stored row of another timeline at that key is not exported as this run’s', async () => {
    // The log under the run's keys holds another run's rows (a restart from 0 in the same
    // namespace): same shape, other facts.
    const other = log.map((r) => ({ ...r, seq: r.seq + 1_000_000 }));
    const svc = new AuditService({ window: 20 });
    svc.reset((rows) => Promise.resolve(Array.from(rows, (r) => other[r])));
    filled(svc);
    await svc.setQuery(1, {});
    const out = await svc.exportFile('csv', () => {});
    expect(out.missing).toBe(log.length - svc.memory.recordsHeld);
    expect(out.rows).toBe(svc.memory.recordsHeld);
    expect(await out.blob.text()).toBe(toCsv(log.slice(log.length - out.rows)));
  });

  it('storage lost: rows only on disk are counted as lost, rows in memory stay and export', async () => {
    const d = disk(log);
    const svc = new AuditService({ window: 10 });
    svc.reset(d.reader);
    filled(svc);
    const held = svc.memory.recordsHeld;
    svc.markLost("another tab deleted this page's storage");
    // Rows keep coming; none of those in memory is dropped any more (nothing holds them on disk).
    filled(svc);
    expect(svc.memory.recordsHeld).toBe(held + log.length);
    await svc.setQuery(1, {});
    d.reads.length = 0;
    const out = await svc.exportFile('jsonl', () => {});
    expect(d.reads).toEqual([]);
    expect(out.missing).toBe(log.length - held);
    expect(out.rows).toBe(held + log.length);
    expect(out.why).toMatch(/another tab deleted this page's storage/);
    const err = await svc.rows(0, 5).then(
      () => null,
      (e: unknown) => e as Error
    );
    expect(err!.message).toMatch(
      /^rows 1–5 of the audit log were lost with this browser's storage: another tab deleted/
    );
  });
});

// Issue #19: the index's chunks leave memory past a bound; the table's every answer is the same.
describe('the audit service with its index in bounded memory', () => {
  const settle = () => new Promise<void>((r) => setImmediate(r));

  /** What "IndexedDB" holds: the log, and after a seek back the branch's rows. */
  const onDisk = [...log];

  async function pair() {
    onDisk.splice(0, onDisk.length, ...log);
    const store = mapChunkStore();
    const opts = { window: 40, tail: 12, index: { chunkRows: 64, cacheChunks: 1 } };
    const bounded = new AuditService({ ...opts, chunkStore: () => store });
    const unbounded = new AuditService({ ...opts, chunkStore: null });
    for (const svc of [bounded, unbounded]) {
      svc.reset(disk(onDisk).reader);
      for (let i = 0; i < log.length; i += 25) {
        svc.append(log.slice(i, i + 25), 0);
        await settle();
      }
    }
    return { bounded, unbounded, store };
  }

  const focus = (id: string) =>
    focusOf({ id, status: 'held', summary: id, offenders: [] } as never).spec;
  const queries: AuditViewQuery[] = [
    {},
    { lane: 'B' },
    { lane: 'A', outcome: 'denied' },
    { fromMin: 3, toMin: 47 },
    { server: log[0]!.server, fromMin: 10 },
    { focus: focus('one-consent') },
    { focus: focus('replays-no-model'), lane: 'B' }
  ];

  async function expectSame(b: AuditService, u: AuditService) {
    for (const [n, q] of queries.entries()) {
      const got = await b.setQuery(n, q);
      const want = await u.setQuery(n, q);
      const what = JSON.stringify(q);
      expect({ ...got, tail: [], tailStart: 0 }, what).toEqual({ ...want, tail: [], tailStart: 0 });
      expect(got.tail, what).toEqual(want.tail.slice(want.tail.length - got.tail.length));
      expect(got.tailStart + got.tail.length, what).toBe(got.matching);
      for (const at of [0, Math.floor(want.matching / 2), want.matching - 20])
        expect(await b.rows(at, 20), what).toEqual(await u.rows(at, 20));
      const [x, y] = [await b.exportFile('jsonl', () => {}), await u.exportFile('jsonl', () => {})];
      expect(await x.blob.text(), what).toBe(await y.blob.text());
    }
  }

  it('answers every query, its rows and its export as with every chunk in memory', async () => {
    const { bounded, unbounded, store } = await pair();
    const m = bounded.memory;
    expect(m.indexChunks).toBe(Math.ceil(log.length / 64));
    expect(m.indexChunksStored).toBe(Math.floor(log.length / 64));
    expect(m.indexChunksInMemory).toBeLessThanOrEqual(2);
    expect(m.indexBytes).toBeLessThanOrEqual(2 * 64 * 36);
    expect(unbounded.memory.indexChunksInMemory).toBe(unbounded.memory.indexChunks);
    await expectSame(bounded, unbounded);
    expect(store.reads.length).toBeGreaterThan(0);
  });

  it('a seek back into a chunk that left memory, and the run going on from there', async () => {
    const { bounded, unbounded } = await pair();
    const branch = log.slice(333).map((r) => ({ ...r, seq: r.seq + 5_000 }));
    onDisk.splice(333, branch.length, ...branch);
    for (const svc of [bounded, unbounded]) {
      await svc.setQuery(0, { lane: 'A' });
      await svc.truncate(333);
      svc.append(branch, 0);
    }
    expect(bounded.view()).toEqual(unbounded.view());
    await expectSame(bounded, unbounded);
  });

  it('an index chunk storage lost is said in words, naming the rows', async () => {
    const { bounded, store } = await pair();
    store.chunks.clear();
    await expect(bounded.setQuery(1, { lane: 'A' })).rejects.toThrow(
      /^the audit table's index of rows 1–64 could not be read back/
    );
    // The unfiltered table is still answered (from the chunks' summaries).
    expect((await bounded.setQuery(2, {})).totals).toEqual(auditTotals(log));
  });
});
