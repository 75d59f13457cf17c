/**
 * Bounds on what an input may ask the simulator to do. Every scenario and trace is checked
 * against them before anything runs, in the CLI and the page alike, so a file nobody here wrote
 * (or one written to hurt) is refused with one line instead of running for minutes, eating
 * gigabytes, or overflowing a stack.
 *
 * The per-field bounds live in the schemas (see `LIMITS`); the work bound is an estimate over the
 * whole run: how many requests the two lanes will see and how much request text they will carry.
 */
import { MAX_PARAMS_DEPTH } from '../machine/identity';
import type { ServerSpec } from './world';

const DAY_MS = 86_400_000;

/** The field bounds the schemas enforce. Each is documented in the README's scenario section. */
export const LIMITS = {
  /** A run of at most 30 simulated days: a month, far past every lesson (the longest is a day). */
  durationMs: 30 * DAY_MS,
  /** Any other span (timeouts, TTLs, latencies, start delays): at most a year. */
  spanMs: 366 * DAY_MS,
  /** A server's task interval: at least 10 ms (100 tasks a second per server). */
  minIntervalMs: 10,
  /** Tokens in one prompt or prefix, and `maxTokens`: a million, above any model's window. */
  tokens: 1_000_000,
  /** Chunks in one streamed response (`maxTokens / chunkTokens`). */
  chunksPerResponse: 10_000,
  /** Tasks per server. */
  tasks: 1_000_000,
  /** Servers in one run, after groups are expanded (`count`). */
  servers: 1_000,
  /** Server groups in a scenario. */
  groups: 200,
  /** Time series samples per lane (`durationMs / sampleMs`). */
  samples: 100_000,
  /** Integer digits of a money amount: up to 999,999,999.999999, exact in micro-units. */
  amountDigits: 9,
  /** Request params nesting (see `MAX_PARAMS_DEPTH`). */
  paramsDepth: MAX_PARAMS_DEPTH,
  /** Distinct servers in a trace. */
  traceServers: 1_000,
  /** Characters of trace text (JSONL). */
  traceChars: 64_000_000,
  /**
   * The work budget of one run (both lanes): estimated requests, and megabytes of request text.
   * Set to admit the largest scenario in the repository (`bench/ui-50-servers.json`, a simulated
   * day of 50 servers: about 5.1 million by the estimate, ~21 GB) and nothing an order of
   * magnitude past it.
   */
  requests: 6_000_000,
  megabytes: 25_000,
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
/** What a behaviour whose retries are unbounded (`null`) is assumed to try per task. */
const UNBOUNDED_ATTEMPTS = 100;

export interface WorkEstimate {
  requests: number;
  megabytes: number;
}

function finiteParam(params: Record<string, unknown>, key: string): number | null | undefined {
  if (!Object.hasOwn(params, key)) return undefined;
  const v = params[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : v === null ? null : undefined;
}

/**
 * How many requests one server may send in `durationMs`: its tasks (by `tasks` or by its
 * interval) times the attempts each may make (1 + `maxRetries` + `maxReconnects`, from the
 * behaviour's merged parameters; unbounded ones count as 100). An upper estimate: a run usually
 * sends fewer, since most tasks succeed on the first try.
 */
export function serverRequests(
  s: Pick<ServerSpec, 'intervalMs' | 'tasks' | 'startAfterMs'>,
  params: Record<string, unknown>,
  durationMs: number
): number {
  const span = Math.max(0, durationMs - (s.startAfterMs ?? 0));
  const byTime = Math.ceil(span / Math.max(s.intervalMs, LIMITS.minIntervalMs)) + 1;
  const tasks = Math.min(s.tasks ?? Infinity, byTime);
  let attempts = 1;
  for (const key of ['maxRetries', 'maxReconnects']) {
    const v = finiteParam(params, key);
    if (v === null) attempts += UNBOUNDED_ATTEMPTS;
    else if (v !== undefined) attempts += Math.min(v, UNBOUNDED_ATTEMPTS);
  }
  return tasks * attempts;
}

/** The work estimate of a run, both lanes: requests × (bookkeeping + request text). */
export function estimateWork(
  perServer: readonly { requests: number; chars: number }[]
): WorkEstimate {
  let requests = 0;
  let bytes = 0;
  for (const s of perServer) {
    requests += 2 * s.requests;
    bytes += 2 * s.requests * (BYTES_PER_REQUEST + s.chars);
  }
  return { requests, megabytes: bytes / 1e6 };
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
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toPrecision(2);
}

/**
 * `null` within the budget; otherwise the one line that refuses the run:
 * "this run would be about 7,000,000 requests / 14,336 MB; the limit is 6,000,000 requests /
 * 25,000 MB (…)".
 */
export function workRefusal(w: WorkEstimate): string | null {
  if (w.requests <= LIMITS.requests && w.megabytes <= LIMITS.megabytes) return null;
  return (
    `this run would be about ${round(w.requests)} requests / ${round(w.megabytes)} MB; ` +
    `the limit is ${LIMITS.requests.toLocaleString('en-US')} requests / ${LIMITS.megabytes.toLocaleString('en-US')} MB ` +
    '(fewer servers, a longer intervalMs, a shorter durationMs or fewer tokens)'
  );
}
