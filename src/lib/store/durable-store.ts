/**
 * The durable decision store (SPEC §4): IndexedDB via `idb-keyval`, keyed (server, identity), with
 * the same TTLs as the connection scope. It survives reconnects, page reloads and new tabs; the
 * connection id is ignored, which is the whole point — a server that disconnects and reconnects
 * meets the decision it was given before.
 *
 * Key: the IndexedDB array key `[...namespace, server, identity]`. The namespace keeps runs apart
 * (SPEC §4: "runs are isolated, restarts are not") — the playground uses `[runId, lane]`, so a
 * Reset starts empty while a reload of the same run finds its decisions. An array rather than a
 * joined string because server names are untrusted text and no separator is safe against them,
 * and because IndexedDB sorts array keys element by element, so a namespace's (or a server's)
 * entries are contiguous and drop with one key-range delete.
 *
 * Two implementations:
 * - {@link DurableDecisionStore} (here): every call is a transaction; `commit` resolves once the
 *   decision is on disk. For `/single/`, where the machine sends a frame only after its commit.
 * - `CachedDurableStore` (cached-durable-store.ts): an in-memory index written behind in groups,
 *   for the high-speed simulation.
 */
import type { StoredDecision } from '../machine/types';
import {
  answerOf,
  approvalAfter,
  isExpired,
  isStoredDecision,
  recordPresentation,
  toStoredDecision,
  type DecisionStore,
  type LookupResult
} from './decision-store';
import { inTransaction, openIdbStore, storageError, type OpenResult, type UseStore } from './idb';

/** The default database; separate from the audit log's (one object store per database, see idb.ts). */
export const DEFAULT_DECISION_DB = 'sampling-policy-lab-decisions';
/** The object store name inside the decisions database. */
export const DECISIONS_STORE = 'decisions';

/** A key prefix that keeps one run's (or one page's) decisions apart from every other's. */
export type Namespace = readonly (string | number)[];

export interface DurableStoreOptions {
  dbName?: string;
  /** The key prefix of this store's entries; `[]` uses the whole database. */
  namespace?: Namespace;
  /** Bounds the wait for a blocked or unresponsive IndexedDB (e.g. `AbortSignal.timeout(3000)`). */
  signal?: AbortSignal;
}

export type DecisionKey = (string | number)[];

export function decisionKey(ns: Namespace, server: string, identity: string): DecisionKey {
  return [...ns, server, identity];
}

/**
 * Every key `[...prefix, *]`: arrays compare element by element and any array sorts after any
 * string or number, so `prefix` < `[...prefix, x, …]` < `[...prefix, []]` for every string `x`.
 * An empty prefix is the whole store.
 */
export function prefixRange(prefix: readonly (string | number)[]): IDBKeyRange | undefined {
  if (prefix.length === 0) return undefined;
  return IDBKeyRange.bound([...prefix], [...prefix, []], true, true);
}

/**
 * Decisions in IndexedDB, one transaction per call. `lookup` reads, checks and re-writes the entry
 * in a single read-write transaction, so two lookups racing on one identity cannot lose an
 * increment of `represented`.
 */
export class DurableDecisionStore implements DecisionStore {
  readonly scope = 'durable' as const;
  readonly dbName: string;
  readonly namespace: Namespace;
  private readonly store: UseStore;

  private constructor(store: UseStore, dbName: string, ns: Namespace) {
    this.store = store;
    this.dbName = dbName;
    this.namespace = ns;
  }

  /**
   * Open (or create) the decisions database. `{ ok: false, error }` in plain words when IndexedDB
   * is missing, blocked, refused (private mode) or full — the UI says so and falls back to
   * connection scope rather than claim a durability it does not have.
   */
  static async open(opts: DurableStoreOptions = {}): Promise<OpenResult<DurableDecisionStore>> {
    const dbName = opts.dbName ?? DEFAULT_DECISION_DB;
    const opened = await openIdbStore(dbName, DECISIONS_STORE, opts.signal);
    if (!opened.ok) return opened;
    return {
      ok: true,
      store: new DurableDecisionStore(opened.store, dbName, opts.namespace ?? [])
    };
  }

  /** See {@link DecisionStore.lookup}; `connection` is ignored — that is what durable means. */
  async lookup(
    server: string,
    _connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): Promise<LookupResult | null> {
    const key = decisionKey(this.namespace, server, identity);
    try {
      return await inTransaction<LookupResult | null>(this.store, 'readwrite', (s, done) => {
        done(null);
        const req = s.get(key);
        req.onsuccess = () => {
          const d: unknown = req.result;
          // A malformed entry (older build, hand-edited) is a miss but is left for a commit to
          // overwrite: nothing stored is thrown away on a guess.
          if (!isStoredDecision(d)) return;
          const a = answerOf(d, policyHash, now);
          if (a === null) {
            s.delete(key);
            return;
          }
          recordPresentation(a);
          s.put(a, key);
          done({ decision: a });
        };
      });
    } catch (err) {
      throw storageError(`look up a stored decision for server '${server}'`, err, DECISIONS_STORE);
    }
  }

  /**
   * See {@link DecisionStore.commit}. Resolves once the transaction has committed; rejects with an
   * Error naming what failed. A failed put aborts its transaction, so every earlier entry is intact.
   */
  async commit(_connection: string, decision: StoredDecision): Promise<void> {
    const stored = toStoredDecision(decision);
    try {
      await inTransaction<void>(this.store, 'readwrite', (s, done) => {
        s.put(stored, decisionKey(this.namespace, stored.server, stored.identity));
        done(undefined);
      });
    } catch (err) {
      throw storageError(
        `store the decision for server '${decision.server}'`,
        err,
        DECISIONS_STORE
      );
    }
  }

  /** See {@link DecisionStore.invalidateServer}: counts and deletes `[…, server, *]` in one transaction. */
  async invalidateServer(server: string): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readwrite', (s, done) => {
        const range = prefixRange([...this.namespace, server])!;
        const counted = s.count(range);
        counted.onsuccess = () => {
          done(counted.result);
          s.delete(range);
        };
      });
    } catch (err) {
      throw storageError(`drop the stored decisions of server '${server}'`, err, DECISIONS_STORE);
    }
  }

  /** Durable scope: a closed connection changes nothing; the next connection meets the same entries. */
  async closeConnection(_server: string, _connection: string): Promise<void> {}

  /** Delete every entry expired at `now`, in one transaction; returns how many. */
  async sweep(now: number): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readwrite', (s, done) => {
        let n = 0;
        done(0);
        const req = s.openCursor(prefixRange(this.namespace));
        req.onsuccess = () => {
          const cursor = req.result;
          if (cursor === null) return done(n);
          const d: unknown = cursor.value;
          if (isStoredDecision(d) && isExpired(d, now)) {
            // A denial over an approval becomes the approval; anything else expired goes.
            const approval = approvalAfter(d, now);
            if (approval) cursor.update(approval);
            else {
              cursor.delete();
              n += 1;
            }
          }
          cursor.continue();
        };
      });
    } catch (err) {
      throw storageError('sweep the expired decisions', err, DECISIONS_STORE);
    }
  }

  async entries(): Promise<StoredDecision[]> {
    try {
      return await inTransaction<StoredDecision[]>(this.store, 'readonly', (s, done) => {
        const req = s.getAll(prefixRange(this.namespace));
        req.onsuccess = () => done((req.result as unknown[]).filter(isStoredDecision));
      });
    } catch (err) {
      throw storageError('read the stored decisions', err, DECISIONS_STORE);
    }
  }

  async count(): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readonly', (s, done) => {
        const req = s.count(prefixRange(this.namespace));
        req.onsuccess = () => done(req.result);
      });
    } catch (err) {
      throw storageError('count the stored decisions', err, DECISIONS_STORE);
    }
  }

  async clear(): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readwrite', (s, done) => {
        const range = prefixRange(this.namespace);
        const req = s.count(range);
        req.onsuccess = () => {
          done(req.result);
          if (range === undefined) s.clear();
          else s.delete(range);
        };
      });
    } catch (err) {
      throw storageError('clear the stored decisions', err, DECISIONS_STORE);
    }
  }
}
