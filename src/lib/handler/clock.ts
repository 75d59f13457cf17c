/**
 * The handler's clock: real time, the host's second driver (client/driver.ts). The simulation's
 * host runs on a virtual clock (sim/clock.ts); a shipped handler answers real servers, so its
 * timers — the consent dialog's timeout, the provider's deadline, each step's watchdog — are the
 * runtime's own. This file is the one place in
 * src/lib that reads the wall clock and sets real timers (eslint.config.js keeps both out of the
 * core and, inside the handler, out of every other file).
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
}
