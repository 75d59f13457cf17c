/**
 * The lab's client as a sampling handler for a real MCP client (issue #20, SPEC §11): the same
 * host a lane runs (client/host.ts, table executor) — identity, stored decisions, in-flight joins,
 * the policy, consent, the provider, metering, the audit record and the one frame — on a real
 * clock, with a person's dialog (`consent`) and a model call (`sample`) supplied by the client.
 *
 * One policy object per process (its rate and budget windows are per server, across
 * connections); one `connect(server)` per MCP connection; `conn.handle` is the SDK's request
 * handler for `sampling/createMessage`.
 *
 * Over 400 lines on purpose: the policy object, its connections and their requests share the
 * handler's lifetime (open until `close()`) and its failure rule (a store or audit write that
 * fails refuses that request); split, each part would re-check that state.
 */
import type { AuthOutput } from '../machine/authorize';
import {
  depthExceeded,
  depthPathText,
  LONE_SURROGATE,
  loneSurrogateAt,
  MAX_PARAMS_DEPTH
} from '../machine/identity';
import { effectiveBlock } from '../machine/policy';
import type { CreateMessageResult, JsonRpcId, Money, SamplingParams } from '../machine/types';
import type { DecisionStore } from '../store/decision-store';
import { ClientHost, type DecisionListener, type RunHandle } from '../client/host';
import { AuditSink, type AuditTarget, type HandlerAuditRecord, type WriteListener } from './audit';
import { isAborted, unwatchAbort, watchAbort } from './abort-watch';
import { RealClock } from './clock';
import { validClient, validPolicy, validRateCards, HandlerConfigError } from './options';
import {
  consentSource,
  preflightEstimate,
  providerSource,
  type ConsentFn,
  type SampleFn,
  type SampleResult
} from './sources';
import { memoryStore } from './stores';
import { useFreshIdentity } from '../machine/authorize/flow';
import { freshIdentity, useDigest } from '../machine/authorize/fresh-identity';
import * as nodeCrypto from 'node:crypto';
import {
  GuardedStore,
  logError,
  validLimits,
  type HandlerErrorContext,
  type HandlerLimits,
  type OnError
} from './guard';

// The handler's requests are parsed afresh: identify them with the writer that hashes while it
// writes (flow.ts says why it is installed here, not imported there). Only the handler makes
// such requests, each after `validParams` found it nested no deeper than MAX_PARAMS_DEPTH: the
// writer need not walk it for that again.
useFreshIdentity((server, params, opts) => freshIdentity(server, params, opts, true));
// Hashed by Node's one-shot SHA-256 where the runtime has it (Node 20.12 and later): the same
// digest, a microsecond less per request than the JavaScript one (fresh-identity.ts).
const oneShot = (nodeCrypto as { hash?: typeof nodeCrypto.hash }).hash;
if (typeof oneShot === 'function')
  useDigest((bytes, length) => oneShot('sha256', bytes.subarray(0, length), 'hex').slice(0, 32));

export interface SamplingPolicyOptions {
  /** The policy JSON the lab's editor writes (a value or its text). */
  policy: unknown;
  /** A lane's client configuration (store scope, reasons, alert, RFC switches); defaults apply. */
  client?: unknown;
  /** Where decisions live; default `memoryStore()` (or the scope `client.store` names). */
  store?: DecisionStore;
  /** A callback receiving each record, or a file path the records are appended to as JSONL. */
  audit?: AuditTarget;
  /** The lab's rate cards; default the lab's default cards. */
  rateCards?: unknown;
  consent: ConsentFn;
  sample: SampleFn;
  /** `enforce` (default), or `shadow`: serve every call, record what the policy would have done. */
  mode?: 'enforce' | 'shadow';
  /** Bounds against a flooding server: requests in flight per connection, decisions stored. */
  limits?: HandlerLimits;
  /**
   * Told about each request failed closed because a decision or record could not be written, and
   * about a connection going past `limits.maxInFlight`; default: one line on `console.error`.
   */
  onError?: OnError;
}

/** What the handler holds now (its memory bounds, for monitoring and the flood tests). */
export interface HandlerStats {
  connections: number;
  /** Requests not yet answered, over every connection. */
  inFlight: number;
  /** Requests refused at once because their connection had `maxInFlight` in flight. */
  refusedInFlight: number;
  /** Identities being decided, and presentations waiting on them (in-flight joins). */
  flights: number;
  waiters: number;
  /** Identities in the retry-loop alert's history (at most 10,000). */
  presentations: number;
  /** Decisions in the store (null when the store only answers asynchronously). */
  storedDecisions: number | null;
  /** Audit records waiting to be written. */
  auditQueue: number;
}

/** What the SDK hands a request handler: the request and, as `extra`, its id and abort signal. */
export interface SamplingRequestMessage {
  method?: string;
  params?: unknown;
}
/**
 * The request's id and abort signal: SDK 1.x passes them as `extra.requestId` / `extra.signal`,
 * SDK 2.x as `ctx.mcpReq.id` / `ctx.mcpReq.signal`; either shape is read.
 */
export interface RequestExtra {
  requestId?: JsonRpcId;
  signal?: AbortSignal;
  mcpReq?: { id?: JsonRpcId; signal?: AbortSignal };
}

export interface Connection {
  readonly server: string;
  /** The handler's name for this connection (in the audit records' `connection`). */
  readonly id: string;
  handle(request: SamplingRequestMessage, extra?: RequestExtra): Promise<CreateMessageResult>;
  /** The transport closed: requests still running end, connection-scoped decisions go. */
  close(): void;
}

export interface SamplingPolicy {
  connect(server: string): Connection;
  /** Close every connection, wait for the audit to be written, close the store (if it closes). */
  close(): Promise<void>;
  stats(): HandlerStats;
}

/**
 * A refusal or failure as the SDKs send a thrown error: its integer `code`, `message` and `data`
 * go to the server as they are (a denial: -32003 with the lab's `data`).
 */
export class SamplingError extends Error {
  readonly code: number;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'SamplingError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

const INVALID_PARAMS = -32602;
const INTERNAL = -32603;
const REFUSALS = new Set(['denied', 'budget_exceeded', 'budget_exhausted']);
const MAX_SERVER_NAME = 200;

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * True when `v` is nested no deeper than `limit` and every string in it — object keys and values
 * — is well-formed UTF-16: what `depthExceeded(v) === null && loneSurrogateAt(v) === null` say,
 * in one walk and without building a path per value (the paths are built only for the rare
 * request that fails, by those two). Recursive, but never deeper than `limit` + 1 calls.
 */
function sound(v: unknown, depth: number, limit: number): boolean {
  if (typeof v === 'string') return v.isWellFormed();
  if (typeof v !== 'object' || v === null) return true;
  if (depth > limit) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!sound(v[i], depth + 1, limit)) return false;
    return true;
  }
  const o = v as Record<string, unknown>;
  for (const k in o)
    if (Object.hasOwn(o, k) && (!k.isWellFormed() || !sound(o[k], depth + 1, limit))) return false;
  return true;
}

/** What a request's answer is made by: its connection's (see `connect`). */
interface Answerer {
  /** The request's run ended with `out`. */
  finished(req: Pending, out: AuthOutput): void;
  /** Its record was written (or `failed`): its promise is settled. */
  deliver(req: Pending, error: unknown, failed: boolean): void;
}

/**
 * One request on a connection, from its arrival to its answer: the promise's settle functions,
 * the run, its outcome; as an EventListener object (`handleEvent`), the listener that cancels the
 * run when the server's abort signal fires; and as the audit's WriteListener, what answers once
 * its record is written. One object per request rather than a closure (or promise) per role.
 */
class Pending implements WriteListener, DecisionListener {
  run: RunHandle | undefined = undefined;
  /** The run has ended (it may end inside `authorize`: a stored decision answers at once). */
  ended = false;
  /** The abort listener is on the signal (abort-watch.ts). */
  listening = false;
  /** The run's outcome, once it ended. */
  out: AuthOutput | null = null;
  /** Its neighbours in its connection's list of running requests (see `Running`). */
  prev: Pending | null = null;
  next: Pending | null = null;
  constructor(
    readonly resolve: (v: CreateMessageResult | Promise<CreateMessageResult>) => void,
    readonly reject: (e: unknown) => void,
    readonly signal: AbortSignal | undefined,
    readonly params: SamplingParams,
    readonly answerer: Answerer
  ) {}
  handleEvent(): void {
    this.run?.cancel();
  }
  decided(out: AuthOutput): void {
    this.answerer.finished(this, out);
  }
  written(): void {
    this.answerer.deliver(this, undefined, false);
  }
  failed(error: unknown): void {
    this.answerer.deliver(this, error, true);
  }
}

/**
 * A connection's running requests, oldest first, linked through their Pending records: what
 * `close()` cancels. Why not a Set of runs: on Node 20 a process that makes an AbortSignal per
 * request (the SDK does) promotes to the old generation whatever was put in a long-lived Map or
 * Set, even if taken out again before the next collection — each request's whole run (its
 * context, params and outcome) was promoted and collected by the next mark-compact, a third of
 * the handler's cost through the SDK (scripts/bench-handler.ts). Fields of the records are not.
 */
class Running {
  head: Pending | null = null;
  tail: Pending | null = null;
  add(req: Pending): void {
    req.prev = this.tail;
    if (this.tail) this.tail.next = req;
    else this.head = req;
    this.tail = req;
  }
  delete(req: Pending): void {
    if (req.prev) req.prev.next = req.next;
    else this.head = req.next;
    if (req.next) req.next.prev = req.prev;
    else this.tail = req.prev;
    req.prev = req.next = null;
  }
  /** The runs, newest first. */
  newestFirst(): RunHandle[] {
    const runs: RunHandle[] = [];
    for (let r = this.tail; r !== null; r = r.prev) runs.push(r.run!);
    return runs;
  }
}

/**
 * The request's params, or why they cannot be authorised (the SDK has checked their shape; these
 * are the lab's own bounds, the ones every place params enter applies before hashing).
 */
function validParams(request: SamplingRequestMessage): SamplingParams | string {
  const p = request?.params;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return '$.params: not an object';
  if (!sound(p, 1, MAX_PARAMS_DEPTH)) {
    const deep = depthExceeded(p);
    if (deep) return `${depthPathText(deep, '$.params')}: nested too deep`;
    const lone = loneSurrogateAt(p);
    if (lone) return `${depthPathText(lone, '$.params')}: ${LONE_SURROGATE}`;
  }
  const params = p as SamplingParams;
  if (!Array.isArray(params.messages)) return '$.params.messages: not an array';
  if (!Number.isSafeInteger(params.maxTokens) || params.maxTokens < 0)
    return '$.params.maxTokens: not a non-negative integer';
  return params;
}

export function createSamplingPolicy(opts: SamplingPolicyOptions): SamplingPolicy {
  if (typeof opts?.consent !== 'function')
    throw new HandlerConfigError('options', [{ path: '$.consent', message: 'not a function' }]);
  if (typeof opts.sample !== 'function')
    throw new HandlerConfigError('options', [{ path: '$.sample', message: 'not a function' }]);
  const mode = opts.mode ?? 'enforce';
  if (mode !== 'enforce' && mode !== 'shadow')
    throw new HandlerConfigError('options', [
      { path: '$.mode', message: `'enforce' or 'shadow', got ${JSON.stringify(mode)}` }
    ]);
  const policy = validPolicy(opts.policy);
  const config = validClient(opts.client);
  const cards = validRateCards(opts.rateCards);
  const limits = validLimits(opts.limits);
  if (opts.onError !== undefined && typeof opts.onError !== 'function')
    throw new HandlerConfigError('options', [{ path: '$.onError', message: 'not a function' }]);
  const onError: OnError = opts.onError ?? logError;
  const report = (e: unknown, where: HandlerErrorContext) => {
    try {
      onError(e instanceof Error ? e : new Error(String(e)), where);
    } catch {
      // A broken logger must not change what the server is sent.
    }
  };
  const clientScope = (opts.client as { store?: unknown } | undefined)?.store;
  const given =
    opts.store ?? memoryStore({ scope: clientScope === 'durable' ? 'process' : 'connection' });
  const clock = new RealClock();
  const store = new GuardedStore(given, limits.maxStoredDecisions, () => clock.now());
  if (clientScope !== undefined && clientScope !== store.scope)
    throw new HandlerConfigError('client', [
      {
        path: '$.store',
        message: `'${String(clientScope)}', but the store given is ${store.scope}-scoped`
      }
    ]);
  config.store = store.scope;
  const shadow = mode === 'shadow';
  const audit = new AuditSink(opts.audit, shadow);
  /** The result `sample` returned for a request (by its params object, one per request). */
  const sampled = new WeakMap<SamplingParams, SampleResult>();
  const host: ClientHost = new ClientHost({
    config,
    policy,
    cards,
    store,
    audit,
    clock,
    executor: 'table',
    consent: consentSource(opts.consent, (input): Money | null =>
      preflightEstimate(host.blockFor(input.server), cards, input.params)
    ),
    // Only shadow mode serves a result the policy refused: only it keeps them.
    provider: providerSource(
      opts.sample,
      shadow ? (params, result) => sampled.set(params, result) : () => {}
    )
  });
  const open = new Set<Connection>();
  let connections = 0;
  let closed = false;
  let inFlight = 0;
  let refusedInFlight = 0;
  /** Expired decisions are dropped once a second, as requests arrive (no timer of its own). */
  let lastSweep = clock.now();
  /** Returns the clock's reading, which the request it was taken for is stamped with. */
  function sweepNow(): number {
    const now = clock.now();
    if (now - lastSweep < 1_000) return now;
    lastSweep = now;
    try {
      const n = store.sweep(now);
      if (typeof n !== 'number') n.catch(() => {});
    } catch {
      // A sweep is housekeeping: expired entries are misses anyway.
    }
    // Once a second: read again after the sweep, which may have taken a while.
    return clock.now();
  }

  /** Shadow mode's answer to a call the policy refused: the model's, as if it had been allowed. */
  async function serveAnyway(
    server: string,
    params: SamplingParams,
    out: AuthOutput,
    signal: AbortSignal | undefined
  ): Promise<CreateMessageResult> {
    let result = sampled.get(params);
    const model =
      out.audit.model ??
      params.modelPreferences?.hints?.find((h) => typeof h?.name === 'string' && h.name)?.name ??
      effectiveBlock(host.policy, server).defaultModel;
    if (!result) {
      result = await opts.sample(params, {
        model,
        includeContext: params.includeContext ?? 'none',
        maxTokens: params.maxTokens,
        signal: signal ?? new AbortController().signal
      });
    }
    const content = result?.content;
    if (content?.type !== 'text' || typeof content.text !== 'string')
      throw new SamplingError(INTERNAL, 'sample must return { content: { type: "text", text } }');
    return {
      role: 'assistant',
      content: { type: 'text', text: content.text },
      model: typeof result.model === 'string' ? result.model : model,
      stopReason:
        (['endTurn', 'maxTokens', 'stopSequence'] as const).find((s) => s === result.stopReason) ??
        'endTurn'
    };
  }

  /**
   * The one frame as the SDK wants it, once the request's record is written: a result returned,
   * an error thrown. Synchronous but for shadow mode's model call: the request's promise is
   * settled in the turn its record's write ended.
   */
  function answer(
    server: string,
    params: SamplingParams,
    out: AuthOutput,
    signal: AbortSignal | undefined
  ): CreateMessageResult | Promise<CreateMessageResult> {
    const lost = (out.audit as HandlerAuditRecord).failedClosed;
    if (lost) throw new SamplingError(lost.code, lost.message);
    if (shadow && REFUSALS.has(out.audit.outcome)) return serveAnyway(server, params, out, signal);
    const frame = out.frame;
    if (frame === null) throw new SamplingError(INTERNAL, 'no frame (silence is not shipped)');
    if ('error' in frame)
      throw new SamplingError(frame.error.code, frame.error.message, frame.error.data);
    return frame.result;
  }

  /** Nothing reaches a server unrecorded: a record that could not be written fails its request. */
  function unrecorded(server: string, out: AuthOutput, e: unknown): SamplingError {
    const message = `the audit record could not be written: ${errorText(e)}`;
    report(new Error(message), {
      kind: 'audit',
      server,
      connection: out.audit.connection,
      requestId: out.audit.requestId
    });
    return new SamplingError(INTERNAL, message);
  }

  function connect(server: string): Connection {
    if (closed) throw new Error('connect: this sampling policy is closed');
    if (typeof server !== 'string' || server.length === 0 || server.length > MAX_SERVER_NAME)
      throw new Error(`connect: the server's name must be 1 to ${MAX_SERVER_NAME} characters`);
    if (!server.isWellFormed()) throw new Error(`connect: the server's name ${LONE_SURROGATE}`);
    const id = `${server}#${++connections}`;
    const running = new Running();
    let ended = false;
    let seq = 0;
    /** Requests on this connection not yet answered, and whether the flood was reported. */
    let pending = 0;
    let flooding = false;
    const settled = () => {
      pending--;
      inFlight--;
    };
    /** A request's record was written (or not): settle its promise. */
    const answerer: Answerer = {
      /** Fail it closed if its decision was lost, then answer once its record is written. */
      finished(req, out) {
        req.ended = true;
        if (req.run) running.delete(req);
        // The run is over: what it holds goes, whoever still holds this request.
        req.run = undefined;
        unwatchAbort(req);
        // The decision this request made could not be kept: fail closed, and say so in its
        // record (written after this turn) and the log.
        const lost = store.takeFailure(id, server, out.audit.identity);
        if (lost) {
          const message = `the decision could not be stored: ${errorText(lost)}`;
          (out.audit as HandlerAuditRecord).failedClosed = { code: INTERNAL, message };
          report(new Error(message), {
            kind: 'store',
            server,
            connection: id,
            requestId: out.audit.requestId
          });
        }
        req.out = out;
        audit.whenWritten(out.audit, req);
      },
      deliver(req, error, failed) {
        settled();
        const out = req.out!;
        if (failed) {
          req.reject(unrecorded(server, out, error));
          return;
        }
        try {
          req.resolve(answer(server, req.params, out, req.signal));
        } catch (e) {
          req.reject(e);
        }
      }
    };
    const conn: Connection = {
      server,
      id,
      handle: (request, extra) =>
        new Promise<CreateMessageResult>((resolve, reject) => {
          if (ended) {
            reject(new SamplingError(INTERNAL, `the connection ${id} is closed`));
            return;
          }
          if (pending >= limits.maxInFlight) {
            refusedInFlight++;
            if (!flooding) {
              flooding = true;
              report(
                new Error(
                  `${limits.maxInFlight} sampling requests in flight (limits.maxInFlight): ` +
                    'refusing more with -32603 until some are answered'
                ),
                { kind: 'flood', server, connection: id }
              );
            }
            reject(
              new SamplingError(
                INTERNAL,
                `too many sampling requests in flight on this connection (${limits.maxInFlight})`
              )
            );
            return;
          }
          if (pending < limits.maxInFlight / 2) flooding = false;
          const valid = validParams(request);
          if (typeof valid === 'string') {
            reject(new SamplingError(INVALID_PARAMS, `Invalid sampling request: ${valid}`));
            return;
          }
          const now = sweepNow();
          // One params object per request: shadow mode finds the model's result by it.
          const params: SamplingParams = { ...valid };
          pending++;
          inFlight++;
          const req = new Pending(
            resolve,
            reject,
            extra?.signal ?? extra?.mcpReq?.signal,
            params,
            answerer
          );
          const requestId = extra?.requestId ?? extra?.mcpReq?.id;
          let started: RunHandle;
          try {
            started = host.authorize(
              {
                id: requestId ?? `handler-${++seq}`,
                server,
                connection: id,
                params,
                receivedAt: now,
                fresh: true
              },
              req
            );
          } catch (e) {
            // The host answers its own failures with a frame; this is a bug outside it.
            settled();
            reject(new SamplingError(INTERNAL, `internal error: ${errorText(e)}`));
            return;
          }
          if (req.ended) return;
          req.run = started;
          running.add(req);
          const signal = req.signal;
          if (!signal) return;
          if (isAborted(signal)) req.handleEvent();
          else watchAbort(req);
        }),
      close: () => {
        if (ended) return;
        ended = true;
        open.delete(conn);
        // A request still running gets its one frame (cancelled); the transport is gone anyway.
        // Newest first: presentations waiting on a decision end before the one deciding it, so
        // none of them is left to lead a fresh decision (a new dialog) on a closed connection.
        for (const r of running.newestFirst()) r.cancel();
        store.forgetConnection(id);
        void host.closeConnection(server, id);
      }
    };
    open.add(conn);
    return conn;
  }

  function stats(): HandlerStats {
    const held = host.held();
    const count = store.count();
    return {
      connections: open.size,
      inFlight,
      refusedInFlight,
      flights: held.flights,
      waiters: held.waiters,
      presentations: host.presentations.size,
      storedDecisions: typeof count === 'number' ? count : null,
      auditQueue: audit.pending
    };
  }

  return {
    connect,
    stats,
    close: async () => {
      closed = true;
      for (const c of [...open]) c.close();
      await audit.flush();
      // A store that holds a file (fileStore) writes what is queued and lets the directory go.
      await (given as DecisionStore & { close?: () => Promise<void> | void }).close?.();
    }
  };
}
