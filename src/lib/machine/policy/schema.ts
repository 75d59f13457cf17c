/**
 * The policy format (SPEC §4, §5, §6, §9 "Policy editor"), defined once, in zod. The TypeScript
 * types, the runtime validation and the JSON Schema the editor validates against all come from the
 * schemas below, so they cannot drift apart.
 *
 * A policy is `{ version: 1, defaults: <full block>, servers: { <name>: <partial block> } }`. A
 * server's block overrides the defaults member by member; a nested object (a budget, a rate limit,
 * a cap) replaces the default one whole — it is never merged field by field, so what the author
 * reads in the server's block is exactly what applies.
 */
// names.ts first: it turns zod's JIT off before any schema here is built (the site's CSP).
import { nameRecord } from '../names';
import { z } from 'zod';
import { AMOUNT_PATTERN, CURRENCY_PATTERN, parseMoneyAmount } from '../money';
import { IncludeContextSchema } from '../vocabulary';

const AmountSchema = z
  .string()
  // abort: a string that fails the grammar gets one message, not a second from the range check.
  .regex(AMOUNT_PATTERN, { error: 'not a decimal amount', abort: true })
  .refine((s) => parseMoneyAmount(s).ok, 'amount is too large to hold exactly')
  .describe(
    'A decimal string, never a number: digits, optionally a point and up to 6 decimals, no sign, no exponent. Example: "0.05".'
  )
  .meta({ examples: ['0.05', '5.00'] });

const CurrencySchema = z
  .string()
  .regex(CURRENCY_PATTERN, 'not a currency code')
  .describe(
    'Three upper-case letters (ISO 4217), e.g. "USD". Amounts are never converted: a cap in another currency than the rate card makes the model unusable.'
  )
  .meta({ examples: ['USD', 'EUR'] });

/**
 * Bounds on every number a policy holds, so no arithmetic downstream (windows aligned since the
 * epoch, token caps priced at the rate card) meets a value it cannot hold exactly.
 */
export const POLICY_LIMITS = {
  /** A window of at most a year (leap year): 366 × 86 400 000 ms. */
  windowMs: 31_622_400_000,
  /** Requests per window. */
  requests: 1_000_000_000,
  /** Input tokens, and input + maxTokens for a token cap: far above any model's context. */
  tokens: 100_000_000
} as const;

/**
 * A name in a policy (a model, a server): non-empty, at most 200 characters, and well-formed
 * UTF-16. A lone surrogate (which `JSON.parse` makes from `"\ud800"`) has no UTF-8 encoding, so
 * the block could not be hashed (RFC 8785 refuses it) — refused here, with its place.
 */
const NameSchema = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (s) => s.isWellFormed(),
    'contains a lone surrogate (half of a UTF-16 pair): not valid text'
  );

const WindowMsSchema = z
  .int()
  .positive()
  .max(POLICY_LIMITS.windowMs)
  .describe(
    'Window length in milliseconds. Windows are aligned to multiples of this length since the epoch, so 86400000 resets at 00:00Z.'
  );

export const RateLimitSchema = z
  .strictObject({
    requests: z
      .int()
      .positive()
      .max(POLICY_LIMITS.requests)
      .describe('How many requests a server may make per window, whatever their content.'),
    windowMs: WindowMsSchema
  })
  .describe('At most `requests` requests per window.');

export const BudgetSchema = z
  .strictObject({
    amount: AmountSchema,
    currency: CurrencySchema,
    windowMs: WindowMsSchema
  })
  .describe('The most a server may spend per window.');

const MoneyCapSchema = z
  .strictObject({ amount: AmountSchema, currency: CurrencySchema })
  .describe(
    'A cost meter: the pre-flight estimate (input × input price + maxTokens × output price) must not exceed this amount.'
  );

const TokenCapSchema = z
  .strictObject({
    tokens: z
      .int()
      .positive()
      .max(POLICY_LIMITS.tokens)
      .describe('Input tokens + maxTokens must not exceed this count.')
  })
  .describe('A token meter: verifiable, and blind to price.');

const AskAboveSchema = z
  .strictObject({ amount: AmountSchema, currency: CurrencySchema })
  .describe(
    'A consent threshold: calls whose pre-flight estimate is at or below this amount are not asked. Never converted: in another currency than the rate card, every call is asked.'
  );

/**
 * One policy block: every member required in `defaults` (but `askAbove`, added later and optional
 * everywhere), any subset in a server's block.
 */
export const PolicyBlockSchema = z.strictObject({
  sampling: z
    .boolean()
    .describe(
      'Whether this server may sample at all. false denies every request with policy.sampling_disabled.'
    ),
  allowedModels: z
    .array(NameSchema)
    .describe(
      'Models this server may use. A model hint matches a name exactly or as a substring; "*" allows any model with a rate card.'
    ),
  defaultModel: NameSchema.describe('The model used when a request carries no model hints.'),
  maxInputTokens: z
    .int()
    .positive()
    .max(POLICY_LIMITS.tokens)
    .describe(
      'The largest input (system prompt + messages) accepted, in tokens; above it: policy.input_too_large.'
    ),
  maxContext: IncludeContextSchema.describe(
    'The widest includeContext granted. A wider request is trimmed to this and the result says so in _meta.context.'
  ),
  rateLimit: RateLimitSchema.nullable().describe(
    'Requests per window, counted regardless of content (what a prompt mutator cannot dodge); null = no rate limit.'
  ),
  budget: BudgetSchema.nullable().describe(
    'Spend per window; once spent: policy.budget_exhausted with resetsAt. null = no budget window.'
  ),
  perCallCap: z
    .union([MoneyCapSchema, TokenCapSchema])
    .nullable()
    .describe(
      'The per-call cap (the RFC): { "amount", "currency" } for a cost meter, { "tokens" } for a token meter, null for none.'
    ),
  consent: z
    .enum(['ask', 'allow', 'deny'])
    .describe('Ask the user, allow without asking, or deny (user.denied) without asking.'),
  // Optional, even in `defaults`: a policy written before it exists means exactly what it meant
  // (always ask), and its hash — which stored decisions carry — does not change.
  askAbove: AskAboveSchema.nullable()
    .optional()
    .describe(
      'With consent "ask": ask the user only when the pre-flight estimate (input × input price + maxTokens × output price) is above this amount; at or below it the call goes ahead without a dialog, nothing is stored, and the audit record says why (consentSkipped). Never skips a rate limit, budget window, per-call cap or stored denial. A threshold in another currency than the rate card of the model never applies (every call is asked; amounts are never converted), and a call with no estimate is never cheap. Absent or null = always ask.'
    )
});

/** A server's block: any subset of the members, each replacing the default one whole. */
export const ServerBlockSchema = PolicyBlockSchema.partial().describe(
  "This server's overrides. Each member present replaces the default one whole (objects are not merged)."
);

export const PolicySchema = z
  .strictObject({
    version: z.literal(1).describe('The policy format version: always 1.'),
    defaults: PolicyBlockSchema.describe(
      'The block every server gets, member by member, unless its own block overrides the member.'
    ),
    servers: nameRecord(
      NameSchema,
      ServerBlockSchema,
      'Per-server overrides, keyed by the server name (any non-empty string; `__proto__` and `constructor` are names like any other). Editing a block invalidates that server’s stored decisions.'
    )
  })
  .describe('A Sampling Policy Lab policy: what the host lets each MCP server sample.');

export type PolicyBlock = z.infer<typeof PolicyBlockSchema>;
export type ServerBlock = z.infer<typeof ServerBlockSchema>;
export type Policy = z.infer<typeof PolicySchema>;

/**
 * The policy JSON Schema (draft 2020-12, generated from `PolicySchema`), with a `description` on
 * every member for the editor's hovers and completions. A fresh object each call.
 */
export function policyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(PolicySchema, { target: 'draft-2020-12', io: 'input' }) as Record<
    string,
    unknown
  >;
}

/**
 * The starter policy. Shared: never mutate it — take `defaultPolicy()` for a copy to edit.
 * (Not frozen, so UI state libraries that proxy objects can hold it.)
 */
export const DEFAULT_POLICY: Policy = {
  version: 1,
  defaults: {
    sampling: true,
    allowedModels: ['example-model-v2'],
    defaultModel: 'example-model-v2',
    maxInputTokens: 32000,
    maxContext: 'thisServer',
    rateLimit: { requests: 30, windowMs: 60000 },
    budget: { amount: '5.00', currency: 'USD', windowMs: 86400000 },
    perCallCap: { amount: '0.05', currency: 'USD' },
    consent: 'ask'
  },
  servers: {
    'release-notes': { budget: { amount: '0.50', currency: 'USD', windowMs: 86400000 } }
  }
};

/** A deep copy of `DEFAULT_POLICY`, safe to edit. */
export function defaultPolicy(): Policy {
  return structuredClone(DEFAULT_POLICY);
}
