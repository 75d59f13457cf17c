import type { CloneMap } from '../machine/clone';

/**
 * Sweeping expired decisions on the virtual clock. Expired entries are misses anyway, but left in
 * place they pile up: a prompt mutator under a rate limit for a simulated day leaves ~173,000 of
 * them per lane. A min-heap on `expiresAt` finds the due ones without scanning the live ones.
 *
 * Entries change under the heap (re-committed with a new expiry, invalidated, cleared), so heap
 * items are hints: the owner checks on `drain` that the entry it names still expires at that time.
 */
export class ExpiryHeap<T> {
  #at: number[] = [];
  #ref: T[] = [];

  get size(): number {
    return this.#at.length;
  }

  push(at: number, ref: T): void {
    const a = this.#at;
    const r = this.#ref;
    let i = a.length;
    a.push(at);
    r.push(ref);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= at) break;
      a[i] = a[p]!;
      r[i] = r[p]!;
      i = p;
    }
    a[i] = at;
    r[i] = ref;
  }

  /** Pop every item due at `now` (at ≤ now: an entry is dead at its expiry), oldest first. */
  drain(now: number, visit: (ref: T, at: number) => void): void {
    while (this.#at.length > 0 && this.#at[0]! <= now) {
      const at = this.#at[0]!;
      const ref = this.#ref[0]!;
      this.#pop();
      visit(ref, at);
    }
  }

  clear(): void {
    this.#at = [];
    this.#ref = [];
  }

  /**
   * A copy with its own items, in the same heap order. A reference that is an array (a key tuple,
   * made for the heap alone by both stores) is copied as it is; one with a `clone` method through
   * `m.get`; another object through `m.box` (once per map, so sharing is kept); anything else (a
   * string, a number) is kept.
   */
  clone(m: CloneMap): ExpiryHeap<T> {
    const c = m.set(this, new ExpiryHeap<T>());
    c.#at = this.#at.slice();
    c.#ref = this.#ref.map((ref) => copyRef(m, ref));
    return c;
  }

  #pop(): void {
    const a = this.#at;
    const r = this.#ref;
    const lastAt = a.pop()!;
    const lastRef = r.pop()!;
    const n = a.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const c = l + 1 < n && a[l + 1]! < a[l]! ? l + 1 : l;
      if (a[c]! >= lastAt) break;
      a[i] = a[c]!;
      r[i] = r[c]!;
      i = c;
    }
    a[i] = lastAt;
    r[i] = lastRef;
  }
}

/** An object that copies itself (the map's `get` wants its copy to be of its own kind). */
interface Copyable {
  clone(m: CloneMap): Copyable;
}

function copyRef<T>(m: CloneMap, ref: T): T {
  if (typeof ref !== 'object' || ref === null) return ref;
  if (Array.isArray(ref)) return ref.slice() as T;
  if (typeof (ref as Partial<Copyable>).clone === 'function')
    return m.get(ref as unknown as Copyable) as unknown as T;
  return m.box(ref);
}

/**
 * Whether a heap that has collected stale hints should be rebuilt from the live entries: more than
 * four hints per live entry (plus slack) means most are for entries long replaced.
 */
export function heapNeedsRebuild(heapSize: number, live: number): boolean {
  return heapSize > 4 * live + 1024;
}
