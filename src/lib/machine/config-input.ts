/**
 * A client configuration and rate cards as a file or a caller from outside states them: a
 * scenario's lane and provider (sim/input/scenario.ts), the shipped handler's `client` and `rateCards`
 * options (handler/options.ts). Every member of the configuration optional, the reasons as
 * overrides, every number, string and list bounded (`CONFIG_INPUT_LIMITS`, config-limits.ts).
 *
 * Defined once here, below both: the simulation and the handler validate with the same schemas.
 * A zod module: the page loads it with the parsers, never on first load.
 */
// names.ts first: it turns zod's JIT off before any schema here is built (the site's CSP).
import './names';
import { z } from 'zod';
import { CONFIG_INPUT_LIMITS as BOUNDS } from './config-limits';
import { CURRENCY_PATTERN } from './money';
import { nameRecord } from './names';
import { AlertConfigSchema, ClientConfigSchema, ReasonCodeSchema, ttlSchema } from './vocabulary';

/** A money amount from outside: a decimal string of bounded digits. */
export const AmountInputSchema = z
  .string()
  .regex(
    new RegExp(`^\\d{1,${BOUNDS.amountDigits}}(\\.\\d{1,6})?$`),
    `a decimal string such as "0.05" (at most ${BOUNDS.amountDigits} digits before the point, 6 after)`
  );
export const CurrencyInputSchema = z
  .string()
  .regex(CURRENCY_PATTERN, 'a three-letter currency code such as "USD"');
export const MoneyInputSchema = z.strictObject({
  amount: AmountInputSchema,
  currency: CurrencyInputSchema
});
/** A span from outside, in ms: at most a year. */
export const MsInputSchema = z.int().min(0).max(BOUNDS.spanMs);

const TtlSchema = ttlSchema(MsInputSchema);

const ReasonOverrideSchema = z.strictObject({
  retryable: z.boolean().optional(),
  ttl: TtlSchema.optional()
});

/**
 * A client configuration as a scenario states it: the members of the vocabulary's ClientConfig
 * (the switches and enums taken from there as they are), every one optional, with the reasons as
 * overrides and every number and list bounded for a file from outside.
 */
export const ClientConfigInputSchema = z
  .strictObject({
    ...ClientConfigSchema.shape,
    reasons: nameRecord(ReasonCodeSchema, ReasonOverrideSchema, undefined, { partial: true }),
    identityFields: z.array(z.string().min(1).max(200)).min(1).max(100),
    allowedTtl: TtlSchema,
    consentTimeoutMs: MsInputSchema,
    deadlineMs: MsInputSchema,
    hostRetries: z.int().min(0).max(BOUNDS.retries),
    hostRetryDelayMs: z.int().min(BOUNDS.minIntervalMs).max(BOUNDS.spanMs),
    alert: z.strictObject({
      threshold: AlertConfigSchema.shape.threshold.optional(),
      windowMs: MsInputSchema.optional()
    }),
    sessionPool: MoneyInputSchema
  })
  .partial()
  .describe('A client configuration; members left out take their defaults.');

/** A model's prices (budget/pricing.ts `RateCard`) from outside. */
export const RateCardSchema = z.strictObject({
  model: z.string().min(1).max(200),
  version: z.string().min(1).max(200),
  currency: CurrencyInputSchema,
  inputPerMtok: AmountInputSchema,
  outputPerMtok: AmountInputSchema,
  cachedInputPerMtok: AmountInputSchema.optional()
});

/** A provider's rate cards: one to a hundred. */
export const RateCardsSchema = z.array(RateCardSchema).min(1).max(100);
