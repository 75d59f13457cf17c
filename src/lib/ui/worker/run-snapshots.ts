/**
 * Each run's latest engine snapshot in IndexedDB (issue #21: snapshots outlive the page), so a
 * reload resumes the run from it instead of re-simulating it from the start
 * (sim/session/session-snapshots.ts decides when to save and whether a saved one may be used).
 *
 * One record per run namespace, in a database of its own: a snapshot is a few megabytes, written
 * now and then, and must never hold up the decisions' or the audit log's group commits. Writes go
 * one at a time, the newest save replacing one still waiting. Every wait has a time limit; a
 * failure only loses the snapshot (the reload re-simulates), so it is not reported as a storage
 * failure.
 */
import type { SavedSnapshot, SnapshotSlot } from '../../sim/session/session-snapshots';

const SNAPSHOT_DB = 'sampling-policy-lab-run-snapshots';
const STORE = 'snapshots';
/** How long an open or a read may take before the snapshot is given up. */
const WAIT_MS = 4_000;

let opening: Promise<IDBDatabase | null> | null = null;

function withTimeout<T>(p: Promise<T>, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), WAIT_MS);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      }
    );
  });
}

/** The database, opened once (null: IndexedDB is not available, or did not answer). */
function open(): Promise<IDBDatabase | null> {
  opening ??= withTimeout(
    new Promise<IDBDatabase | null>((resolve, reject) => {
      const req = indexedDB.open(SNAPSHOT_DB, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => {
        const db = req.result;
        // Another tab deleting the database, or the browser clearing site data: open again later.
        db.onversionchange = () => {
          db.close();
          opening = null;
        };
        db.onclose = () => (opening = null);
        resolve(db);
      };
      req.onerror = () => reject(req.error ?? new Error('open failed'));
      req.onblocked = () => reject(new Error('open blocked'));
    }),
    null
  ).then((db) => {
    if (!db) opening = null;
    return db;
  });
  return opening;
}

/** One request in its own transaction; resolves with its result once the transaction commits. */
async function request<T>(
  mode: IDBTransactionMode,
  make: (s: IDBObjectStore) => IDBRequest
): Promise<T> {
  const db = await open();
  if (!db) throw new Error('no database');
  return new Promise<T>((resolve, reject) => {
    const tx = db.transaction(STORE, mode);
    const req = make(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(req.result as T);
    tx.onerror = () => reject(tx.error ?? new Error('transaction failed'));
    tx.onabort = () => reject(tx.error ?? new Error('transaction aborted'));
  });
}

/**
 * The snapshot slot of run namespace `run`: with its saved snapshot read first when `read` (a
 * reload resuming the run), else none (a new run, whose namespace holds nothing yet).
 */
export async function snapshotSlot(run: string, read: boolean): Promise<SnapshotSlot> {
  const saved = read
    ? await withTimeout(
        request<SavedSnapshot | undefined>('readonly', (s) => s.get(run)).then((v) => v ?? null),
        null
      )
    : null;
  /** What to write next: a snapshot, 'drop', or nothing. */
  let next: SavedSnapshot | 'drop' | null = null;
  let writing = false;
  const pump = async () => {
    if (writing) return;
    writing = true;
    try {
      while (next !== null) {
        const what = next;
        next = null;
        try {
          if (what === 'drop') await request('readwrite', (s) => s.delete(run));
          else await request('readwrite', (s) => s.put(what, run));
        } catch {
          // Lost: a reload re-simulates instead. The run itself is unaffected.
        }
      }
    } finally {
      writing = false;
    }
  };
  return {
    saved,
    save(s) {
      next = s;
      void pump();
    },
    drop() {
      next = 'drop';
      void pump();
    }
  };
}

/** Forget the snapshots of pruned runs (best effort: a later pass deletes what is left). */
export async function dropSnapshots(runs: readonly string[]): Promise<void> {
  if (runs.length === 0) return;
  try {
    await request('readwrite', (s) => {
      let last: IDBRequest = s.delete(runs[0]!);
      for (const r of runs.slice(1)) last = s.delete(r);
      return last;
    });
  } catch {
    // Housekeeping only.
  }
}
