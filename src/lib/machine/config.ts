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

// The input bounds live in their own module: config-input.ts (the schemas) reads them, and this
// module type-imports that schema, so neither imports the other.
export { CONFIG_INPUT_LIMITS } from './config-limits';

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
