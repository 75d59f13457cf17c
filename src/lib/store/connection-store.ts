/**
 * The connection-scoped decision store (SPEC §4): in memory, partitioned per connection.
 *
 * This is the obvious implementation and the one the product teaches against: a decision made on
 * connection c1 is invisible on c2 of the same server, so a server that dislikes an answer
 * disconnects, reconnects and gets a fresh evaluation, a fresh consent dialog and a fresh chance
 * at a tired user. The partitioning is the behaviour under study, not an accident.
 *
 * Every method answers synchronously with a plain value: the simulation engine runs hundreds of
 * thousands of requests through it and a promise per lookup would dominate the run time.
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
import { ExpiryHeap, heapNeedsRebuild } from './expiry';
import { CloneMap, copyable } from '../machine/clone';
import {
  checkpointMemo,
  sameNumbers,
  type CheckpointMemo,
  type ListRules
} from './checkpoint-memo';

/** identity → decision */
type ByIdentity = Map<string, StoredDecision>;
/** server → identity → decision */
type ByServer = Map<string, ByIdentity>;

/**
 * In-memory decisions keyed connection → server → identity. Nested maps rather than one map with a
 * joined string key: no separator can collide with untrusted server names, and closing a
 * connection or invalidating a server drops a whole sub-map instead of scanning every key.
 */
export class ConnectionDecisionStore implements DecisionStore {
  readonly scope = 'connection' as const;
  private readonly byConnection = new Map<string, ByServer>();
  private readonly expiry = new ExpiryHeap<
    [connection: string, server: string, identity: string]
  >();
  /** Kept incrementally so `count()` is O(1) for the live charts. */
  private size = 0;
  /**
   * The time of the last sweep when nothing changed since (else NaN): every entry is live then,
   * so `liveCount` at that time is `size`. The view checkpoint at each metrics sample counts
   * right after the sample's sweep: counting entry by entry there was ~3 % of the worker's
   * session in live play (npm run bench:session).
   */
  private sweptAt = NaN;
  /**
   * Set in an engine checkpoint's copy only (checkpoint-memo.ts): the decisions as a flat list,
   * the maps empty. A checkpoint is never run, only copied, and its copy has the maps again.
   */
  private frozen: FrozenDecisions | null = null;

  /** See {@link DecisionStore.lookup}. Returns the live entry: callers must not mutate it. */
  lookup(
    server: string,
    connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): LookupResult | null {
    if (this.frozen) frozenStore();
    const byIdentity = this.byConnection.get(connection)?.get(server);
    const d = byIdentity?.get(identity);
    if (byIdentity === undefined || d === undefined) return null;
    this.sweptAt = NaN;
    const a = answerOf(d, policyHash, now);
    if (a === null) {
      // Expired or decided under an older policy: it must never answer again, so drop it now
      // rather than let it linger and inflate counts.
      byIdentity.delete(identity);
      this.size -= 1;
      return null;
    }
    if (a !== d) this.replace(connection, byIdentity, a);
    recordPresentation(a);
    return { decision: a };
  }

  /** See {@link DecisionStore.commit}. Stored synchronously; only the verdict fields are kept. */
  commit(connection: string, decision: StoredDecision): void {
    if (this.frozen) frozenStore();
    this.sweptAt = NaN;
    let byServer = this.byConnection.get(connection);
    if (byServer === undefined) {
      byServer = new Map();
      this.byConnection.set(connection, byServer);
    }
    let byIdentity = byServer.get(decision.server);
    if (byIdentity === undefined) {
      byIdentity = new Map();
      byServer.set(decision.server, byIdentity);
    }
    const stored = toStoredDecision(decision);
    // A new entry grows the map: its size says so (a `has` first was a second lookup).
    const before = byIdentity.size;
    byIdentity.set(decision.identity, stored);
    this.size += byIdentity.size - before;
    if (stored.expiresAt !== null)
      this.expiry.push(stored.expiresAt, [connection, decision.server, decision.identity]);
  }

  /** See {@link DecisionStore.sweep}. */
  sweep(now: number): number {
    if (this.frozen) frozenStore();
    let n = 0;
    this.expiry.drain(now, ([connection, server, identity], at) => {
      const byServer = this.byConnection.get(connection);
      const byIdentity = byServer?.get(server);
      const d = byIdentity?.get(identity);
      if (byServer === undefined || byIdentity === undefined || d === undefined) return;
      if (d.expiresAt !== at) return;
      const approval = approvalAfter(d, now);
      if (approval) return this.replace(connection, byIdentity, approval);
      byIdentity.delete(identity);
      if (byIdentity.size === 0) byServer.delete(server);
      if (byServer.size === 0) this.byConnection.delete(connection);
      this.size -= 1;
      n += 1;
    });
    if (heapNeedsRebuild(this.expiry.size, this.size)) {
      this.expiry.clear();
      for (const [connection, byServer] of this.byConnection)
        for (const [server, byIdentity] of byServer)
          for (const [identity, d] of byIdentity)
            if (d.expiresAt !== null) this.expiry.push(d.expiresAt, [connection, server, identity]);
    }
    // Every entry due at `now` has gone or become its approval (live at `now`).
    this.sweptAt = now;
    return n;
  }

  /** The denial expired, the approval under it answers from now on (same key, same count). */
  private replace(
    connection: string,
    byIdentity: Map<string, StoredDecision>,
    d: StoredDecision
  ): void {
    byIdentity.set(d.identity, d);
    if (d.expiresAt !== null) this.expiry.push(d.expiresAt, [connection, d.server, d.identity]);
  }

  /** See {@link DecisionStore.invalidateServer}: every connection's entries for `server`, nobody else's. */
  invalidateServer(server: string): number {
    if (this.frozen) frozenStore();
    this.sweptAt = NaN;
    let dropped = 0;
    for (const [connection, byServer] of this.byConnection) {
      const byIdentity = byServer.get(server);
      if (byIdentity === undefined) continue;
      dropped += byIdentity.size;
      byServer.delete(server);
      if (byServer.size === 0) this.byConnection.delete(connection);
    }
    this.size -= dropped;
    return dropped;
  }

  /**
   * The connection closed: its decisions for `server` evaporate. Scoped to the server as well as
   * the connection id, so this is correct whether connection ids are global or per server.
   */
  closeConnection(server: string, connection: string): void {
    if (this.frozen) frozenStore();
    this.sweptAt = NaN;
    const byServer = this.byConnection.get(connection);
    const byIdentity = byServer?.get(server);
    if (byServer === undefined || byIdentity === undefined) return;
    this.size -= byIdentity.size;
    byServer.delete(server);
    if (byServer.size === 0) this.byConnection.delete(connection);
  }

  /** Every entry on every connection (a snapshot array of the live entries). */
  entries(): StoredDecision[] {
    if (this.frozen) return this.frozen.decisions.slice();
    const out: StoredDecision[] = [];
    for (const byServer of this.byConnection.values())
      for (const byIdentity of byServer.values()) for (const d of byIdentity.values()) out.push(d);
    return out;
  }

  count(): number {
    return this.size;
  }

  liveCount(now: number): number {
    let n = 0;
    if (this.frozen) {
      for (const d of this.frozen.decisions) if (isLive(d, now)) n++;
      return n;
    }
    if (now === this.sweptAt) return this.size;
    for (const byServer of this.byConnection.values())
      for (const byIdentity of byServer.values())
        for (const d of byIdentity.values()) if (isLive(d, now)) n++;
    return n;
  }

  clear(): number {
    if (this.frozen) frozenStore();
    const dropped = this.size;
    this.byConnection.clear();
    this.expiry.clear();
    this.size = 0;
    return dropped;
  }
}

/**
 * A store as an engine checkpoint holds it (checkpoint-memo.ts). `shape` lists the maps in their
 * order — per connection its name and its servers' count, per server its name and its decisions'
 * count (a map emptied by lookups stays, so a later commit lands where it would have) — and
 * `decisions` the decisions in that order, each a copy shared with the checkpoints before while
 * its value is the same.
 */
interface FrozenDecisions {
  readonly shape: readonly (string | number)[];
  readonly decisions: readonly StoredDecision[];
}

/** Estimated bytes of one decision's copy (engine-size.ts): the record and its `recent` array. */
export const DECISION_COPY_BYTES = 160;

function frozenStore(): never {
  throw new Error("an engine checkpoint's store is never run: copy the checkpoint to run it");
}

/** Whether `a` holds the same value as `b` (every field a stored decision has). */
export function sameDecision(a: StoredDecision, b: StoredDecision): boolean {
  if (
    a.server !== b.server ||
    a.identity !== b.identity ||
    a.verdict !== b.verdict ||
    a.reason !== b.reason ||
    a.retryable !== b.retryable ||
    !Object.is(a.decidedAt, b.decidedAt) ||
    !Object.is(a.expiresAt, b.expiresAt) ||
    a.policyHash !== b.policyHash ||
    !Object.is(a.represented, b.represented) ||
    a.resetsAt !== b.resetsAt ||
    !Object.is(a.retryAfterMs, b.retryAfterMs) ||
    !Object.is(a.retryAt, b.retryAt) ||
    a.message !== b.message ||
    !sameNumbers(a.recent, b.recent)
  )
    return false;
  const x = a.approval;
  const y = b.approval;
  if (x === undefined || y === undefined) return x === y;
  return Object.is(x.decidedAt, y.decidedAt) && Object.is(x.expiresAt, y.expiresAt);
}

/**
 * How a checkpoint copies stored decisions ({@link CheckpointMemo.listed}): a lookup changes a
 * decision in place only by counting a presentation (`recordPresentation`); any other change is
 * a new decision.
 */
export const DECISION_LIST: ListRules<StoredDecision> = {
  same: sameDecision,
  sameInPlace: (a, b) => a.represented === b.represented,
  copy: toStoredDecision,
  bytes: () => DECISION_COPY_BYTES
};

/**
 * The clone map an engine copy starts with (sim/engine/engine.ts `copyEngine`). In a checkpoint,
 * the stores list their decisions without registering each ({@link DECISION_LIST}), so a stored
 * decision a request in flight holds (fast.ts `box`) is found as the memo's copy of it: its
 * store's list's, when it is still in the store, so a restore maps it on to the restored store's
 * entry.
 */
export function engineCloneMap(): CloneMap {
  const m = new CloneMap();
  const memo = checkpointMemo();
  if (memo)
    m.boxWith = (d) =>
      memo.reuse(d as never, sameDecision, toStoredDecision, DECISION_COPY_BYTES) as never;
  return m;
}

/** The checkpoint's form of `byConnection` (see {@link FrozenDecisions}). */
function freeze(
  owner: ConnectionDecisionStore,
  byConnection: Map<string, ByServer>,
  memo: CheckpointMemo
) {
  const shape: (string | number)[] = [];
  // Sized (the list: CheckpointMemo.listed), then filled.
  let n = 0;
  for (const byServer of byConnection.values())
    for (const byIdentity of byServer.values()) n += byIdentity.size;
  // Section by section (each server's map on a connection), each decision's copy found in the
  // last checkpoint's list where it is unchanged.
  const listed = memo.listed(owner, DECISION_LIST, n);
  for (const [connection, byServer] of byConnection) {
    shape.push(connection, byServer.size);
    for (const [server, byIdentity] of byServer) {
      shape.push(server, byIdentity.size);
      listed.section(byIdentity);
      for (const d of byIdentity.values()) listed.copy(d);
    }
  }
  return { shape, decisions: listed.done() } satisfies FrozenDecisions;
}

/**
 * The maps of a checkpoint's store, for a store that runs: each decision copied (a lookup
 * changes it) and registered, so a request in flight that held it holds the new store's entry.
 */
function thaw(f: FrozenDecisions, m: CloneMap): Map<string, ByServer> {
  const out = new Map<string, ByServer>();
  const { shape, decisions } = f;
  let next = 0;
  for (let i = 0; i < shape.length;) {
    const byServer: ByServer = new Map();
    out.set(shape[i] as string, byServer);
    const servers = shape[i + 1] as number;
    i += 2;
    for (let j = 0; j < servers; j++, i += 2) {
      const byIdentity: ByIdentity = new Map();
      byServer.set(shape[i] as string, byIdentity);
      const n = shape[i + 1] as number;
      for (let k = 0; k < n; k++) {
        const d = decisions[next++]!;
        byIdentity.set(d.identity, m.set(d, toStoredDecision(d)));
      }
    }
  }
  return out;
}

// A copy has its own maps (same order, so `entries()` lists alike), heap and decisions: they are
// mutable (a lookup bumps `represented`), so each is copied, once per copy — whoever else holds a
// live entry (a lookup's result in flight) gets the same copy. Its only plain records are its
// decisions, each copied whole as a literal of its own shape. An engine checkpoint's copy holds
// them frozen instead (see FrozenDecisions), and a copy of that has its maps again.
copyable(ConnectionDecisionStore, {
  name: 'connection-store.ConnectionDecisionStore',
  blank: () => new ConnectionDecisionStore(),
  records: toStoredDecision,
  fields: {
    byConnection: {
      fresh: (s: ConnectionDecisionStore, m) => {
        const frozen = s['frozen'];
        if (frozen) return thaw(frozen, m);
        return checkpointMemo() ? new Map() : m.get(s['byConnection']);
      }
    },
    frozen: {
      fresh: (s: ConnectionDecisionStore) => {
        const memo = checkpointMemo();
        return s['frozen'] || !memo ? null : freeze(s, s['byConnection'], memo);
      }
    }
  }
});
