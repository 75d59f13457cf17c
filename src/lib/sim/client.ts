/**
 * The client host: one configured MCP client ("a lane") that authorises sampling requests by
 * running one authorisation-machine actor per request, with its IO wired to a decision store,
 * an audit log, a volume ledger (rate limits, budget windows, session pools), a consent source
 * and a provider.
 *
 * The same host runs in the simulation (virtual clock, simulated user and provider) and on the
 * page (the learner answers the dialogs). It knows nothing about servers' behaviour.
 */
import { createActor, fromCallback } from 'xstate';
import {
  authorizationMachine,
  type AuthEvent,
  type AuthOutput,
  type CommitInput,
  type ConsentInput,
  type EvaluateRequest,
  type IncomingRequest,
  type LookupInput,
  type ProviderInput
} from '../machine/authorize';
import { estimateCostMicros, type RateCard } from '../machine/budget';
import { toMicros } from '../machine/money';
import type { AuditRecord, JsonRpcId, Money } from '../machine/types';
import type { ClientConfig } from '../machine/config';
import {
  addSpend,
  countRequest,
  evaluate,
  initialVolume,
  rollVolume,
  type VolumeState
} from '../machine/evaluate';
import { effectiveBlock, policyHash, type Policy } from '../machine/policy';
import type { AuditLog } from '../store/audit-log';
import type { DecisionStore, MaybePromise } from '../store/decision-store';

/** What the host needs of time: a reading and XState's Clock (the simulation's virtual clock). */
export interface HostClock {
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
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
  emit: (event: AuthEvent) => void
) => (() => void) | void;

export interface ClientHostOptions {
  config: ClientConfig;
  policy: Policy;
  cards: Record<string, RateCard>;
  store: DecisionStore;
  audit: AuditLog;
  clock: HostClock;
  consent: ConsentSource;
  provider: ProviderSource;
  lane?: string;
}

function reservationKey(connection: string, id: JsonRpcId): string {
  return `${connection}\u0000${String(id)}`;
}

function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return typeof (v as Promise<T> | undefined)?.then === 'function';
}

/** Run `then` on a value now, or when its promise settles; report a rejection as `fail`. */
function settle<T>(v: MaybePromise<T>, then: (v: T) => void, fail: (e: unknown) => void): void {
  if (isPromise(v)) v.then(then, fail);
  else then(v);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export interface RequestHandle {
  identity(): string;
  stop(): void;
}

export class ClientHost {
  config: ClientConfig;
  readonly cards: Record<string, RateCard>;
  /** Swappable: the learner may move a lane between connection scope and durable mid-run. */
  store: DecisionStore;
  readonly audit: AuditLog;
  readonly clock: HostClock;
  readonly lane: string | undefined;
  #policy: Policy;
  #hashes = new Map<string, string>();
  #ledger = new Map<string, VolumeState>();
  #pools = new Map<string, number>();
  /**
   * What calls still running were estimated to cost, held against their server's budget window
   * and their connection's pool until they finish: without it, two calls evaluated while a third
   * runs would each be granted the whole remainder, and together overdraw it.
   */
  #reserved = new Map<string, { server: string; connection: string; micros: number }>();
  #seq = 0;
  #machine;

  constructor(opts: ClientHostOptions) {
    this.config = opts.config;
    this.cards = opts.cards;
    this.store = opts.store;
    this.audit = opts.audit;
    this.clock = opts.clock;
    this.lane = opts.lane;
    this.#policy = opts.policy;
    this.#machine = authorizationMachine.provide({
      actors: {
        lookupDecision: fromCallback<AuthEvent, LookupInput>(({ input, sendBack }) => {
          let live = true;
          const fail = (e: unknown) =>
            live && sendBack({ type: 'store.failed', error: errorText(e) });
          try {
            settle(
              this.store.lookup(
                input.server,
                input.connection,
                input.identity,
                input.policyHash,
                input.now
              ),
              (hit) => {
                if (!live) return;
                if (hit) sendBack({ type: 'store.hit', decision: hit.decision, alert: hit.alert });
                else sendBack({ type: 'store.miss' });
              },
              fail
            );
          } catch (e) {
            fail(e);
          }
          return () => {
            live = false;
          };
        }),
        evaluatePolicy: fromCallback<AuthEvent, EvaluateRequest>(({ input, sendBack }) => {
          sendBack({ type: 'policy.evaluated', evaluation: this.#evaluate(input) });
        }),
        askConsent: fromCallback<AuthEvent, ConsentInput>(({ input, sendBack }) => {
          let live = true;
          const cancel = opts.consent(input, (approved) => {
            if (!live) return;
            live = false;
            sendBack({ type: 'consent.answered', approved });
          });
          return () => {
            live = false;
            cancel?.();
          };
        }),
        callProvider: fromCallback<AuthEvent, ProviderInput>(({ input, sendBack }) => {
          let live = true;
          const cancel = opts.provider(input, (ev) => {
            if (live) sendBack(ev);
          });
          return () => {
            live = false;
            cancel?.();
          };
        }),
        commitDecision: fromCallback<AuthEvent, CommitInput>(({ input, sendBack }) => {
          let live = true;
          const finish = (error?: string) => {
            if (!live) return;
            sendBack(error ? { type: 'commit.failed', error } : { type: 'commit.done' });
          };
          try {
            settle(
              this.store.commit(input.connection, input.decision),
              () => finish(),
              (e) => finish(errorText(e))
            );
          } catch (e) {
            finish(errorText(e));
          }
          return () => {
            live = false;
          };
        })
      }
    });
  }

  get policy(): Policy {
    return this.#policy;
  }

  /** The server's effective policy block hash (cached until the policy changes). */
  policyHashFor(server: string): string {
    let h = this.#hashes.get(server);
    if (h === undefined) {
      h = policyHash(this.#policy, server);
      this.#hashes.set(server, h);
    }
    return h;
  }

  /**
   * Apply a new (already validated) policy. Servers whose effective block changed have their
   * stored decisions invalidated, and only those. Returns how many entries each lost.
   */
  async setPolicy(policy: Policy, servers: Iterable<string>): Promise<Record<string, number>> {
    const changed: string[] = [];
    for (const s of servers)
      if (policyHash(policy, s) !== policyHash(this.#policy, s)) changed.push(s);
    this.#policy = policy;
    this.#hashes.clear();
    const out: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const s of changed) out[s] = await this.store.invalidateServer(s);
    return out;
  }

  /** Synchronous variant for the simulation's in-memory stores. */
  setPolicySync(policy: Policy, servers: Iterable<string>): Record<string, number> {
    const out: Record<string, number> = Object.create(null) as Record<string, number>;
    const changed: string[] = [];
    for (const s of servers)
      if (policyHash(policy, s) !== policyHash(this.#policy, s)) changed.push(s);
    this.#policy = policy;
    this.#hashes.clear();
    for (const s of changed) {
      const n = this.store.invalidateServer(s);
      out[s] = typeof n === 'number' ? n : 0;
    }
    return out;
  }

  /** A server's connection closed: a connection-scoped store forgets what it decided there. */
  closeConnection(server: string, connection: string): MaybePromise<void> {
    this.#pools.delete(connection);
    return this.store.closeConnection(server, connection);
  }

  /** Authorise one request. `onDone` receives the one frame (or null for silence) and the audit record. */
  handle(request: IncomingRequest, onDone: (out: AuthOutput) => void): RequestHandle {
    const actor = createActor(this.#machine, {
      clock: this.clock as never,
      input: {
        request,
        config: this.config,
        policyHash: this.policyHashFor(request.server),
        cards: this.cards,
        now: () => this.clock.now(),
        ...(this.lane ? { lane: this.lane } : {})
      }
    });
    actor.subscribe({
      complete: () => {
        const out = actor.getSnapshot().output;
        if (!out) return;
        // Spend and the audit record, before the frame leaves: the log answers "why did the
        // bill triple" a month later, so nothing reaches a server unrecorded.
        out.audit.seq = ++this.#seq;
        this.#reserved.delete(reservationKey(request.connection, request.id));
        this.#charge(out.audit);
        void this.audit.append(out.audit);
        onDone(out);
      },
      error: (e) => {
        throw e;
      }
    });
    actor.start();
    return {
      identity: () => actor.getSnapshot().context.identity,
      stop: () => actor.stop()
    };
  }

  /** The server's volume counters as they stand at `now` (windows roll over as time passes). */
  #volume(server: string, now: number): VolumeState {
    const block = effectiveBlock(this.#policy, server);
    const v = this.#ledger.get(server);
    return v ? rollVolume(v, block, now) : initialVolume(block, now);
  }

  #held(key: 'server' | 'connection', value: string): number {
    let n = 0;
    for (const r of this.#reserved.values()) if (r[key] === value) n += r.micros;
    return n;
  }

  #evaluate(input: EvaluateRequest) {
    const block = effectiveBlock(this.#policy, input.server);
    const volume = this.#volume(input.server, input.now);
    const evaluation = evaluate({
      server: input.server,
      params: input.params,
      block,
      card: (m: string) => this.cards[m],
      volume: {
        ...volume,
        budgetSpentMicros: volume.budgetSpentMicros + this.#held('server', input.server)
      },
      now: input.now,
      capScope: this.config.capScope,
      sessionPool: this.config.sessionPool,
      capState: {
        sessionPoolSpentMicros:
          (this.#pools.get(input.connection) ?? 0) + this.#held('connection', input.connection)
      },
      preflightDefault: this.config.preflightDefault
    });
    if (evaluation.kind === 'proceed') {
      const card = this.cards[evaluation.model];
      const micros = card
        ? estimateCostMicros(card, evaluation.inputTokens, evaluation.maxTokens)
        : 0;
      this.#reserved.set(reservationKey(input.connection, input.requestId), {
        server: input.server,
        connection: input.connection,
        micros
      });
    }
    // Volume controls count every fresh evaluation, whatever its content: that is what bounds a
    // server that varies its requests to dodge identity.
    this.#ledger.set(input.server, countRequest(volume, block, input.now));
    return evaluation;
  }

  #charge(audit: AuditRecord): void {
    const micros = toMicros(audit.cost);
    if (micros <= 0) return;
    const { server, t, connection } = audit;
    const block = effectiveBlock(this.#policy, server);
    this.#ledger.set(server, addSpend(this.#volume(server, t), block, t, micros));
    this.#pools.set(connection, (this.#pools.get(connection) ?? 0) + micros);
  }

  /** Spent in the server's current budget window, in micro-units. */
  spentMicros(server: string): number {
    return this.#ledger.get(server)?.budgetSpentMicros ?? 0;
  }

  /** The per-call ceiling a host would advertise at initialize (RFC open question), if any. */
  advertisedCeiling(server: string): Money | null {
    const cap = effectiveBlock(this.#policy, server).perCallCap;
    return cap && 'amount' in cap ? { amount: cap.amount, currency: cap.currency } : null;
  }
}
