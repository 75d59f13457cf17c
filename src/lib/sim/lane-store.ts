/**
 * The one place a lane's decision store is built, from the lane's *current* client configuration:
 * its scope, and the fallback to connection scope when durable storage is unavailable — the same
 * way in the worker and in `lab run`. (The retry-loop alert is the host's, read live from the
 * config; stores only count re-presentations.)
 */
import type { ClientConfig } from '../machine/config';
import type { StoredDecision } from '../machine/types';
import { ConnectionDecisionStore } from '../store/connection-store';
import type { DecisionStore } from '../store/decision-store';
import type { CloneMap } from '../machine/clone';
import type { LaneId } from './scenario';

/**
 * The durable scope, in memory: one partition for every connection, so a decision outlives the
 * transport. What `lab run` uses for a durable lane (the browser swaps in IndexedDB); it gives the
 * same answers as the browser's store, which is why the two agree.
 */
export class SharedDecisionStore implements DecisionStore {
  readonly scope = 'durable' as const;
  /** Not readonly: clone() gives a copy its own. */
  #inner: ConnectionDecisionStore;
  constructor() {
    this.#inner = new ConnectionDecisionStore();
  }
  /** A copy with its own entries (see {@link ConnectionDecisionStore.clone}). */
  clone(m: CloneMap): SharedDecisionStore {
    const c = m.set(this, new SharedDecisionStore());
    c.#inner = m.get(this.#inner);
    return c;
  }
  lookup(server: string, _connection: string, identity: string, hash: string, now: number) {
    return this.#inner.lookup(server, '*', identity, hash, now);
  }
  commit(_connection: string, decision: StoredDecision) {
    return this.#inner.commit('*', decision);
  }
  invalidateServer(server: string) {
    return this.#inner.invalidateServer(server);
  }
  closeConnection(): void {}
  sweep(now: number) {
    return this.#inner.sweep(now);
  }
  entries() {
    return this.#inner.entries();
  }
  count() {
    return this.#inner.count();
  }
  clear() {
    return this.#inner.clear();
  }
}

/**
 * Where a durable lane's decisions live when something other than memory provides them: the
 * worker returns the lane's IndexedDB store for the current run, or null when durable storage is
 * unavailable (the lane then runs connection-scoped and the page says why).
 */
export type DurableProvider = (lane: LaneId) => DecisionStore | null;

export interface LaneStore {
  store: DecisionStore;
  /** True when the lane asked for durable storage and got connection scope instead. */
  fellBack: boolean;
}

/** Build a lane's store from its current configuration. */
export function buildLaneStore(
  lane: LaneId,
  config: ClientConfig,
  durable?: DurableProvider
): LaneStore {
  if (config.store === 'connection')
    return { store: new ConnectionDecisionStore(), fellBack: false };
  if (durable === undefined) return { store: new SharedDecisionStore(), fellBack: false };
  const store = durable(lane);
  if (store === null) return { store: new ConnectionDecisionStore(), fellBack: true };
  return { store, fellBack: false };
}
