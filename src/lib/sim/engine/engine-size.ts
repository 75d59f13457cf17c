/**
 * What an engine checkpoint costs in memory, estimated (issue #19: a simulated week of the retry
 * storm crashed the tab; issue #21: a day's checkpoints held 146 MiB). Engine checkpoints
 * (engine-checkpoints.ts) are held to a byte budget. JavaScript cannot measure an object graph,
 * so this counts the parts that grow with a run and prices each at what V8 spends on it.
 *
 * A checkpoint is compact (store/checkpoint-memo.ts): its stores — the browser's durable lane's,
 * kept in IndexedDB, too (store/checkpoint-store.ts) — presentation histories and the checker's
 * store lifetimes are flat lists of copies it shares with the checkpoints before it wherever they
 * did not change (and the checker's retry-loop times, priced whole here: an overestimate, so the
 * budget errs safe). So its cost is in two parts: the lists, priced here by count before the copy,
 * and the copies it made afresh, which the memo prices as it makes them (engine-checkpoints.ts
 * adds those). Calibrated in Node (`scripts/bench-seek-parts.ts`, `npm run bench:seek`) against
 * the heap a simulated day of the retry storm's 31 checkpoints frees when dropped, memo included:
 * 30.4 MiB while the run at the day's end shares its newest states with them, 41.3 MiB once a
 * seek back re-simulated the run and it shares none; estimated 45.3 MiB, a tenth above the larger
 * (Chromium's compressed pointers make a copy smaller still), so the budget errs safe. With lane
 * A's decisions in IndexedDB as in the browser (bench-seek-parts.ts `--durable`) they hold
 * 28.7–28.8 MiB (at the day's end, or after seeks back), estimated 45.3 (before that lane's were
 * listed, its full copies made them 57.9 MiB, estimated 44.2: under); in Chromium the worker's
 * heap after that day (`npm run bench:memory -- --week 1`) went from 66.6 to 52.3 MB. The
 * checker's store lifetimes are priced per state changed since the last checkpoint
 * (lifetimes.ts).
 *
 * Deterministic (counts only, and the memo's copies, which depend on the run alone): the same run
 * thins its checkpoints at the same places every time.
 */
import type { Simulation } from './engine';
import type { RunGuard } from '../checks/guard';
import { SERIES_KEYS } from './metrics';
import { LANE_IDS } from '../input/lanes';

/**
 * A stored decision in a checkpoint's list, beside its (shared) copy: its slot, and its share of
 * the expiry heap's slots (a time and a shared key, up to four stale hints a live entry).
 */
const DECISION_BYTES = 40;
/** An identity in a checkpoint's presentation history: its key's slot and its times' slot. */
const IDENTITY_BYTES = 16;
/** A request in flight: its machine, frames and closures. */
const IN_FLIGHT_BYTES = 3_000;
/** Everything a copy holds whatever its length: servers, clock, lanes' counters, RNGs. */
const BASE_BYTES = 300_000;

/**
 * Estimated bytes of a checkpoint of `sim` with its `guard` taken now, but for the copies it
 * makes afresh (the memo counts those: engine-checkpoints.ts). Call it before the copy: the
 * checker's lifetimes count the states changed since the last one.
 */
export function estimateCopyBytes(sim: Simulation, guard: RunGuard): number {
  let bytes = BASE_BYTES + guard.checker.checkpointBytes();
  for (const id of LANE_IDS) {
    const lane = sim.lanes[id];
    const stored = lane.host.store.count();
    if (typeof stored === 'number') bytes += stored * DECISION_BYTES;
    bytes += lane.host.presentations.size * IDENTITY_BYTES;
    bytes += lane.inFlight.size * IN_FLIGHT_BYTES;
    bytes += lane.metrics.series.t.length * (SERIES_KEYS.length + 1) * 8;
  }
  return bytes;
}
