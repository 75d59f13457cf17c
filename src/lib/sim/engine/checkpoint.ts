/**
 * Checkpoints and seeking (issue #10).
 *
 * - **View checkpoints** ({@link CheckpointRecorder}): at every metrics sample (every `sampleMs`,
 *   or every `everyMs` when coarser) the numbers the page draws — per-lane counters, statechart
 *   edge counts, live stored decisions, audit rows, frames, marks — are copied. Seeking the page
 *   to a checkpoint is a lookup; the time series need nothing (they are cumulative: slice them).
 * - **Engine restore by deterministic re-simulation** ({@link replayTo}): a run is its scenario,
 *   seed and the actions applied from outside at their exact positions (virtual time + clock
 *   events run, `Simulation.actions`). A fresh engine re-runs to the position with the caller's
 *   output hooks quiet, applying each action where it was applied; it then continues exactly as
 *   the original would have — byte for byte (checkpoint.spec.ts). Its cost is the run up to t, so
 *   the session restores from engine copies instead when it has one before t
 *   (engine-checkpoints.ts) and runs on from there with {@link replayFrom}.
 */
import { copyJson } from '../../machine/copy-json';
import type { LaneCounters } from './metrics';
import {
  Simulation,
  type RunPosition,
  type SimulationOptions,
  type TimelineAction
} from './engine';
import { liveDecisions } from '../../store/decision-store';
import { applyAction } from './apply-action';
import { LANE_IDS } from '../input/lanes';
import type { LaneId, Scenario } from '../input/scenario';

/** What one lane looks like at a checkpoint. */
export interface LaneCheckpoint {
  counters: LaneCounters;
  /** Statechart edge counts, "from→to". */
  edges: Record<string, number>;
  /** Live stored decisions. */
  storedDecisions: number;
}

/** The page's view of a run at one moment. */
export interface ViewCheckpoint extends RunPosition {
  lanes: Record<LaneId, LaneCheckpoint>;
  /** Audit rows written so far (both lanes): the audit table shows rows 0 … auditRows − 1. */
  auditRows: number;
  /** Frame lines written so far (both directions, both lanes). */
  frames: number;
  /** Timeline marks so far. */
  marks: number;
  /** Metric samples per lane so far: the charts draw series[0 … samples − 1]. */
  samples: number;
}

/**
 * Records a {@link ViewCheckpoint} at every metrics sample at least `everyMs` after the last one.
 * Use `options()` to wrap the simulation's hooks (it counts frames and audit rows), then `attach`.
 */
export class CheckpointRecorder {
  readonly checkpoints: ViewCheckpoint[] = [];
  #sim: Simulation | null = null;
  #frames = 0;
  #audit = 0;
  #last = -Infinity;

  constructor(readonly everyMs = 0) {}

  options(next: SimulationOptions = {}): SimulationOptions {
    return {
      ...next,
      onFrame: (l) => {
        this.#frames++;
        next.onFrame?.(l);
      },
      onAudit: (r) => {
        this.#audit++;
        next.onAudit?.(r);
      },
      onSample: (t) => {
        if (this.#sim && t - this.#last >= this.everyMs) this.record();
        next.onSample?.(t);
      }
    };
  }

  /** The simulation the hooks belong to; records the first checkpoint if none yet. */
  attach(sim: Simulation): Simulation {
    this.#sim = sim;
    if (this.checkpoints.length === 0) this.record();
    return sim;
  }

  /** Take a checkpoint now (the recorder also does at samples). */
  record(): ViewCheckpoint {
    const sim = this.#sim;
    if (!sim) throw new Error('CheckpointRecorder: no simulation attached');
    const lanes = {} as Record<LaneId, LaneCheckpoint>;
    for (const id of LANE_IDS) {
      const lane = sim.lanes[id];
      lanes[id] = {
        counters: copyJson(lane.metrics.counters),
        edges: { ...lane.metrics.edges },
        storedDecisions: liveDecisions(lane.host.store, sim.now)
      };
    }
    const cp: ViewCheckpoint = {
      ...sim.position,
      lanes,
      auditRows: this.#audit,
      frames: this.#frames,
      marks: sim.marks.length,
      samples: sim.lanes.A.metrics.series.t.length
    };
    this.#last = cp.t;
    this.checkpoints.push(cp);
    return cp;
  }

  /** The last checkpoint at or before virtual time `t` (binary search), or null before the first. */
  at(t: number): ViewCheckpoint | null {
    const cs = this.checkpoints;
    let lo = 0;
    let hi = cs.length - 1;
    let found: ViewCheckpoint | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = cs[mid]!;
      if (c.t <= t) {
        found = c;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Forget checkpoints after `t` (a fork or a restore continues from there on a new branch). */
  truncateAfter(t: number): void {
    let i = this.checkpoints.length;
    while (i > 0 && this.checkpoints[i - 1]!.t > t) i--;
    this.checkpoints.length = i;
    this.#last = this.checkpoints[i - 1]?.t ?? -Infinity;
  }

  /** Audit rows and frame lines seen so far (the page trims its table to these after a seek). */
  counts(): { auditRows: number; frames: number } {
    return { auditRows: this.#audit, frames: this.#frames };
  }

  /**
   * Take over the checkpoints of `from` up to `at` and the counts there: the engine this
   * recorder will see is a copy taken at `at` (clone.ts), on the same timeline up to it.
   */
  resumeAt(
    from: readonly ViewCheckpoint[],
    at: RunPosition,
    counts: { auditRows: number; frames: number }
  ): void {
    let n = 0;
    while (n < from.length) {
      const c = from[n]!;
      if (c.t > at.t || (c.t === at.t && c.events > at.events)) break;
      n++;
    }
    this.checkpoints.splice(0, this.checkpoints.length, ...from.slice(0, n));
    this.#last = this.checkpoints.at(-1)?.t ?? -Infinity;
    this.#audit = counts.auditRows;
    this.#frames = counts.frames;
  }

  /** Continue counting from a checkpoint (after a restore, the hooks were quiet up to it). */
  resumeFrom(cp: Pick<ViewCheckpoint, 'auditRows' | 'frames'>): void {
    this.#audit = cp.auditRows;
    this.#frames = cp.frames;
  }
}

/**
 * Run `sim` to `to` exactly: the same events, the same time. Works whether the original stopped
 * with events still due at its instant (a cut slice, a breakpoint) or after all of them.
 */
export function advanceToPosition(sim: Simulation, to: RunPosition): void {
  if (sim.events < to.events) sim.advanceTo(to.t, to.events - sim.events);
  // Every event up to `to.t` has run: only time moves (nothing is due before `to.t`).
  if (sim.events === to.events && sim.now < to.t) sim.advanceTo(to.t);
  if (sim.events !== to.events || sim.now !== to.t)
    throw new Error(
      `re-simulation diverged: at ${sim.now} after ${sim.events} events, expected ${to.t} after ${to.events}`
    );
}

/**
 * Rebuild a run at position `to` by re-simulating it from the start with `actions` applied where
 * they were. `opts` are the new engine's options (its hooks see every frame and record of the
 * re-run: keep them quiet until this returns, or feed a fresh invariant guard with them).
 * `make` builds the engine (a guarded one, for instance); by default a plain `Simulation`.
 */
export function replayTo(
  scenario: Scenario,
  opts: SimulationOptions,
  actions: readonly TimelineAction[],
  to: RunPosition | { t: number; events?: undefined },
  make: (s: Scenario, o: SimulationOptions) => Simulation = (s, o) => new Simulation(s, o)
): Simulation {
  return replayFrom(make(scenario, opts), actions, to);
}

/**
 * Run `sim` on to position `to`, applying `actions` (those after where it is and up to `to`)
 * where they were applied: a replay's second half, after a fork for instance (session.ts).
 */
export function replayFrom(
  sim: Simulation,
  actions: readonly TimelineAction[],
  to: RunPosition | { t: number; events?: undefined }
): Simulation {
  const here = sim.position;
  for (const a of actions) {
    if (a.events < here.events || a.t < here.t) continue;
    if (to.events === undefined ? a.t > to.t : a.events > to.events || a.t > to.t) break;
    advanceToPosition(sim, a);
    applyAction(sim, a);
  }
  // A bare time means "as a run left alone reaches it": every event at or before `t` run.
  if (to.events === undefined) sim.advanceTo(to.t);
  else advanceToPosition(sim, to);
  return sim;
}
