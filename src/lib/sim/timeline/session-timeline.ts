/**
 * The worker session's timeline (session.ts, issue #10): after a seek back, the run's later
 * actions are applied again where they were as the run reaches them, so scrubbing back and forth
 * shows one timeline; and a run is re-created at t from its actions — as a fork when it is on one.
 */
import type { Timeline } from './actions';
import { replayFrom, replayTo } from '../engine/checkpoint';
import { applyAction } from '../engine/apply-action';
import type { Simulation, SimulationOptions, TimelineAction } from '../engine/engine';
import { forkChain, type ForkChain } from '../engine/fork-run';
import type { ForkSpec } from '../engine/fork';
import type { Reply, TimelineFork } from '../session/protocol';
import type { LaneId, Scenario } from '../input/scenario';

/**
 * The fork a run is on: made from `base` (the actions of the branch it was made on) on top of
 * `parent` (a fork of a fork), its own actions the engine's from index `from` on.
 */
export interface RunFork extends ForkChain {
  spec: ForkSpec;
  base: TimelineAction[];
  parent: RunFork | null;
  from: number;
}

/** The engine of `fork` at its fork point; notes in `fork.from` where its own actions start. */
export function createFork(
  scenario: Scenario,
  opts: SimulationOptions,
  fork: RunFork,
  make: Make
): Simulation {
  const sim = forkChain(scenario, opts, fork, make);
  fork.from = sim.actions.length;
  return sim;
}

/** The actions of the branch `sim` is on, from its fork point (all of them off any fork). */
export function ownActions(
  sim: Simulation,
  fork: RunFork | null,
  future: readonly TimelineAction[]
): TimelineAction[] {
  return [...(fork ? sim.actions.slice(fork.from) : sim.actions), ...future];
}

/**
 * The branch a fork at `t` is made on: the run's own (`own`, on `fork`) when `t` is at or after
 * its fork point, else the branch that fork was made on, and so on down to the base run.
 */
export function branchAt(
  scenario: Scenario,
  own: TimelineAction[],
  fork: RunFork | null,
  t: number
): { own: TimelineAction[]; fork: RunFork | null } {
  while (fork && t < scenario.start + fork.spec.atMs) {
    own = fork.base;
    fork = fork.parent;
  }
  return { own, fork };
}

export type Make = (s: Scenario, o: SimulationOptions) => Simulation;

/** The actions still ahead of the run after a seek back (a new change drops them). */
export class FutureActions {
  list: TimelineAction[] = [];

  /** Apply those due at the run's current position. */
  applyDue(sim: Simulation): void {
    while (this.list.length) {
      const a = this.list[0]!;
      if (a.events !== sim.events || a.t !== sim.now) return;
      this.list.shift();
      applyAction(sim, a);
    }
  }

  /**
   * `advanceTo`, stopping at each later action to apply it where it was first applied (the same
   * event count and time), so the bytes are those of the first time through. `held`: a breakpoint
   * holds (the action then waits for the next call). Returns the events run.
   */
  advance(sim: Simulation, to: number, maxEvents: number, held: () => boolean): number {
    let n = 0;
    for (;;) {
      const a = this.list[0];
      if (!a || a.t > Math.min(to, sim.end) || n >= maxEvents) break;
      if (sim.events < a.events) {
        n += sim.advanceTo(a.t, Math.min(a.events - sim.events, maxEvents - n));
        // Cut by the slice's limit, or a breakpoint held: the action waits for the next call.
        if (sim.events < a.events && (n >= maxEvents || held())) return n;
      }
      if (sim.now < a.t) sim.advanceTo(a.t);
      this.list.shift();
      applyAction(sim, a);
    }
    return n + sim.advanceTo(to, maxEvents - n);
  }
}

/**
 * How to re-create at an earlier time `t` the run whose branch has actions `own` (with those
 * still ahead of it after a seek back) on `fork`: within the fork, the fork and its own actions
 * up to t; before it, the branch it was made from — which the fork left as it was at t — and so
 * on down a chain of forks. Returns the actions the re-created run's branch has (ahead of it and
 * behind), the fork it is on after, and the engine's creator.
 */
export function recreateAt(
  scenario: Scenario,
  own: TimelineAction[],
  fork: RunFork | null,
  t: number
): {
  actions: TimelineAction[];
  fork: RunFork | null;
  create: (opts: SimulationOptions, make: Make) => Simulation;
} {
  const branch = branchAt(scenario, own, fork, t);
  const on = branch.fork;
  const actions = branch.own;
  return {
    actions,
    fork: on,
    create: on
      ? (opts, make) => replayFrom(createFork(scenario, opts, on, make), actions, { t })
      : (opts, make) => replayTo(scenario, opts, actions, { t }, make)
  };
}

/** A run's fork chain as its timeline carries it (first fork first), and back. */
function toTimeline(fork: RunFork): TimelineFork {
  const parents: { spec: ForkSpec; base: TimelineAction[] }[] = [];
  for (let p = fork.parent; p; p = p.parent) parents.unshift({ spec: p.spec, base: p.base });
  return { spec: fork.spec, base: fork.base, ...(parents.length ? { parents } : {}) };
}

function fromTimeline(fork: TimelineFork): RunFork {
  let parent: RunFork | null = null;
  for (const p of fork.parents ?? []) parent = { spec: p.spec, base: p.base, parent, from: 0 };
  return { spec: fork.spec, base: fork.base, parent, from: 0 };
}

/**
 * A run brought back from its timeline (a reload: run-memory.ts) at `timeline.t`: a forked run as
 * the fork (and the forks it was made on), then the actions taken on it; any other by replaying
 * its actions.
 */
export function resumeAt(
  scenario: Scenario,
  opts: SimulationOptions,
  timeline: Timeline,
  make: Make
): { sim: Simulation; fork: RunFork | null } {
  const to = { t: timeline.t };
  if (!timeline.fork)
    return { sim: replayTo(scenario, opts, timeline.actions, to, make), fork: null };
  const fork = fromTimeline(timeline.fork);
  const forked = createFork(scenario, opts, fork, make);
  return { sim: replayFrom(forked, timeline.actions, to), fork };
}

/**
 * The `timeline` reply: where the run is and what re-creates it (on a fork, its own actions), the
 * actions still ahead of it after a seek back, and who answered dialogs when it was loaded.
 */
export function timelineOf(
  sim: Simulation,
  fork: RunFork | null,
  ahead: readonly TimelineAction[],
  human: readonly LaneId[]
): Reply {
  return {
    type: 'timeline',
    t: sim.now,
    actions: fork ? sim.actions.slice(fork.from) : [...sim.actions],
    fork: fork ? toTimeline(fork) : null,
    ahead: [...ahead],
    human: [...human]
  };
}

/**
 * A run opened from a share link (issue #18): the fork it is on (and the forks it was made on)
 * re-created at its fork point, without the run played on from there; off any fork, the engine
 * as loaded. The link's own actions after that are the run's actions ahead (the session applies
 * them where they were as the run reaches them).
 */
export function linkedFork(
  scenario: Scenario,
  opts: SimulationOptions,
  fork: TimelineFork,
  make: Make
): { sim: Simulation; fork: RunFork } {
  const run = fromTimeline(fork);
  return { sim: createFork(scenario, opts, run, make), fork: run };
}
