/**
 * Real time, for the pages that let a person drive the client directly (their consent dialog
 * waits in real seconds). The simulation never uses this: it runs on the virtual clock.
 */
import type { HostClock } from '../sim/client';

export const wallClock: HostClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (id) => globalThis.clearTimeout(id as ReturnType<typeof setTimeout>)
};
