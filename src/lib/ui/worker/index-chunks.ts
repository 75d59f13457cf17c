/**
 * Where the audit table's column index puts its full chunks (issue #19: a week's run in bounded
 * memory; store/audit-index.ts): an IndexedDB database of this worker's own, so the index of a
 * long run is on disk beside the audit log it indexes, not in the tab's memory. Each run (a reset
 * of the table) writes under a number of its own and the previous run's chunks are deleted.
 *
 * The database belongs to this worker alone (its name carries an id, held under a Web Lock while
 * the worker lives): another tab's index is never touched, and databases of tabs closed or crashed
 * are deleted when a worker starts. A write or a read has a time limit; a chunk that could not be
 * written stays in memory (the index says so), a read that failed is said in words.
 */
import { createStore, type UseStore } from 'idb-keyval';
import type { ChunkData, ChunkStore } from '../../store/audit-index';
import { describeStorageError, inTransaction, storageError } from '../../store/idb';

const PREFIX = 'sampling-policy-lab-audit-index-';
const LOCK = 'spl-index:';
/** How long a chunk's write or read may take. */
const TIMEOUT_MS = 15_000;

let opened: Promise<UseStore> | null = null;

function locks(): LockManager | undefined {
  return (navigator as Navigator & { locks?: LockManager }).locks;
}

/** This worker's database, opened once (and its lock taken), older tabs' left-overs deleted. */
function database(): Promise<UseStore> {
  opened ??= (async () => {
    const id = crypto.randomUUID();
    const name = PREFIX + id;
    const l = locks();
    if (l) {
      await new Promise<void>((held) => {
        void l.request(LOCK + id, () => {
          held();
          // Held for as long as the worker lives.
          return new Promise<void>(() => {});
        });
      });
      void deleteOrphans(l, id);
    }
    return createStore(name, 'chunks');
  })();
  return opened;
}

/** Delete index databases no live worker holds (their tab closed or crashed). */
async function deleteOrphans(l: LockManager, mine: string): Promise<void> {
  try {
    const held = new Set((await l.query()).held?.map((x) => x.name) ?? []);
    for (const db of await indexedDB.databases()) {
      const id = db.name?.startsWith(PREFIX) ? db.name.slice(PREFIX.length) : null;
      if (id && id !== mine && !held.has(LOCK + id)) indexedDB.deleteDatabase(db.name!);
    }
  } catch {
    // Left-overs stay until a later start: they are never read.
  }
}

function timed<T>(p: Promise<T>, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`the browser's storage did not ${what} within ${TIMEOUT_MS / 1000} s`)),
      TIMEOUT_MS
    );
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    );
  });
}

let nextSpace = 0;

/** A chunk store for one run of the index: its chunks under `[space, k]`, earlier runs' deleted. */
export function indexChunkStore(): ChunkStore {
  const space = ++nextSpace;
  const db = database();
  // The previous runs' chunks are not read again.
  void db
    .then((s) =>
      inTransaction<void>(s, 'readwrite', (o, done) => {
        o.delete(IDBKeyRange.upperBound([space], true));
        done();
      })
    )
    .catch(() => {});
  return {
    put: (k, chunk) =>
      timed(
        db.then((s) =>
          inTransaction<void>(s, 'readwrite', (o, done) => {
            o.put(chunk, [space, k]);
            done();
          })
        ),
        'save the audit index'
      ).catch((err: unknown) => {
        throw storageError("save the audit table's index", err);
      }),
    get: (k) =>
      timed(
        db.then((s) =>
          inTransaction<ChunkData | undefined>(s, 'readonly', (o, done) => {
            const req = o.get([space, k]);
            req.onsuccess = () => done(req.result as ChunkData | undefined);
          })
        ),
        'answer'
      ).catch((err: unknown) => {
        throw new Error(describeStorageError(err).words);
      }),
    drop: (from) =>
      void db
        .then((s) =>
          inTransaction<void>(s, 'readwrite', (o, done) => {
            o.delete(IDBKeyRange.bound([space, from], [space, Infinity]));
            done();
          })
        )
        .catch(() => {})
  };
}
