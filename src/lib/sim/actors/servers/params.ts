/**
 * The bounds of every behaviour parameter, and what each lets a server cost. A scenario's
 * `params` are checked here (scenario.ts) with the same bounds as every other number in it:
 * finite, a wait between two attempts at least 10 ms, a count cap a whole number — so no
 * parameter can make a server ask again at one instant forever, or compute a wait of NaN.
 *
 * The retry channels say how often a task of the behaviour may ask again, for the work estimate
 * (limits.ts): `maxRetries` 1,000,000 at 10 ms is counted as what a run's time allows.
 */
import { z } from 'zod';
import { LIMITS, type RetryChannel } from '../../input/limits';
import type { ServerSpec } from '../../world/world';

/** A wait between two attempts, in ms. */
const wait = z.number().min(LIMITS.minIntervalMs).max(LIMITS.spanMs);
/** A count cap that must be reached: its waits may be as short as a frame says (0 included). */
const cap = z.int().min(0).max(LIMITS.retries);
/** A count cap whose waits have a floor: `null` means unbounded (JSON has no Infinity). */
const openCap = cap.nullable();

export type ParamShape = Record<string, z.ZodType>;

/** The merged parameters of one server (defaults, then the scenario's), already checked. */
export type ParamValues = Readonly<Record<string, unknown>>;

export interface BehaviourParamSpec {
  shape: ParamShape;
  /** The ways a task of this behaviour asks again (limits.ts counts them over the run). */
  retries(p: ParamValues, spec: Pick<ServerSpec, 'timeoutMs'>): RetryChannel[];
}

/** A cap's value: `null` (and the tight loop's default, Infinity) is unbounded. */
function capOf(v: unknown): number {
  return v === null ? Infinity : typeof v === 'number' ? v : 0;
}

function ms(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

export const BASE_SHAPE: ParamShape = { readsMeta: z.boolean() };

const WELL_BEHAVED_SHAPE: ParamShape = {
  maxRetries: cap,
  defaultRetryAfterMs: wait,
  backoffMs: wait
};

/** Transient denials, errors and silence: as soon as a transient denial's `retryAfterMs` says. */
const polite = (p: ParamValues): RetryChannel => ({ cap: capOf(p.maxRetries), everyMs: 0 });

export const PARAM_SPECS: Record<string, BehaviourParamSpec> = {
  'well-behaved': { shape: WELL_BEHAVED_SHAPE, retries: (p) => [polite(p)] },
  'context-greedy': { shape: WELL_BEHAVED_SHAPE, retries: (p) => [polite(p)] },
  'naive-retrier': {
    shape: {
      baseMs: wait,
      factor: z.number().min(1).max(LIMITS.backoffFactor),
      capMs: wait,
      maxRetries: openCap,
      jitter: z.number().min(0).max(LIMITS.jitter)
    },
    // The shortest wait it can draw: the first one (or the cap), less its jitter.
    retries: (p) => [
      {
        cap: capOf(p.maxRetries),
        everyMs: Math.min(ms(p.baseMs), ms(p.capMs)) * (1 - ms(p.jitter))
      }
    ]
  },
  'tight-loop': {
    shape: { intervalMs: wait, maxRetries: openCap },
    retries: (p) => [{ cap: capOf(p.maxRetries), everyMs: ms(p.intervalMs) }]
  },
  reconnector: {
    shape: { ...WELL_BEHAVED_SHAPE, reconnectMs: wait, maxReconnects: openCap },
    // Each reconnect closes the connection for reconnectMs first.
    retries: (p) => [
      polite(p),
      { cap: capOf(p.maxReconnects), everyMs: ms(p.reconnectMs), closesMs: ms(p.reconnectMs) }
    ]
  },
  'prompt-mutator': {
    shape: { intervalMs: wait, maxRetries: openCap },
    retries: (p) => [{ cap: capOf(p.maxRetries), everyMs: ms(p.intervalMs) }]
  },
  'budget-shrinker': {
    shape: {
      ...WELL_BEHAVED_SHAPE,
      mode: z.enum(['naive', 'exact']),
      maxShrinks: cap,
      useCeiling: z.boolean()
    },
    // A shrunk retry goes out at once.
    retries: (p) => [polite(p), { cap: capOf(p.maxShrinks), everyMs: 0 }]
  },
  'serialiser-variant': {
    shape: { intervalMs: wait, maxRetries: openCap },
    retries: (p) => [{ cap: capOf(p.maxRetries), everyMs: ms(p.intervalMs) }]
  },
  'timeout-sensitive': {
    shape: { ...WELL_BEHAVED_SHAPE, retryDelayMs: wait, maxRetries: openCap },
    // One polite retry; a retry after silence waits out the request's timeout first.
    retries: (p, spec) => [
      { cap: 1, everyMs: 0 },
      { cap: capOf(p.maxRetries), everyMs: ms(p.retryDelayMs) + spec.timeoutMs }
    ]
  }
};

/** The parameters `behaviour` takes that may be `null` (unbounded). */
export function openCaps(behaviour: string): string[] {
  const shape = PARAM_SPECS[behaviour]?.shape ?? {};
  return Object.keys(shape).filter((k) => shape[k] === openCap);
}

/** The zod schema of `behaviour`'s parameters (each optional; unknown names are checked apart). */
export function paramsSchema(behaviour: string) {
  return z.object({ ...BASE_SHAPE, ...(PARAM_SPECS[behaviour]?.shape ?? {}) }).partial();
}
