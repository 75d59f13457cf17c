/**
 * Engine checkpoints (issue #10): copies of the running engine (clone.ts), taken as the run
 * advances, so that going back to time t copies the last checkpoint before t and runs on from it —
 * a fraction of a second — instead of re-simulating the run from its start (checkpoint.ts).
 *
 * A checkpoint is never run itself: restoring copies it again, so it serves any number of seeks.
 * It is taken every {@link EngineCheckpoints.everyEvents} clock events (the engine's work, not
 * virtual time: a storm's hour costs far more than a quiet one), at most {@link MAX_ENGINE_CHECKPOINTS}
 * of them; past that every other one goes and the spacing doubles, so a long run keeps an even
 * cover of its whole length within a bounded memory (about 1–1.5 MiB each for the retry storm).
 *
 * Checkpoints belong to one timeline. A change (an edit, a restart, an answer) at position p
 * starts a new branch from p: the checkpoints after p were of the abandoned one and go.
 */
import { NotCloneable } from '../machine/clone';
import type { Simulation } from './engine';
import type { RunPosition } from './engine-types';
import type { RunGuard } from './guard';

/** Clock events between checkpoints at first (about 0.3 s of re-simulation at most). */
export const CHECKPOINT_EVERY_EVENTS = 25_000;
/** Checkpoints kept at most (the spacing doubles past it). */
export const MAX_ENGINE_CHECKPOINTS = 48;

export interface EngineCheckpoint {
  at: RunPosition;
  /** A copy of the engine at `at`, with no hooks; copied again to restore, never run. */
  sim: Simulation;
  /** The run's invariants as they stood at `at`. */
  guard: RunGuard;
  /** Audit rows and frame lines written up to `at`. */
  counts: { auditRows: number; frames: number };
}

export class EngineCheckpoints {
  #list: EngineCheckpoint[] = [];
  /** Set when the run cannot be copied (XState actors): seeks then re-simulate. */
  #unavailable: string | null = null;
  everyEvents: number;

  constructor(everyEvents = CHECKPOINT_EVERY_EVENTS) {
    this.everyEvents = everyEvents;
  }

  /** Why the run's engine cannot be copied, or null. */
  get unavailable(): string | null {
    return this.#unavailable;
  }

  get list(): readonly EngineCheckpoint[] {
    return this.#list;
  }

  /**
   * Take a checkpoint of `sim` when it has run `everyEvents` events since the last one. Call it
   * between events, after an advance (never right after an action: the checkpoint's position
   * must have none applied at it yet, so a restore replays exactly those after it).
   */
  maybeTake(sim: Simulation, guard: RunGuard, counts: EngineCheckpoint['counts']): void {
    if (this.#unavailable !== null) return;
    const last = this.#list.at(-1);
    const since = sim.events - (last?.at.events ?? 0);
    if (since < this.everyEvents) return;
    if (last && (sim.now < last.at.t || sim.events <= last.at.events)) return;
    const at = sim.position;
    const newest = sim.actions.at(-1);
    if (newest && newest.t === at.t && newest.events === at.events) return;
    try {
      this.#list.push({ at, sim: sim.clone({}), guard: guard.clone(), counts: { ...counts } });
    } catch (e) {
      if (!(e instanceof NotCloneable)) throw e;
      this.#unavailable = e.message;
      this.#list = [];
      return;
    }
    if (this.#list.length > MAX_ENGINE_CHECKPOINTS) {
      this.#list = this.#list.filter((_, i) => i % 2 === 1);
      this.everyEvents *= 2;
    }
  }

  /** Events `sim` may run before the next checkpoint falls due (at least 1). */
  room(sim: Simulation): number {
    if (this.#unavailable !== null) return Infinity;
    return Math.max(1, this.everyEvents - (sim.events - (this.#list.at(-1)?.at.events ?? 0)));
  }

  /**
   * The last checkpoint before virtual time `t`, or null. Strictly before: one taken at `t` itself
   * may have run events there that a run brought to `t` by re-simulation leaves due (events a
   * change made at that very instant scheduled for it), and the two must be the same run.
   */
  at(t: number): EngineCheckpoint | null {
    let found: EngineCheckpoint | null = null;
    for (const c of this.#list) {
      if (c.at.t >= t) break;
      found = c;
    }
    return found;
  }

  /** A new branch starts at `p`: the checkpoints after it were the old branch's. */
  dropAfter(p: RunPosition): void {
    this.#list = this.#list.filter(
      (c) => c.at.t < p.t || (c.at.t === p.t && c.at.events <= p.events)
    );
  }

  /** Forget them all (a new run, a fork). */
  clear(everyEvents = CHECKPOINT_EVERY_EVENTS): void {
    this.#list = [];
    this.#unavailable = null;
    this.everyEvents = everyEvents;
  }
}
