/**
 * Runs a simulation under its invariants: wraps the engine's hooks so that every frame, audit
 * record and store change also reaches an {@link InvariantChecker}, and tells the checker what the
 * stream does not carry (the lane's silence switch, the budget in force). The CLI, the tests and
 * the playground's worker all check a run through this one place.
 */
import { CloneMap, copyable } from '../../machine/clone';
import { toMicros } from '../../machine/money';
import { effectiveBlock } from '../../machine/policy/effective';
import { Simulation, type SimulationOptions } from '../engine/engine';
import {
  InvariantChecker,
  type ChargeContext,
  type FrameValidator,
  type InvariantResult
} from './invariants';
import { cardsByModel } from '../actors/provider';
import { windowClaim, type WindowsAt } from './invariants/denial-truth';
import type { VolumeState } from '../../machine/evaluate';
import type { PolicyBlock } from '../../machine/policy';
import type { JsonRpcId, SamplingParams, StoredDecision } from '../../machine/types';
import type { IncomingRequest } from '../../machine/authorize';
import { idKey } from './requests';

/**
 * The host's windows as the denial check reads them: null where the block has no such limit, and
 * for the budget where the denial was stored past its window's reset on purpose (a TTL other
 * than `window`: the budget-window lesson's lane replays a stale `resetsAt` to show what it costs).
 */
function windowsAt(v: VolumeState, block: PolicyBlock, budgetHeldToWindow: boolean): WindowsAt {
  return {
    rateResetsAt: block.rateLimit ? v.rateWindowResetsAt : null,
    budgetResetsAt: block.budget && budgetHeldToWindow ? v.budgetWindowResetsAt : null
  };
}

/**
 * Whether an exhausted-budget denial is held to the window it is sent in: judged by the decision
 * behind it — the one stored, or replayed — and its own lifetime, not the lane's TTL now. A
 * decision stored for the session (or for longer than its window) outlives its `resetsAt` on
 * purpose, whatever TTL the learner has set since: a stored decision keeps what it was stored
 * with, and its replays say what it said (found by the time-travel fuzz: FUZZ_SEED=1627199263).
 * A denial with no decision behind it (a TTL of `none`) goes by the lane's TTL, as before.
 */
export function budgetHeldToWindow(
  verdict: StoredDecision | null | undefined,
  laneTtlIsWindow: boolean
): boolean {
  if (verdict && verdict.reason === 'policy.budget_exhausted') {
    const reset = verdict.resetsAt === undefined ? NaN : Date.parse(verdict.resetsAt);
    return verdict.expiresAt !== null && verdict.expiresAt <= reset;
  }
  return laneTtlIsWindow;
}
import { LANE_IDS } from '../input/lanes';
import type { LaneId, Scenario } from '../input/scenario';

type Host = Simulation['lanes'][LaneId]['host'];

/**
 * Each host's charge contexts by server, for the policy and settings they were made under: the
 * same few objects for every request until the learner edits the policy or the lane's settings
 * (both are replaced, never changed in place). A cache beside the run, not in it: a copy or a
 * snapshot of the guard holds none, and makes its own on use.
 */
const CHARGES = new WeakMap<
  Host,
  { policy: Host['policy']; config: Host['config']; byServer: Map<string, ChargeContext> }
>();

export interface GuardOptions {
  /** Validates every frame sent; `conformance.ts` has the MCP SDK's. */
  validate?: FrameValidator;
}

/** What a request is charged under when its lane has no host (no limits). */
const NO_HOST: ChargeContext = { budget: null, pool: null };

/** The limits `server`'s requests are charged under by `host`'s policy and settings now. */
function chargeOf(host: Host, server: string): ChargeContext {
  const budget = effectiveBlock(host.policy, server).budget;
  const c = host.config;
  return {
    budget: budget
      ? { micros: toMicros(budget.amount), windowMs: budget.windowMs, currency: budget.currency }
      : null,
    pool:
      c.capScope === 'session-pool'
        ? { micros: toMicros(c.sessionPool.amount), currency: c.sessionPool.currency }
        : null,
    alert: c.alert,
    keepsApprovals: c.storeAllowed
  };
}

/** Slack on top of the machine's own timeouts before an unanswered request counts as lost. */
const STUCK_SLACK_MS = 60_000;

export class RunGuard {
  checker: InvariantChecker;
  private sim: Simulation | null = null;
  private readonly start: number;
  private readonly scenario: Scenario;
  private readonly opts: GuardOptions;
  /**
   * The request just decided and the decision behind it, until its frame (sent right after it:
   * lane.ts `decided`) is checked. Fields, not an object: one is set for every request.
   */
  private decidedLane: LaneId | null = null;
  private decidedRequest: IncomingRequest | null = null;
  private decidedVerdict: StoredDecision | null = null;

  constructor(scenario: Scenario, opts: GuardOptions = {}) {
    this.scenario = scenario;
    this.opts = opts;
    this.checker = new InvariantChecker({
      cards: cardsByModel(scenario.provider.cards),
      ...(opts.validate ? { validate: opts.validate } : {})
    });
    this.start = scenario.start;
  }

  /** `next`'s hooks, each also feeding the checker (first the checker, then `next`). */
  options(next: SimulationOptions = {}): SimulationOptions {
    const c = this.checker;
    return {
      ...next,
      onFrame: (l) => {
        const sim = this.sim;
        if (l.direction === 'in') {
          const config = sim ? sim.lanes[l.lane].host.config : null;
          // The budget, pool and alert settings in force as the request arrives, kept in the
          // checker's entry for it: a call is judged by the limits it was decided under. A
          // learner who lowers a budget while a call runs moves the line under a call already
          // granted the old one; the host did not overdraw (and a stream's generated tokens are
          // paid for either way). Found by the time-travel fuzz.
          c.requestArrived(
            l.lane,
            l.connection,
            idKey(l.frame.id),
            l.t,
            config ? config.silence : false,
            config?.denialStyle ?? 'lab',
            this.charge(l.lane, l.server),
            'params' in l.frame ? (l.frame.params as SamplingParams) : undefined
          );
        } else if (!('method' in l.frame)) {
          const host = sim?.lanes[l.lane].host;
          const windows =
            host && windowClaim(l.frame)
              ? windowsAt(
                  host.volumeAt(l.server, l.t),
                  // The host's own cached block: the same as effectiveBlock(policy, server).
                  host.blockFor(l.server),
                  budgetHeldToWindow(
                    this.verdictFor(l.lane, l.connection, l.frame.id),
                    host.config.reasons['policy.budget_exhausted'].ttl.kind === 'window'
                  )
                )
              : undefined;
          this.decidedRequest = this.decidedVerdict = null;
          c.frame(l.lane, l.connection, l.frame, l.t, windows);
        }
        next.onFrame?.(l);
      },
      onAudit: (r) => {
        const id = idKey(r.requestId);
        const p = c.inFlight(r.lane ?? '', r.connection, id);
        // The limits it arrived under, until its first record (the entry of a request that
        // arrived in no lane is the checker's alone).
        const arrived = p && !p.audited && p.charge && r.lane !== undefined ? p : undefined;
        const charge = arrived
          ? arrived.charge!
          : this.charge(r.lane as LaneId | undefined, r.server);
        // What the host had spent in the window: read only for the one claim it is held to (a
        // fresh exhausted-budget denial, denial-truth.ts).
        const host =
          charge.budget && r.reason === 'policy.budget_exhausted' && !r.replayed
            ? this.sim?.lanes[r.lane as LaneId]?.host
            : undefined;
        c.auditedEntry(
          r,
          id,
          p,
          charge,
          arrived ? arrived.params : charge.params,
          host ? host.volumeAt(r.server, r.t).budgetSpentMicros : undefined
        );
        next.onAudit?.(r);
      },
      onDecision: (lane, request, out) => {
        this.decidedLane = lane;
        this.decidedRequest = request;
        this.decidedVerdict = out.verdict;
        next.onDecision?.(lane, request, out);
      },
      onStore: (lane, e) => {
        // The hash lookups compare with now: an entry committed under a policy edited since
        // (its request was decided before the edit) answers no lookup.
        const current =
          e.type === 'commit' && this.sim
            ? this.sim.lanes[lane].host.policyHashFor(e.decision.server)
            : undefined;
        c.store(lane, this.sim?.now ?? this.start, e, current);
        next.onStore?.(lane, e);
      }
    };
  }

  /** A simulation of `scenario` whose every hook also feeds this guard. */
  simulate(scenario: Scenario, opts: SimulationOptions = {}): Simulation {
    return this.attach(new Simulation(scenario, this.options(opts)));
  }

  /** The simulation the hooks belong to (set once it is constructed). */
  attach(sim: Simulation): Simulation {
    this.sim = sim;
    return sim;
  }

  /** The decision behind the frame for request `id`, when it was just reached (else undefined). */
  private verdictFor(
    lane: LaneId,
    connection: string,
    id: JsonRpcId
  ): StoredDecision | null | undefined {
    const r = this.decidedRequest;
    return r && this.decidedLane === lane && r.connection === connection && r.id === id
      ? this.decidedVerdict
      : undefined;
  }

  /** The limits `server`'s requests are charged under in `lane` now (one object until they change). */
  private charge(lane: LaneId | undefined, server: string): ChargeContext {
    const host = lane && this.sim ? this.sim.lanes[lane].host : null;
    if (!host) return NO_HOST;
    let cache = CHARGES.get(host);
    if (!cache || cache.policy !== host.policy || cache.config !== host.config) {
      cache = { policy: host.policy, config: host.config, byServer: new Map() };
      CHARGES.set(host, cache);
    }
    let charge = cache.byServer.get(server);
    if (!charge) {
      charge = chargeOf(host, server);
      cache.byServer.set(server, charge);
    }
    return charge;
  }

  /** The guarantees as they stand now. */
  results(): InvariantResult[] {
    const sim = this.sim;
    if (!sim) return [];
    let stuck = 0;
    const counters = {} as Record<LaneId, Simulation['lanes'][LaneId]['metrics']['counters']>;
    for (const id of LANE_IDS) {
      const lane = sim.lanes[id];
      const cfg = lane.host.config;
      stuck = Math.max(stuck, 2 * (cfg.consentTimeoutMs + cfg.deadlineMs) + STUCK_SLACK_MS);
      counters[id] = lane.metrics.counters;
    }
    return this.checker.results(sim.now, counters, stuck);
  }
}

/** A simulation whose every hook also feeds a new guard. */
export function guardedSimulation(
  scenario: Scenario,
  opts: SimulationOptions = {},
  guardOpts: GuardOptions = {}
): { sim: Simulation; guard: RunGuard } {
  const guard = new RunGuard(scenario, guardOpts);
  return { sim: guard.simulate(scenario, opts), guard };
}

/**
 * A copy of `guard`'s judgement so far, attached to no engine: what an engine copy taken at the
 * same moment continues under (machine/clone.ts). An entry point of its own (the engine's copy
 * does not hold its guard): the session keeps a guard beside each engine checkpoint.
 */
export function copyGuard(guard: RunGuard): RunGuard {
  return new CloneMap().get(guard);
}

// A copy of a guard is attached to no engine; its checker is its own, its scenario and options
// (a frame validator) shared.
copyable(RunGuard, {
  name: 'guard.RunGuard',
  fields: {
    sim: { fresh: () => null },
    decidedLane: { fresh: () => null },
    decidedRequest: { fresh: () => null },
    decidedVerdict: { fresh: () => null },
    scenario: 'shared',
    opts: 'shared'
  }
});
