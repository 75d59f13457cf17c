/**
 * A running engine and its invariant guard as a snapshot (snapshot.ts, snapshot-registry.ts),
 * and back: what a page saves so a reload resumes the run instead of re-simulating it (issue
 * #21). The restored pair continues exactly as the original would — frames, audit records,
 * metrics and guarantees (snapshot-engine.spec.ts).
 */
import type { RunGuard } from '../checks/guard';
import type { Scenario } from '../input/scenario';
import type { RunPosition, Simulation, SimulationOptions } from './engine';
import { decodeLater, encode, type Snapshot } from './snapshot';
import {
  engineEncodeOptions,
  engineRegistry,
  scenarioByName,
  type ReviveContext
} from './snapshot-registry';

/** What a saved engine says of itself beside its state. */
export interface EngineSnapshotMeta {
  /** Where the run was: a restore is there exactly. */
  at: RunPosition;
}

export type EngineSnapshot = Snapshot<EngineSnapshotMeta>;

interface Pair {
  sim: Simulation;
  guard: RunGuard;
}

/** The functions among `opts`'s members, by name (the run's hooks). */
function hooksOf(opts: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts)) if (typeof v === 'function') out[k] = v;
  return out;
}

/**
 * `sim` and its guard as a plain value (structuredClone and IndexedDB keep it). Call it between
 * events. Throws `SnapshotError` when something in the run cannot be stored (a callback where
 * data was expected): the caller keeps re-simulation then.
 */
export function snapshotEngine(sim: Simulation, guard: RunGuard): EngineSnapshot {
  const registry = engineRegistry();
  const validate = (guard.checker as unknown as { validate?: unknown }).validate;
  const hooks = { ...hooksOf(sim.opts), ...(validate ? { validate } : {}) };
  const root: Pair = { sim, guard };
  return encode(registry, root, { at: sim.position }, engineEncodeOptions(sim.scenario, hooks));
}

/**
 * The run of `snapshot` (made from a run of `scenario`), with the hooks of `opts` — wrapped by
 * the restored guard, as `RunGuard.simulate` wraps a new run's — and the guard's frame check
 * `validate`. Throws `SnapshotError` for a snapshot this build cannot read.
 */
export function restoreEngine(
  snapshot: EngineSnapshot,
  scenario: Scenario,
  opts: SimulationOptions,
  validate?: (frame: unknown) => string | null
): Pair {
  const decoded = decodeLater<Pair>(engineRegistry(), snapshot, {
    externals: scenarioByName(scenario)
  });
  const { guard } = decoded.value;
  const wrapped = guard.options(opts);
  const context: ReviveContext = { opts: wrapped };
  const pair = decoded.attach({ ...hooksOf(wrapped), ...(validate ? { validate } : {}) }, context);
  guard.attach(pair.sim);
  return pair;
}
