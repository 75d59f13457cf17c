/**
 * The client's configuration: everything a learner can flip in a lane, besides the policy.
 * Plain data; `resolveClientConfig` fills in defaults so a scenario only states what differs.
 */
import { DEFAULT_IDENTITY_FIELDS } from './identity-fields';
import { resolveReasons } from './reasons';

export type { ClientConfig, StoreScope } from './vocabulary';
import type { ClientConfig } from './vocabulary';
import type { z } from 'zod';
import type { ClientConfigInputSchema } from './config-input';

/**
 * What a scenario may state: any member, reasons as overrides — the bounded input schema's own
 * input type, so the type and the schema cannot drift. A type-only import: erased, so this module
 * (loaded on the page's first load) still pulls in no zod.
 */
export type ClientConfigInput = z.input<typeof ClientConfigInputSchema>;

const DAY_MS = 86_400_000;

/**
 * The bounds a client configuration and rate cards from outside (a scenario's lane, the handler's
 * options) are held to, by their schemas (config-input.ts). The simulator's own bounds
 * (`LIMITS`, sim/input/limits.ts) include these: each is documented there and in the README.
 */
export const CONFIG_INPUT_LIMITS = {
  /** Any span (timeouts, TTLs, latencies, start delays): at most a year. */
  spanMs: 366 * DAY_MS,
  /** The shortest wait between two attempts (a host's retry delay): 10 ms. */
  minIntervalMs: 10,
  /** A count of retries. */
  retries: 1_000_000,
  /** Integer digits of a money amount: up to 999,999,999.999999, exact in micro-units. */
  amountDigits: 9
} as const;

export const DEFAULT_CLIENT_CONFIG: ClientConfig = {
  store: 'durable',
  reasons: resolveReasons(),
  silence: false,
  canonicalize: true,
  identityFields: [...DEFAULT_IDENTITY_FIELDS],
  annotateTrim: true,
  storeAllowed: true,
  allowedTtl: { kind: 'session' },
  consentTimeoutMs: 60_000,
  deadlineMs: 30_000,
  alert: { threshold: 40, windowMs: 600_000 },
  refusalAs: 'result',
  capScope: 'per-call',
  sessionPool: { amount: '1.00', currency: 'USD' },
  advertiseCeiling: false,
  preflightDefault: 'reject',
  denialStyle: 'lab',
  protocol: '2025-11-25',
  hostRetries: 2,
  hostRetryDelayMs: 2_000
};

export function resolveClientConfig(input: ClientConfigInput = {}): ClientConfig {
  const { reasons, alert, ...rest } = input;
  return {
    ...DEFAULT_CLIENT_CONFIG,
    ...rest,
    identityFields: [...(rest.identityFields ?? DEFAULT_CLIENT_CONFIG.identityFields)],
    reasons: resolveReasons(reasons),
    alert: { ...DEFAULT_CLIENT_CONFIG.alert, ...alert }
  };
}
