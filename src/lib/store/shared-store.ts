/**
 * The durable scope kept in memory (see the class). A store, not a simulation concept: `lab run`
 * builds it for a durable lane (sim/engine/lane-store.ts) and the shipped handler for
 * `memoryStore({ scope: 'process' })`.
 */
import { copyable } from '../machine/clone';
import type { StoredDecision } from '../machine/types';
import { ConnectionDecisionStore } from './connection-store';
import type { DecisionStore } from './decision-store';

/**
 * The durable scope, in memory: one partition for every connection, so a decision outlives the
 * transport. What `lab run` uses for a durable lane (the browser swaps in IndexedDB); it gives the
 * same answers as the browser's store, which is why the two agree.
 */
export class SharedDecisionStore implements DecisionStore {
  readonly scope = 'durable' as const;
  private readonly inner = new ConnectionDecisionStore();
  lookup(server: string, _connection: string, identity: string, hash: string, now: number) {
    return this.inner.lookup(server, '*', identity, hash, now);
  }
  commit(_connection: string, decision: StoredDecision) {
    return this.inner.commit('*', decision);
  }
  invalidateServer(server: string) {
    return this.inner.invalidateServer(server);
  }
  closeConnection(): void {}
  sweep(now: number) {
    return this.inner.sweep(now);
  }
  entries() {
    return this.inner.entries();
  }
  count() {
    return this.inner.count();
  }
  liveCount(now: number) {
    return this.inner.liveCount(now);
  }
  clear() {
    return this.inner.clear();
  }
}

// A copy has its own entries (see ConnectionDecisionStore's rules).
copyable(SharedDecisionStore, {
  name: 'shared-store.SharedDecisionStore',
  blank: () => new SharedDecisionStore()
});
