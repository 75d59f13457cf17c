/**
 * The worker session's engine wiring (session.ts): what a loaded run is — enough to re-create it
 * (issue #10) — and a new engine for it with the run's own observers attached: the invariant
 * guard, the checkpoint recorder and the breakpoint watcher, which see every engine from its
 * creation (a re-simulation included), and the page's sinks, which the session quiets while it
 * re-simulates.
 */
import type { AuthOutput, IncomingRequest } from '../../machine/authorize';
import type { AuditRecord, Frame } from '../../machine/types';
import { BreakpointWatcher, type BreakCondition } from '../timeline/breakpoints';
import { CheckpointRecorder, type ViewCheckpoint } from '../engine/checkpoint';
// The SDK's frame schemas, loaded on first use with the parsers (the worker awaits them).
import { parsers } from '../input/parsers';
import { copyEngine, type Simulation, type SimulationOptions } from '../engine/engine';
import type { EngineCheckpoint } from '../engine/engine-checkpoints';
import { copyGuard, RunGuard } from '../checks/guard';
import type { LaneId, Scenario } from '../input/scenario';
import type { Make, RunFork } from '../timeline/session-timeline';
import type { RunStorage } from './session-view';
import type { TraceEvent } from '../input/trace';

/** Checkpoints a run keeps at most (about 1.6 KiB each; see scripts/bench-seek.ts). */
export const MAX_CHECKPOINTS = 2_000;

/** What the run was loaded from, so it can be re-simulated. */
export interface LoadedRun {
  scenario: Scenario;
  seed?: number;
  trace?: TraceEvent[];
  /** Who answered dialogs at the start (later changes are timeline actions). */
  human: LaneId[];
  /**
   * The fork this run is on: made from the `base` actions (on `parent`, a fork of a fork), its
   * own later actions being the engine's from index `from` on. Re-creating the run is then
   * `createFork` and those actions.
   */
  fork: RunFork | null;
}

/**
 * Builds an engine (from the start, by replay, by fork) with the options and maker it is given,
 * or (`copy`) as a copy of an engine checkpoint, observed by the run's guard and recorder.
 */
export type Create = (
  opts: SimulationOptions,
  make: Make,
  copy: (checkpoint: Simulation) => Simulation
) => Simulation;

/** An engine checkpoint to restore from, and the view checkpoints of the timeline so far. */
export interface RestoreFrom {
  checkpoint: EngineCheckpoint;
  views: readonly ViewCheckpoint[];
}

/** Where a run's audit records and finished requests go (the session drops them when quiet). */
export interface Sinks {
  /** `row`: the record's place in the run's log (0 for the first row of the run). */
  audit(rec: AuditRecord, row: number): void;
  decision(lane: LaneId, request: IncomingRequest, out: AuthOutput): void;
}

/**
 * The guard's frame check. Made here, not in `wireEngine`: a closure made there would hold that
 * call's variables — the run's guard and through it its engine — and every engine checkpoint's
 * guard shares its check, so each engine the session replaced (a seek back restores a copy) would
 * stay in memory as long as a checkpoint taken under it (19 MiB over a day of the retry storm).
 */
const frameProblem = (frame: Frame): string | null => parsers().sdkFrameProblem(frame);

export interface WiredEngine {
  sim: Simulation;
  guard: RunGuard;
  recorder: CheckpointRecorder;
  watcher: BreakpointWatcher;
}

/**
 * A new engine for `run`, made by `create`, with its guard, checkpoint recorder and breakpoint
 * watcher (reading `conditions`, which outlive engines), durable decisions in `storage`, and
 * audit records and decisions handed to `sinks`.
 */
export function wireEngine(
  run: LoadedRun,
  storage: RunStorage | null,
  conditions: BreakCondition[],
  sinks: Sinks,
  create: Create,
  from?: RestoreFrom
): WiredEngine {
  // From a checkpoint, the run's invariants and view checkpoints go on from where they stood.
  const guard = from
    ? copyGuard(from.checkpoint.guard)
    : new RunGuard(run.scenario, { validate: frameProblem });
  // At most about 2,000 checkpoints a run (a few MB), however fine its sampling.
  const recorder = new CheckpointRecorder(Math.floor(run.scenario.durationMs / MAX_CHECKPOINTS));
  if (from) recorder.resumeAt(from.views, from.checkpoint.at, from.checkpoint.counts);
  const watcher = new BreakpointWatcher(conditions, guard);
  const opts = watcher.options(
    recorder.options({
      ...(run.seed !== undefined ? { seed: run.seed } : {}),
      ...(run.trace ? { trace: run.trace } : {}),
      ...(storage ? { durable: storage.durable } : {}),
      // The recorder has counted this record already (its hooks wrap these).
      onAudit: (rec) => sinks.audit(rec, recorder.counts().auditRows - 1),
      onDecision: (lane, request, out) => sinks.decision(lane, request, out),
      ...(run.human.length ? { human: run.human } : {})
    })
  );
  // The recorder sees the engine from its creation, so a re-simulation (a seek back, a fork)
  // records the checkpoints before t again: the scrubber's stops stay one timeline.
  const sim = create(
    opts,
    (s, o) => recorder.attach(guard.simulate(s, o)),
    (checkpoint) => recorder.attach(guard.attach(copyEngine(checkpoint, guard.options(opts))))
  );
  recorder.attach(sim);
  watcher.attach(sim);
  return { sim, guard, recorder, watcher };
}
