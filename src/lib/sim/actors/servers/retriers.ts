/**
 * Servers that ask again: the naive retrier, the tight loop, the reconnector, the prompt mutator
 * and the serialiser-variant retrier. Each is a failure mode from the seeds; what bounds it is
 * the client's identity, decision store and volume controls, never its own good sense.
 */
import { copyable } from '../../../machine/clone';
import type { ServerEnv, ServerSpec, WireStyle } from '../../world/world';
import { BaseServer, describeFailure, type Failure, type TaskState } from './base';
import { WELL_BEHAVED_DEFAULTS, WellBehaved } from './polite';
import { mutateOneCharacter, promptText, textFingerprint } from './request';

function gaveUp(f: Failure, retries: number): string {
  return `${describeFailure(f)}; gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'}`;
}

export const NAIVE_RETRIER_DEFAULTS: Record<string, unknown> = {
  baseMs: 1000,
  factor: 2,
  capMs: 30_000,
  maxRetries: 5,
  /** ± fraction of each delay, drawn from the server's random stream. */
  jitter: 0.1
};

/**
 * Retries every error, denial, cost refusal and timeout alike — it never reads `retryable` —
 * with capped exponential backoff: min(capMs, baseMs × factor^k) ± jitter, up to `maxRetries`.
 */
export class NaiveRetrier extends BaseServer {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, NAIVE_RETRIER_DEFAULTS);
  }

  protected onFailure(s: TaskState, f: Failure): void {
    const k = this.count(s, 'retries');
    if (k >= this.p.cap('maxRetries')) return this.abandon(s, gaveUp(f, k));
    this.bump(s, 'retries');
    const delay = Math.min(this.p.num('capMs'), this.p.num('baseMs') * this.p.num('factor') ** k);
    const j = this.p.num('jitter');
    this.retryAfter(s, j > 0 ? this.rng.jitter(delay, j) : delay);
  }
}

export const TIGHT_LOOP_DEFAULTS: Record<string, unknown> = {
  intervalMs: 2000,
  /** Unbounded by default: the bug. `null` in JSON means unbounded too. */
  maxRetries: Infinity
};

/** A buggy loop: every failure is retried after a fixed `intervalMs`, with no cap. */
export class TightLoop extends BaseServer {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, TIGHT_LOOP_DEFAULTS);
  }

  protected onFailure(s: TaskState, f: Failure): void {
    const k = this.count(s, 'retries');
    if (k >= this.p.cap('maxRetries')) return this.abandon(s, gaveUp(f, k));
    this.bump(s, 'retries');
    this.retryAfter(s, this.p.num('intervalMs'));
  }
}

export const RECONNECTOR_DEFAULTS: Record<string, unknown> = {
  ...WELL_BEHAVED_DEFAULTS,
  /** How long the restart takes: a local stdio server restarts in well under a second. */
  reconnectMs: 300,
  maxReconnects: 50
};

/**
 * Dislikes an answer and resets the connection: on any denial or cost refusal it disconnects,
 * reconnects after `reconnectMs` and sends the same request again, up to `maxReconnects` per
 * task. A connection-scoped decision store forgets on every restart; a durable one does not.
 * Errors and silence it reads like the well-behaved server.
 */
export class Reconnector extends WellBehaved {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, RECONNECTOR_DEFAULTS);
  }

  protected override onFailure(s: TaskState, f: Failure): void {
    if (f.kind !== 'denied' && f.kind !== 'budget_exceeded') return this.politely(s, f);
    const k = this.count(s, 'reconnects');
    if (k >= this.p.cap('maxReconnects')) {
      return this.abandon(s, `${describeFailure(f)}; gave up after ${k} reconnects`);
    }
    this.bump(s, 'reconnects');
    if (this.env.connected()) this.env.disconnect();
    // It reconnects, then sends the task again (base.ts `onTimer`).
    this.env.schedule(this.p.num('reconnectMs'), { type: 'reconnect', task: s.task.n });
  }
}

export const PROMPT_MUTATOR_DEFAULTS: Record<string, unknown> = {
  intervalMs: 1000,
  maxRetries: 100
};

/**
 * The adversary: after any failure it changes one character of its prompt and tries again after
 * `intervalMs`, up to `maxRetries`. Retry k sends `mutateOneCharacter(original, k)`: each differs
 * from the original by exactly one character and from every other retry, so each gets a fresh
 * evaluation. Identity catches nothing that is trying; only rate limits and budgets bound it.
 */
export class PromptMutator extends BaseServer {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, PROMPT_MUTATOR_DEFAULTS);
  }

  /**
   * Fingerprints of every prompt this server has sent, originals and mutations: a mutation that
   * another task already sent (two tasks whose prompts differ in one character mutate onto each
   * other: "account 1." and "account 2." both become "account a.") is skipped, so no retry ever
   * repeats an identity and each one costs a fresh evaluation, as the lesson says.
   */
  private sent = new Set<number>();

  protected onFailure(s: TaskState, f: Failure): void {
    const n = this.count(s, 'mutations');
    if (n >= this.p.cap('maxRetries')) return this.abandon(s, gaveUp(f, n));
    const original = promptText(s.original);
    if (original !== null) this.sent.add(textFingerprint(original));
    // The next variant this server has not sent; 25 per character of the prompt exist.
    const variants = 25 * Math.max(1, Array.from(original ?? '').length);
    let k = this.count(s, 'variant');
    let next = mutateOneCharacter(s.original, k);
    while (k < variants && this.sent.has(textFingerprint(promptText(next) ?? ''))) {
      k++;
      next = mutateOneCharacter(s.original, k);
    }
    if (k >= variants) return this.abandon(s, gaveUp(f, n));
    s.tally.variant = k + 1;
    this.sent.add(textFingerprint(promptText(next) ?? ''));
    this.bump(s, 'mutations');
    s.params = next;
    this.retryAfter(s, this.p.num('intervalMs'));
  }
}

/** The serialisers an honest retry may go through, in turn. */
const WIRE_STYLES: readonly WireStyle[] = [
  {},
  { reverseKeys: true },
  { nfd: true },
  { reverseKeys: true, nfd: true }
];

export const SERIALISER_VARIANT_DEFAULTS: Record<string, unknown> = {
  intervalMs: 1000,
  maxRetries: 20
};

/**
 * An honest retrier whose requests pass through differently configured serialisers: after any
 * failure it sends the SAME request again after `intervalMs`, attempt k written with
 * `WIRE_STYLES[k mod 4]` (key order reversed, text in NFD, both). A canonicalising identity sees
 * one request; with canonicalisation off, every retry looks new.
 */
export class SerialiserVariant extends BaseServer {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, SERIALISER_VARIANT_DEFAULTS);
  }

  protected override send(s: TaskState, isRetry: boolean): void {
    // The first request (k = 0) is written plainly; retry k by serialiser k mod 4.
    const k = this.count(s, 'retries');
    super.send(s, isRetry, WIRE_STYLES[k % WIRE_STYLES.length]);
  }

  protected onFailure(s: TaskState, f: Failure): void {
    const k = this.count(s, 'retries');
    if (k >= this.p.cap('maxRetries')) return this.abandon(s, gaveUp(f, k));
    this.bump(s, 'retries');
    this.retryAfter(s, this.p.num('intervalMs'));
  }
}

// Each behaviour is copied (and saved) under its own name, by its base's rules (base.ts).
copyable(NaiveRetrier, { name: 'servers.NaiveRetrier' });
copyable(TightLoop, { name: 'servers.TightLoop' });
copyable(Reconnector, { name: 'servers.Reconnector' });
copyable(PromptMutator, { name: 'servers.PromptMutator' });
copyable(SerialiserVariant, { name: 'servers.SerialiserVariant' });
