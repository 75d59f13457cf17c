/**
 * The client host's driver: everything the host (host.ts) gets from outside that is not data —
 * time, timers, a person's answer and a model's stream.
 *
 * Why it exists: the same host runs in two worlds. The simulation runs it on a virtual clock whose
 * timers are entries in the run's event queue (sim/world/clock.ts), with a simulated user and provider,
 * so a run is reproducible to the byte and can be copied and rewound. The shipped handler runs it
 * on real time (handler/clock.ts), with a person's dialog and a model call supplied by the MCP
 * client. Everything else — identity, stored decisions, in-flight joins, the policy, metering, the
 * audit record and the one frame — is the host's own code in both, so every number the lab shows
 * is a number of the shipped code. This interface is the whole of the difference; the host never
 * reads the wall clock or sets a timer except through it (eslint.config.js enforces that).
 *
 * Exactly two drivers implement {@link Driver}: `VirtualClock` (sim/world/clock.ts) and `RealClock`
 * (handler/clock.ts; the /single/ page uses it too). The IO sources ({@link ConsentSource},
 * {@link ProviderSource}) are passed beside the clock, one pair per host: the simulated user and
 * provider, the page's dialog, or the handler's `consent` and `sample` callbacks.
 */
import type { ConsentInput, ProviderEvent, ProviderInput } from '../machine/authorize';

/**
 * Time and timers: a reading, and XState's Clock (`setTimeout` / `clearTimeout`, which the
 * machine's `after:` delays — consent timeout, provider deadline, step watchdogs — are set on).
 */
export interface Driver {
  /** Epoch milliseconds: virtual in the simulation, `Date.now()` in the handler. */
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  /**
   * Timer reservations (the virtual clock has them): a timer ordered as if set now and put on the
   * clock later, or never if cancelled first. The table executor uses them when present; a real
   * clock has no order to keep and leaves them out.
   */
  reserve?(ms: number): unknown;
  insert?(reservation: unknown, fn: () => void): unknown;
}

/** Answers a consent dialog: call `answer` once, now or later. Returns a cancel function. */
export type ConsentSource = (
  input: ConsentInput,
  answer: (approved: boolean) => void
) => (() => void) | void;

/**
 * Runs a model call: emits `provider.started`, then `provider.chunk`s, then `provider.done` or
 * `provider.failed`. Returns a cancel function (the machine stops a call at the cap or deadline).
 */
export type ProviderSource = (
  input: ProviderInput,
  emit: (event: ProviderEvent) => void
) => (() => void) | void;
