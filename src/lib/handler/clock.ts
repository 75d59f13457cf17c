/**
 * The handler's clock: real time, the host's second driver (client/driver.ts). The simulation's
 * host runs on a virtual clock (sim/world/clock.ts); a shipped handler answers real servers, so its
 * timers — the consent dialog's timeout, the provider's deadline, each step's watchdog — are the
 * runtime's own. This file is the one place in
 * src/lib that reads the wall clock and sets real timers (eslint.config.js keeps both out of the
 * core and, inside the handler, out of every other file).
 *
 * Reservations (`reserve` / `insert`, see client/driver.ts): the table executor reserves each
 * step's timeout and puts it on the clock only when the run rests, so a step that answers within
 * the same turn — a memory store's lookup and commit, the policy's evaluation — never sets a real
 * timer at all. A reservation is its delay: the run inserts it in the same synchronous turn it was
 * reserved in, so no real time passes between the two.
 */
import type { Driver, TimerTarget } from '../client/driver';

/**
 * Inserted timers of one length, in the order inserted — so in the order they are due — served
 * by one runtime timer, armed for the first. Why: a request that waits for a dialog or a model
 * sets one of these per wait and nearly always clears it again within milliseconds; a runtime
 * timer each (a Timeout object, its async id, a list insertion and removal) was a measurable
 * part of a request at thousands a second. Unlinking an entry is O(1), as `clearTimeout` is, and
 * a list left empty parks its runtime timer unref'd: it holds no process open.
 */
class SameDelay {
  head: Scheduled | null = null;
  tail: Scheduled | null = null;
  /** The runtime timer, and the due time of the entry it was armed for. */
  timer: ReturnType<typeof setTimeout> | null = null;
  armedFor = 0;
  constructor(readonly ms: number) {}
}

/**
 * One inserted timer: what `insert` / `insertTimer` return and `clearTimeout` takes. It fires a
 * callback, or a target with its argument (a timer set as data: client/driver.ts).
 */
class Scheduled {
  prev: Scheduled | null = null;
  next: Scheduled | null = null;
  constructor(
    readonly list: SameDelay,
    readonly due: number,
    /** Null once it has fired or been cleared. */
    public fn: (() => void) | TimerTarget | null,
    readonly arg: unknown
  ) {}
}

/** The longest delay the runtime keeps (longer ones it fires after 1 ms). */
const MAX_DELAY = 2 ** 31 - 1;

function unlink(p: Scheduled): void {
  const list = p.list;
  if (p.prev) p.prev.next = p.next;
  else list.head = p.next;
  if (p.next) p.next.prev = p.prev;
  else list.tail = p.prev;
  p.prev = p.next = null;
}

export class RealClock implements Driver {
  readonly #lists = new Map<number, SameDelay>();

  now(): number {
    return Date.now();
  }
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown {
    return setTimeout(fn, ms);
  }
  setTimer(ms: number, target: TimerTarget, arg: unknown): unknown {
    return setTimeout(() => target.timerFired(arg), ms);
  }
  clearTimeout(id: unknown): void {
    if (!(id instanceof Scheduled)) {
      clearTimeout(id as ReturnType<typeof setTimeout>);
      return;
    }
    if (id.fn === null) return;
    id.fn = null;
    unlink(id);
    if (id.list.head === null) id.list.timer?.unref();
  }
  reserve(ms: number): unknown {
    return ms;
  }
  insert(reservation: unknown, fn: () => void): unknown {
    return this.#insert(reservation as number, fn, undefined);
  }
  insertTimer(reservation: unknown, target: TimerTarget, arg: unknown): unknown {
    return this.#insert(reservation as number, target, arg);
  }

  #insert(ms: number, fn: (() => void) | TimerTarget, arg: unknown): unknown {
    // A length the runtime treats specially (under 1 ms, past 2^31 - 1, not a number): its own.
    if (!(ms >= 1 && ms <= MAX_DELAY))
      return typeof fn === 'function'
        ? setTimeout(fn, ms)
        : setTimeout(() => fn.timerFired(arg), ms);
    let list = this.#lists.get(ms);
    if (list === undefined) {
      list = new SameDelay(ms);
      this.#lists.set(ms, list);
    }
    const p = new Scheduled(list, Date.now() + ms, fn, arg);
    p.prev = list.tail;
    if (list.tail) list.tail.next = p;
    else list.head = p;
    list.tail = p;
    // The first entry of an empty list arms it (or wakes its parked timer, armed for an entry
    // due earlier than this one: it fires, then arms for this one). While the list fires
    // (`#fire`), it arms itself when done.
    if (list.head === p) {
      if (list.timer !== null) list.timer.ref();
      else this.#arm(list, ms, p.due);
    }
    return p;
  }

  #arm(list: SameDelay, ms: number, due: number): void {
    list.armedFor = due;
    list.timer = setTimeout(() => this.#fire(list), ms);
  }

  /**
   * The list's runtime timer fired: every entry due by the one it was armed for fires, in order
   * (their due times are compared with each other, not with a fresh reading of the wall clock,
   * which may have moved), then the list arms for its next entry.
   */
  #fire(list: SameDelay): void {
    list.timer = null;
    const by = list.armedFor;
    try {
      for (let p = list.head; p !== null && p.due <= by; p = list.head) {
        const fn = p.fn!;
        p.fn = null;
        unlink(p);
        if (typeof fn === 'function') fn();
        else fn.timerFired(p.arg);
      }
    } finally {
      const next = list.head;
      if (next !== null && list.timer === null)
        this.#arm(list, Math.min(list.ms, Math.max(1, next.due - by)), next.due);
    }
  }
}
