import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditRecord } from '$lib/machine/types';
import { auditTotals } from '$lib/store/audit-query';
import { putRows } from '$lib/store/audit-chunks';
import { inTransaction } from '$lib/store/idb';
import { runLog } from '$lib/sim/session/run-log.testing';
import { auditRows } from './audit-feed';
import { indexMore, indexResumed } from './audit-reindex';
import { auditStore, flushRun, startRun, currentRun } from './run-storage';

// Node has no `navigator`: no Web Locks either (run-storage.ts and index-chunks.ts then go without).
vi.stubGlobal('navigator', {});

const log = runLog('reconnect-bypass.json', 60);

/** A run's namespace whose audit log got its first `written` rows on disk, as the worker writes them. */
async function runWith(written: AuditRecord[]): Promise<string> {
  const storage = await startRun();
  const run = currentRun()!;
  for (const r of written) run.audit!.append(r);
  await flushRun(run);
  expect(run.audit!.status()).toMatchObject({ saved: written.length, heldInMemory: 0 });
  return storage.run!;
}

/** The reload: the tab takes its run's namespace again (a fresh log over what is on disk). */
async function reopen(id: string) {
  const storage = await startRun(id);
  expect(storage.run).toBe(id);
  return currentRun()!.audit!;
}

async function allRows(): Promise<AuditRecord[]> {
  await auditRows.setQuery(1, {});
  return (await auditRows.rows(0, auditRows.size)).rows;
}

describe('a reload indexes the audit rows its run has on disk', () => {
  beforeAll(() => {
    expect(log.length).toBeGreaterThan(100);
  });

  it('writes behind at the reload: the rows on disk from row 0 are indexed, the rest counted as lost', async () => {
    const k = 61;
    const id = await runWith(log.slice(0, k));
    const audit = await reopen(id);
    // The session re-simulated the run to where it was: it had made every row of `log`.
    const found = await indexResumed(id, log.length, audit.nextKey);
    expect(found).toEqual({ onDisk: k, lost: log.length - k });
    const v = auditRows.view();
    expect(v.logSize).toBe(k);
    expect(v.matching).toBe(k);
    expect(v.lostOnReload).toBe(log.length - k);
    // Totals are over the rows that are there, not the run's.
    expect(v.totals).toEqual(auditTotals(log.slice(0, k)));
    expect(await allRows()).toEqual(log.slice(0, k));
  });

  it("the restart's rows follow the rows found, numbered as the log writes them, and read back from disk", async () => {
    const k = 40;
    const id = await runWith(log.slice(0, k));
    const audit = await reopen(id);
    expect(audit.nextKey).toBe(k);
    const found = await indexResumed(id, 100, audit.nextKey);
    expect(found).toEqual({ onDisk: k, lost: 100 - k });
    // The restart's own rows (here: the log's later rows stand in for them) go on at key k.
    const restart = log.slice(100, 130);
    for (const r of restart) audit.append(r);
    await flushRun(currentRun()!);
    auditRows.window = 1;
    try {
      auditRows.append(restart, 0);
      // Only a row or two stays in memory: the rest are read back from disk.
      expect(auditRows.memory.recordsHeld).toBeLessThan(5);
      expect(await allRows()).toEqual([...log.slice(0, k), ...restart]);
      expect(auditRows.view().lostOnReload).toBe(60);
    } finally {
      auditRows.window = 5_000;
    }
  });

  it('rows on disk past a gap are not numbered as the run’s: the restart’s are read from where the log went on', async () => {
    const k = 30;
    const id = await runWith(log.slice(0, k));
    // Rows 50… of the run landed on disk with nothing between (a database emptied from outside
    // and written again), and the log goes on after them.
    const db = auditStore()!;
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      putRows(s, [id], 50, log.slice(50, 70));
      done(undefined);
    });
    const audit = await reopen(id);
    expect(audit.nextKey).toBe(70);
    const found = await indexResumed(id, 80, audit.nextKey);
    expect(found).toEqual({ onDisk: k, lost: 80 - k });
    const restart = log.slice(100, 110);
    for (const r of restart) audit.append(r);
    await flushRun(currentRun()!);
    auditRows.window = 1;
    try {
      auditRows.append(restart, 0);
      expect(await allRows()).toEqual([...log.slice(0, k), ...restart]);
    } finally {
      auditRows.window = 5_000;
    }
  });

  it('rows made again by the reload’s re-simulation: in the table after the rows found, nothing lost, and written in order', async () => {
    const k = 45;
    const id = await runWith(log.slice(0, k));
    const audit = await reopen(id);
    const key0 = audit.nextKey;
    const saved0 = audit.status().saved;
    // The session re-simulated to row 100 and wrote the rows the log lacked (as the worker's
    // session does in its own namespace), then the restart's.
    const remade = log.slice(k, 100);
    for (const r of remade) audit.append(r);
    const restart = log.slice(100, 110);
    for (const r of restart) audit.append(r);
    const restored = { rows: 100 - key0, savedWhenDone: saved0 + 100 - key0 };
    const found = await indexResumed(id, 100, key0, restored);
    expect(found).toEqual({ onDisk: k, lost: 0 });
    // The session hands them to the table next, still being written.
    auditRows.append([...remade, ...restart], audit.pendingWrites);
    const v = auditRows.view();
    expect('lostOnReload' in v).toBe(false);
    expect(v.restoredOnReload).toEqual({ rows: 55, savedWhenDone: 100 });
    expect(v.totals).toEqual(auditTotals(log.slice(0, 110)));
    expect(await allRows()).toEqual(log.slice(0, 110));
    // Written in order: the log's saved count reaches `savedWhenDone` once they are all on disk.
    await flushRun(currentRun()!);
    expect(audit.status().saved).toBe(110);
    expect(await allRows()).toEqual(log.slice(0, 110));
    // A new index (a seek back re-simulated) forgets it.
    auditRows.reset(null);
    expect('restoredOnReload' in auditRows.view()).toBe(false);
  });

  it('every row on disk: nothing is lost, and the view says nothing of a loss', async () => {
    const id = await runWith(log);
    const audit = await reopen(id);
    expect(await indexResumed(id, log.length, audit.nextKey)).toEqual({
      onDisk: log.length,
      lost: 0
    });
    const v = auditRows.view();
    expect(v.logSize).toBe(log.length);
    expect('lostOnReload' in v).toBe(false);
  });

  it('nothing on disk yet: the table starts empty and every row of the run is counted as lost', async () => {
    const id = await runWith([]);
    const audit = await reopen(id);
    expect(await indexResumed(id, 25, audit.nextKey)).toEqual({ onDisk: 0, lost: 25 });
    expect(auditRows.view()).toMatchObject({ logSize: 0, lostOnReload: 25 });
  });

  it('a new index (a new run, a seek back re-simulated) forgets the loss', async () => {
    const id = await runWith(log.slice(0, 10));
    await reopen(id);
    await indexResumed(id, 20);
    expect(auditRows.view().lostOnReload).toBe(10);
    auditRows.reset(null);
    expect('lostOnReload' in auditRows.view()).toBe(false);
  });

  it('a seek forward in place fills the index only when every row up to it is on disk', async () => {
    const id = await runWith(log.slice(0, 50));
    await reopen(id);
    await indexResumed(id, 20);
    expect(await indexMore(id, 50)).toBe(true);
    expect(auditRows.size).toBe(50);
    expect(await indexMore(id, 60)).toBe(false);
    // What is there stays indexed, no row past the gap (the worker then starts the table anew).
    expect(auditRows.size).toBe(50);
  });
});
