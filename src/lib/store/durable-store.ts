/**
 * The durable decision store (SPEC §4): IndexedDB via `idb-keyval`, keyed (server, identity), with
 * the same TTLs as the connection scope. It survives reconnects, page reloads and new tabs; the
 * connection id is ignored, which is the whole point — a server that disconnects and reconnects
 * meets the decision it was given before.
 *
 * Key: the IndexedDB array key `[server, identity]`. An array rather than a joined string because
 * server names are untrusted text and no separator is safe against them, and because IndexedDB
 * sorts array keys element by element, so one server's entries are contiguous and a policy edit
 * drops them with a single key-range delete in one transaction.
 *
 * Two implementations:
 * - {@link DurableDecisionStore}: every call is a transaction; `commit` resolves once the decision
 *   is on disk. For the live playground, where the machine sends a frame only after its commit.
 * - {@link CachedDurableStore}: an in-memory index answering synchronously, written behind to
 *   IndexedDB in groups. For the high-speed simulation. See its comment for the trade-off.
 */
import type { StoredDecision } from '../machine/types';
import {
  classifyEntry,
  isStoredDecision,
  recordPresentation,
  toStoredDecision,
  type DecisionStore,
  type LookupResult
} from './decision-store';
import {
  openIdbStore,
  promisifyRequest,
  storageError,
  type OpenResult,
  type UseStore
} from './idb';

/** The default database; separate from the audit log's (one object store per database, see idb.ts). */
export const DEFAULT_DECISION_DB = 'sampling-policy-lab-decisions';
/** The object store name inside the decisions database. */
export const DECISIONS_STORE = 'decisions';

export interface DurableStoreOptions {
  dbName?: string;
  /** Bounds the wait for a blocked or unresponsive IndexedDB (e.g. `AbortSignal.timeout(3000)`). */
  signal?: AbortSignal;
}

type DecisionKey = [server: string, identity: string];

function keyOf(server: string, identity: string): DecisionKey {
  return [server, identity];
}

/**
 * Every key `[server, *]`: arrays compare element by element and any array sorts after any string,
 * so `[server]` < `[server, identity]` < `[server, []]` for every string identity.
 */
function serverRange(server: string): IDBKeyRange {
  return IDBKeyRange.bound([server], [server, []], true, true);
}

/** Run `body` in one transaction of `store` and resolve with what it computed once it commits. */
function inTransaction<T>(
  store: UseStore,
  mode: IDBTransactionMode,
  body: (s: IDBObjectStore, done: (v: T) => void) => void
): Promise<T> {
  return store(mode, (s) => {
    let value: T | undefined;
    let set = false;
    try {
      body(s, (v) => {
        value = v;
        set = true;
      });
    } catch (err) {
      // A request that throws (say a DataCloneError on the fifth put of a batch) would otherwise
      // let the transaction commit the four before it: abort, so a batch lands whole or not at all.
      s.transaction.abort();
      throw err;
    }
    return promisifyRequest(s.transaction).then(() => {
      if (!set) throw new Error('transaction committed without a result');
      return value as T;
    });
  });
}

/**
 * Decisions in IndexedDB, one transaction per call. `lookup` reads, checks and re-writes the entry
 * in a single read-write transaction, so two lookups racing on one identity cannot lose an
 * increment of `represented`.
 */
export class DurableDecisionStore implements DecisionStore {
  readonly scope = 'durable' as const;
  readonly dbName: string;
  private readonly store: UseStore;

  private constructor(store: UseStore, dbName: string) {
    this.store = store;
    this.dbName = dbName;
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
      store: new DurableDecisionStore(opened.store, dbName)
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
    const key = keyOf(server, identity);
    try {
      return await inTransaction<LookupResult | null>(this.store, 'readwrite', (s, done) => {
        done(null);
        const req = s.get(key);
        req.onsuccess = () => {
          const d: unknown = req.result;
          // A malformed entry (older build, hand-edited) is a miss but is left for a commit to
          // overwrite: nothing stored is thrown away on a guess.
          if (!isStoredDecision(d)) return;
          if (classifyEntry(d, policyHash, now) !== 'hit') {
            s.delete(key);
            return;
          }
          recordPresentation(d);
          s.put(d, key);
          done({ decision: d });
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
        s.put(stored, keyOf(stored.server, stored.identity));
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

  /** See {@link DecisionStore.invalidateServer}: counts and deletes `[server, *]` in one transaction. */
  async invalidateServer(server: string): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readwrite', (s, done) => {
        const range = serverRange(server);
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

  async entries(): Promise<StoredDecision[]> {
    try {
      return await inTransaction<StoredDecision[]>(this.store, 'readonly', (s, done) => {
        const req = s.getAll();
        req.onsuccess = () => done((req.result as unknown[]).filter(isStoredDecision));
      });
    } catch (err) {
      throw storageError('read the stored decisions', err, DECISIONS_STORE);
    }
  }

  async count(): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readonly', (s, done) => {
        const req = s.count();
        req.onsuccess = () => done(req.result);
      });
    } catch (err) {
      throw storageError('count the stored decisions', err, DECISIONS_STORE);
    }
  }

  async clear(): Promise<number> {
    try {
      return await inTransaction<number>(this.store, 'readwrite', (s, done) => {
        const req = s.count();
        req.onsuccess = () => {
          done(req.result);
          s.clear();
        };
      });
    } catch (err) {
      throw storageError('clear the stored decisions', err, DECISIONS_STORE);
    }
  }
}

/** One queued write of the write-behind queue, applied in order inside one transaction. */
type PendingOp =
  | { op: 'put'; key: DecisionKey; value: StoredDecision }
  | { op: 'del'; key: DecisionKey }
  | { op: 'server'; server: string }
  | { op: 'clear' };

/**
 * Durable decisions for the high-speed simulation: an in-memory index loaded from IndexedDB at
 * `open()`, answering every call synchronously, with writes applied to memory at once and to
 * IndexedDB through a write-behind queue.
 *
 * The trade-off, stated plainly: `commit()` returns before the decision is on disk, so the SPEC's
 * "committed before its frame is sent" holds per batch, not per frame. The engine keeps it at the
 * boundary that matters by group commit — it calls `flush()` and releases a batch of frames to
 * the UI only once that resolves, so nothing the learner sees is ahead of what is stored. A tab
 * that dies mid-batch loses that batch's decisions and frames together. Buying per-frame
 * durability here would cost one transaction per request, which is what the simulation cannot
 * afford; the live playground uses {@link DurableDecisionStore} instead.
 *
 * Other tabs' writes after `open()` are not seen (the index is this tab's); a reload re-reads them.
 */
export class CachedDurableStore implements DecisionStore {
  readonly scope = 'durable' as const;
  readonly dbName: string;
  private readonly store: UseStore;
  /** server → identity → decision: the whole database, in memory. */
  private readonly index = new Map<string, Map<string, StoredDecision>>();
  private size = 0;
  /** Writes not yet handed to IndexedDB, oldest first. */
  private queue: PendingOp[] = [];
  /**
   * Position in `queue` of the latest put/del per key, so a hot identity re-presented thousands of
   * times in a batch is written once. Cleared at every range op (server, clear), which keeps the
   * coalescing trivially order-safe.
   */
  private latest = new Map<string, number>();
  private inFlight = 0;
  /** The chain of batches: each flush writes after the previous one settles, so order holds. */
  private tail: Promise<void> = Promise.resolve();

  private constructor(store: UseStore, dbName: string) {
    this.store = store;
    this.dbName = dbName;
  }

  /** Open the database and load every entry into memory. Same result shape as {@link DurableDecisionStore.open}. */
  static async open(opts: DurableStoreOptions = {}): Promise<OpenResult<CachedDurableStore>> {
    const dbName = opts.dbName ?? DEFAULT_DECISION_DB;
    const opened = await openIdbStore(dbName, DECISIONS_STORE, opts.signal);
    if (!opened.ok) return opened;
    const cached = new CachedDurableStore(opened.store, dbName);
    try {
      const all = await inTransaction<unknown[]>(opened.store, 'readonly', (s, done) => {
        const req = s.getAll();
        req.onsuccess = () => done(req.result as unknown[]);
      });
      for (const d of all) if (isStoredDecision(d)) cached.put(d);
    } catch (err) {
      return {
        ok: false,
        kind: 'failed',
        error: storageError(`load the stored decisions from '${dbName}'`, err, DECISIONS_STORE)
          .message
      };
    }
    return { ok: true, store: cached };
  }

  /** Queued operations not yet committed to IndexedDB (including a batch being written now). */
  get pendingWrites(): number {
    return this.queue.length + this.inFlight;
  }

  /** See {@link DecisionStore.lookup}. Synchronous; the changed entry is queued for writing. */
  lookup(
    server: string,
    _connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): LookupResult | null {
    const byIdentity = this.index.get(server);
    const d = byIdentity?.get(identity);
    if (byIdentity === undefined || d === undefined) return null;
    if (classifyEntry(d, policyHash, now) !== 'hit') {
      byIdentity.delete(identity);
      this.size -= 1;
      this.enqueueKeyOp({ op: 'del', key: keyOf(server, identity) });
      return null;
    }
    recordPresentation(d);
    // `represented` must survive a reload too.
    this.enqueueKeyOp({ op: 'put', key: keyOf(server, identity), value: d });
    return { decision: d };
  }

  /** Stored in memory now and queued for IndexedDB; durable once a later `flush()` resolves. */
  commit(_connection: string, decision: StoredDecision): void {
    const stored = toStoredDecision(decision);
    this.put(stored);
    this.enqueueKeyOp({ op: 'put', key: keyOf(stored.server, stored.identity), value: stored });
  }

  invalidateServer(server: string): number {
    const byIdentity = this.index.get(server);
    const dropped = byIdentity?.size ?? 0;
    this.index.delete(server);
    this.size -= dropped;
    // A range delete rather than one delete per known key: it also removes entries another tab
    // wrote after this index was loaded, which a policy edit must invalidate just the same.
    this.enqueueRangeOp({ op: 'server', server });
    return dropped;
  }

  closeConnection(_server: string, _connection: string): void {}

  entries(): StoredDecision[] {
    const out: StoredDecision[] = [];
    for (const byIdentity of this.index.values()) for (const d of byIdentity.values()) out.push(d);
    return out;
  }

  count(): number {
    return this.size;
  }

  clear(): number {
    const dropped = this.size;
    this.index.clear();
    this.size = 0;
    this.enqueueRangeOp({ op: 'clear' });
    return dropped;
  }

  /**
   * Resolves when every decision committed before this call is in IndexedDB. All queued writes go
   * in one transaction (group commit). On failure it rejects with an Error saying what failed; the
   * batch goes back to the front of the queue — the transaction aborted, so nothing earlier on
   * disk was touched and nothing committed in memory is dropped — and the next flush retries it.
   */
  flush(): Promise<void> {
    const result = this.tail.then(() => this.writeQueued());
    // The chain must not stay rejected, or one failed batch would fail every later flush.
    this.tail = result.catch(() => undefined);
    return result;
  }

  private async writeQueued(): Promise<void> {
    if (this.queue.length === 0) return;
    const ops = this.queue;
    this.queue = [];
    this.latest.clear();
    this.inFlight = ops.length;
    try {
      await inTransaction<void>(this.store, 'readwrite', (s, done) => {
        for (const o of ops) {
          if (o.op === 'put') s.put(o.value, o.key);
          else if (o.op === 'del') s.delete(o.key);
          else if (o.op === 'server') s.delete(serverRange(o.server));
          else s.clear();
        }
        done(undefined);
      });
    } catch (err) {
      this.queue = ops.concat(this.queue);
      this.latest.clear();
      throw storageError(
        `write ${ops.length} queued decision change(s) to '${this.dbName}'`,
        err,
        DECISIONS_STORE
      );
    } finally {
      this.inFlight = 0;
    }
  }

  private put(d: StoredDecision): void {
    let byIdentity = this.index.get(d.server);
    if (byIdentity === undefined) {
      byIdentity = new Map();
      this.index.set(d.server, byIdentity);
    }
    if (!byIdentity.has(d.identity)) this.size += 1;
    byIdentity.set(d.identity, d);
  }

  private enqueueKeyOp(o: Extract<PendingOp, { key: DecisionKey }>): void {
    // JSON of the pair is an unambiguous string form of the array key, whatever the server name.
    const k = JSON.stringify(o.key);
    const at = this.latest.get(k);
    if (at !== undefined) {
      // The later op for the same key wins; replacing it in place keeps it before any range op
      // that follows, which `latest` guarantees by being cleared at each range op.
      this.queue[at] = o;
      return;
    }
    this.latest.set(k, this.queue.length);
    this.queue.push(o);
  }

  private enqueueRangeOp(o: Extract<PendingOp, { op: 'server' | 'clear' }>): void {
    if (o.op === 'clear') {
      // Nothing queued before a clear can matter once it has run.
      this.queue = [];
    }
    this.latest.clear();
    this.queue.push(o);
  }
}
