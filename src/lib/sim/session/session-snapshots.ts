/**
 * Snapshots that outlive the page (issue #21): the session saves the latest snapshot of its run
 * (engine and guard, snapshot-engine.ts) into the run's storage — the page's IndexedDB — and a
 * reload resumes from it, re-simulating only from there to where the run was, instead of from
 * the start.
 *
 * When: after enough engine work since the last save (a snapshot costs tens of milliseconds of
 * the worker's time and a write; never on the page's thread) and when the run stops — a pause,
 * the end of a fast-forward, the run's end (`flush`). Never at a position where an action was
 * just applied: a restore replays the actions after the snapshot's position, and one there would
 * be applied twice.
 *
 * What a reload may use: a snapshot of this run's namespace, on the same timeline (its actions
 * are the reload's up to the snapshot's position), not past where the run was, off any fork, with
 * every audit row up to it in the log. One that fails to decode (another build, damage) is
 * dropped with a note: the reload re-simulates, and nothing else is lost.
 */
import type { ViewCheckpoint } from '../engine/checkpoint';
import type { RunPosition, Simulation, TimelineAction } from '../engine/engine';
import type { RunGuard } from '../checks/guard';
import { restoreEngine, snapshotEngine, type EngineSnapshot } from '../engine/snapshot-engine';
import { SnapshotError } from '../engine/snapshot';

/** Whether `e` says a snapshot cannot be made or read (snapshot.ts). */
export function isSnapshotError(e: unknown): boolean {
  return e instanceof SnapshotError;
}
import { engineRegistry } from '../engine/snapshot-registry';
import type { Scenario } from '../input/scenario';

/**
 * Clock events between saves at least (about a second and a half of engine work). A save costs
 * about 100 ms to encode plus the IndexedDB write of ~3 MiB at a busy run's 6 h: at 50,000 events
 * it took a fifth of the worker's time in live play at the highest speed (bench:profile:worker);
 * this bounds it to a few percent, and a reload re-simulates at most this much work.
 */
export const SNAPSHOT_EVERY_EVENTS = 200_000;
/** Simulated time between saves at least. */
export const SNAPSHOT_EVERY_MS = 5 * 60_000;

/** What is saved: the engine and guard, and what the session keeps beside them. */
export interface SavedSnapshot {
  snapshot: EngineSnapshot;
  /** Audit rows and frame lines written up to the snapshot. */
  counts: { auditRows: number; frames: number };
  /** The scrubber's checkpoints up to the snapshot. */
  views: ViewCheckpoint[];
  /** The engine's timeline actions at the snapshot, as canonical JSON (matched on a reload). */
  actions: string;
}

/** Where a run's latest snapshot is kept (the page's IndexedDB: ui/worker/run-snapshots.ts). */
export interface SnapshotSlot {
  /** The snapshot found when the run's storage was opened (a reload's), or null. */
  readonly saved: SavedSnapshot | null;
  /** Keep `s` as the run's latest (written in the background; the newest save wins). */
  save(s: SavedSnapshot): void;
  /** Forget the saved one (it cannot be used, or the run left its timeline). */
  drop(): void;
}

/** JSON with keys sorted: the same actions give the same text however their objects were built. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) return x;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(x).sort()) out[k] = (x as Record<string, unknown>)[k];
    return out;
  });
}

function after(a: RunPosition, p: RunPosition): boolean {
  return a.t > p.t || (a.t === p.t && a.events >= p.events);
}

/** Decides when to save the session's run, and saves it. */
export class SnapshotSaver {
  #last: RunPosition | null = null;
  /** Why this run cannot be saved (a class of the engine cannot be), or null. */
  unavailable: string | null = null;
  /** Why the last save failed (something of the moment, a call of a kind not stored), or null. */
  failed: string | null = null;

  /** Set while nothing may be saved (see {@link hold}). */
  #held = false;

  /** A new run (a load, a seek, a fork): save afresh. */
  reset(at: RunPosition | null = null): void {
    this.#last = at;
    this.#held = false;
  }

  /**
   * Save nothing more until the next {@link reset}: the run took a turn its timeline does not
   * record (stored decisions cleared), which a reload's re-simulation would not take again.
   */
  hold(): void {
    this.#held = true;
  }

  /**
   * Save `sim` into `slot` if due (`force`: the run stopped — save unless already saved here).
   * Returns true when it saved.
   */
  maybeSave(
    slot: SnapshotSlot,
    sim: Simulation,
    guard: RunGuard,
    counts: SavedSnapshot['counts'],
    views: readonly ViewCheckpoint[],
    force: boolean
  ): boolean {
    if (this.unavailable !== null || this.#held) return false;
    const at = sim.position;
    const last = this.#last;
    if (last && at.t === last.t && at.events === last.events) return false;
    if (
      !force &&
      last &&
      (at.events - last.events < SNAPSHOT_EVERY_EVENTS || at.t - last.t < SNAPSHOT_EVERY_MS)
    )
      return false;
    const newest = sim.actions.at(-1);
    if (newest && newest.t === at.t && newest.events === at.events) return false;
    let snapshot: EngineSnapshot;
    try {
      engineRegistry();
    } catch (e) {
      // A class of the engine cannot be stored at all: not for this run, then.
      if (!(e instanceof SnapshotError)) throw e;
      this.unavailable = e.message;
      return false;
    }
    try {
      snapshot = snapshotEngine(sim, guard);
    } catch (e) {
      // Something of this moment cannot be stored: try again at the next save.
      if (!(e instanceof SnapshotError)) throw e;
      this.failed = e.message;
      this.#last = at;
      return false;
    }
    this.failed = null;
    const n = views.findIndex((v) => v.t > at.t || (v.t === at.t && v.events > at.events));
    slot.save({
      snapshot,
      counts: { ...counts },
      views: n === -1 ? [...views] : views.slice(0, n),
      actions: canonicalJson(sim.actions)
    });
    this.#last = at;
    return true;
  }
}

/** The reload's timeline: where the run was and the actions it took. */
export interface ReloadTimeline {
  t: number;
  actions: readonly TimelineAction[];
  fork: unknown;
}

/**
 * Whether `saved` may stand for the run a reload re-creates at `timeline` (see the top), or why
 * not (null: it may).
 */
export function unusable(
  saved: SavedSnapshot,
  timeline: ReloadTimeline,
  logRows: number | null
): string | null {
  const at = saved?.snapshot?.meta?.at;
  const damaged =
    !at ||
    typeof at.t !== 'number' ||
    typeof at.events !== 'number' ||
    typeof saved.actions !== 'string' ||
    !Array.isArray(saved.views) ||
    typeof saved.counts?.auditRows !== 'number';
  if (damaged) return 'it is damaged';
  if (timeline.fork) return 'the run is on a fork';
  if (at.t > timeline.t) return 'it is ahead of the run';
  let mine: unknown[];
  try {
    mine = JSON.parse(saved.actions) as unknown[];
  } catch {
    return 'it is damaged';
  }
  if (!Array.isArray(mine)) return 'it is damaged';
  const theirs = timeline.actions.slice(0, mine.length);
  if (canonicalJson(theirs) !== saved.actions) return 'the run left its timeline since';
  const next = timeline.actions[mine.length];
  if (next && !after(next, at)) return 'the run left its timeline since';
  if (logRows !== null && logRows < saved.counts.auditRows)
    return 'the audit log lacks rows before it';
  return null;
}

/** The engine and guard of `saved`, quiet (no hooks): copied again, hooked, by the session. */
export function restoreSaved(
  saved: SavedSnapshot,
  scenario: Scenario,
  validate?: (frame: unknown) => string | null
): { sim: Simulation; guard: RunGuard } {
  return restoreEngine(saved.snapshot, scenario, {}, validate);
}
