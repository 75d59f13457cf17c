/**
 * The engine's snapshot registry (snapshot.ts): every class a running engine and its invariant
 * guard hold, by the stable name its copy rules give it (machine/clone.ts `copyable`: one
 * registration serves the copier and the snapshots), with what each needs beyond its fields —
 * here, beside the classes rather than in them.
 *
 * - Closures an engine makes over its own objects (the clock's dispatcher, a lane's store tap, a
 *   host's rate-card lookup; in builds that have them, the consent desk's listener and a provider's callback
 *   source) are dropped and made again over the decoded objects, as the classes' constructors
 *   make them — only where the original had them.
 * - The run's hooks (its options' functions: the page's sinks, the guard's checks) are stored by
 *   name and the new run's attached instead.
 * - The scenario and everything in it are left out and re-attached from the run's inputs; the
 *   flow's transition table is a constant (the states a request is in point into it).
 * - A durable store the page keeps (IndexedDB) is stored as its decisions in memory: a run
 *   restored from a snapshot is then given the page's store back, as a reload's re-simulation is
 *   (session.ts).
 *
 * A class is named by its own registration, never by where a run happens to meet it: the same
 * name in every run and every scenario, and none missing from a run that meets a class late.
 * A snapshot of a run holding an object whose class did not register is refused (the caller
 * re-simulates), naming the class and where it was; so is one its copy rules refuse, for their
 * reason (requests run as XState actors, a timer set as a callback).
 */
import { ConsentDesk } from '../actors/dialogs';
import { SimProvider } from '../actors/provider';
import { copyableClasses, refusalOf, type CopyableClass } from '../../machine/clone';
import type { ConsentInput, ProviderInput } from '../../machine/authorize/types';
import { VirtualClock } from '../world/clock';
import { ClientHost, tableFor } from '../../client/host';
import type { DecisionStore } from '../../store/decision-store';
import { SharedDecisionStore } from '../../store/shared-store';
import type { LaneId, Scenario } from '../input/scenario';
import type { SimEvent } from '../world/events';
import { Simulation, LaneRuntime, type SimulationOptions } from './engine';
import { step } from './step';
import { TappedStore, type StoreObserver } from './store-tap';
import { SnapshotError, SnapshotRegistry, type ClassRules, type EncodeOptions } from './snapshot';

/** What the revivers are handed: the restored run's options (its hooks). */
export interface ReviveContext {
  opts: SimulationOptions;
}

type Fields = Record<string, unknown>;

/** A class's snapshot rules, typed by the class. */
function rules<T extends object>(
  cls: abstract new (...args: never[]) => T,
  r: ClassRules<T>
): [CopyableClass, ClassRules] {
  return [cls, r as unknown as ClassRules];
}

/** What some classes need beyond their fields (the rest need nothing). */
const RULES = new Map<CopyableClass, ClassRules>([
  rules(Simulation, {
    drop: ['opts'],
    revive: (sim, ctx, had) => {
      (sim as unknown as { opts: SimulationOptions }).opts = (ctx as ReviveContext).opts;
      // The closures a new engine makes over itself, where this build's engine has them.
      if (had(sim.clock, 'dispatch')) sim.clock.dispatch = (e: SimEvent) => step(sim, e);
      if (had(sim.consent, 'asked'))
        (sim.consent as unknown as Fields).asked = (lane: LaneId, input: ConsentInput) =>
          sim.lanes[lane].asked(input);
    }
  }),
  rules(ConsentDesk, { drop: ['asked'] }),
  // The heap's keys are derived from its entries: not saved, made again.
  rules(VirtualClock, { drop: ['dispatch', 'keyAt', 'keySeq'], revive: (c) => c.rekey() }),
  rules(LaneRuntime, {
    revive: (lane, ctx, had) => {
      const observe = (ctx as ReviveContext).opts.onStore;
      const s = lane.host.store;
      if (s instanceof TappedStore && had(s, 'observe'))
        (s as unknown as { observe: StoreObserver }).observe = (e) => observe!(lane.id, e);
    }
  }),
  rules(SimProvider, {
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
  }),
  // Its rate-card lookup is a closure over it, made on first use (as its copy drops it); its
  // steps are its methods, and a request's run calls them on its host (fast.ts `steps`).
  rules(ClientHost, { drop: ['_card'] }),
  rules(TappedStore, {
    drop: ['observe', 'status'],
    // Its `status` is a closure over the store it wraps (made by its constructor); its
    // observer is the lane's, re-made by the lane (above).
    make: (field) => new TappedStore(field('inner') as DecisionStore, undefined as never)
  })
]);

let registry: SnapshotRegistry | null = null;
/** How many registered classes `registry` holds (a module loaded later adds its own). */
let known = 0;

/**
 * The engine's registry: every class registered with `copyable`, by its name, with its rules
 * above; and the flow's transition table as constants. Made on first use and extended when more
 * classes have registered since. Throws {@link SnapshotError} when a class cannot be snapshotted
 * (one with `#private` state).
 */
export function engineRegistry(): SnapshotRegistry {
  const classes = copyableClasses();
  if (registry && known === classes.size) return registry;
  for (const cls of RULES.keys())
    if (![...classes.values()].includes(cls))
      throw new Error(`snapshot rules for class ${cls.name}, which has no copy rules (copyable)`);
  const r = registry ?? new SnapshotRegistry().constantGraph('table', tableFor());
  // What the copier refuses (an XState actor's timer, a request's run mid-step), a snapshot does.
  for (const [name, cls] of classes)
    if (!r.entryNamed(name)) r.add(name, cls, { ...RULES.get(cls), refuse: refusalOf(cls) });
  registry = r;
  known = classes.size;
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
