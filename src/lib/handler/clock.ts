/**
 * The handler's clock: real time, the host's second driver (client/driver.ts). The simulation's
 * host runs on a virtual clock (sim/clock.ts); a shipped handler answers real servers, so its
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
import type { Driver } from '../client/driver';

export class RealClock implements Driver {
  now(): number {
    return Date.now();
  }
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown {
    return setTimeout(fn, ms);
  }
  clearTimeout(id: unknown): void {
    clearTimeout(id as ReturnType<typeof setTimeout>);
  }
  reserve(ms: number): unknown {
    return ms;
  }
  insert(reservation: unknown, fn: () => void): unknown {
    return setTimeout(fn, reservation as number);
  }
}
