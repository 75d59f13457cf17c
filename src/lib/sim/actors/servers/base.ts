/**
 * What every simulated server shares: the task arrivals, the send (waiting out a disconnection),
 * the timeout timer of each request, reading the frame that comes back, and the reports. A
 * behaviour only decides what to do about a failure: a refusal, an error, or silence.
 *
 * A server sees only its own requests and the frames that come back (or do not): never the
 * client's decision store, policy or configuration.
 *
 * Over 400 lines on purpose: reading a frame into a failure and acting on it are one server's loop.
 */
import { classifyFrame } from '../../../machine/frames';
import type { BudgetDecision, Frame, JsonRpcId, SamplingParams } from '../../../machine/types';
import { copyable } from '../../../machine/clone';
import type { Rng } from '../../world/rng';
import { TimerTable } from '../../world/timer-table';
import type {
  ServerAgent,
  ServerEnv,
  ServerReport,
  ServerSpec,
  ServerTimer,
  Task,
  WireStyle
} from '../../world/world';
import { buildParams, type BuildOptions } from './request';
// The SDK's McpError and ErrorCode, without its zod-built types module (sdk-error.ts).
import { SdkErrorCode as ErrorCode, SdkMcpError as McpError } from './sdk-error';

/** How long a server waits before trying again to send on a closed connection. */
const RECONNECT_POLL_MS = 500;
/**
 * How long a server takes to reconnect after its SDK said the connection closed (`-32000`): a
 * local stdio server restarts in well under a second.
 */
export const CLOSED_RECONNECT_MS = 300;
/** The SDK's default cap on `input_required` rounds in one tool call (2026-07-28). */
export const MAX_INPUT_ROUNDS = 10;
/** The lab's denial code; not one of the SDK's `ErrorCode`s (it is ours, in -32000..-32019). */
const LAB_DENIAL = -32003;

/** Parameters every behaviour understands. */
export const BASE_DEFAULTS: Record<string, unknown> = {
  /** Reads `_meta.context` on a result: a trimmed answer is then reported as degraded-aware. */
  readsMeta: true
};

/** What went wrong with a request, as the server can tell from the frame (or its absence). */
export type Failure =
  | {
      kind: 'denied';
      reason: string;
      retryable: boolean;
      retryAfterMs?: number;
      resetsAt?: string;
    }
  /** Refused pre-flight on cost; `decision` is the RFC's basis when the frame carried a usable one. */
  | { kind: 'budget_exceeded'; decision: BudgetDecision | null }
  /**
   * An error as the server's SDK shows it: a request timeout (transport), an internal error
   * (provider: transient), a closed connection (-32000: the server reconnects), or any other
   * code or a frame this server cannot read.
   */
  | {
      kind: 'error';
      what: 'transport_error' | 'provider_error' | 'connection_closed' | 'unknown';
    }
  /** No frame before the request's timeout. */
  | { kind: 'timeout' };

/** What a blank copy holds until its fields are copied in (clone.ts). */
const NO_TASK: Task = { n: 0, attempts: 0, startedAt: 0 };
const NO_PARAMS = { messages: [], maxTokens: 0 } as unknown as SamplingParams;

/** One task of a server, across its attempts. */
export class TaskState {
  /** Behaviour-specific counters (polite retries, shrinks, reconnects, …). */
  tally: Record<string, number> = {};
  /** Retry requests sent so far. */
  retries = 0;
  done = false;
  constructor(
    readonly task: Task,
    /** The params of the task's first request. */
    readonly original: SamplingParams,
    /** The params the next attempt sends (a behaviour replaces them to shrink or mutate). */
    public params: SamplingParams
  ) {}
}
// Params are never changed once built (a behaviour replaces them): shared.
copyable(TaskState, {
  name: 'servers.TaskState',
  fields: { original: 'shared', params: 'shared' },
  blank: () => new TaskState(NO_TASK, NO_PARAMS, NO_PARAMS)
});

/** A request sent and not yet settled. */
class Pending {
  timer: number | null = null;
  settled = false;
  constructor(
    /** Its number at the server: its timeout timer names it. */
    readonly serial: number,
    readonly id: JsonRpcId,
    readonly state: TaskState,
    readonly params: SamplingParams
  ) {}
}
copyable(Pending, {
  name: 'servers.Pending',
  fields: { params: 'shared' },
  blank: () => new Pending(0, 0, new TaskState(NO_TASK, NO_PARAMS, NO_PARAMS), NO_PARAMS)
});

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decisionOf(v: unknown): BudgetDecision | null {
  if (!isObject(v) || !isObject(v.decision)) return null;
  const d = v.decision;
  const tokens = d.estimatedTokens;
  const ok =
    isObject(d.estimatedCost) &&
    isObject(d.limitApplied) &&
    typeof d.meterBasis === 'string' &&
    isObject(tokens) &&
    typeof tokens.input === 'number' &&
    typeof tokens.output === 'number';
  return ok ? (d as unknown as BudgetDecision) : null;
}

/**
 * What the server's SDK hands its code for an error frame: an `McpError` built from the
 * response's code, message and data, as the SDK's `Protocol` builds it. A server sees nothing else.
 */
export function sdkErrorOf(frame: unknown): McpError | null {
  const read = sdkErrorRead(frame);
  if (read === null) return null;
  const { code, message, data } = read;
  // Built without a stack trace: a server reads the error's code and data, never its stack, and
  // capturing one was ~80 % of this call — ~6 % of the playground worker's live play, where
  // every refusal and failure passes here. (V8 reads the limit when an error is constructed;
  // elsewhere the setting is ignored and the error simply has its stack.)
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new McpError(code, typeof message === 'string' ? message : '', data);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * What {@link sdkErrorOf}'s error holds, without building it: the code and data a server reads
 * (the McpError keeps both as the frame gives them), or null when the SDK would raise none.
 * Chromium builds an Error in ~1.7 µs whatever the stack trace limit (Node: 0.3 µs at 0), and
 * every refusal and failure a server hears was one: ~9 % of the playground worker's live play.
 */
function sdkErrorRead(frame: unknown): { code: number; message: unknown; data: unknown } | null {
  if (!isObject(frame) || !isObject(frame.error)) return null;
  const { code, message, data } = frame.error;
  if (typeof code !== 'number' || !Number.isInteger(code)) return null;
  return { code, message, data };
}

/** Reads a denial's data defensively: a server never trusts the shape of what it receives. */
function denialOf(data: Record<string, unknown>): Failure {
  const out: Failure = {
    kind: 'denied',
    reason: typeof data.reason === 'string' ? data.reason : 'unknown',
    // Absent or malformed reads as permanent: under uncertainty, stop asking.
    retryable: data.retryable === true
  };
  const after = data.retryAfterMs;
  if (typeof after === 'number' && Number.isFinite(after) && after >= 0) {
    out.retryAfterMs = after;
  }
  if (typeof data.resetsAt === 'string') out.resetsAt = data.resetsAt;
  return out;
}

/**
 * What a server can tell from a frame that is not a completion. An error is classified by the
 * code of the `McpError` its SDK raises, with the SDK's own `ErrorCode` values: only the lab's
 * `-32003` (with `data`) is a refusal it can read; `-32000` is the SDK's closed connection,
 * `-32001` its request timeout, `-32603` an internal (transient) failure; anything else (a spec
 * `-1`, `-32600`, `-32601`) it cannot interpret.
 */
export function failureOf(frame: unknown): Failure {
  const f = isObject(frame) ? frame : {};
  if (isObject(f.result)) {
    if (f.result.stopReason === 'budget_exceeded')
      return { kind: 'budget_exceeded', decision: decisionOf(f.result.budget) };
    return { kind: 'error', what: 'unknown' };
  }
  // The SDK's error is read, not built (sdkErrorRead): its code and data are the frame's.
  const e = sdkErrorRead(frame);
  if (e === null) return { kind: 'error', what: 'unknown' };
  const data = isObject(e.data) ? e.data : {};
  switch (e.code) {
    case LAB_DENIAL:
      return isObject(data.budget)
        ? { kind: 'budget_exceeded', decision: decisionOf(data.budget) }
        : denialOf(data);
    case ErrorCode.ConnectionClosed:
      return { kind: 'error', what: 'connection_closed' };
    case ErrorCode.RequestTimeout:
      return { kind: 'error', what: 'transport_error' };
    case ErrorCode.InternalError:
      return { kind: 'error', what: 'provider_error' };
    default:
      return { kind: 'error', what: 'unknown' };
  }
}

/** A short description of a failure, for `task.abandoned.why`. */
export function describeFailure(f: Failure): string {
  switch (f.kind) {
    case 'denied':
      return `denied (${f.reason}, ${f.retryable ? 'transient' : 'permanent'})`;
    case 'budget_exceeded':
      return 'budget_exceeded';
    case 'error':
      return f.what.replace('_', ' ');
    case 'timeout':
      return 'no answer (timeout)';
  }
}

/** Typed access to a server's behaviour parameters, with errors that name the place. */
export class BehaviourParams {
  readonly values: Readonly<Record<string, unknown>>;
  private readonly where: string;

  constructor(spec: ServerSpec, defaults: Record<string, unknown>) {
    this.values = { ...BASE_DEFAULTS, ...defaults, ...spec.params };
    this.where = `server '${spec.name}' (${spec.behaviour})`;
    // Check every declared parameter now, so a bad one fails at creation, not mid-run.
    for (const [key, d] of Object.entries({ ...BASE_DEFAULTS, ...defaults })) {
      if (typeof d === 'boolean') this.bool(key);
      else if (typeof d === 'number') {
        if (key.startsWith('max')) this.cap(key);
        else this.num(key);
      } else if (typeof d === 'string' && typeof this.values[key] !== 'string') {
        this.fail(key, 'a string');
      }
    }
  }

  private fail(key: string, what: string): never {
    const v = this.values[key];
    const got = typeof v === 'number' && !Number.isFinite(v) ? String(v) : JSON.stringify(v);
    throw new Error(`${this.where}: parameter '${key}' must be ${what}, got ${got}`);
  }

  /**
   * A finite non-negative number. The scenario's schema bounds each parameter (params.ts); this
   * is for a server made without one, so a NaN or an Infinity never reaches a timer.
   */
  num(key: string): number {
    const v = this.values[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      this.fail(key, 'a non-negative number');
    return v;
  }

  /** A count cap: a non-negative number, or null for unbounded (JSON has no Infinity). */
  cap(key: string): number {
    const v = this.values[key];
    return v === null || v === Infinity ? Infinity : this.num(key);
  }

  bool(key: string): boolean {
    const v = this.values[key];
    if (typeof v !== 'boolean') this.fail(key, 'true or false');
    return v;
  }

  oneOf<T extends string>(key: string, options: readonly T[]): T {
    const v = this.values[key];
    if (typeof v !== 'string' || !(options as readonly string[]).includes(v)) {
      this.fail(key, `one of ${options.map((o) => `'${o}'`).join(', ')}`);
    }
    return v as T;
  }
}
// Never changed once made: servers share theirs with their copies (below); named for snapshots.
copyable(BehaviourParams, { name: 'servers.BehaviourParams' });

/**
 * The shared mechanics. Tasks start at `startAfterMs`, then one every `intervalMs` on average
 * (exponential gaps), up to `tasks`. Each request gets a timeout timer; a frame settles it, and
 * a frame arriving after its request timed out is ignored, as MCP SDKs drop responses to ids
 * they no longer wait for. Subclasses implement {@link onFailure}.
 *
 * Random draws come from two streams forked from `env.rng` by label: task arrivals and the
 * behaviour's own draws (jitter). Forking keeps the arrival times of a server the same in two
 * lanes even when one lane's frames make it retry (and draw jitter) more than the other.
 */
/** Whether a request id goes in a server's table (timer-table.ts keys: positive integers). */
function tableKey(id: JsonRpcId): boolean {
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0;
}

export abstract class BaseServer implements ServerAgent {
  protected readonly p: BehaviourParams;
  /** The behaviour's own random stream (jitter). */
  protected rng: Rng;
  private arrivals: Rng;
  // Tables, not Maps (timer-table.ts: a long-lived Map that empties and refills per request
  // allocates new tables as it goes).
  /** Requests not yet settled, by id (a positive integer, as the lane and fake env number them). */
  private pending = new TimerTable<Pending>(8);
  /** The same for an id of another kind (a string): none in the simulation's own runs. */
  private pendingOther: Map<JsonRpcId, Pending> | null = null;
  /** Requests whose timeout is on the clock, by serial (a `timeout` timer names one). */
  private timing = new TimerTable<Pending>(8);
  private serial = 0;
  /** Tasks not yet done, by number (a `send` or `reconnect` timer names one). */
  private tasks = new TimerTable<TaskState>(8);
  private readonly maxTasks: number;
  private started = 0;

  constructor(
    protected readonly env: ServerEnv,
    protected readonly spec: ServerSpec,
    defaults: Record<string, unknown>
  ) {
    this.p = new BehaviourParams(spec, defaults);
    this.maxTasks = spec.tasks ?? Infinity;
    if (this.maxTasks === Infinity && !(spec.intervalMs > 0)) {
      throw new Error(
        `server '${spec.name}': intervalMs must be positive when tasks are unbounded, got ${spec.intervalMs}`
      );
    }
    this.arrivals = env.rng.fork('arrivals');
    this.rng = env.rng.fork('behaviour');
  }

  start(): void {
    if (this.maxTasks <= 0) return;
    this.env.schedule(Math.max(0, this.spec.startAfterMs ?? 0), { type: 'start' });
  }

  onTimer(t: ServerTimer): void {
    switch (t.type) {
      case 'start':
        return this.startTask();
      case 'send': {
        const s = this.tasks.get(t.task);
        if (s) this.send(s, t.retry, t.wire);
        return;
      }
      case 'timeout': {
        const pending = this.timing.get(t.pending);
        if (!pending) return;
        this.timing.delete(t.pending);
        pending.timer = null;
        return this.onTimeout(pending);
      }
      case 'reconnect': {
        // Another task of this server may have reconnected already.
        if (!this.env.connected()) {
          this.env.connect();
          this.env.report({ type: 'reconnect' });
        }
        const s = t.task === undefined ? undefined : this.tasks.get(t.task);
        if (s) this.send(s, true);
        return;
      }
    }
  }

  /** A timer that sends task `s` again (`retry`: reported as a retry when sent). */
  protected sendTimer(s: TaskState, retry: boolean, wire?: WireStyle): ServerTimer {
    return wire
      ? { type: 'send', task: s.task.n, retry, wire }
      : { type: 'send', task: s.task.n, retry };
  }

  private pendingOf(id: JsonRpcId): Pending | undefined {
    return tableKey(id) ? this.pending.get(id as number) : this.pendingOther?.get(id);
  }

  onFrame(id: JsonRpcId, frame: Frame): void {
    const pending = this.pendingOf(id);
    if (pending === undefined || pending.settled) return;
    this.settle(pending);
    const kind = classifyFrame(frame);
    if (kind === 'allowed' || kind === 'trimmed' || kind === 'budget_exhausted') {
      this.onSuccess(pending.state, kind, pending.params);
      return;
    }
    const failure = failureOf(frame);
    // Its SDK said the connection closed: the server reconnects, then its behaviour decides
    // whether to ask again (a refusal sent as -32000 looks exactly like this).
    if (failure.kind === 'error' && failure.what === 'connection_closed') this.reconnect();
    this.onFailure(pending.state, failure);
  }

  onToolCallFailed(id: JsonRpcId): void {
    const pending = this.pendingOf(id);
    if (pending === undefined || pending.settled) return;
    this.settle(pending);
    this.hostFailed(pending.state);
  }

  /**
   * 2026-07-28: the task's tool call failed at the host. Nothing reaches the server's code, so its
   * behaviour (retry, reconnect, degrade) never runs: the host's agent loop decides whether the
   * tool is called again, and the task then starts over from its first request.
   */
  private hostFailed(s: TaskState): void {
    s.tally.rounds = 0;
    const calls = this.bump(s, 'hostFailures');
    const wait = this.env.hostRetryAfterMs(calls);
    if (wait === null) {
      return this.abandon(
        s,
        `its tool call failed at the host ${calls === 1 ? 'once' : `${calls} times`}; the host gave up (the server never heard why)`
      );
    }
    this.env.report({ type: 'host.retry', task: s.task.n });
    s.params = s.original;
    this.env.schedule(wait, this.sendTimer(s, false));
  }

  private reconnect(): void {
    if (!this.env.connected()) return;
    this.env.disconnect();
    this.env.schedule(CLOSED_RECONNECT_MS, { type: 'reconnect' });
  }

  /** The params of task `n` (a behaviour may change what it asks for). */
  protected paramsFor(n: number, opts?: BuildOptions): SamplingParams {
    return buildParams(this.spec.request, n, opts);
  }

  /** What to do about a failed request: retry (a helper below), abandon, or anything else. */
  protected abstract onFailure(s: TaskState, f: Failure): void;

  /** The server used a completion; `sent` is the request it answered. */
  protected onSuccess(
    s: TaskState,
    kind: 'allowed' | 'trimmed' | 'budget_exhausted',
    sent: SamplingParams
  ): void {
    if (kind === 'budget_exhausted') return this.complete(s, { partial: true });
    const askedForContext =
      sent.includeContext === 'allServers' || sent.includeContext === 'thisServer';
    if (kind === 'trimmed' && this.p.bool('readsMeta'))
      return this.complete(s, { degradedAware: true });
    // No annotation (or one it does not read): it presents the answer as made with the context it
    // asked for. Whether it actually got it only the host knows; the engine cross-checks.
    this.complete(s, askedForContext ? { unawareOfTrim: true } : {});
  }

  private startTask(): void {
    this.started++;
    const n = this.started;
    const params = this.paramsFor(n);
    const s = new TaskState({ n, attempts: 0, startedAt: this.env.now() }, params, params);
    this.tasks.set(n, s);
    this.env.report({ type: 'task.started', task: n });
    this.send(s, false);
    if (this.started < this.maxTasks) {
      this.env.schedule(this.arrivals.exponential(this.spec.intervalMs), { type: 'start' });
    }
  }

  /**
   * Send the task's current params now. On a closed connection, wait {@link RECONNECT_POLL_MS}
   * and try again: that is not a retry (nothing was sent).
   */
  protected send(s: TaskState, isRetry: boolean, wire?: WireStyle): void {
    if (s.done) return;
    const rounds = this.env.protocol() === '2026-07-28';
    // The host's SDK fulfils at most MAX_INPUT_ROUNDS rounds of one tool call, then fails it.
    if (rounds && this.count(s, 'rounds') >= MAX_INPUT_ROUNDS) return this.hostFailed(s);
    s.task.attempts++;
    const sent = s.params;
    // The task as it is now: the environment reads it during the call and keeps none of it.
    const id = this.env.send(sent, s.task, wire);
    if (id === null) {
      s.task.attempts--;
      this.env.schedule(RECONNECT_POLL_MS, this.sendTimer(s, isRetry, wire));
      return;
    }
    if (isRetry) {
      s.retries++;
      this.env.report({ type: 'retry', task: s.task.n });
    }
    if (rounds) this.bump(s, 'rounds');
    const pending = new Pending(++this.serial, id, s, sent);
    // A reused id (a new connection numbering from 1 again) orphans the old entry, whose own
    // timer still settles it as a timeout.
    if (tableKey(id)) this.pending.put(id as number, pending);
    else (this.pendingOther ??= new Map()).set(id, pending);
    // Under 2026-07-28 the server answered `input_required` and waits for nothing: no timeout.
    if (!rounds && Number.isFinite(this.spec.timeoutMs)) {
      pending.timer = this.env.schedule(Math.max(0, this.spec.timeoutMs), {
        type: 'timeout',
        pending: pending.serial
      });
      this.timing.set(pending.serial, pending);
    }
  }

  private settle(p: Pending): void {
    p.settled = true;
    if (p.timer !== null) this.env.cancel(p.timer);
    p.timer = null;
    this.timing.delete(p.serial);
    if (this.pendingOf(p.id) === p) {
      if (tableKey(p.id)) this.pending.delete(p.id as number);
      else this.pendingOther!.delete(p.id);
    }
  }

  private onTimeout(p: Pending): void {
    if (p.settled) return;
    this.settle(p);
    this.env.report({ type: 'timeout', task: p.state.task.n });
    this.onFailure(p.state, { kind: 'timeout' });
  }

  /** Send the task's current params again after `ms` (reported as a retry when sent). */
  protected retryAfter(s: TaskState, ms: number, wire?: WireStyle): void {
    this.env.schedule(Math.max(0, ms), this.sendTimer(s, true, wire));
  }

  /** A behaviour-specific counter of the task. */
  protected count(s: TaskState, key: string): number {
    return s.tally[key] ?? 0;
  }

  protected bump(s: TaskState, key: string): number {
    const v = this.count(s, key) + 1;
    s.tally[key] = v;
    return v;
  }

  protected complete(
    s: TaskState,
    extra: { degradedAware?: true; unawareOfTrim?: true; partial?: true }
  ): void {
    if (s.done) return;
    s.done = true;
    this.tasks.delete(s.task.n);
    const r: Extract<ServerReport, { type: 'task.completed' }> = {
      type: 'task.completed',
      task: s.task.n
    };
    if (extra.degradedAware) r.degradedAware = true;
    if (extra.unawareOfTrim) r.unawareOfTrim = true;
    if (extra.partial) r.partial = true;
    this.env.report(r);
  }

  protected abandon(s: TaskState, why: string): void {
    if (s.done) return;
    s.done = true;
    this.tasks.delete(s.task.n);
    this.env.report({ type: 'task.abandoned', task: s.task.n, why });
  }
}

// Every behaviour's state is this class's (and a few fields of its own, copied deep): its
// parameters and spec are never changed once made.
copyable(BaseServer, {
  name: 'servers.BaseServer',
  fields: { p: 'shared', spec: 'shared' }
});
