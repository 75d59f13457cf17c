/**
 * The client host's per-request records (host.ts): a waiting step, a presentation waiting for a
 * flight's verdict, and the handle of a request the table executor runs. They are objects, not
 * closures, because they outlive the event that made them — a dialog holds its step to answer, a
 * stream its step to emit to, a flight its joiners — and the simulation copies its world (a
 * seek, a fork, a checkpoint): a record is copied with the rest (clone.ts), a closure cannot be.
 */
import type { AuthEvent, IncomingRequest, LookupInput, ProviderEvent } from '../machine/authorize';
import type { FastRun, StepPort, StepStop } from '../machine/authorize/fast';
import { copyable } from '../machine/clone';
import type { ConsentActor, ConsentReply, ProviderActor, ProviderReply } from './driver';
import type { RunHandle } from './host';

/** What these records need of the host: its clock. */
interface Host {
  readonly clock: { now(): number };
}

/**
 * One invocation of a step that waits (a lookup, a dialog, a model call, a commit): it passes
 * events on to its request's run while it is live, stamped with the host's time; stopping it
 * cancels what it started. It is the `reply` a consent or provider actor answers through, and
 * what a flight's waiter sends its verdict through.
 */
export class HostStep implements StepStop, ConsentReply, ProviderReply {
  live = true;
  /**
   * What stopping it cancels: an actor source and its ticket, or a callback source's cancel
   * function (a closure: a step waiting on one cannot be copied, and says so).
   */
  actor: ConsentActor | ProviderActor | null = null;
  ticket: unknown = undefined;
  cancel: (() => void) | void = undefined;

  constructor(
    public host: Host,
    public port: StepPort
  ) {}

  /** An event for the run, while the step is live. */
  send(ev: AuthEvent): void {
    if (this.live) this.port.send(ev);
  }

  /** A dialog's answer: the first one counts. */
  answer(approved: boolean): void {
    if (!this.live) return;
    this.live = false;
    this.port.send({ type: 'consent.answered', approved, at: this.host.clock.now() });
  }

  /**
   * A provider stream's event. `Object.assign`, not `{ ...ev, at }`: V8 (Node 20) adds a key to
   * a spread copy through a new hidden class each time, over ten times slower, and a stream
   * relays one of these per chunk. The same keys in the same order either way.
   */
  emit(ev: ProviderEvent): void {
    if (!this.live) return;
    this.port.send(Object.assign({}, ev, { at: this.host.clock.now() }) as AuthEvent);
  }

  /**
   * `emit` of an event its source made for this call and keeps no hold of (the handler's): its
   * time is added to it in place — the same keys in the same order as `emit`'s copy, without
   * the copy and its two objects, three times a model call.
   */
  emitOwned(ev: ProviderEvent): void {
    if (!this.live) return;
    (ev as ProviderEvent & { at: number }).at = this.host.clock.now();
    this.port.send(ev as AuthEvent);
  }

  /** What the step started (a dialog, a model call): stopped with the step. */
  started(actor: ConsentActor | ProviderActor, ticket: unknown): void {
    this.actor = actor;
    this.ticket = ticket;
  }

  /** What a callback source returned to cancel what it started. */
  cancelWith(cancel: (() => void) | void): void {
    this.cancel = cancel;
  }

  stop(): void {
    this.live = false;
    if (this.actor) this.actor.stop(this.ticket);
    else this.cancel?.();
  }
}
// Copied over the copies of its host, its run's port and the actor it started (clone.ts).
copyable(HostStep, { name: 'host-steps.HostStep' });

/** A presentation waiting for a flight's verdict: its lookup, its alert, and its step. */
export class Waiter {
  constructor(
    readonly input: LookupInput,
    readonly alert: boolean,
    readonly step: HostStep
  ) {}
}
// Copied over the copy of its step; its lookup is never changed once made: shared.
copyable(Waiter, { name: 'host-steps.Waiter', fields: { input: 'shared' } });

/**
 * A presentation being decided, and the presentations of the same identity waiting for it (a
 * plain record: a copy of its host copies it whole, its waiters by their rules).
 */
export interface Flight {
  waiters: Waiter[];
  /** Joiners answered from this flight's verdict while it was not in the store. */
  represented: number;
  /**
   * Where its identity is being decided (host.ts, `findFlight`): the connection when it was led
   * under connection scope (null under durable scope), the server, the identity, the policy hash.
   */
  readonly connection: string | null;
  readonly server: string;
  readonly identity: string;
  readonly policyHash: string;
  /** The next flight of the same identity (another connection or policy), or null. */
  next: Flight | null;
}

/** A request the table executor runs (the lane keeps it while it is in flight). */
export class TableHandle implements RunHandle {
  /** The request (the lane sets it). */
  request?: IncomingRequest;
  constructor(
    readonly run: FastRun,
    readonly host: Host
  ) {}
  identity(): string {
    return this.run.context?.identity ?? '';
  }
  path(): string[] {
    return [...(this.run.context?.path ?? [])];
  }
  cancel(): void {
    if (this.run.status === 'active')
      this.run.send({ type: 'request.cancelled', at: this.host.clock.now() });
  }
}
copyable(TableHandle, { name: 'host-steps.TableHandle', fields: { request: 'shared' } });
