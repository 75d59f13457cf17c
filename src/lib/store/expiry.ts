import { copyable } from '../machine/clone';
import { checkpointMemo } from './checkpoint-memo';

/**
 * Sweeping expired decisions on the virtual clock. Expired entries are misses anyway, but left in
 * place they pile up: a prompt mutator under a rate limit for a simulated day leaves ~173,000 of
 * them per lane. A min-heap on `expiresAt` finds the due ones without scanning the live ones.
 *
 * Entries change under the heap (re-committed with a new expiry, invalidated, cleared), so heap
 * items are hints: the owner checks on `drain` that the entry it names still expires at that time.
 */
export class ExpiryHeap<T> {
  private at: number[] = [];
  private ref: T[] = [];

  get size(): number {
    return this.at.length;
  }

  push(at: number, ref: T): void {
    const a = this.at;
    const r = this.ref;
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
    while (this.at.length > 0 && this.at[0]! <= now) {
      const at = this.at[0]!;
      const ref = this.ref[0]!;
      this.pop();
      visit(ref, at);
    }
  }

  clear(): void {
    this.at = [];
    this.ref = [];
  }

  private pop(): void {
    const a = this.at;
    const r = this.ref;
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

/**
 * Whether a heap that has collected stale hints should be rebuilt from the live entries: more than
 * four hints per live entry (plus slack) means most are for entries long replaced.
 */
export function heapNeedsRebuild(heapSize: number, live: number): boolean {
  return heapSize > 4 * live + 1024;
}

/** A reference nothing can change: a key tuple of strings and numbers (the stores' own). */
function isKey(ref: unknown): boolean {
  if (typeof ref !== 'object' || ref === null) return true;
  return Array.isArray(ref) && ref.every((x) => typeof x === 'string' || typeof x === 'number');
}

// A copy has its own items in the same heap order: the times as they are, the references deep (a
// key tuple is copied; a reference another owner also holds, once per copy). An engine
// checkpoint's copy (checkpoint-memo.ts), never run, shares the key tuples with the run instead:
// nothing changes one once pushed, and each is then held once however many checkpoints hold it.
copyable(ExpiryHeap, {
  name: 'expiry.ExpiryHeap',
  fields: {
    at: 'shallow',
    ref: {
      fresh: (h: ExpiryHeap<unknown>, m) => {
        const ref = h['ref'];
        if (checkpointMemo() && ref.every(isKey)) return ref.slice();
        return m.get(ref);
      }
    }
  },
  blank: () => new ExpiryHeap()
});
