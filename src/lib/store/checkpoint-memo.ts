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
 * value changes. Weak: a value the run dropped takes its entry with it. One exception, for
 * speed: a list of a store's decisions ({@link CheckpointMemo.listed}) compares a decision found
 * in its place only by the fields the program changes in place; every test checks that against
 * the full comparison ({@link checkListedCopies}).
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
  bytes: (live: T) => number;
}

/** A section of the list a checkpoint held: `live[from..to)`, copied to `copies[from..to)`. */
interface Section {
  readonly live: readonly object[];
  readonly copies: readonly object[];
  readonly from: number;
  readonly to: number;
}

/**
 * How far past where a value was expected the last list is searched for it, before the memo is
 * asked: deleted values are skipped over there; a value moved or new is not looked for further.
 */
const LOOK_AHEAD = 16;

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
   * section ({@link ListedCopies}): each value's copy found where the last checkpoint's list had
   * it, compared by the fields changed in place alone, instead of through {@link reuse}. `size`:
   * how many values it will hold at most. Why: at 36,000 decisions, the lookup, the full
   * comparison and the registration of each took three quarters of a checkpoint's copy in live
   * play (scripts/bench-session, two hours in), for the 97 % of them unchanged.
   */
  listed<T extends object>(owner: object, rules: ListRules<T>, size: number): ListedCopies<T> {
    const next = new Map<unknown, Section>();
    const prev = this.#lists.get(owner);
    this.#lists.set(owner, next);
    return new ListedCopies(this, prev, next, rules, size);
  }
}

/**
 * One owner's list being copied for a checkpoint ({@link CheckpointMemo.listed}): `section` opens
 * each section, `copy` gives each value's copy in order, `done` closes the list. A value found in
 * its section of the last list — the same object, where it is expected: a section is a Map's
 * values in order, so the ones still there come in the order they came before, the deleted ones
 * missing and new ones after — reuses that list's copy while the fields changed in place are the
 * same. Any other value (new, replaced, moved, changed) goes through {@link CheckpointMemo.reuse}.
 * Either way the copy is the memo's for that value, so a request in flight that holds it gets
 * the same one (its `reuse`).
 */
export class ListedCopies<T extends object> {
  readonly #memo: CheckpointMemo;
  readonly #prev: Map<unknown, Section> | undefined;
  readonly #next: Map<unknown, Section>;
  readonly #rules: ListRules<T>;
  /** This list's values and their copies, section after section (kept for the next list). */
  readonly #live: T[];
  readonly #copies: T[];
  #n = 0;
  /** The open section: its key, where it starts, and the last list's (none: no prior). */
  #key: unknown = undefined;
  #from = -1;
  #was: readonly object[] | undefined = undefined;
  #wasCopies: readonly object[] = [];
  /** Where in the last list's section the next value still there is expected, and its end. */
  #p = 0;
  #end = 0;

  constructor(
    memo: CheckpointMemo,
    prev: Map<unknown, Section> | undefined,
    next: Map<unknown, Section>,
    rules: ListRules<T>,
    size: number
  ) {
    this.#memo = memo;
    this.#prev = prev;
    this.#next = next;
    this.#rules = rules;
    // Sized, then filled: pushed, lists of thousands grew by copies.
    this.#live = new Array<T>(size);
    this.#copies = new Array<T>(size);
  }

  /** Open the section `key` (unique in the owner: its map, or its name); closes the one open. */
  section(key: unknown): void {
    this.#close();
    this.#key = key;
    this.#from = this.#n;
    const prior = this.#prev?.get(key);
    this.#was = prior?.live;
    this.#wasCopies = prior?.copies ?? [];
    this.#p = prior?.from ?? 0;
    this.#end = prior?.to ?? 0;
  }

  /** The checkpoint's copy of `d`, the open section's next value. */
  copy(d: T): T {
    const was = this.#was;
    let c: T | undefined;
    let q = this.#p;
    const end = this.#end;
    const near = Math.min(end, q + LOOK_AHEAD);
    if (was !== undefined) {
      while (q < near && was[q] !== d) q++;
      if (q < near) {
        this.#p = q + 1;
        const known = this.#wasCopies[q] as T;
        if (this.#rules.sameInPlace(known, d)) {
          if (checking && !this.#rules.same(known, d))
            throw new Error(
              'a checkpoint reused a copy of a value changed in place in a field its sameInPlace does not compare'
            );
          c = known;
        }
      }
    }
    if (c === undefined) {
      const memo = this.#memo;
      const made = memo.made;
      const { same, copy, bytes } = this.#rules;
      c = memo.reuse(d, same, copy, bytes(d));
      // Unchanged, and not where expected: a value still there past more deleted ones than the
      // look-ahead skips. Found further on, the next value is expected after it.
      if (was !== undefined && q >= near && memo.made === made) {
        let r = near;
        while (r < end && was[r] !== d) r++;
        if (r < end) this.#p = r + 1;
      }
    }
    this.#live[this.#n] = d;
    this.#copies[this.#n++] = c;
    return c;
  }

  /**
   * Close the list (what the next checkpoint finds its values in) and return its copies in order:
   * the list the checkpoint holds, never to be changed.
   */
  done(): readonly T[] {
    this.#close();
    this.#live.length = this.#copies.length = this.#n;
    return this.#copies;
  }

  #close(): void {
    if (this.#from < 0) return;
    this.#next.set(this.#key, {
      live: this.#live,
      copies: this.#copies,
      from: this.#from,
      to: this.#n
    });
    this.#from = -1;
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
