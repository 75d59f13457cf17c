/**
 * The client host's per-request closures (host.ts), each with its reviver (clone.ts): a step's
 * gate and stop, a dialog's answer, a stream's emit, a joined presentation's wait, and the handle
 * of a request the table executor runs. They outlive the event that made them — a stream's timers
 * hold `emit`, a dialog holds `answer`, a flight holds the joiners' `send` — so an engine copy
 * makes each again over the copies.
 */
import type { AuthEvent, IncomingRequest, ProviderEvent } from '../machine/authorize';
import type { FastRun } from '../machine/authorize/fast';
import { revivable, type CloneMap } from '../machine/clone';
import type { StoredDecision } from '../machine/types';
import type { RunHandle } from './host';

/** What these closures need of the host: its clock (and, to be copied, its clone). */
interface Host {
  readonly clock: { now(): number };
}

/** Whether a step's request is still waiting for it (a box its closures share). */
interface Live {
  live: boolean;
}

/** Pass events on while the step is live. */
export function gate(box: Live, sendBack: (ev: AuthEvent) => void): (ev: AuthEvent) => void {
  return revivable(
    (ev: AuthEvent) => {
      if (box.live) sendBack(ev);
    },
    (m) => gate(m.box(box), m.fn(sendBack))
  );
}

export function isLive(box: Live): () => boolean {
  return revivable(
    () => box.live,
    (m) => isLive(m.box(box))
  );
}

/** A step's stop: no more events from it, and what it started (a dialog, a stream) cancelled. */
export function stopper(box: Live, cancel?: (() => void) | void): () => void {
  return revivable(
    () => {
      box.live = false;
      cancel?.();
    },
    (m) => stopper(m.box(box), cancel ? m.fn(cancel) : undefined)
  );
}

/**
 * What a step hears (a dialog's answer, a stream's event) passed on as a machine event stamped
 * with the host's time, while the step is live; `once`: the first ends it (a dialog answers once).
 */
export function relay<T>(
  box: Live,
  sendBack: (ev: AuthEvent) => void,
  host: Host,
  event: (heard: T, at: number) => AuthEvent,
  once: boolean
): (heard: T) => void {
  return revivable(
    (heard: T) => {
      if (!box.live) return;
      if (once) box.live = false;
      sendBack(event(heard, host.clock.now()));
    },
    (m) => relay(m.box(box), m.fn(sendBack), m.get(host), event, once)
  );
}

/** A consent dialog's answer (relayed once: the first one counts). */
export const answered = (approved: boolean, at: number): AuthEvent => ({
  type: 'consent.answered',
  approved,
  at
});
/**
 * A provider stream's events (relayed while the call is live). `Object.assign`, not
 * `{ ...ev, at }`: V8 (Node 20) adds a key to a spread copy through a new hidden class each time,
 * over ten times slower, and a stream relays one of these per chunk. The same keys in the same
 * order either way.
 */
export const streamed = (ev: ProviderEvent, at: number): AuthEvent =>
  Object.assign({}, ev, { at }) as AuthEvent;

export function copyFlight(m: CloneMap, f: Flight): Flight {
  if (m.has(f)) return m.registered(f);
  const c = m.set(f, { waiters: [], represented: f.represented });
  c.waiters = f.waiters.map((w) => m.fn(w));
  return c;
}

/** A presentation being decided, and the presentations of the same identity waiting for it. */
export interface Flight {
  waiters: ((verdict: StoredDecision | null) => void)[];
  /** Joiners answered from this flight's verdict while it was not in the store. */
  represented: number;
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
  clone(m: CloneMap): TableHandle {
    const c = m.set(this, new TableHandle(m.get(this.run), m.get(this.host)));
    if (this.request) c.request = this.request;
    return c;
  }
}
