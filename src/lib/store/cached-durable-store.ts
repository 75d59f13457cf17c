/**
 * The durable decision store (SPEC §4): IndexedDB, with the same TTLs as the connection scope. It
 * survives reconnects, page reloads and new tabs; the connection id is ignored, which is the whole
 * point — a server that disconnects and reconnects meets the decision it was given before. The
 * namespace keeps runs apart (SPEC §4: "runs are isolated, restarts are not"): the playground uses
 * `[runId, lane]`, so a Reset starts empty while a reload of the same run finds its decisions;
 * `/single/` uses the whole database.
 *
 * One store for both: an in-memory index answering every call synchronously, written behind to
 * IndexedDB in groups (write-behind.ts). The trade-off, stated plainly: for the simulation
 * `commit()` returns before the decision is on disk, so the SPEC's "committed before its frame is
 * sent" holds per batch, not per frame — one transaction per request is what a simulated day
 * cannot afford. `/single/`, one request at a time, opens it `writeThrough`: `commit()` then
 * resolves once its batch has committed (or storage has failed), so that page's frame follows its
 * decision to disk.
 *
 * On disk a namespace is a log of group commits (decision-log.ts): each commit appends its changes
 * as a few records of JSON lines, not a record per decision, and a load replays the log.
 *
 * What keeps it honest is the count: a decision is counted as *saved* only once the transaction
 * holding it has committed (`status().saved` is exactly the number of this namespace's live
 * decisions a replay of the disk finds, what a reload finds), and everything else is reported as
 * *held in memory*. A tab that dies mid-batch loses that batch, which the page never counted as
 * saved. When a write fails (storage full, aborted, the connection taken by another tab) the store
 * keeps answering from memory — the lane's results do not change, only its guarantee does — and
 * says how many decisions hold for this page only.
 *
 * Over 400 lines on purpose: the in-memory index, its expiry and the saved/held counts must move
 * together in every call; split, each half would have to re-check the other's invariants.
 */
import type { StoredDecision } from '../machine/types';
import {
  answerOf,
  approvalAfter,
  isLive,
  recordPresentation,
  toStoredDecision,
  type DecisionStore,
  type LookupResult
} from './decision-store';
import {
  appendLog,
  compactLog,
  deleteNamespace,
  encodeDel,
  encodePut,
  encodeServer,
  needsCompaction,
  readNamespace,
  type LogReplay
} from './decision-log';
import { ExpiryHeap, heapNeedsRebuild } from './expiry';
import {
  inTransaction,
  openIdbStore,
  prefixRange,
  storageError,
  type Namespace,
  type OpenResult,
  type UseStore
} from './idb';
import { WrittenBehind, type StorageFailure } from './write-behind';

/** The default database; separate from the audit log's (one object store per database, see idb.ts). */
export const DEFAULT_DECISION_DB = 'sampling-policy-lab-decisions';
/** The object store name inside the decisions database. */
export const DECISIONS_STORE = 'decisions';

export interface AttachOptions {
  /** The namespace is new (a fresh run id): nothing to load, so nothing is read. */
  fresh?: boolean;
  /**
   * `commit()` resolves once the batch holding the decision has committed, or storage has failed
   * (then the decision holds in memory and `status()` says why): a frame sent after it follows
   * its decision to disk. For `/single/`; the simulation writes behind in groups.
   */
  writeThrough?: boolean;
}

export interface DurableStoreOptions extends Omit<AttachOptions, 'fresh'> {
  dbName?: string;
  /** The key prefix of this store's entries; `[]` uses the whole database. */
  namespace?: Namespace;
  /** Bounds the wait for a blocked or unresponsive IndexedDB (e.g. `AbortSignal.timeout(3000)`). */
  signal?: AbortSignal;
}

/** One queued write, applied in order inside one transaction. */
type PendingOp =
  | { op: 'put'; server: string; identity: string; value: StoredDecision }
  | { op: 'del'; server: string; identity: string }
  | { op: 'server'; server: string }
  | { op: 'clear' };

/** Where a durable store stands: the numbers the lane shows and the failure it words. */
export interface DurableStatus {
  /** Live (unexpired, current) decisions in memory: what the lane answers from. */
  live: number;
  /**
   * Live decisions on disk, as of the last committed batch. `saved + heldInMemory === live`,
   * always: the lane shows the three together.
   */
  saved: number;
  /** Live decisions not on disk: they hold for this page only. */
  heldInMemory: number;
  /**
   * Decisions removed here (expired, invalidated, cleared) whose deletion is not on disk yet: a
   * reload would still find them until it is. Never counted as saved.
   */
  removedOnDisk: number;
  /** Saved decisions found gone from disk (the database deleted or cleared from outside). */
  lost: number;
  /** Changes queued or being written. */
  pending: number;
  /** Why writing stopped, or null while healthy. */
  failure: StorageFailure | null;
}

/**
 * One string for a (server, identity) pair in memory, and no two pairs share one: the server's
 * length first says where its name ends. (JSON of the pair did the same with an array and an
 * encoder, about twice the time, for every decision the write queue coalesces.) Not a disk
 * format: the log's own encoding is decision-log.ts's.
 */
function pairKey(server: string, identity: string): string {
  return `${server.length}:${server}${identity}`;
}

/** server → identity → T */
type Nested<T> = Map<string, Map<string, T>>;

export class CachedDurableStore extends WrittenBehind<PendingOp> implements DecisionStore {
  readonly scope = 'durable' as const;
  readonly dbName: string;
  readonly namespace: Namespace;
  /** The live entries. */
  readonly #index: Nested<StoredDecision> = new Map();
  #size = 0;
  /**
   * The time of the last sweep when nothing changed since (else NaN): `liveCount` then is
   * `#size` (as in connection-store.ts).
   */
  #sweptAt = NaN;
  /** Keys on disk (committed), by server. */
  readonly #saved = new Map<string, Set<string>>();
  #savedCount = 0;
  /** Live entries whose key is not on disk. */
  #heldOnly = 0;
  readonly #expiry = new ExpiryHeap<[server: string, identity: string]>();
  readonly #writeThrough: boolean;
  /**
   * Ops on the namespace's disk as this store knows them (read at load, appended since, the live
   * set after a compaction): what decides when a commit compacts the log. Another tab's appends
   * are not counted here, only found by the compaction that reads them.
   */
  #diskOps = 0;

  private constructor(store: UseStore, dbName: string, ns: Namespace, writeThrough: boolean) {
    super(store, {
      noun: 'decision change(s)',
      storeName: DECISIONS_STORE,
      keyOf: (o) => (o.op === 'put' || o.op === 'del' ? pairKey(o.server, o.identity) : null)
    });
    this.dbName = dbName;
    this.namespace = ns;
    this.#writeThrough = writeThrough;
  }

  protected writeBatch(batch: readonly PendingOp[]): Promise<void> {
    const ns = this.namespace;
    // A clear removes everything before it: only what follows the last one is written.
    let from = 0;
    for (let i = 0; i < batch.length; i++) if (batch[i]!.op === 'clear') from = i + 1;
    const cleared = from > 0;
    const lines: string[] = [];
    const servers = new Set<string>();
    for (let i = from; i < batch.length; i++) {
      const o = batch[i]!;
      if (o.op === 'put') lines.push(encodePut(o.value));
      else if (o.op === 'del') lines.push(encodeDel(o.server, o.identity));
      else if (o.op === 'server') {
        lines.push(encodeServer(o.server));
        servers.add(o.server);
      }
    }
    const compact = !cleared && needsCompaction(this.#diskOps + lines.length, this.#savedCount);
    return inTransaction<number>(this.store, 'readwrite', (s, done, guard) => {
      if (cleared) deleteNamespace(s, ns);
      // Per-decision records of the layout before the log go with their server's invalidation
      // (the log's line removes them from a replay; this frees their space).
      else for (const server of servers) s.delete(prefixRange([...ns, server])!);
      if (compact) compactLog(s, ns, lines, done, guard);
      else appendLog(s, ns, lines, () => done(this.#diskOps + lines.length), guard);
    }).then((ops) => {
      this.#diskOps = cleared ? lines.length : ops;
    });
  }

  protected committedBatch(batch: readonly PendingOp[]): void {
    for (const o of batch) {
      if (o.op === 'put') this.#markSaved(o.server, o.identity);
      else if (o.op === 'del') this.#markUnsaved(o.server, o.identity);
      else if (o.op === 'server') {
        for (const identity of [...(this.#saved.get(o.server) ?? [])])
          this.#markUnsaved(o.server, identity);
      } else {
        for (const [server, ids] of [...this.#saved])
          for (const identity of [...ids]) this.#markUnsaved(server, identity);
      }
    }
  }

  protected async compareWithDisk(disk: UseStore | null): Promise<number> {
    let keys: Set<string> | null = null;
    if (disk)
      try {
        const found = await inTransaction<LogReplay>(disk, 'readonly', (s, done) =>
          readNamespace(s, this.namespace, done)
        );
        keys = new Set();
        for (const [server, m] of found.servers)
          for (const identity of m.keys()) keys.add(pairKey(server, identity));
        this.#diskOps = found.ops;
      } catch {
        // Unreadable: nothing on it can be counted as saved.
      }
    let lost = 0;
    for (const [server, ids] of [...this.#saved])
      for (const identity of [...ids]) {
        if (keys?.has(pairKey(server, identity))) continue;
        if (this.#index.get(server)?.has(identity)) lost += 1;
        this.#markUnsaved(server, identity);
      }
    // The disk no longer holds them: a retry writes every live decision not on it again.
    for (const [server, byIdentity] of this.#index)
      for (const [identity, value] of byIdentity)
        if (!this.#isSaved(server, identity))
          this.writer.enqueue({ op: 'put', server, identity, value });
    return lost;
  }

  /**
   * Open (or create) the decisions database and load this namespace's entries (a reload finds its
   * decisions). `{ ok: false, error }` in plain words when IndexedDB is missing, blocked, refused
   * (private mode) or full — the UI says so and falls back to connection scope rather than claim a
   * durability it does not have.
   */
  static async open(opts: DurableStoreOptions = {}): Promise<OpenResult<CachedDurableStore>> {
    const dbName = opts.dbName ?? DEFAULT_DECISION_DB;
    const opened = await openIdbStore(dbName, DECISIONS_STORE, opts.signal);
    if (!opened.ok) return opened;
    return CachedDurableStore.attach(opened.store, dbName, opts.namespace ?? [], {
      writeThrough: opts.writeThrough
    });
  }

  /**
   * A store over an already-open database: the worker opens the database once and attaches one
   * store per run and lane, instead of a connection per run.
   */
  static async attach(
    store: UseStore,
    dbName: string,
    ns: Namespace,
    opts: AttachOptions = {}
  ): Promise<OpenResult<CachedDurableStore>> {
    const cached = new CachedDurableStore(store, dbName, ns, opts.writeThrough ?? false);
    if (opts.fresh) return { ok: true, store: cached };
    try {
      const found = await inTransaction<LogReplay>(store, 'readonly', (s, done) =>
        readNamespace(s, ns, done)
      );
      for (const d of found.decisions()) {
        cached.#put(d);
        cached.#markSaved(d.server, d.identity);
      }
      cached.#diskOps = found.ops;
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
    return this.writer.pending;
  }

  status(): DurableStatus {
    const saved = this.#size - this.#heldOnly;
    return {
      live: this.#size,
      saved,
      heldInMemory: this.#heldOnly,
      removedOnDisk: this.#savedCount - saved,
      lost: this.lostCount,
      pending: this.writer.pending,
      failure: this.writer.failure
    };
  }

  /** See {@link DecisionStore.lookup}. Synchronous; the changed entry is queued for writing. */
  lookup(
    server: string,
    _connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): LookupResult | null {
    const d = this.#index.get(server)?.get(identity);
    if (d === undefined) return null;
    const a = answerOf(d, policyHash, now);
    if (a === null) {
      this.#remove(server, identity);
      this.writer.enqueue({ op: 'del', server, identity });
      return null;
    }
    // A denial that expired over an approval: the approval answers from now on.
    if (a !== d) this.#put(a);
    recordPresentation(a);
    // `represented` must survive a reload too.
    this.writer.enqueue({ op: 'put', server, identity, value: a });
    return { decision: a };
  }

  /**
   * Stored in memory now and queued for IndexedDB; saved once a later `flush()` commits it. Opened
   * `writeThrough`, that flush is now and the returned promise settles with it (never rejects: a
   * failure holds the decision in memory and is said in `status()`).
   */
  commit(_connection: string, decision: StoredDecision): void | Promise<void> {
    const stored = toStoredDecision(decision);
    this.#put(stored);
    this.writer.enqueue({
      op: 'put',
      server: stored.server,
      identity: stored.identity,
      value: stored
    });
    if (this.#writeThrough) return this.flush().then(() => undefined);
  }

  invalidateServer(server: string): number {
    const byIdentity = this.#index.get(server);
    const dropped = byIdentity?.size ?? 0;
    for (const identity of [...(byIdentity?.keys() ?? [])]) this.#remove(server, identity);
    // A range delete rather than one delete per known key: it also removes entries another tab
    // of the same run wrote, which a policy edit must invalidate just the same.
    this.writer.enqueue({ op: 'server', server });
    return dropped;
  }

  closeConnection(_server: string, _connection: string): void {}

  /** Drop every entry expired at `now` (virtual ms); returns how many. */
  sweep(now: number): number {
    let n = 0;
    this.#expiry.drain(now, ([server, identity], at) => {
      const d = this.#index.get(server)?.get(identity);
      if (d === undefined || d.expiresAt !== at) return;
      const approval = approvalAfter(d, now);
      if (approval) {
        this.#put(approval);
        this.writer.enqueue({ op: 'put', server, identity, value: approval });
        return;
      }
      this.#remove(server, identity);
      this.writer.enqueue({ op: 'del', server, identity });
      n += 1;
    });
    if (heapNeedsRebuild(this.#expiry.size, this.#size)) {
      this.#expiry.clear();
      for (const [server, m] of this.#index)
        for (const [identity, d] of m)
          if (d.expiresAt !== null) this.#expiry.push(d.expiresAt, [server, identity]);
    }
    // Every entry due at `now` has gone or become its approval (live at `now`).
    this.#sweptAt = now;
    return n;
  }

  entries(): StoredDecision[] {
    const out: StoredDecision[] = [];
    for (const byIdentity of this.#index.values()) for (const d of byIdentity.values()) out.push(d);
    return out;
  }

  count(): number {
    return this.#size;
  }

  liveCount(now: number): number {
    if (now === this.#sweptAt) return this.#size;
    let n = 0;
    for (const byIdentity of this.#index.values())
      for (const d of byIdentity.values()) if (isLive(d, now)) n++;
    return n;
  }

  clear(): number {
    const dropped = this.#size;
    this.#index.clear();
    this.#size = 0;
    this.#expiry.clear();
    // Keys on disk stay counted as saved until the clear commits.
    this.#heldOnly = 0;
    this.writer.discardAll({ op: 'clear' });
    return dropped;
  }

  #isSaved(server: string, identity: string): boolean {
    return this.#saved.get(server)?.has(identity) ?? false;
  }

  #put(d: StoredDecision): void {
    this.#sweptAt = NaN;
    let byIdentity = this.#index.get(d.server);
    if (byIdentity === undefined) {
      byIdentity = new Map();
      this.#index.set(d.server, byIdentity);
    }
    if (!byIdentity.has(d.identity)) {
      this.#size += 1;
      if (!this.#isSaved(d.server, d.identity)) this.#heldOnly += 1;
    }
    byIdentity.set(d.identity, d);
    if (d.expiresAt !== null) this.#expiry.push(d.expiresAt, [d.server, d.identity]);
  }

  #remove(server: string, identity: string): void {
    this.#sweptAt = NaN;
    const byIdentity = this.#index.get(server);
    if (byIdentity === undefined || !byIdentity.delete(identity)) return;
    if (byIdentity.size === 0) this.#index.delete(server);
    this.#size -= 1;
    if (!this.#isSaved(server, identity)) this.#heldOnly -= 1;
  }

  #markSaved(server: string, identity: string): void {
    let ids = this.#saved.get(server);
    if (ids === undefined) {
      ids = new Set();
      this.#saved.set(server, ids);
    }
    if (ids.has(identity)) return;
    ids.add(identity);
    this.#savedCount += 1;
    if (this.#index.get(server)?.has(identity)) this.#heldOnly -= 1;
  }

  #markUnsaved(server: string, identity: string): void {
    const ids = this.#saved.get(server);
    if (ids === undefined || !ids.delete(identity)) return;
    if (ids.size === 0) this.#saved.delete(server);
    this.#savedCount -= 1;
    if (this.#index.get(server)?.has(identity)) this.#heldOnly += 1;
  }
}
