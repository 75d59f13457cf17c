/**
 * Bounds on what an input may ask the simulator to do. Every scenario and trace is checked
 * against them before anything runs, in the CLI and the page alike, so a file nobody here wrote
 * (or one written to hurt) is refused with one line instead of running for minutes, eating
 * gigabytes, or overflowing a stack.
 *
 * The per-field bounds live in the schemas (see `LIMITS`); the work bound is an estimate over the
 * whole run: how many requests the two lanes will see and how much request text they will carry.
 */
import {
  CONFIG_INPUT_LIMITS,
  DEFAULT_CLIENT_CONFIG,
  type ClientConfigInput
} from '../../machine/config';
import { MAX_PARAMS_DEPTH } from '../../machine/params-depth';
import type { ServerSpec } from '../world/world';

const DAY_MS = 86_400_000;

/**
 * The field bounds the schemas enforce. Each is documented in the README's scenario section.
 * Those a client configuration and rate cards share with the handler's options are defined with
 * their schemas, in machine/config.ts.
 */
export const LIMITS = {
  /** A run of at most 30 simulated days: a month, far past every lesson (the longest is a day). */
  durationMs: 30 * DAY_MS,
  /** Any other span (timeouts, TTLs, latencies, start delays): at most a year. */
  spanMs: CONFIG_INPUT_LIMITS.spanMs,
  /**
   * A server's task interval, and every wait a behaviour's parameters set between two attempts
   * (intervals, backoffs, reconnects): at least 10 ms. A wait of 0 retried at one instant forever.
   */
  minIntervalMs: CONFIG_INPUT_LIMITS.minIntervalMs,
  /** Tokens in one prompt or prefix, and `maxTokens`: a million, above any model's window. */
  tokens: 1_000_000,
  /**
   * Chunks in one streamed response (`maxTokens / chunkTokens`): the largest maxTokens at the
   * default 50 tokens a chunk. A million one-token chunks took 40 s and 1 GB for one request.
   */
  chunksPerResponse: 20_000,
  /** Tasks per server. */
  tasks: 1_000_000,
  /** A behaviour's count caps (`maxRetries`, `maxReconnects`, `maxShrinks`). */
  retries: CONFIG_INPUT_LIMITS.retries,
  /** The naive retrier's backoff `factor`. */
  backoffFactor: 100,
  /** The naive retrier's `jitter`: at most ±50 %, so a jittered wait keeps half its length. */
  jitter: 0.5,
  /** Servers in one run, after groups are expanded (`count`). */
  servers: 1_000,
  /** Server groups in a scenario. */
  groups: 200,
  /** Time series samples per lane (`durationMs / sampleMs`). */
  samples: 100_000,
  /** Integer digits of a money amount: up to 999,999,999.999999, exact in micro-units. */
  amountDigits: CONFIG_INPUT_LIMITS.amountDigits,
  /** Request params nesting (see `MAX_PARAMS_DEPTH`). */
  paramsDepth: MAX_PARAMS_DEPTH,
  /** Distinct servers in a trace. */
  traceServers: 1_000,
  /** Characters of trace text (JSONL). */
  traceChars: 64_000_000,
  /**
   * The work budget of one run (both lanes): estimated requests, megabytes of request text, and
   * clock events (each request's own, plus its stream's chunks). Set to admit the largest
   * scenario in the repository (`bench/ui-50-servers.json`, a simulated day of 50 servers: about
   * 6.9 million requests, 29,000 MB and 72 million events by the estimate) and a simulated week of
   * the standard load (`bench/retry-storm.json` stretched to 7 days, what `bench:memory -- --week`
   * runs: 3.1 million requests, 55,700 MB; its request text is not held, the page's memory over
   * it is bounded), and nothing an order of magnitude past them.
   */
  requests: 8_000_000,
  megabytes: 64_000,
  events: 100_000_000,
  /** Forks of forks a run may stand on (each is one more change on the same re-simulation). */
  forkDepth: 32
} as const;

/**
 * What one request costs beyond its text: the frame, the audit record, the metrics and the
 * machine's own bookkeeping — measured at roughly 1–2 KB in the CLI; 2 KB errs on the safe side.
 */
const BYTES_PER_REQUEST = 2_048;
/** Characters per stand-in token (as `buildParams` pads prompts). */
const CHARS_PER_TOKEN = 4;
/**
 * Clock events of one request besides its stream's chunks: its send, the host's steps and
 * timers, the stream's start and end, the frame's delivery. Measured at 2–3; 4 errs on the safe
 * side.
 */
const EVENTS_PER_REQUEST = 4;
/** Text one streamed chunk adds to the completion (two generated words). */
const BYTES_PER_CHUNK = 16;

/**
 * One way a behaviour asks again: at most `cap` times per task (Infinity: unbounded), each at
 * least `everyMs` after the attempt before (0: as soon as a frame says, so only the cap bounds
 * it; the schemas allow an unbounded cap only with a floor on the wait). `closesMs`: each retry
 * first closes the connection for that long (the reconnector), and the server's other tasks
 * wait it out, looking again every 500 ms.
 */
export interface RetryChannel {
  cap: number;
  everyMs: number;
  closesMs?: number;
}

export interface WorkEstimate {
  requests: number;
  megabytes: number;
  events: number;
}

/** How often a task on a closed connection looks again (servers/base.ts). */
const POLL_MS = 500;

/**
 * Tasks a server may start in `span`: arrivals are random (exponential gaps of mean
 * `intervalMs`), so the count is taken three standard deviations above its mean.
 */
function taskCount(s: Pick<ServerSpec, 'intervalMs' | 'tasks'>, span: number): number {
  const mean = span / Math.max(s.intervalMs, LIMITS.minIntervalMs);
  return Math.min(s.tasks ?? Infinity, Math.ceil(mean + 3 * Math.sqrt(mean)) + 1);
}

/** Retries of one task on one channel: its cap, and at most one per `everyMs` of the run. */
function channelRetries(c: RetryChannel, span: number): number {
  if (c.cap <= 0) return 0;
  return c.everyMs > 0 ? Math.min(c.cap, span / c.everyMs) : c.cap;
}

/** What one server may cost: its requests, and the looks again of tasks on a closed connection. */
export interface ServerWork {
  requests: number;
  polls: number;
}

/**
 * The work of one server in `durationMs`: its tasks (by `tasks` or by its interval), each one
 * first attempt plus what every retry channel of its behaviour allows — its cap, and no more
 * than the run's time allows at its shortest wait (see {@link RetryChannel}). An upper estimate:
 * a run usually sends far fewer, since most tasks succeed on the first try.
 */
export function serverWork(
  s: Pick<ServerSpec, 'intervalMs' | 'tasks' | 'startAfterMs'>,
  channels: readonly RetryChannel[],
  durationMs: number
): ServerWork {
  const span = Math.max(0, durationMs - (s.startAfterMs ?? 0));
  const tasks = taskCount(s, span);
  let perTask = 1;
  let closed = 0;
  for (const c of channels) {
    const n = channelRetries(c, span);
    perTask += n;
    if (c.closesMs) closed += tasks * n * c.closesMs;
  }
  // While the connection is closed, every task of the server may be waiting on it.
  const polls = closed > 0 ? (tasks * Math.min(span, closed)) / POLL_MS : 0;
  return { requests: Math.ceil(tasks * perTask), polls: Math.ceil(polls) };
}

/**
 * How many times over a lane may see each task's requests: under 2026-07-28 a refused round fails
 * the host's tool call and its agent loop calls the tool again (`hostRetries`, no more often than
 * `hostRetryDelayMs` allows in `span`), each call asking afresh; under 2025-11-25, once.
 */
export function hostCallsPerTask(client: ClientConfigInput | undefined, span: number): number {
  if ((client?.protocol ?? DEFAULT_CLIENT_CONFIG.protocol) !== '2026-07-28') return 1;
  const cap = client?.hostRetries ?? DEFAULT_CLIENT_CONFIG.hostRetries;
  const every = client?.hostRetryDelayMs ?? DEFAULT_CLIENT_CONFIG.hostRetryDelayMs;
  return 1 + channelRetries({ cap, everyMs: every }, span);
}

/** The requests of {@link serverWork}. */
export function serverRequests(
  s: Pick<ServerSpec, 'intervalMs' | 'tasks' | 'startAfterMs'>,
  channels: readonly RetryChannel[],
  durationMs: number
): number {
  return serverWork(s, channels, durationMs).requests;
}

/** Chunks of one streamed response at most: `maxTokens` in chunks of `chunkTokens`. */
export function responseChunks(maxTokens: number, chunkTokens: number): number {
  return Math.ceil(maxTokens / Math.max(1, chunkTokens));
}

/**
 * The work estimate of a run, both lanes: requests × (bookkeeping + request text + streamed
 * text), and clock events: requests × (their own + their stream's chunks), and the looks again
 * of tasks waiting on a closed connection.
 */
export function estimateWork(
  perServer: readonly { requests: number; chars: number; chunks: number; polls?: number }[]
): WorkEstimate {
  let requests = 0;
  let bytes = 0;
  let events = 0;
  for (const s of perServer) {
    requests += 2 * s.requests;
    bytes += 2 * s.requests * (BYTES_PER_REQUEST + s.chars + s.chunks * BYTES_PER_CHUNK);
    events += 2 * (s.requests * (EVENTS_PER_REQUEST + s.chunks) + (s.polls ?? 0));
  }
  return { requests, megabytes: bytes / 1e6, events };
}

/** The characters of one templated request: prompt or padding, prefix, system prompt. */
export function templateChars(t: {
  prompt: string;
  systemPrompt?: string | undefined;
  promptTokens?: number | undefined;
  prefixTokens?: number | undefined;
}): number {
  const prompt = Math.max(t.prompt.length, (t.promptTokens ?? 0) * CHARS_PER_TOKEN);
  return prompt + (t.prefixTokens ?? 0) * CHARS_PER_TOKEN + (t.systemPrompt?.length ?? 0);
}

function round(n: number): string {
  if (!Number.isFinite(n)) return 'more than 10^308';
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toPrecision(2);
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * `null` within the budget; otherwise the one line that refuses the run:
 * "this run would be about 7,000,000 requests / 14,336 MB; the limit is 6,000,000 requests /
 * 25,000 MB (…)", or, when the streams are what is too much, the events.
 */
export function workRefusal(
  w: WorkEstimate,
  input: 'scenario' | 'trace' = 'scenario'
): string | null {
  // What the input can change: a trace's requests are as written, the scenario's provider is not its own.
  const trace = input === 'trace';
  if (w.requests > LIMITS.requests || w.megabytes > LIMITS.megabytes) {
    return (
      `this run would be about ${round(w.requests)} requests / ${round(w.megabytes)} MB; ` +
      `the limit is ${count(LIMITS.requests)} requests / ${count(LIMITS.megabytes)} MB ` +
      (trace
        ? '(fewer request events, or shorter messages in them)'
        : '(fewer servers, a longer intervalMs, fewer retries, a shorter durationMs or fewer tokens)')
    );
  }
  if (w.events > LIMITS.events) {
    return (
      `this run would be about ${round(w.events)} clock events (its ${round(w.requests)} requests and their streams' chunks); ` +
      `the limit is ${count(LIMITS.events)} ` +
      (trace
        ? '(a smaller params.maxTokens in its requests, or fewer request events)'
        : '(a larger provider.chunkTokens, a smaller maxTokens or fewer requests)')
    );
  }
  return null;
}
