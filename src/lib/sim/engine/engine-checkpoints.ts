/**
 * Engine checkpoints (issue #10): copies of the running engine (clone.ts), taken as the run
 * advances, so that going back to time t copies the last checkpoint before t and runs on from it —
 * a fraction of a second — instead of re-simulating the run from its start (checkpoint.ts).
 *
 * A checkpoint is never run itself: restoring copies it again, so it serves any number of seeks.
 * It is taken every {@link EngineCheckpoints.everyEvents} clock events (the engine's work, not
 * virtual time: a storm's hour costs far more than a quiet one), at most {@link MAX_ENGINE_CHECKPOINTS}
 * of them and at most {@link COPY_BUDGET_BYTES} of them by their estimated size (engine-size.ts);
 * past either every other one goes and the spacing doubles, so a long run keeps an even cover of
 * its whole length within a bounded memory. The size matters as much as the count: a copy grows
 * with the run (2 MiB at 2 h of the retry storm, 6 MiB at a day, about 9 MiB at three), and 48 of
 * a week's copies were most of the 2.7 GB a simulated week took before the tab crashed (issue #19).
 * Since issue #21 a checkpoint is a compact copy (store/checkpoint-memo.ts): what did not change
 * since the checkpoint before — most stored decisions, presentation histories, store lifetimes
 * and the loop guarantee's presentation times — is shared with it, so a day of the storm's 31 checkpoints hold 30–41 MiB, not 146.
 *
 * Checkpoints belong to one timeline. A change (an edit, a restart, an answer) at position p
 * starts a new branch from p: the checkpoints after p were of the abandoned one and go.
 */
import { NotCloneable } from '../../machine/clone';
import { copyEngine, type Simulation } from './engine';
import type { RunPosition } from './engine-types';
import { copyGuard, type RunGuard } from '../checks/guard';
import { estimateCopyBytes } from './engine-size';
import { CheckpointMemo, copyAsCheckpoint } from '../../store/checkpoint-memo';

/** Clock events between checkpoints at first (about 0.3 s of re-simulation at most). */
export const CHECKPOINT_EVERY_EVENTS = 25_000;
/** Checkpoints kept at most (the spacing doubles past it). */
export const MAX_ENGINE_CHECKPOINTS = 48;
/** Estimated bytes all checkpoints may hold together (the spacing doubles past it). */
export const COPY_BUDGET_BYTES = 256 * 2 ** 20;

export interface EngineCheckpointOptions {
  /** Clock events between checkpoints at first. */
  everyEvents?: number;
  /** Estimated bytes all checkpoints may hold (the tests force a small one). */
  budgetBytes?: number;
}

/** How far a long run has thinned its checkpoints, for the page to say (null: not at all). */
export interface CheckpointThinning {
  /** Checkpoints kept. */
  kept: number;
  /** Their estimated bytes together, and the budget. */
  bytes: number;
  budgetBytes: number;
  /** The virtual time they cover, first to last, and their mean spacing there (ms). */
  from: number;
  to: number;
  spacingMs: number;
}

export interface EngineCheckpoint {
  at: RunPosition;
  /** A copy of the engine at `at`, with no hooks; copied again to restore, never run. */
  sim: Simulation;
  /** The run's invariants as they stood at `at`. */
  guard: RunGuard;
  /** Audit rows and frame lines written up to `at`. */
  counts: { auditRows: number; frames: number };
  /** Its estimated size in memory (engine-size.ts). */
  bytes: number;
  /**
   * Of those, the copies it made afresh (checkpoint-memo.ts), which later checkpoints may share:
   * with those of the checkpoints before it that were dropped. None when not a compact copy.
   */
  made?: number;
}

export class EngineCheckpoints {
  #list: EngineCheckpoint[] = [];
  /** Set when the run cannot be copied (XState actors): seeks then re-simulate. */
  #unavailable: string | null = null;
  everyEvents: number;
  readonly #firstEvery: number;
  budgetBytes: number;
  #bytes = 0;
  /** Times the spacing doubled since the last clear. */
  #thinned = 0;
  /** The copies the checkpoints share (checkpoint-memo.ts): forgotten with them. */
  #memo = new CheckpointMemo();

  constructor(opts: EngineCheckpointOptions | number = {}) {
    const o = typeof opts === 'number' ? { everyEvents: opts } : opts;
    this.#firstEvery = o.everyEvents ?? CHECKPOINT_EVERY_EVENTS;
    this.everyEvents = this.#firstEvery;
    this.budgetBytes = o.budgetBytes ?? COPY_BUDGET_BYTES;
  }

  /** Estimated bytes the checkpoints hold together. */
  get bytes(): number {
    return this.#bytes;
  }

  /** How far they were thinned to stay in their budget and count, or null when never. */
  get thinning(): CheckpointThinning | null {
    const list = this.#list;
    if (this.#thinned === 0 || list.length === 0) return null;
    const from = list[0]!.at.t;
    const to = list.at(-1)!.at.t;
    return {
      kept: list.length,
      bytes: this.#bytes,
      budgetBytes: this.budgetBytes,
      from,
      to,
      spacingMs: list.length > 1 ? (to - from) / (list.length - 1) : 0
    };
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
      // The lists, priced before the copy; the copies it makes afresh, as the memo makes them.
      const memo = this.#memo;
      const made = memo.madeBytes;
      const listed = estimateCopyBytes(sim, guard);
      const copy = copyAsCheckpoint(memo, () => ({
        sim: copyEngine(sim, {}),
        guard: copyGuard(guard)
      }));
      const fresh = memo.madeBytes - made;
      this.#list.push({ at, ...copy, counts: { ...counts }, bytes: listed + fresh, made: fresh });
      this.#bytes += listed + fresh;
    } catch (e) {
      if (!(e instanceof NotCloneable)) throw e;
      this.#unavailable = e.message;
      this.#set([]);
      return;
    }
    // Keep every other one (the newest stays) until within both bounds; one is always kept.
    while (
      this.#list.length > 1 &&
      (this.#list.length > MAX_ENGINE_CHECKPOINTS || this.#bytes > this.budgetBytes)
    ) {
      const odd = this.#list.length % 2 === 0 ? 1 : 0;
      // The copies a dropped checkpoint made afresh may be the next one's too: they go on being
      // counted there (an upper bound: the next one shares some of them at most).
      const list = this.#list;
      for (let i = 0; i + 1 < list.length; i++)
        if (i % 2 !== odd) {
          const made = list[i]!.made ?? 0;
          list[i + 1]!.bytes += made;
          list[i + 1]!.made = (list[i + 1]!.made ?? 0) + made;
        }
      this.#set(list.filter((_, i) => i % 2 === odd));
      this.everyEvents *= 2;
      this.#thinned++;
    }
  }

  #set(list: EngineCheckpoint[]): void {
    this.#list = list;
    this.#bytes = list.reduce((n, c) => n + c.bytes, 0);
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
    this.#set(
      this.#list.filter((c) => c.at.t < p.t || (c.at.t === p.t && c.at.events <= p.events))
    );
  }

  /** Forget them all (a new run, a fork). */
  clear(): void {
    this.#set([]);
    this.#memo = new CheckpointMemo();
    this.#unavailable = null;
    this.everyEvents = this.#firstEvery;
    this.#thinned = 0;
  }
}
