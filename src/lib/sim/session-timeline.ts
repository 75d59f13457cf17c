/**
 * The worker session's timeline (session.ts, issue #10): after a seek back, the run's later
 * actions are applied again where they were as the run reaches them, so scrubbing back and forth
 * shows one timeline; and a run is re-created at t from its actions — as a fork when it is on one.
 */
import type { Timeline } from './actions';
import { applyAction, replayFrom, replayTo } from './checkpoint';
import type { Simulation, SimulationOptions, TimelineAction } from './engine';
import { forkRun, type ForkSpec } from './fork';
import type { Reply } from './protocol';
import type { Scenario } from './scenario';

/** The fork a run is on: made from `base`, its own actions the engine's from index `from` on. */
export interface RunFork {
  spec: ForkSpec;
  base: TimelineAction[];
  from: number;
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
 * How to re-create the run `sim` is (with `future` still ahead) at an earlier time `t`: within a
 * fork, the fork and its own actions up to t; before it (or with none), the run the fork was made
 * from — which the fork left as it was at t. Returns the actions the re-created run has ahead of
 * it and all of them, the fork it is on after, and the engine's creator.
 */
export function recreateAt(
  scenario: Scenario,
  sim: Simulation,
  future: readonly TimelineAction[],
  fork: RunFork | null,
  t: number
): {
  actions: TimelineAction[];
  fork: RunFork | null;
  create: (opts: SimulationOptions, make: Make) => Simulation;
} {
  if (fork && t >= scenario.start + fork.spec.atMs) {
    const actions = [...sim.actions.slice(fork.from), ...future];
    return {
      actions,
      fork,
      create: (opts, make) =>
        replayFrom(forkRun(scenario, opts, fork.base, fork.spec, make), actions, { t })
    };
  }
  const actions = fork ? fork.base : [...sim.actions, ...future];
  return {
    actions,
    fork: null,
    create: (opts, make) => replayTo(scenario, opts, actions, { t }, make)
  };
}

/**
 * A run brought back from its timeline (a reload: run-memory.ts) at `timeline.t`: a forked run as
 * the fork, then the actions taken on it; any other by replaying its actions.
 */
export function resumeAt(
  scenario: Scenario,
  opts: SimulationOptions,
  timeline: Timeline,
  make: Make
): { sim: Simulation; fork: RunFork | null } {
  const fork = timeline.fork;
  const to = { t: timeline.t };
  if (!fork) return { sim: replayTo(scenario, opts, timeline.actions, to, make), fork: null };
  const forked = forkRun(scenario, opts, fork.base, fork.spec, make);
  const from = forked.actions.length;
  return { sim: replayFrom(forked, timeline.actions, to), fork: { ...fork, from } };
}

/** The `timeline` reply: where the run is and what re-creates it (on a fork, its own actions). */
export function timelineOf(sim: Simulation, fork: RunFork | null): Reply {
  return {
    type: 'timeline',
    t: sim.now,
    actions: fork ? sim.actions.slice(fork.from) : [...sim.actions],
    fork: fork ? { spec: fork.spec, base: fork.base } : null
  };
}
