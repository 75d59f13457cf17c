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
 * (handler/clock.ts; the /single/ page uses it too). The IO sources are passed beside the clock,
 * one pair per host: callbacks ({@link ConsentSource}, {@link ProviderSource}: the page's dialog,
 * the handler's `consent` and `sample`) or actors ({@link ConsentActor}, {@link ProviderActor}:
 * the simulated user and provider). An actor answers through the asking step's record and is
 * stopped by a ticket, so the simulation's world holds no closure of the host's and can be copied.
 */
import type { ConsentInput, ProviderEvent, ProviderInput } from '../machine/authorize';

/**
 * What a timer set as data calls when it fires: `timerFired(arg)` on an object, not a closure.
 * Why: a timer outlives the step that set it, and the simulation copies its world (a seek, a
 * fork, a checkpoint) — an object and an argument are copied with the rest; a closure cannot be.
 */
export interface TimerTarget {
  timerFired(arg: unknown): void;
}

/**
 * Time and timers: a reading; XState's Clock (`setTimeout` / `clearTimeout`, which the actor
 * executor's `after:` delays are set on: XState's own closures, so a simulation whose requests
 * run as actors cannot be copied and re-simulates instead); and the same timers as data
 * (`setTimer`, reservations), which the table executor sets — consent timeout, provider
 * deadline, step watchdogs.
 */
export interface Driver {
  /** Epoch milliseconds: virtual in the simulation, `Date.now()` in the handler. */
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  /** Clears a timer of any kind (`setTimeout`, `setTimer`, `insertTimer`). */
  clearTimeout(id: unknown): void;
  /** After `ms`, `target.timerFired(arg)`. */
  setTimer(ms: number, target: TimerTarget, arg: unknown): unknown;
  /**
   * Timer reservations (the virtual clock has them): a timer ordered as if set now and put on the
   * clock later, or never if cancelled first. The table executor uses them when present; a real
   * clock has no order to keep and reserves a delay.
   */
  reserve?(ms: number): unknown;
  insertTimer?(reservation: unknown, target: TimerTarget, arg: unknown): unknown;
}

/**
 * Who hears a consent dialog's answer: the host's step that asked. An object, so what holds it
 * (the simulated user, the consent desk) holds data the simulation can copy.
 */
export interface ConsentReply {
  answer(approved: boolean): void;
}

/** Who hears a model call's events: the host's step that made the call. */
export interface ProviderReply {
  emit(event: ProviderEvent): void;
  /**
   * `emit` of an event made for this call that its source keeps no hold of: the reply may add
   * to it in place instead of copying it (host-steps.ts).
   */
  emitOwned?(event: ProviderEvent): void;
}

/** Answers a consent dialog: call `answer` once, now or later. Returns a cancel function. */
export type ConsentSource = (
  input: ConsentInput,
  answer: (approved: boolean) => void
) => (() => void) | void;

/**
 * A consent source as data (the simulation's): it answers through `reply` and is stopped by the
 * ticket `ask` returned, so it holds no closure of the host's.
 */
export interface ConsentActor {
  ask(input: ConsentInput, reply: ConsentReply): unknown;
  stop(ticket: unknown): void;
}

/**
 * Runs a model call: emits `provider.started`, then `provider.chunk`s, then `provider.done` or
 * `provider.failed`. Returns a cancel function (the machine stops a call at the cap or deadline).
 * `owned`: the event is a fresh object the source keeps no hold of, which the host may stamp with
 * its time in place rather than copy.
 */
export type ProviderSource = (
  input: ProviderInput,
  emit: (event: ProviderEvent, owned?: boolean) => void
) => (() => void) | void;

/** A provider as data (the simulation's): events through `reply`, stopped by its ticket. */
export interface ProviderActor {
  call(input: ProviderInput, reply: ProviderReply): unknown;
  stop(ticket: unknown): void;
}
