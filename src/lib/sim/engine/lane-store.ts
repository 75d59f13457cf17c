/**
 * The one place a lane's decision store is built, from the lane's *current* client configuration:
 * its scope, and the fallback to connection scope when durable storage is unavailable — the same
 * way in the worker and in `lab run`. (The retry-loop alert is the host's, read live from the
 * config; stores only count re-presentations.)
 */
import type { ClientConfig } from '../../machine/config';
import { ConnectionDecisionStore } from '../../store/connection-store';
import type { DecisionStore } from '../../store/decision-store';
import { SharedDecisionStore } from '../../store/shared-store';
import type { LaneId } from '../../machine/vocabulary';

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
