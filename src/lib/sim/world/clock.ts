/**
 * The virtual clock: the simulation's only notion of time, and its event queue.
 *
 * It implements XState's `Clock` interface (`setTimeout` / `clearTimeout`), so a machine created
 * with `createActor(machine, { clock })` runs its `after:` delays — consent timeouts, provider
 * deadlines — in simulated time. Nothing here reads the wall clock: time only moves when the
 * engine asks it to, and events at the same instant run in the order they were scheduled, which
 * is what makes a run byte-for-byte reproducible.
 *
 * What it holds decides whether a run can be copied (a checkpoint: machine/clone.ts) or saved (a
 * snapshot: engine/snapshot.ts). The engine's events and the table executor's timers (the
 * simulation's default, `executor: 'table'`) are data: such a run copies and saves. A callback
 * set with `setTimeout` — XState's, under the actor executor (`executor: 'actor'`, the /single/
 * page's and the reference run of the executor equivalence test), or a test's — is a closure:
 * while one is pending the run cannot be copied nor saved, and the attempt says so (NotCloneable,
 * SnapshotError: "a timer set as a callback"), for its caller to re-simulate instead. XState needs
 * them, so they stay.
 */
import type { Driver, TimerTarget } from '../../client/driver';
import { copyable } from '../../machine/clone';
import type { SimEvent } from './events';
import { TimerTable } from './timer-table';

/**
 * A pending event: data (events.ts), made to happen by the clock's dispatcher; or a timer set as
 * data through the host's Driver (`setTimer` / `insertTimer`: the table executor's), a target
 * and its argument; or a timer set with a callback (`setTimeout`: XState's, a test's). Exactly
 * one of `event`, `target`, `fn` is set — none once cancelled (what it pointed at is not kept, nor
 * copied).
 */
class Entry {
  cancelled = false;
  constructor(
    readonly at: number,
    readonly seq: number,
    public event: SimEvent | null,
    public target: TimerTarget | null,
    public arg: unknown,
    public fn: (() => void) | null
  ) {}
}
// Events that are data name what they act on by address and are never changed once made, nor is
// a timer's argument: shared. A timer set as a callback (an XState actor's) cannot be copied nor
// saved: refused, saying so.
copyable(Entry, {
  name: 'clock.Entry',
  fields: { event: 'shared', arg: 'shared' },
  refuse: (e) =>
    e.fn
      ? "a timer set as a callback is pending (XState's setTimeout: requests run as XState actors) — only the table executor's runs, whose timers are data, can be copied"
      : null,
  blank: () => new Entry(0, 0, null, null, undefined, null)
});

/** What a clock without a world does with an event that is data: it cannot. */
function noWorld(e: SimEvent): void {
  throw new Error(`the clock has no world to run a '${e.kind}' event in (set its dispatcher)`);
}

function entry(at: number, seq: number, what: SimEvent | (() => void)): Entry {
  return typeof what === 'function'
    ? new Entry(at, seq, null, null, undefined, what)
    : new Entry(at, seq, what, null, undefined, null);
}

function timerEntry(at: number, seq: number, target: TimerTarget, arg: unknown): Entry {
  return new Entry(at, seq, null, target, arg, null);
}

export type TimerId = number;

/** A timer's place in the clock's order, taken before its entry is inserted. */
export interface Reservation {
  at: number;
  seq: number;
}

function finite(at: number): number {
  if (!Number.isFinite(at)) throw new RangeError(`a timer was set for ${at}: not a finite time`);
  return at;
}

/** The simulation's driver of the client host (client/driver.ts); the handler's is real time. */
export class VirtualClock implements Driver {
  private time: number;
  private seq = 0;
  private heap: Entry[] = [];
  /**
   * Each heap slot's (at, seq), beside `heap`: the sifts compare these, contiguous, instead of
   * loading two fields from an entry object each step — entries are all over the heap, and those
   * loads were most of runUntil's own time on the 50-server benchmark. Derived from `heap` (a
   * copy slices them, a snapshot rebuilds them: {@link rekey}).
   */
  private keyAt = new Float64Array(64);
  private keySeq = new Float64Array(64);
  private byId = new TimerTable<Entry>();
  private interrupted = false;
  /**
   * Runs every event that is data (events.ts `step` over the engine that owns this clock). A copy
   * has none until its owner sets its own.
   */
  dispatch: (e: SimEvent) => void = noWorld;

  /** @param start virtual epoch milliseconds (a run starts at its scenario's start time). */
  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  /** XState's Clock: run `fn` after `ms` of virtual time. */
  setTimeout(fn: (...args: unknown[]) => void, ms: number): TimerId {
    // Whole milliseconds: jittered delays would otherwise put fractions into every timestamp.
    return this.schedule(this.time + Math.max(0, Math.round(ms)), fn as () => void);
  }

  /** The Driver's timer as data: `target.timerFired(arg)` after `ms` (rounded as setTimeout's). */
  setTimer(ms: number, target: TimerTarget, arg: unknown): TimerId {
    const at = finite(this.time + Math.max(0, Math.round(ms)));
    const e = timerEntry(Math.max(at, this.time), ++this.seq, target, arg);
    this.byId.set(e.seq, e);
    this.push(e);
    return e.seq;
  }

  /** Make `event` happen after `ms` of virtual time (rounded as {@link setTimeout}'s delays). */
  after(ms: number, event: SimEvent): TimerId {
    return this.schedule(this.time + Math.max(0, Math.round(ms)), event);
  }

  /** XState's Clock. */
  clearTimeout(id: TimerId): void {
    const e = this.byId.get(id);
    if (e) {
      e.cancelled = true;
      e.event = e.target = e.fn = null;
      e.arg = undefined;
      this.byId.delete(id);
      // Cancelled entries wait in the heap until they reach its top: a request's timeout, a
      // minute away and cancelled in a few seconds, made nine in ten of the heap's entries dead
      // (the 50-server benchmark), and every push and pop walked a heap ten times too deep.
      // Past twice the live ones (plus slack) they go at once: amortised O(1) per cancel.
      if (this.heap.length > 2 * this.byId.size + 64) this.compact();
    }
  }

  /**
   * The heap without its cancelled entries, re-heaped bottom-up. The order entries leave in is
   * unchanged: keys are unique, so it does not depend on the heap's layout.
   */
  private compact(): void {
    const h = this.heap;
    const at = this.keyAt;
    const seq = this.keySeq;
    let n = 0;
    for (let i = 0; i < h.length; i++) {
      const e = h[i]!;
      if (!e.cancelled) {
        h[n] = e;
        at[n] = at[i]!;
        seq[n] = seq[i]!;
        n++;
      }
    }
    h.length = n;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(h[i]!, at[i]!, seq[i]!, i);
  }

  /** The heap's keys again from its entries (a snapshot's clock, decoded, has none). */
  rekey(): void {
    const h = this.heap;
    this.keyAt = new Float64Array(Math.max(64, h.length));
    this.keySeq = new Float64Array(this.keyAt.length);
    for (let i = 0; i < h.length; i++) {
      this.keyAt[i] = h[i]!.at;
      this.keySeq[i] = h[i]!.seq;
    }
  }

  /**
   * Make `what` happen at virtual time `at` (never earlier than now): an event, or a callback (a
   * Driver's timer). A time that is not a finite number (a delay computed as 0 × Infinity, say) is
   * refused here, where it would otherwise become the clock's own time and every timestamp after
   * it NaN.
   */
  schedule(at: number, what: SimEvent | (() => void)): TimerId {
    const e = entry(Math.max(finite(at), this.time), ++this.seq, what);
    this.byId.set(e.seq, e);
    this.push(e);
    return e.seq;
  }

  /**
   * A timer set now whose entry goes into the heap later, with {@link insert}: it orders among
   * the others exactly as if set now. The table executor sets a step's timeout this way, and
   * mostly cancels it before the callback it was set in returns — a reservation never inserted
   * costs nothing. Insert before the clock moves (within the same callback).
   */
  reserve(ms: number): Reservation {
    return { at: finite(this.time + Math.max(0, Math.round(ms))), seq: ++this.seq };
  }

  /**
   * Places for `n` timers in the order they would have if all were set now: returns the first
   * one's `seq`; timer k is inserted later (with {@link insert}) as `{ at, seq: first + k }`, each
   * before the clock passes its time. A stream of 10,000 chunks costs one pending entry at a
   * time instead of 10,000 set at once.
   */
  reserveBlock(n: number): number {
    const first = this.seq + 1;
    this.seq += n;
    return first;
  }

  insert(r: Reservation, what: SimEvent | (() => void)): TimerId {
    const e = entry(Math.max(finite(r.at), this.time), r.seq, what);
    this.byId.set(e.seq, e);
    this.push(e);
    return e.seq;
  }

  /** {@link insert} for a Driver's timer as data (the table executor's). */
  insertTimer(r: Reservation, target: TimerTarget, arg: unknown): TimerId {
    const e = timerEntry(Math.max(finite(r.at), this.time), r.seq, target, arg);
    this.byId.set(e.seq, e);
    this.push(e);
    return e.seq;
  }

  /** Pending (not cancelled) events. */
  get pending(): number {
    return this.byId.size;
  }

  /** Virtual time of the next pending event, or null when the queue is empty. */
  nextAt(): number | null {
    this.dropCancelled();
    return this.heap[0]?.at ?? null;
  }

  /** Run the next event (advancing time to it). Returns false when nothing is pending. */
  step(): boolean {
    this.dropCancelled();
    const e = this.pop();
    if (!e) return false;
    this.byId.delete(e.seq);
    this.time = e.at;
    if (e.target) e.target.timerFired(e.arg);
    else if (e.fn) e.fn();
    else this.dispatch(e.event!);
    return true;
  }

  /**
   * Stop the `runUntil` in progress after the event now running (a breakpoint held): time stays
   * at that event, and the events after it wait for the next call.
   */
  interrupt(): void {
    this.interrupted = true;
  }

  /**
   * Run every event due at or before `t`, then set the time to `t`. Returns the number of
   * events run. `limit` bounds the work of one call (the UI slices fast-forwards with it);
   * when it is hit, time stays at the last event run.
   */
  runUntil(t: number, limit = Infinity): number {
    let n = 0;
    this.interrupted = false;
    for (;;) {
      if (n >= limit) return n;
      this.dropCancelled();
      if (this.heap.length === 0 || this.keyAt[0]! > t) break;
      this.step();
      n++;
      if (this.interrupted) {
        this.interrupted = false;
        return n;
      }
    }
    if (t > this.time) this.time = t;
    return n;
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
  }

  // A binary heap on (at, seq). Keys are unique (seq), so the order entries leave in does not
  // depend on how the heap is laid out. The sifts move a hole instead of swapping pairs: this
  // runs for every timer of every request (most are cancelled step timeouts), so it is hot.

  private push(e: Entry): void {
    const h = this.heap;
    let i = h.length;
    if (i === this.keyAt.length) this.growKeys();
    const at = this.keyAt;
    const seq = this.keySeq;
    const eAt = e.at;
    const eSeq = e.seq;
    h.push(e);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pAt = at[p]!;
      if (pAt < eAt || (pAt === eAt && seq[p]! < eSeq)) break;
      h[i] = h[p]!;
      at[i] = pAt;
      seq[i] = seq[p]!;
      i = p;
    }
    h[i] = e;
    at[i] = eAt;
    seq[i] = eSeq;
  }

  private growKeys(): void {
    const at = new Float64Array(this.keyAt.length * 2);
    const seq = new Float64Array(at.length);
    at.set(this.keyAt);
    seq.set(this.keySeq);
    this.keyAt = at;
    this.keySeq = seq;
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    const n = h.length;
    if (n === 0 || !last) return top;
    this.siftDown(last, this.keyAt[n]!, this.keySeq[n]!, 0);
    return top;
  }

  /** Put `last` (keyed `lastAt`, `lastSeq`) at hole `i` or below it, moving the smaller child up. */
  private siftDown(last: Entry, lastAt: number, lastSeq: number, i: number): void {
    const h = this.heap;
    const at = this.keyAt;
    const seq = this.keySeq;
    const n = h.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let m = l;
      let cAt = at[l]!;
      let cSeq = seq[l]!;
      if (r < n) {
        const yAt = at[r]!;
        const ySeq = seq[r]!;
        if (yAt < cAt || (yAt === cAt && ySeq < cSeq)) {
          m = r;
          cAt = yAt;
          cSeq = ySeq;
        }
      }
      if (lastAt < cAt || (lastAt === cAt && lastSeq < cSeq)) break;
      h[i] = h[m]!;
      at[i] = cAt;
      seq[i] = cSeq;
      i = m;
    }
    h[i] = last;
    at[i] = lastAt;
    seq[i] = lastSeq;
  }
}

// The copy's dispatcher is its owner's (engine.ts sets it on the engine's copy). Its heap is
// copied in the same order, so its keys are the original's.
copyable(VirtualClock, {
  name: 'clock.VirtualClock',
  fields: {
    dispatch: { fresh: () => noWorld },
    keyAt: { fresh: (c: VirtualClock) => c['keyAt'].slice() },
    keySeq: { fresh: (c: VirtualClock) => c['keySeq'].slice() }
  },
  blank: () => new VirtualClock()
});
