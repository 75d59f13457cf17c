/**
 * Fork from t (issue #10): re-run ONE lane from virtual time t with a changed policy or client
 * configuration, while the other lane keeps its history.
 *
 * The two lanes share nothing but the clock: each has its own servers, stores, provider and user,
 * and every random stream is forked by label from the seed (rng.ts), never by lane. So a fork is a
 * re-simulation (checkpoint.ts) in which, at t, one lane's configuration changes: the other lane
 * draws the same numbers, sends the same frames and shows the same numbers as the unforked run,
 * before t and after it (fork.spec.ts holds that, frame for frame).
 *
 * A fork is data a share link can carry: {@link ForkSpec}, validated by {@link parseFork} with
 * every error's JSON path.
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../../machine/names';
import { z } from 'zod';
import { describeIssues, policyKeysAt, PolicySchema } from '../../machine/policy';
import { LaneIdSchema } from '../../machine/vocabulary';
import { advanceToPosition } from './checkpoint';
import { applyAction } from './apply-action';
import { Simulation, type SimulationOptions, type TimelineAction } from './engine';
import { formatSpan } from './extend';
import { jsonInput } from '../input/json-input';
import { LIMITS } from '../input/limits';
import { ClientConfigInputSchema, type Scenario, type ScenarioError } from '../input/scenario';

export const ForkChangeSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('config'),
    /** The lane's whole client configuration from t (members left out take their defaults). */
    client: ClientConfigInputSchema,
    /** How the timeline mark reads ("lane A made durable"). */
    what: z.string().min(1).max(200).optional()
  }),
  z.strictObject({ kind: z.literal('policy'), policy: PolicySchema })
]);

export const ForkSchema = z
  .strictObject({
    version: z.literal(1),
    /** Virtual ms from the scenario's start. */
    atMs: z.int().min(0).max(LIMITS.durationMs),
    lane: LaneIdSchema,
    change: ForkChangeSchema
  })
  .describe('A fork of a run: from `atMs`, lane `lane` runs with `change`.');

export type ForkSpec = z.output<typeof ForkSchema>;
export type ForkChange = z.output<typeof ForkChangeSchema>;

export type ForkParse = { ok: true; fork: ForkSpec } | { ok: false; errors: ScenarioError[] };

/**
 * Validate a fork (an object, or JSON text) — against `scenario` too when given: the fork must
 * fall within the run. Every error names its JSON path (`$.change.policy.defaults.budget`).
 */
export function parseFork(input: unknown, scenario?: Scenario): ForkParse {
  const json = jsonInput(input);
  if (!json.ok) return json;
  const r = ForkSchema.safeParse(json.value);
  if (!r.success) {
    const inPolicy = (s: readonly (string | number)[]) => s[0] === 'change' && s[1] === 'policy';
    return {
      ok: false,
      errors: describeIssues(r.error.issues, json.value, (s) =>
        inPolicy(s) ? policyKeysAt(2)(s) : []
      ).map(({ path, message }) => ({ path, message }))
    };
  }
  if (scenario && r.data.atMs > scenario.durationMs)
    return {
      ok: false,
      errors: [
        {
          path: '$.atMs',
          message: `the scenario ends at ${formatSpan(scenario.durationMs)}; a fork at ${formatSpan(r.data.atMs)} is past it`
        }
      ]
    };
  return { ok: true, fork: r.data };
}

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
