/**
 * What a copy of a running engine costs in memory, estimated (issue #19: a simulated week of the
 * retry storm crashed the tab). Engine checkpoints (engine-checkpoints.ts) are held to a byte
 * budget, and a copy's size grows with the run: stored decisions that never expire, their store
 * lifetimes in the invariant checker, the presentation histories (bounded, but 10,000 identities
 * a lane), the metric samples. JavaScript cannot measure an object graph, so this counts the
 * parts that grow and prices each at what V8 spends on it, calibrated in Node against the heap a
 * checkpoint of the retry storm frees when dropped: over the first half day the estimate is 10–40 %
 * above it (Chromium's compressed pointers make a copy smaller still), so the budget errs safe.
 *
 * Deterministic (counts only): the same run thins its checkpoints at the same places every time.
 * The checker's store lifetimes are counted in full although checkpoints share the ones that did
 * not change between them (lifetimes.ts): there the estimate errs further on the safe side.
 */
import type { Simulation } from './engine';
import type { RunGuard } from '../checks/guard';
import { SERIES_KEYS } from './metrics';
import { LANE_IDS } from '../input/lanes';

/** A stored decision: the record, its map entries (connection → server → identity), its expiry. */
const DECISION_BYTES = 420;
/** A request in flight: its machine, frames and closures. */
const IN_FLIGHT_BYTES = 3_000;
/** Everything a copy holds whatever its length: servers, clock, lanes' counters, RNGs. */
const BASE_BYTES = 400_000;

/** Estimated bytes of a copy of `sim` with its `guard` (what one engine checkpoint holds). */
export function estimateCopyBytes(sim: Simulation, guard: RunGuard): number {
  let bytes = BASE_BYTES + guard.checker.approxBytes();
  for (const id of LANE_IDS) {
    const lane = sim.lanes[id];
    const stored = lane.host.store.count();
    if (typeof stored === 'number') bytes += stored * DECISION_BYTES;
    bytes += lane.host.presentations.approxBytes();
    bytes += lane.inFlight.size * IN_FLIGHT_BYTES;
    bytes += lane.metrics.series.t.length * (SERIES_KEYS.length + 1) * 8;
  }
  return bytes;
}
