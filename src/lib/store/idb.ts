/**
 * IndexedDB plumbing shared by the durable decision store and the durable audit log: opening a
 * store with a write probe, and turning the browser's storage errors into plain words.
 *
 * IndexedDB is reached only through `idb-keyval`. One caveat of `createStore` shapes the defaults:
 * it opens the database without a version and creates its object store only when the database is
 * new, so one database holds one object store. The decision store and the audit log therefore use
 * separate databases; pointing both at the same `dbName` fails at `open()` with a clear error.
 */
import { createStore, promisifyRequest, type UseStore } from 'idb-keyval';

/** Why a durable store could not be opened; the UI words it and falls back to connection scope. */
export type OpenFailureKind = 'unavailable' | 'blocked' | 'security' | 'quota' | 'failed' | 'lost';

/**
 * The database was taken from this page from outside: deleted (`indexedDB.deleteDatabase` in
 * another tab), closed by the browser (site data cleared from its settings), or asked for an
 * upgrade by another tab. Whatever this page counted as saved there may be gone.
 */
export interface StorageLoss {
  /** `missing`: no event, but rows this page saved were not there when read back. */
  how: 'deleted' | 'closed' | 'upgrade' | 'missing';
  /** Plain words: "another tab deleted this page's storage …". */
  words: string;
}

/**
 * An open database, as idb-keyval's `UseStore`, that says when it is lost. Once lost, every call
 * rejects in the loss's words; nothing reopens it behind the owner's back (idb-keyval's own store
 * would, after a forced close, and quietly write into a new, empty database).
 */
export type IdbStore = UseStore & {
  /** How the database was lost, or null while it is open. */
  readonly lost: () => StorageLoss | null;
  /** Called once, when the database is lost (at once if it already is). */
  readonly onLost: (listener: (loss: StorageLoss) => void) => void;
};

/** The result of `open()`: errors are values, because "no durable storage here" is expected. */
export type OpenResult<T> =
  { ok: true; store: T } | { ok: false; error: string; kind: OpenFailureKind };

/**
 * A key of a type no store uses for data (stores use strings or arrays), written and deleted in the
 * same transaction by the open probe, so nothing is ever left behind.
 */
const PROBE_KEY = -1;

/** The error name for a call on a database lost from outside; its message is the loss's words. */
const STORAGE_LOST = 'StorageLostError';

export function lossWords(how: StorageLoss['how'], dbName: string): string {
  switch (how) {
    case 'deleted':
      return `another tab deleted this page's storage (the database '${dbName}')`;
    case 'closed':
      return `the browser took this page's storage away: its site data was cleared (from the browser's settings or by another tab), closing the database '${dbName}'`;
    case 'upgrade':
      return 'another tab asked to upgrade the database, so this page let go of it and cannot write any more';
    case 'missing':
      return `what this page saved is no longer in its storage (the database '${dbName}' was emptied from outside: its site data was cleared, or another tab deleted it)`;
  }
}

const ABORTED: unique symbol = Symbol('aborted');

/** Race `p` against `signal`; the caller owns the timer (the pure core has no wall clock). */
function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal === undefined) return p;
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      }
    );
  });
}

function errorName(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'name' in err && typeof err.name === 'string')
    return err.name;
  return 'Error';
}

function errorMessage(err: unknown): string {
  if (
    typeof err === 'object' &&
    err !== null &&
    'message' in err &&
    typeof err.message === 'string'
  )
    return err.message;
  return String(err);
}

/** A storage error classified, with the words a learner (not a developer) can act on. */
export function describeStorageError(
  err: unknown,
  storeName = 'the store'
): { kind: OpenFailureKind; words: string } {
  // An aborted transaction's error is null when the abort came without a reason.
  if (err === null || err === undefined)
    return { kind: 'failed', words: 'the browser aborted the storage transaction' };
  switch (errorName(err)) {
    case 'QuotaExceededError':
      return {
        kind: 'quota',
        words:
          "the browser's storage for this site is full (or capped at zero, as in some private windows)"
      };
    case 'SecurityError':
      return {
        kind: 'security',
        words:
          'the browser refused storage to this page (a private window, blocked site data, or a sandboxed frame)'
      };
    case 'InvalidStateError':
      return {
        kind: 'security',
        words: 'the browser does not allow IndexedDB in this window (some private windows do this)'
      };
    case 'NotFoundError':
      return {
        kind: 'failed',
        words: `the database exists but has no '${storeName}' store (another part of the app created it under the same name)`
      };
    case 'VersionError':
      return { kind: 'failed', words: 'the database was created by a newer version of the app' };
    case 'DataCloneError':
      return { kind: 'failed', words: 'the value is not plain data and cannot be stored' };
    case 'AbortError':
      return { kind: 'failed', words: 'the browser aborted the storage transaction' };
    case 'UnknownError':
      return {
        kind: 'failed',
        words: "the browser's storage failed (a disk error or a damaged browser profile)"
      };
    case STORAGE_LOST:
      return { kind: 'lost', words: errorMessage(err) };
    case 'ReferenceError':
      return { kind: 'unavailable', words: 'IndexedDB is not available in this environment' };
    default:
      return { kind: 'failed', words: `${errorName(err)}: ${errorMessage(err)}` };
  }
}

/**
 * An Error saying what failed and why, for a failed read or write after a successful open. The
 * original error is kept as `cause` for the console.
 */
export function storageError(action: string, err: unknown, storeName?: string): Error {
  const { words } = describeStorageError(err, storeName);
  return new Error(`Could not ${action}: ${words} (${errorName(err)}).`, { cause: err });
}

/**
 * Open `storeName` in database `dbName` and prove it works with a write that leaves nothing
 * behind: a store that opens but cannot be written (Safari's old private mode, quota at zero) is
 * reported at open time, not on the first decision the machine tries to commit.
 *
 * `signal` bounds the wait: an open that never settles (blocked by another tab mid-upgrade, a stuck
 * browser) would otherwise hang the caller forever. Pass e.g. `AbortSignal.timeout(3000)`.
 */
export async function openIdbStore(
  dbName: string,
  storeName: string,
  signal?: AbortSignal
): Promise<OpenResult<IdbStore>> {
  let factory: IDBFactory | undefined;
  try {
    // Merely reading the global throws a SecurityError in some locked-down contexts.
    factory = (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  } catch (err) {
    const { kind, words } = describeStorageError(err, storeName);
    return { ok: false, kind, error: `Durable storage is not available: ${words}.` };
  }
  if (factory === undefined || factory === null) {
    return {
      ok: false,
      kind: 'unavailable',
      error:
        'Durable storage is not available: this browser or environment offers no IndexedDB, so decisions cannot outlive the connection.'
    };
  }
  try {
    const raw = createStore(dbName, storeName);
    let lost: StorageLoss | null = null;
    /** The connection, once the probe has opened it (writes open their transactions on it). */
    let conn: IDBDatabase | null = null;
    const listeners: ((loss: StorageLoss) => void)[] = [];
    const lose = (how: StorageLoss['how']) => {
      if (lost) return;
      lost = { how, words: lossWords(how, dbName) };
      for (const l of listeners.splice(0)) l(lost);
    };
    const call: UseStore = (mode, callback) => {
      if (lost) {
        const err = new Error(lost.words);
        err.name = STORAGE_LOST;
        return Promise.reject(err);
      }
      // Every write is 'strict': its transaction completes only once the browser has flushed it
      // to disk, so what a store counts as saved is on disk. Chromium's default since 121 is
      // 'relaxed' (complete once handed to the OS), which a power cut can still undo.
      const db = conn;
      if (db !== null && mode === 'readwrite')
        return Promise.resolve().then(() =>
          callback(db.transaction(storeName, mode, { durability: 'strict' }).objectStore(storeName))
        );
      return raw(mode, callback);
    };
    const store: IdbStore = Object.assign(call, {
      lost: () => lost,
      onLost: (listener: (loss: StorageLoss) => void) => {
        if (lost) listener(lost);
        else listeners.push(listener);
      }
    });
    const probe = raw('readwrite', (s) => {
      const db = s.transaction.db;
      conn = db;
      // Another tab upgrading or deleting the database waits for every open connection to close.
      // Holding ours would block that tab forever; let go, and fail every later call in words.
      db.addEventListener('versionchange', (e) => {
        lose(e.newVersion === null ? 'deleted' : 'upgrade');
        db.close();
      });
      // Fired only when the browser closes the connection itself: site data cleared, the
      // database deleted from its developer tools, its storage failing.
      db.addEventListener('close', () => lose('closed'));
      s.put(0, PROBE_KEY);
      s.delete(PROBE_KEY);
      return promisifyRequest(s.transaction);
    });
    const outcome = await abortable(probe, signal);
    if (outcome === ABORTED) {
      // The probe may still settle later; swallow it so it never surfaces as unhandled.
      probe.catch(() => undefined);
      return {
        ok: false,
        kind: 'blocked',
        error: `Durable storage did not open in time: the database '${dbName}' is blocked (another tab of this page may be holding it) or the browser is not answering.`
      };
    }
    return { ok: true, store };
  } catch (err) {
    const { kind, words } = describeStorageError(err, storeName);
    return {
      ok: false,
      kind,
      error: `Durable storage could not be opened (database '${dbName}'): ${words}.`
    };
  }
}

/**
 * A key prefix that keeps one run's (or one page's) entries apart from every other's. An array
 * rather than a joined string: server names are untrusted text and no separator is safe against
 * them, and IndexedDB sorts array keys element by element, so a prefix's entries are contiguous
 * and drop with one key-range delete.
 */
export type Namespace = readonly (string | number)[];

/**
 * Every key `[...prefix, *]`: arrays compare element by element and any array sorts after any
 * string or number, so `prefix` < `[...prefix, x, …]` < `[...prefix, []]` for every string `x`.
 * An empty prefix is the whole store.
 */
export function prefixRange(prefix: Namespace): IDBKeyRange | undefined {
  if (prefix.length === 0) return undefined;
  return IDBKeyRange.bound([...prefix], [...prefix, []], true, true);
}

/**
 * Run `body` in one transaction of `store` and resolve with what it computed once the transaction
 * commits. A request that throws (say a DataCloneError on the fifth put of a batch) aborts the
 * transaction, so a batch lands whole or not at all.
 *
 * Requests placed from another request's callback (after a read: the decision log's append) go
 * through `guard`: what they throw aborts the transaction too, and the promise rejects with that
 * error — the browser would abort it with a bare AbortError, losing, say, a full disk's name.
 */
export function inTransaction<T>(
  store: UseStore,
  mode: IDBTransactionMode,
  body: (
    s: IDBObjectStore,
    done: (v: T) => void,
    guard: <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => void
  ) => void
): Promise<T> {
  return store(mode, (s) => {
    let value: T | undefined;
    let set = false;
    let thrown: { err: unknown } | null = null;
    const abort = (err: unknown) => {
      thrown ??= { err };
      try {
        s.transaction.abort();
      } catch {
        // Already aborted (the browser gave up first): the original error is the one to report.
      }
    };
    const guard =
      <A extends unknown[]>(fn: (...args: A) => void) =>
      (...args: A) => {
        try {
          fn(...args);
        } catch (err) {
          abort(err);
        }
      };
    try {
      body(
        s,
        (v) => {
          value = v;
          set = true;
        },
        guard
      );
    } catch (err) {
      abort(err);
      throw err;
    }
    return promisifyRequest(s.transaction).then(
      () => {
        if (!set) throw new Error('transaction committed without a result');
        return value as T;
      },
      (err: unknown) => {
        throw thrown ? thrown.err : err;
      }
    );
  });
}

export { promisifyRequest };
export type { UseStore };
