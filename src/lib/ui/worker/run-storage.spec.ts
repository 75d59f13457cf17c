/**
 * The group commit of a run's stores (run-storage.ts) with the audit log's writes held, as the
 * storage tests' `hold` fault does in the browser: an audit transaction that never answers must
 * not hold back the durable lanes' decisions — they are what a reload needs to keep "do not ask
 * again" (SPEC §4).
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decision } from '$lib/store/decision.testing';
import { AUDIT_STORE } from '$lib/store/audit-log';
import { record } from '$lib/sim/checks/invariants/records.testing';
import { currentRun, deleteLegacyDbs, groupCommit, startRun } from './run-storage';

// Node has no `navigator`: no Web Locks either (run-storage.ts then goes without).
vi.stubGlobal('navigator', {});

/**
 * From now on every transaction that puts into the audit store is never written and never
 * answers (a slow disk, for good): tests/storage-helpers.ts's `hold` fault, in fake-indexeddb.
 */
function holdAudit(): void {
  const put = IDBObjectStore.prototype.put;
  const held = new WeakSet<IDBTransaction>();
  vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
    this: IDBObjectStore,
    ...args: [unknown, IDBValidKey?]
  ) {
    if (this.name !== AUDIT_STORE) return put.apply(this, args);
    const tx = this.transaction;
    if (!held.has(tx)) {
      held.add(tx);
      for (const on of ['oncomplete', 'onabort', 'onerror'])
        Object.defineProperty(tx, on, { configurable: true, get: () => null, set: () => {} });
    }
    return {} as IDBRequest<IDBValidKey>;
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('group commit with the audit log held', () => {
  it('the lanes’ decisions reach disk slice after slice while the audit rows wait', async () => {
    await startRun();
    const run = currentRun()!;
    const lane = run.decisions.B!;
    const log = run.audit!;
    holdAudit();
    // Three slices of a fast-forward, each followed by its group commit (as the worker does).
    // The first slice's audit batch never answers; the decisions of the next slices are
    // committed while it hangs.
    for (let slice = 0; slice < 3; slice++) {
      for (let i = 0; i < 200; i++) log.append(record());
      for (let i = 0; i < 10; i++)
        lane.commit('c#1', decision({ identity: `s:${slice}-${i}`, server: 's' }));
      void groupCommit();
      await vi.waitFor(() => expect(lane.status().saved).toBe(10 * (slice + 1)), {
        timeout: 2_000
      });
    }
    expect(lane.status()).toMatchObject({ live: 30, saved: 30, heldInMemory: 0, failure: null });
    // The audit log says what it has not written; nothing of it is counted as saved.
    expect(log.status()).toMatchObject({ saved: 0, heldInMemory: 600, failure: null });

    // A reload finds every decision (the stores read back what is on disk).
    const id = run.storage.run!;
    vi.restoreAllMocks();
    const again = await startRun(id);
    expect(again.run).toBe(id);
    expect(currentRun()!.decisions.B!.status()).toMatchObject({ live: 30, saved: 30 });
  });
});

describe('an audit log of the layout before chunks (one row a record)', () => {
  /** What an earlier build left: the run's rows, one a record, keyed `[run, n]`. */
  async function legacyLog(run: string, rows: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const open = indexedDB.open('sampling-policy-lab-run-audit');
      open.onupgradeneeded = () => open.result.createObjectStore(AUDIT_STORE);
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction(AUDIT_STORE, 'readwrite');
        for (let n = 0; n < rows; n++) tx.objectStore(AUDIT_STORE).put(record(), [run, n]);
        tx.oncomplete = () => {
          db.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
  }

  it('is never read: its run resumes with no rows on disk (the reload re-simulates them) and the old database is deleted', async () => {
    await startRun();
    const id = currentRun()!.storage.run!;
    await legacyLog(id, 50);
    deleteLegacyDbs();
    await vi.waitFor(async () =>
      expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(
        'sampling-policy-lab-run-audit'
      )
    );
    const again = await startRun(id);
    expect(again.run).toBe(id);
    // Nothing found: the reload's re-simulation writes every row of the run again from row 0.
    const log = currentRun()!.audit!;
    expect(log.nextKey).toBe(0);
    expect(log.status()).toMatchObject({ saved: 0, heldInMemory: 0, lost: 0 });
  });
});
