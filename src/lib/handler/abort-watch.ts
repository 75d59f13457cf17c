/**
 * When the shipped handler starts listening to the SDK's per-request abort signal (handler.ts):
 * from the turn after the request arrived, for the requests still running then.
 */

/** A request whose signal is watched: handler.ts's Pending. */
export interface Watched {
  /** The request has been answered. */
  readonly ended: boolean;
  /** The abort listener is on the signal. */
  listening: boolean;
  readonly signal: AbortSignal | undefined;
  /** The listener: cancels the request's run. */
  handleEvent(): void;
}

/**
 * `AbortSignal.prototype.aborted`'s getter, called on a signal directly. Why: on Node 20 every
 * AbortSignal has a hidden class of its own, so `signal.aborted` is a lookup V8 cannot cache —
 * through the prototype chain, afresh for each request's signal (~0.25 µs; the getter called
 * directly ~0.15 µs). The same answer; a signal-like object that is not an AbortSignal (a
 * caller's own) is asked the ordinary way.
 */
const abortedOf = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get;

/** `signal.aborted`, read as `abortedOf` says. */
export function isAborted(signal: AbortSignal): boolean {
  if (abortedOf !== undefined && signal instanceof AbortSignal)
    return abortedOf.call(signal) as boolean;
  return signal.aborted;
}

/** The abort listener's options: one object for every request. */
const ONCE: AddEventListenerOptions = { once: true };

/**
 * Requests whose abort signal is to be listened to, once the turn they arrived in is over. Why
 * not at once: an `abort` listener on the SDK's per-request signal, added and removed, cost ~40 µs
 * of CPU per request through the SDK (measured; Node 20's EventTarget) — more than the rest of
 * the handler — and most requests a handler answers at once (a stored decision, a policy
 * refusal, a quick model) are over before the next turn. A request still running then gets its
 * listener, or is cancelled there if its signal has aborted meanwhile; one run of the check
 * phase (`setImmediate`) serves every request of the turn. A cancellation is noticed at most that
 * one turn later.
 */
let unwatched: Watched[] = [];
let watchQueued = false;
/**
 * The list's length at which requests that ended are dropped from it: a caller that keeps the
 * microtask queue busy delays the check phase, and the list must stay as long as what is in
 * flight, not as long as what was answered meanwhile.
 */
let compactAt = 64;

export function watchAbort(req: Watched): void {
  if (unwatched.length >= compactAt) {
    unwatched = unwatched.filter((r) => !r.ended);
    compactAt = Math.max(64, unwatched.length * 2);
  }
  unwatched.push(req);
  if (watchQueued) return;
  watchQueued = true;
  setImmediate(watchAborts);
}

function watchAborts(): void {
  watchQueued = false;
  // Taken whole: a cancellation below may end requests, never add to this list.
  const list = unwatched;
  unwatched = [];
  compactAt = 64;
  for (const req of list) {
    if (req.ended) continue;
    const signal = req.signal!;
    if (isAborted(signal)) req.handleEvent();
    else {
      signal.addEventListener('abort', req, ONCE);
      req.listening = true;
    }
  }
}

/** The request was answered: its listener, if it got one, comes off the signal. */
export function unwatchAbort(req: Watched): void {
  if (req.listening) req.signal!.removeEventListener('abort', req, ONCE);
}
