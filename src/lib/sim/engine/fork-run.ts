/**
 * A fork made (fork.ts says what a fork is and parses one): the engine re-simulated to the fork
 * point with the change applied, for one fork or a chain of them. Apart from the parsing, which
 * validates with zod: the playground's worker makes forks from specs it has already checked, and
 * its first load carries no zod (issue #24).
 */
import { advanceToPosition } from './checkpoint';
import { applyAction } from './apply-action';
import { Simulation, type SimulationOptions, type TimelineAction } from './engine';
import { formatSpan } from './extend';
import type { Scenario } from '../input/scenario';
import type { ForkSpec } from './fork';

/** How a fork reads on the timeline. */
export function forkWhat(fork: ForkSpec): string {
  return fork.change.kind === 'policy'
    ? `forked: lane ${fork.lane} with an edited policy`
    : `forked: ${fork.change.what ?? `lane ${fork.lane} reconfigured`}`;
}

/**
 * A fork together with the branch it was made on: `base` is that branch's own actions (for the
 * first fork, the base run's; for a fork of a fork, those taken on the parent fork after its
 * fork point), `parent` the parent fork or null. A run forked twice is a chain of these.
 */
export interface ForkChain {
  spec: ForkSpec;
  base: readonly TimelineAction[];
  parent: ForkChain | null;
}

/**
 * The engine of a fork chain at its last fork point: the parent fork re-created (at its own fork
 * point, its other lane's later history scheduled), then this fork made on it as {@link forkRun}
 * makes one on the base run. Deterministic: a chain re-created gives the bytes it first gave.
 */
export function forkChain(
  scenario: Scenario,
  opts: SimulationOptions,
  chain: ForkChain,
  make: (s: Scenario, o: SimulationOptions) => Simulation = (s, o) => new Simulation(s, o)
): Simulation {
  const parent = chain.parent;
  const under = parent
    ? (s: Scenario, o: SimulationOptions) => forkChain(s, o, parent, make)
    : make;
  return forkRun(scenario, opts, chain.base, chain.spec, under);
}

/** The forks of a chain, first fork first. */
export function chainSpecs(chain: ForkChain | null): ForkSpec[] {
  const out: ForkSpec[] = [];
  for (let c = chain; c; c = c.parent) out.unshift(c.spec);
  return out;
}

/**
 * The run `actions` describe (the learner's changes to the base run), forked: re-simulated to
 * `fork.atMs` with every action up to then, the change applied to `fork.lane`, and the other
 * lane's later history (its own changes, a person's answers to its dialogs, restarts,
 * extensions) scheduled at their times. The forked lane's own later changes and answers belonged
 * to the abandoned branch and are dropped.
 *
 * Returns the engine at the fork point; play it on from there. `opts` are its hooks (they see the
 * shared history before t too: keep them quiet until this returns if the page already shows it).
 * `make` may itself return a forked engine (a fork of a fork, {@link forkChain}): the later
 * history an earlier fork scheduled for the lane this one changes is then dropped when it comes.
 */
export function forkRun(
  scenario: Scenario,
  opts: SimulationOptions,
  actions: readonly TimelineAction[],
  fork: ForkSpec,
  make: (s: Scenario, o: SimulationOptions) => Simulation = (s, o) => new Simulation(s, o)
): Simulation {
  const at = scenario.start + fork.atMs;
  const sim = make(scenario, opts);
  const later: TimelineAction[] = [];
  for (const a of actions) {
    if (a.t > at) later.push(a);
    else {
      advanceToPosition(sim, a);
      applyAction(sim, a);
    }
  }
  sim.advanceTo(at);
  if (sim.now < at) throw new Error(`the run ends before the fork at ${formatSpan(fork.atMs)}`);
  const what = forkWhat(fork);
  if (fork.change.kind === 'policy') sim.setLanePolicy(fork.lane, fork.change.policy);
  else sim.setLaneConfig(fork.lane, fork.change.client, what);
  sim.marks.push({ t: at, lane: fork.lane, what, kind: 'fork' });
  const generation = sim.forked(fork.lane);
  for (const a of later) {
    // The forked lane's own later edits and a person's answers to its dialogs belonged to the
    // abandoned branch (its requests differ from t on); who answers dialogs applies to both.
    if ('lane' in a && a.lane === fork.lane) continue;
    const lane = 'lane' in a ? a.lane : null;
    sim.clock.schedule(a.t, { kind: 'fork', action: a, lane, generation });
  }
  return sim;
}
