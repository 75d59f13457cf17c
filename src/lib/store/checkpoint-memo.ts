/**
 * Engine checkpoints in a compact form (issue #21: a day's checkpoints of the retry storm held
 * 146 MiB, over half of it copies of the decision stores and the presentation histories).
 *
 * A checkpoint is an engine copy that is never run: restoring copies it again (engine-checkpoints.ts).
 * So what it holds can be shared with the checkpoints before it wherever it did not change, and
 * need not have the shape the hot paths want: between two checkpoints of the storm, 97 % of the
 * stored decisions and of the presentation histories are as they were. While a checkpoint is
 * being copied ({@link copyAsCheckpoint}), the classes that hold those parts copy them compact — a
 * flat list instead of maps, each decision or history a copy made once and reused by every later
 * checkpoint in which it is unchanged ({@link CheckpointMemo}) — and a copy of a compact part
 * (a restore) rebuilds the maps. Any other copy is made as before.
 *
 * The memo is the checkpoints' (engine-checkpoints.ts holds one and forgets it with them): it maps
 * each live value (a stored decision, a presentation's times) to its copy in the last checkpoint
 * that took it, compared by value before it is reused, so nothing relies on knowing when a live
 * value changes. Weak: a value the run dropped takes its entry with it.
 */

/** Copies of live values, reused by later checkpoints while their values are the same. */
export class CheckpointMemo {
  readonly #copies = new WeakMap<object, object>();
  /** Copies made (not reused) while taking the current checkpoint, and their estimated bytes. */
  made = 0;
  madeBytes = 0;

  /**
   * The checkpoint's copy of `live`: the last one made, when `same` says it still holds `live`'s
   * value, else a new one from `copy` (priced at `bytes`), remembered for the next checkpoint.
   */
  reuse<T extends object>(
    live: T,
    same: (copy: T, live: T) => boolean,
    copy: (live: T) => T,
    bytes: number
  ): T {
    const known = this.#copies.get(live) as T | undefined;
    if (known !== undefined && same(known, live)) return known;
    const c = copy(live);
    this.#copies.set(live, c);
    this.made++;
    this.madeBytes += bytes;
    return c;
  }
}

let current: CheckpointMemo | null = null;

/**
 * Make an engine copy that will only ever be copied again (a checkpoint): `copy` runs with the
 * compact copies on, reusing `memo`'s. Synchronous, so no other copy can start meanwhile.
 */
export function copyAsCheckpoint<T>(memo: CheckpointMemo, copy: () => T): T {
  const outer = current;
  current = memo;
  try {
    return copy();
  } finally {
    current = outer;
  }
}

/** The memo of the checkpoint being copied, or null when this copy is not one. */
export function checkpointMemo(): CheckpointMemo | null {
  return current;
}

/** Numbers `a` and `b` alike (Object.is: a NaN is itself, 0 is not −0). */
export function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
