/**
 * The engine's snapshot registry (snapshot.ts): every class a running engine and its invariant
 * guard hold, by the name a snapshot stores, with what each needs beyond its fields — in one
 * place, beside the classes rather than in them.
 *
 * - Closures an engine makes over its own objects (the clock's dispatcher, a lane's store tap, a
 *   host's rate-card lookup; in builds that have them, the consent desk's listener and a provider's callback
 *   source) are dropped and made again over the decoded objects, as the classes' constructors
 *   make them — only where the original had them.
 * - The run's hooks (its options' functions: the page's sinks, the guard's checks) are stored by
 *   name and the new run's attached instead.
 * - The scenario and everything in it are left out and re-attached from the run's inputs; the
 *   flow's transition table is a constant (the states a request is in point into it).
 * - Classes their modules do not export (a clock's entries, a lane's record of a request, a
 *   provider's stream…) are learned from a probe engine of the same scenario, with a request in
 *   flight on every server, and probe provider calls: named by where they are first met.
 * - A durable store the page keeps (IndexedDB) is stored as its decisions in memory: a run
 *   restored from a snapshot is then given the page's store back, as a reload's re-simulation is
 *   (session.ts).
 */
import { ConsentDesk } from '../actors/dialogs';
import { callDirect } from '../actors/direct';
import { SimProvider, DEFAULT_PROVIDER, type ProviderSpec } from '../actors/provider';
import { SimUser } from '../actors/user';
import { BehaviourParams } from '../actors/servers/base';
import {
  BudgetShrinker,
  ContextGreedy,
  TimeoutSensitive,
  WellBehaved
} from '../actors/servers/polite';
import {
  NaiveRetrier,
  PromptMutator,
  Reconnector,
  SerialiserVariant,
  TightLoop
} from '../actors/servers/retriers';
import { RunGuard } from '../checks/guard';
import { InvariantChecker } from '../checks/invariants/checker';
import { Tally } from '../checks/invariants/catalogue';
import { LifetimeTracker } from '../checks/lifetimes';
import { LoopTracker } from '../checks/loops';
import { VirtualClock } from '../world/clock';
import { Rng } from '../world/rng';
import { ClientHost } from '../../client/host';
import { HostStep, TableHandle } from '../../client/host-steps';
import { PresentationHistory } from '../../client/presentations';
import { FastRun } from '../../machine/authorize/fast';
import type { ConsentInput, ProviderInput } from '../../machine/authorize/types';
import { ConnectionDecisionStore } from '../../store/connection-store';
import type { DecisionStore } from '../../store/decision-store';
import { ExpiryHeap } from '../../store/expiry';
import { SharedDecisionStore } from '../../store/shared-store';
import { LANE_IDS } from '../input/lanes';
import type { LaneId, Scenario } from '../input/scenario';
import type { SimEvent } from '../world/events';
import { Simulation, LaneRuntime, type SimulationOptions } from './engine';
import { ServerRuntime } from './lane';
import { LaneMetrics } from './metrics';
import { step } from './step';
import { TappedStore, type StoreObserver } from './store-tap';
import { SnapshotError, SnapshotRegistry, type EncodeOptions } from './snapshot';

/** What the revivers are handed: the restored run's options (its hooks). */
export interface ReviveContext {
  opts: SimulationOptions;
}

type Fields = Record<string, unknown>;

/** The probe engine runs this many slices of this many events, learning after each. */
const PROBE_STEPS = 8;
const PROBE_EVENTS = 400;

const PROBE_PARAMS = {
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'probe' } }],
  maxTokens: 16
};

/** A provider call of a probe provider: what it keeps for the call (a stream, a failure). */
function probeProvider(failing: boolean): object {
  const spec: ProviderSpec = {
    ...DEFAULT_PROVIDER,
    transportFailureRate: failing ? 1 : 0,
    providerErrorRate: 0
  };
  const p = new SimProvider(spec, new VirtualClock(0), new Rng(1));
  const input: ProviderInput = {
    server: 'probe',
    model: DEFAULT_PROVIDER.cards[0]!.model,
    params: PROBE_PARAMS,
    inputTokens: 10,
    maxTokens: 16,
    contextApplied: 'none',
    now: 0
  };
  p.call(input, { emit() {} } as never);
  return p;
}

/** A direct call's stream (SEP-2577's baseline), from a call to a provider that only records. */
function probeDirect(): object {
  const got: unknown[] = [];
  const recorder = {
    call(_input: unknown, r: unknown) {
      got.push(r);
      return 1;
    },
    stop() {}
  };
  callDirect(
    recorder as never,
    DEFAULT_PROVIDER.cards,
    { server: 'probe', connection: 'probe#0', id: 1, params: PROBE_PARAMS, now: 0 },
    {} as never
  );
  return got;
}

/**
 * A probe engine of `scenario` with a request in flight on each server of each lane (as far as
 * its policy keeps one waiting), and the flow table its requests run on.
 */
function probeEngine(scenario: Scenario): { sim: Simulation; table: object | null } {
  const sim = new Simulation(scenario, {});
  let table: object | null = null;
  let n = 0;
  for (const id of LANE_IDS)
    for (const server of sim.lanes[id].servers.values()) {
      sim.lanes[id].receive(server, `probe-${n++}`, PROBE_PARAMS);
      for (const f of sim.lanes[id].inFlight.values()) {
        const handle = (f as unknown as Fields).handle as Fields | null;
        if (handle?.run instanceof FastRun)
          table ??= (handle.run as unknown as Fields).table as object;
      }
    }
  return { sim, table };
}

/**
 * Register every class met in `roots`' graphs that the registry does not know — the ones their
 * modules keep to themselves (a clock's entries, a lane's record of a request, a provider's
 * stream…) — by the path where the walk first meets it, which is the same in every run of the
 * same build (snapshots are read by the build that wrote them: another build's may not decode,
 * and is then re-simulated). A class met nowhere here is refused when a snapshot holds one.
 */
function learn(r: SnapshotRegistry, roots: [string, unknown][], skip: ReadonlySet<object>): void {
  const seen = new Set<object>();
  const work: [unknown, string][] = roots.map(([name, v]) => [v, name]);
  for (let i = 0; i < work.length; i++) {
    const [v, path] = work[i]!;
    if (typeof v !== 'object' || v === null || seen.has(v) || skip.has(v)) continue;
    seen.add(v);
    if (ArrayBuffer.isView(v) || v instanceof WeakMap || v instanceof WeakSet) continue;
    if (v instanceof Map) {
      for (const [k, e] of v) work.push([k, `${path}.key`], [e, `${path}.get()`]);
      continue;
    }
    if (v instanceof Set) {
      for (const e of v) work.push([e, `${path}.values`]);
      continue;
    }
    if (Array.isArray(v)) {
      for (const e of v) work.push([e, `${path}[]`]);
      continue;
    }
    const proto = Object.getPrototypeOf(v) as object | null;
    if (proto && proto !== Object.prototype && !r.entryOf(proto))
      r.add(`auto:${path}`, (proto as { constructor: new () => object }).constructor);
    for (const k of Object.keys(v)) work.push([(v as Fields)[k], `${path}.${k}`]);
  }
}

const registries = new WeakMap<Scenario, SnapshotRegistry>();

/**
 * The registry for engines of `scenario` (made once per scenario object). Throws
 * {@link SnapshotError} when a class cannot be snapshotted (one with `#private` state).
 */
export function engineRegistry(scenario: Scenario): SnapshotRegistry {
  const known = registries.get(scenario);
  if (known) return known;
  const r = new SnapshotRegistry()
    .add('Simulation', Simulation, {
      drop: ['opts'],
      revive: (sim, ctx, had) => {
        (sim as unknown as { opts: SimulationOptions }).opts = (ctx as ReviveContext).opts;
        // The closures a new engine makes over itself, where this build's engine has them.
        if (had(sim.clock, 'dispatch')) sim.clock.dispatch = (e: SimEvent) => step(sim, e);
        if (had(sim.consent, 'asked'))
          (sim.consent as unknown as Fields).asked = (lane: LaneId, input: ConsentInput) =>
            sim.lanes[lane].asked(input);
      }
    })
    .add('ConsentDesk', ConsentDesk, { drop: ['asked'] })
    .add('VirtualClock', VirtualClock, { drop: ['dispatch'] })
    .add('LaneRuntime', LaneRuntime, {
      revive: (lane, ctx, had) => {
        const observe = (ctx as ReviveContext).opts.onStore;
        const s = lane.host.store;
        if (s instanceof TappedStore && had(s, 'observe'))
          (s as unknown as { observe: StoreObserver }).observe = (e) => observe!(lane.id, e);
      }
    })
    .add('ServerRuntime', ServerRuntime)
    .add('SimUser', SimUser)
    .add('SimProvider', SimProvider, {
      drop: ['source'],
      revive: (p, _ctx, had) => {
        if (!had(p, 'source')) return;
        (p as unknown as Fields).source = (
          input: ProviderInput,
          emit: (e: unknown) => void
        ): (() => void) => {
          const n = p.call(input, { emit } as never);
          return () => p.stop(n);
        };
      }
    })
    .add('Rng', Rng)
    .add('LaneMetrics', LaneMetrics)
    // Its rate-card lookup is a closure over it, made on first use (as its copy drops it); its
    // steps are its methods, and a request's run calls them on its host (fast.ts `steps`).
    .add('ClientHost', ClientHost, { drop: ['_card'] })
    .add('FastRun', FastRun)
    .add('HostStep', HostStep)
    .add('TableHandle', TableHandle)
    .add('PresentationHistory', PresentationHistory)
    .add('TappedStore', TappedStore, {
      drop: ['observe', 'status'],
      // Its `status` is a closure over the store it wraps (made by its constructor); its
      // observer is the lane's, re-made by the lane (above).
      make: (field) => new TappedStore(field('inner') as DecisionStore, undefined as never)
    })
    .add('ConnectionDecisionStore', ConnectionDecisionStore)
    .add('SharedDecisionStore', SharedDecisionStore)
    .add('ExpiryHeap', ExpiryHeap)
    .add('BehaviourParams', BehaviourParams)
    .add('WellBehaved', WellBehaved)
    .add('ContextGreedy', ContextGreedy)
    .add('BudgetShrinker', BudgetShrinker)
    .add('TimeoutSensitive', TimeoutSensitive)
    .add('NaiveRetrier', NaiveRetrier)
    .add('TightLoop', TightLoop)
    .add('Reconnector', Reconnector)
    .add('PromptMutator', PromptMutator)
    .add('SerialiserVariant', SerialiserVariant)
    .add('RunGuard', RunGuard)
    .add('InvariantChecker', InvariantChecker)
    .add('Tally', Tally)
    .add('LifetimeTracker', LifetimeTracker)
    .add('LoopTracker', LoopTracker);
  const { sim, table } = probeEngine(scenario);
  const skip = new Set(scenarioObjects(scenario).keys());
  learn(
    r,
    [
      ['engine', sim],
      ['provider', probeProvider(false)],
      ['failing', probeProvider(true)],
      ['direct', probeDirect()]
    ],
    skip
  );
  // What the servers and the user make only once the run goes (a task's state, a timing).
  for (let i = 0; i < PROBE_STEPS && !sim.done; i++) {
    sim.advanceTo(sim.end, PROBE_EVENTS);
    learn(r, [['engine', sim]], skip);
  }
  if (table) r.constantGraph('table', table);
  registries.set(scenario, r);
  return r;
}

/**
 * What {@link encode} needs for an engine of `scenario` run with `opts`: the scenario left out
 * (every object in it, by path), the options' functions as hooks, and a durable store the page
 * keeps stored as its decisions in memory.
 */
export function engineEncodeOptions(
  scenario: Scenario,
  hooks: Readonly<Record<string, unknown>>
): EncodeOptions {
  return { externals: scenarioObjects(scenario), hooks, substitute: memoryStore };
}

/** Every object of the scenario, by its path: left out of a snapshot, re-attached on decoding. */
export function scenarioObjects(scenario: Scenario): Map<object, string> {
  const out = new Map<object, string>();
  const work: [unknown, string][] = [[scenario, 'scenario']];
  for (let i = 0; i < work.length; i++) {
    const [o, path] = work[i]!;
    if (typeof o !== 'object' || o === null || out.has(o)) continue;
    out.set(o, path);
    for (const k of Object.keys(o)) work.push([(o as Fields)[k], `${path}.${k}`]);
  }
  return out;
}

/** The same paths the other way: names to objects (decode's externals). */
export function scenarioByName(scenario: Scenario): Map<string, object> {
  const out = new Map<string, object>();
  for (const [o, name] of scenarioObjects(scenario)) out.set(name, o);
  return out;
}

/** A durable store kept elsewhere (the page's IndexedDB): its decisions, in memory. */
function memoryStore(obj: object): { value: object; same: [object, object][] } | undefined {
  const s = obj as Partial<DecisionStore>;
  if (s.scope !== 'durable' || typeof s.entries !== 'function') return undefined;
  const all = s.entries();
  if (!Array.isArray(all)) throw new SnapshotError('a store that answers later: no snapshot');
  const copy = new SharedDecisionStore();
  for (const d of all) void copy.commit('*', d);
  const copies = copy.entries() as typeof all;
  if (copies.length !== all.length) throw new SnapshotError('a store copy lost decisions');
  return { value: copy, same: all.map((d, i) => [d, copies[i]!] as [object, object]) };
}
