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
  recordPresentation,
  toStoredDecision,
  type DecisionStore,
  type LookupResult
} from './decision-store';
import { ExpiryHeap, heapNeedsRebuild } from './expiry';
import { copyable } from '../machine/clone';

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

  /** See {@link DecisionStore.lookup}. Returns the live entry: callers must not mutate it. */
  lookup(
    server: string,
    connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): LookupResult | null {
    const byIdentity = this.byConnection.get(connection)?.get(server);
    const d = byIdentity?.get(identity);
    if (byIdentity === undefined || d === undefined) return null;
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
    if (!byIdentity.has(decision.identity)) this.size += 1;
    const stored = toStoredDecision(decision);
    byIdentity.set(decision.identity, stored);
    if (stored.expiresAt !== null)
      this.expiry.push(stored.expiresAt, [connection, decision.server, decision.identity]);
  }

  /** See {@link DecisionStore.sweep}. */
  sweep(now: number): number {
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
    const byServer = this.byConnection.get(connection);
    const byIdentity = byServer?.get(server);
    if (byServer === undefined || byIdentity === undefined) return;
    this.size -= byIdentity.size;
    byServer.delete(server);
    if (byServer.size === 0) this.byConnection.delete(connection);
  }

  /** Every entry on every connection (a snapshot array of the live entries). */
  entries(): StoredDecision[] {
    const out: StoredDecision[] = [];
    for (const byServer of this.byConnection.values())
      for (const byIdentity of byServer.values()) for (const d of byIdentity.values()) out.push(d);
    return out;
  }

  count(): number {
    return this.size;
  }

  clear(): number {
    const dropped = this.size;
    this.byConnection.clear();
    this.expiry.clear();
    this.size = 0;
    return dropped;
  }
}

// A copy has its own maps (same order, so `entries()` lists alike), heap and decisions: they are
// mutable (a lookup bumps `represented`), so each is copied, once per copy — whoever else holds a
// live entry (a lookup's result in flight) gets the same copy. Its only plain records are its
// decisions, each copied whole as a literal of its own shape.
copyable(ConnectionDecisionStore, {
  name: 'connection-store.ConnectionDecisionStore',
  blank: () => new ConnectionDecisionStore(),
  records: toStoredDecision
});
