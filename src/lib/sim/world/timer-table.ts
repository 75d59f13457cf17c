/**
 * The virtual clock's pending timers by id (clock.ts): an open-addressing table keyed by the
 * timer's sequence number, in place of a `Map<number, Entry>`.
 *
 * Why not the Map: the clock sets and deletes a timer per event — hundreds of thousands a second
 * at 1000× live speed — while a few hundred are pending. V8's ordered hash map keeps deleted
 * slots until its table fills and then allocates a new one, so that churn made a new table every
 * few hundred events, most of it surviving long enough to be promoted (the largest source of
 * promoted garbage on the 50-server benchmark). Here the slots are reused: ids grow by one, so
 * `id & mask` spreads live ids over consecutive slots and a deleted slot (a tombstone) is
 * usually reused or swept at the next rebuild, which happens in place of a growth.
 *
 * The simulated servers keep their pending requests and tasks in such tables too (servers/base.ts),
 * for the same reason: a server lives as long as the run, and a Map of its that empties and
 * refills per request allocates new tables. Keys are positive integers.
 */
import { copyable } from '../../machine/clone';

/** A slot never used. Ids start at 1. */
const EMPTY = 0;
/** A slot whose timer went: probing goes on past it. */
const GONE = -1;

export class TimerTable<T> {
  private keys: Float64Array;
  private values: (T | undefined)[];
  private mask: number;
  /** Live entries, and slots used (live + tombstones). */
  private live = 0;
  private used = 0;
  /** The arrays the last rebuild left (see `rebuild`). */
  private spareKeys: Float64Array | null = null;
  private spareValues: (T | undefined)[] | null = null;

  constructor(capacity = 64) {
    this.keys = new Float64Array(capacity);
    this.values = new Array<T | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.live;
  }

  get(id: number): T | undefined {
    const keys = this.keys;
    const mask = this.mask;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === id) return this.values[i];
      if (k === EMPTY) return undefined;
    }
  }

  /** Add `id` (not present: the clock's ids are new each time). */
  set(id: number, value: T): void {
    if ((this.used + 1) * 2 > this.keys.length) this.rebuild();
    const keys = this.keys;
    const mask = this.mask;
    let i = id & mask;
    for (;;) {
      const k = keys[i]!;
      if (k === EMPTY || k === GONE) break;
      i = (i + 1) & mask;
    }
    if (keys[i] === EMPTY) this.used++;
    keys[i] = id;
    this.values[i] = value;
    this.live++;
  }

  /**
   * Set `id` to `value`, replacing the value it has if present (a server's request ids: a new
   * connection numbers from 1 again). {@link set} is for ids known to be new (the clock's).
   */
  put(id: number, value: T): void {
    const keys = this.keys;
    const mask = this.mask;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === id) {
        this.values[i] = value;
        return;
      }
      if (k === EMPTY) break;
    }
    this.set(id, value);
  }

  delete(id: number): boolean {
    const keys = this.keys;
    const mask = this.mask;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === id) {
        keys[i] = GONE;
        this.values[i] = undefined;
        this.live--;
        return true;
      }
      if (k === EMPTY) return false;
    }
  }

  /** Every live entry, in slot order. */
  forEach(fn: (value: T, id: number) => void): void {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) if (keys[i]! > 0) fn(this.values[i]!, keys[i]!);
  }

  /**
   * The table without tombstones, twice as large when more than an eighth of it is live (room
   * for many sets between rebuilds: each walks the whole table). The arrays it leaves are kept
   * for the next rebuild of the same size: a rebuild allocates nothing unless the table grows.
   */
  private rebuild(): void {
    const keys = this.keys;
    const values = this.values;
    const capacity = this.live * 8 > keys.length ? keys.length * 2 : keys.length;
    if (this.spareKeys !== null && this.spareKeys.length === capacity) {
      this.keys = this.spareKeys;
      this.values = this.spareValues!;
      this.keys.fill(EMPTY);
    } else {
      this.keys = new Float64Array(capacity);
      this.values = new Array<T | undefined>(capacity).fill(undefined);
    }
    this.mask = capacity - 1;
    this.live = 0;
    this.used = 0;
    for (let i = 0; i < keys.length; i++)
      if (keys[i]! > 0) {
        this.set(keys[i]!, values[i]!);
        values[i] = undefined;
      }
    this.spareKeys = keys;
    this.spareValues = values;
  }
}

// A copy has its own slots (the keys copied, the entries through the copy's map, so they are the
// copied queue's); what a rebuild left for the next is not copied.
copyable(TimerTable, {
  name: 'clock.TimerTable',
  fields: {
    keys: { fresh: (t: TimerTable<unknown>) => t['keys'].slice() },
    spareKeys: { fresh: () => null },
    spareValues: { fresh: () => null }
  },
  blank: () => new TimerTable(1)
});
