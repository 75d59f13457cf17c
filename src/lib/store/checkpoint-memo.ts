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

/** How a list's values are copied and compared ({@link CheckpointMemo.listed}). */
export interface ListRules<T extends object> {
  /** Whether `copy` still holds `live`'s value: every field. */
  same: (copy: T, live: T) => boolean;
  /**
   * The same, for a value known to be the one the copy was made of: only the fields the program
   * changes in place (a stored decision's `represented`). The rest are checked against `same`
   * where checks are on ({@link checkListedCopies}).
   */
  sameInPlace: (copy: T, live: T) => boolean;
  copy: (live: T) => T;
  /** Estimated bytes of one copy. */
  bytes: number;
}

/** A section of a list a checkpoint held: `live[from..to)`, copied to `copies[at..]`. */
interface Section {
  readonly live: readonly object[];
  readonly from: number;
  readonly to: number;
  readonly copies: readonly object[];
  readonly at: number;
}

let checking = false;

/**
 * Check every copy a list reuses by its `sameInPlace` against its full `same`, throwing when they
 * disagree (a field changed in place that `sameInPlace` does not look at): on in the tests
 * (src/checkpoint-setup.ts), off in the playground, where the check would cost what the list
 * saves.
 */
export function checkListedCopies(on: boolean): void {
  checking = on;
}

/** Copies of live values, reused by later checkpoints while their values are the same. */
export class CheckpointMemo {
  readonly #copies = new WeakMap<object, object>();
  /** Each owner's sections as the last checkpoint listed them (see {@link listed}). */
  readonly #lists = new WeakMap<object, Map<unknown, Section>>();
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

  /**
   * A list of `owner`'s values (a store's decisions) for the checkpoint being taken, section by
   * section ({@link ListedCopies.section}): each value's copy found where the last checkpoint's
   * list had it, compared by the fields changed in place alone, instead of through {@link reuse}.
   * Why: at 36,000 decisions, the lookup, the full comparison and the registration of each took
   * three quarters of a checkpoint's copy in live play (scripts/bench-session, two hours in), for
   * the 97 % of them unchanged.
   */
  listed<T extends object>(owner: object, rules: ListRules<T>): ListedCopies<T> {
    const next = new Map<unknown, Section>();
    const prev = this.#lists.get(owner);
    this.#lists.set(owner, next);
    return new ListedCopies(this, prev, next, rules);
  }
}

/**
 * One owner's list being copied for a checkpoint ({@link CheckpointMemo.listed}). A value found
 * in its section of the last list (the same object: the sections are a Map's values, in order,
 * so the ones still there come in the order they came before, deleted ones missing and new ones
 * after) reuses that list's copy while the fields changed in place are the same; any other value
 * (new, replaced, moved, changed) goes through {@link CheckpointMemo.reuse}. Either way the copy is
 * the memo's for that value, so a request in flight that holds it gets the same one (its
 * `reuse`).
 */
export class ListedCopies<T extends object> {
  readonly #memo: CheckpointMemo;
  readonly #prev: Map<unknown, Section> | undefined;
  readonly #next: Map<unknown, Section>;
  readonly #rules: ListRules<T>;

  constructor(
    memo: CheckpointMemo,
    prev: Map<unknown, Section> | undefined,
    next: Map<unknown, Section>,
    rules: ListRules<T>
  ) {
    this.#memo = memo;
    this.#prev = prev;
    this.#next = next;
    this.#rules = rules;
  }

  /**
   * The copies of `live[from..to)`, the section `key` (a key unique in the owner: its map, or its
   * name), written into `out` from `at`; returns the index after them. `live` and `out` are kept
   * (not copied) for the next checkpoint: neither may change after.
   */
  section(
    key: unknown,
    live: readonly T[],
    from: number,
    to: number,
    out: T[],
    at: number
  ): number {
    const start = at;
    const prior = this.#prev?.get(key);
    const { same, sameInPlace, copy, bytes } = this.#rules;
    const memo = this.#memo;
    // The last list's section, walked once: `p` is where the next value still there must be.
    let p = prior ? prior.from : 0;
    const end = prior ? prior.to : 0;
    const was = prior?.live;
    for (let i = from; i < to; i++) {
      const d = live[i]!;
      let c: T | undefined;
      if (was !== undefined) {
        let q = p;
        while (q < end && was[q] !== d) q++;
        if (q < end) {
          p = q + 1;
          const known = prior!.copies[prior!.at + q - prior!.from] as T;
          if (sameInPlace(known, d)) {
            if (checking && !same(known, d))
              throw new Error(
                'a checkpoint reused a copy of a value changed in place in a field its sameInPlace does not compare'
              );
            c = known;
          }
        }
      }
      out[at++] = c ?? memo.reuse(d, same, copy, bytes);
    }
    this.#next.set(key, { live, from, to, copies: out, at: start });
    return at;
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
