/**
 * A durable store that says so when it stops being one (SPEC §4: never report a durable guarantee
 * it does not have). `/single/` commits each decision before its frame through this: while
 * IndexedDB works every call goes there; the first failure (storage full, aborted, connection
 * taken by another tab) is kept in words, and from then on the decision that could not be saved
 * — and every later one — lives in a connection-scoped store in memory, so the request still gets
 * its frame and the learner is told how many decisions hold for this page only. `retry()` writes
 * the held decisions back and, if that works, returns to durable.
 */
import type { StoredDecision } from '../machine/types';
import { ConnectionDecisionStore } from './connection-store';
import type { DecisionStore, LookupResult, StoreScope } from './decision-store';
import { toFailure, type StorageFailure } from './write-behind';

/** The durable half (a DurableDecisionStore). */
type Durable = DecisionStore;

export class FallbackDurableStore implements DecisionStore {
  readonly #durable: Durable;
  readonly #memory: ConnectionDecisionStore;
  #failure: StorageFailure | null = null;

  constructor(durable: Durable) {
    this.#durable = durable;
    this.#memory = new ConnectionDecisionStore();
  }

  /** Durable while IndexedDB works; connection-scoped once it has failed. */
  get scope(): StoreScope {
    return this.#failure ? 'connection' : 'durable';
  }

  get failure(): StorageFailure | null {
    return this.#failure;
  }

  /** Decisions held in memory only (they could not be saved). */
  get heldInMemory(): number {
    return this.#memory.count();
  }

  /** Decisions on disk. Rejects only if IndexedDB cannot even be read. */
  saved(): Promise<number> {
    return Promise.resolve(this.#durable.count());
  }

  #fail(err: unknown, what: string): void {
    this.#failure ??= toFailure(err, what, 'decisions');
  }

  async lookup(
    server: string,
    connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): Promise<LookupResult | null> {
    const held = this.#memory.lookup(server, connection, identity, policyHash, now);
    if (held || this.#failure) return held;
    try {
      return await this.#durable.lookup(server, connection, identity, policyHash, now);
    } catch (err) {
      this.#fail(err, `look up a stored decision for server '${server}'`);
      return null;
    }
  }

  async commit(connection: string, decision: StoredDecision): Promise<void> {
    if (!this.#failure) {
      try {
        await this.#durable.commit(connection, decision);
        return;
      } catch (err) {
        this.#fail(err, `store the decision for server '${decision.server}'`);
      }
    }
    this.#memory.commit(connection, decision);
  }

  async invalidateServer(server: string): Promise<number> {
    let n = this.#memory.invalidateServer(server);
    if (!this.#failure) {
      try {
        n += await this.#durable.invalidateServer(server);
      } catch (err) {
        this.#fail(err, `drop the stored decisions of server '${server}'`);
      }
    }
    return n;
  }

  async closeConnection(server: string, connection: string): Promise<void> {
    this.#memory.closeConnection(server, connection);
  }

  async sweep(now: number): Promise<number> {
    let n = this.#memory.sweep(now);
    if (!this.#failure) {
      try {
        n += await this.#durable.sweep(now);
      } catch (err) {
        this.#fail(err, 'sweep the expired decisions');
      }
    }
    return n;
  }

  async entries(): Promise<StoredDecision[]> {
    const held = this.#memory.entries();
    try {
      return [...(await this.#durable.entries()), ...held];
    } catch {
      return held;
    }
  }

  async count(): Promise<number> {
    try {
      return (await this.#durable.count()) + this.#memory.count();
    } catch {
      return this.#memory.count();
    }
  }

  async clear(): Promise<number> {
    let n = this.#memory.clear();
    try {
      n += await this.#durable.clear();
    } catch (err) {
      this.#fail(err, 'clear the stored decisions');
    }
    return n;
  }

  /**
   * Try IndexedDB again: write every held decision; if all land, the store is durable again.
   * Returns whether it is.
   */
  async retry(): Promise<boolean> {
    const held = this.#memory.entries();
    try {
      for (const d of held) await this.#durable.commit('*', d);
    } catch (err) {
      this.#failure = toFailure(err, `write ${held.length} held decision(s)`, 'decisions');
      return false;
    }
    this.#memory.clear();
    this.#failure = null;
    return true;
  }
}
