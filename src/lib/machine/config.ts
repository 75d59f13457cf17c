/**
 * The client's configuration: everything a learner can flip in a lane, besides the policy.
 * Plain data; `resolveClientConfig` fills in defaults so a scenario only states what differs.
 */
import { DEFAULT_IDENTITY_FIELDS } from './identity';
import { resolveReasons, type ReasonOverrides, type ReasonTable, type Ttl } from './reasons';
import type { Money } from './types';

export type StoreScope = 'connection' | 'durable';

export interface ClientConfig {
  /** Where decisions live: in memory per connection, or durable (IndexedDB). */
  store: StoreScope;
  /** The reason table: each reason's retryable flag and TTL, defaults overridden per run. */
  reasons: ReasonTable;
  /** Drop denial frames instead of sending them (a teaching switch: watch what silence causes). */
  silence: boolean;
  /** RFC 8785 + NFC before hashing; off = hash the params as received. */
  canonicalize: boolean;
  /** Which params members make up a request's identity. */
  identityFields: string[];
  /** Annotate trimmed context in `_meta.context`; off = trim silently. */
  annotateTrim: boolean;
  /** Store allowed verdicts ("do not ask the user again"), and for how long. */
  storeAllowed: boolean;
  allowedTtl: Ttl;
  /** How long a consent dialog waits before it counts as a denial. */
  consentTimeoutMs: number;
  /** How long the provider may take before the request passes its deadline. */
  deadlineMs: number;
  /** The retry-loop alert: an identity re-presented `threshold` times within `windowMs`. */
  alert: { threshold: number; windowMs: number };
  /** RFC open question: a pre-flight cost refusal as a result (`budget_exceeded`) or as an error. */
  refusalAs: 'result' | 'error';
  /** RFC open question: a per-call cap, or a pool per connection. */
  capScope: 'per-call' | 'session-pool';
  sessionPool: Money;
  /** RFC open question: advertise the per-call ceiling at initialize (servers may ask for exactly it). */
  advertiseCeiling: boolean;
  /** When a request states no `budget.onExceeded`: refuse pre-flight, or run and stop at the cap. */
  preflightDefault: 'reject' | 'truncate';
}

/** What a scenario may state: any member, reasons as overrides. */
export type ClientConfigInput = Partial<Omit<ClientConfig, 'reasons' | 'alert'>> & {
  reasons?: ReasonOverrides;
  alert?: Partial<ClientConfig['alert']>;
};

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
  preflightDefault: 'reject'
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
