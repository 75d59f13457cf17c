/**
 * The one place a lane's decision store is built: scope, fallback and alert all come from the
 * lane's *current* client configuration, so a change made in the page (scope, alert threshold)
 * reaches the store the same way in the worker and in `lab run`.
 */
import type { ClientConfig } from '../machine/config';
import type { StoredDecision } from '../machine/types';
import { ConnectionDecisionStore } from '../store/connection-store';
import { resolveAlert, type AlertConfig, type DecisionStore } from '../store/decision-store';
import type { LaneId } from './scenario';

/**
 * The durable scope, in memory: one partition for every connection, so a decision outlives the
 * transport. What `lab run` uses for a durable lane (the browser swaps in IndexedDB); it gives the
 * same answers as the browser's store, which is why the two agree.
 */
export class SharedDecisionStore implements DecisionStore {
  readonly scope = 'durable' as const;
  readonly #inner: ConnectionDecisionStore;
  constructor(opts: ConstructorParameters<typeof ConnectionDecisionStore>[0] = {}) {
    this.#inner = new ConnectionDecisionStore(opts);
  }
  get alert(): AlertConfig {
    return this.#inner.alert;
  }
  set alert(a: AlertConfig) {
    this.#inner.alert = a;
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

/** A store whose retry-loop alert can follow the lane's configuration. */
interface Tunable {
  alert: AlertConfig;
}

function isTunable(s: DecisionStore): s is DecisionStore & Tunable {
  return typeof (s as Partial<Tunable>).alert === 'object';
}

/** Build a lane's store from its current configuration. */
export function buildLaneStore(
  lane: LaneId,
  config: ClientConfig,
  durable?: DurableProvider
): LaneStore {
  const alert = resolveAlert(config.alert);
  if (config.store === 'connection')
    return { store: new ConnectionDecisionStore({ alert }), fellBack: false };
  if (durable === undefined) return { store: new SharedDecisionStore({ alert }), fellBack: false };
  const store = durable(lane);
  if (store === null) return { store: new ConnectionDecisionStore({ alert }), fellBack: true };
  tuneLaneStore(store, config);
  return { store, fellBack: false };
}

/** Carry a configuration change that keeps the scope (say a new alert threshold) to the store. */
export function tuneLaneStore(store: DecisionStore, config: ClientConfig): void {
  if (isTunable(store)) store.alert = resolveAlert(config.alert);
}
