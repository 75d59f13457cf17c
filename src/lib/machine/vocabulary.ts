/**
 * The shared vocabulary of the client core, as zod schemas with the TypeScript types inferred from
 * them: one definition per concept, used to validate data read back from storage, a worker message
 * or a file, and to type the code that produces it. Everything here is plain JSON-serialisable data.
 *
 * Only the concepts several modules share live here (money, context scope, outcomes, store scope,
 * lanes, the client configuration, stored decisions, audit records); the protocol frames stay in
 * types.ts, the policy in policy.ts.
 */
// names.ts first: it turns zod's JIT off before any schema here is built (the site's CSP).
import './names';
import { z } from 'zod';
import { REASONS } from './reasons';
import { OUTCOMES } from './outcome-list';
import { AMOUNT_PATTERN, CURRENCY_PATTERN } from './money';
import { DENIAL_STYLES } from './denial-styles';

/** The largest count (tokens, ms) the core computes with: past it arithmetic loses exactness. */
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** A decimal string and a currency: money is never a float (SPEC §6). */
export const MoneySchema = z.object({
  amount: z.string().regex(AMOUNT_PATTERN, 'an amount is a decimal string such as "0.05"'),
  currency: z.string().regex(CURRENCY_PATTERN, 'a currency is three upper-case letters')
});
export type Money = z.infer<typeof MoneySchema>;

export const IncludeContextSchema = z.enum(['none', 'thisServer', 'allServers']);
export type IncludeContext = z.infer<typeof IncludeContextSchema>;

export const OutcomeSchema = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof OutcomeSchema>;

/** Where decisions live: `connection` evaporates with the transport, `durable` outlives it. */
export const StoreScopeSchema = z.enum(['connection', 'durable']);
export type StoreScope = z.infer<typeof StoreScopeSchema>;

/** The two lanes of the playground, run side by side on the same seed. */
export const LaneIdSchema = z.enum(['A', 'B']);
export type LaneId = z.infer<typeof LaneIdSchema>;

export const ReasonCodeSchema = z.enum(REASONS);

/** A pre-flight cost refusal sent as a result (`budget_exceeded`) or as an error. */
export const RefusalAsSchema = z.enum(['result', 'error']);
/** A per-call cap, or a money pool per connection. */
export const CapScopeSchema = z.enum(['per-call', 'session-pool']);
/** What to do when the estimate exceeds the limit: refuse pre-flight, or run and stop at the cap. */
export const OnExceededSchema = z.enum(['reject', 'truncate']);
/**
 * The MCP revision a lane runs (#25): in 2025-11-25 a server sends `sampling/createMessage` and
 * hears the answer; in 2026-07-28 (SEP-2322, multi round-trip requests) the request arrives inside
 * the host's own tool call as an `input_required` round, and a refusal fails that tool call at the
 * host: the server never hears it.
 */
export const ProtocolSchema = z.enum(['2025-11-25', '2026-07-28']);
export type Protocol = z.infer<typeof ProtocolSchema>;
/** How a refusal reaches the server: the lab's typed denial, or a real client's frame (#25). */
export const DenialStyleSchema = z.enum(DENIAL_STYLES);
export type OnExceeded = z.infer<typeof OnExceededSchema>;

/**
 * How long a stored decision lives (see reasons.ts). `ms` is the bound on a fixed TTL: a file from
 * outside (a scenario) states a tighter one than the core can compute with.
 */
export function ttlSchema(ms: z.ZodType<number, number> = count) {
  return z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('session') }),
    z.strictObject({ kind: z.literal('window') }),
    z.strictObject({ kind: z.literal('ms'), ms }),
    z.strictObject({ kind: z.literal('none') })
  ]);
}
export const TtlSchema = ttlSchema();

export const ReasonRuleSchema = z.object({
  retryable: z.boolean(),
  ttl: TtlSchema,
  why: z.string()
});

export const ReasonTableSchema = z.object(
  Object.fromEntries(REASONS.map((r) => [r, ReasonRuleSchema])) as Record<
    (typeof REASONS)[number],
    typeof ReasonRuleSchema
  >
);

/** The retry-loop alert: an identity presented `threshold` times within `windowMs` (SPEC §4). */
export const AlertConfigSchema = z.object({
  threshold: z.int().min(1).max(1_000_000),
  windowMs: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)
});
export type AlertConfig = z.infer<typeof AlertConfigSchema>;

/** The client's configuration: everything a learner can flip in a lane, besides the policy. */
export const ClientConfigSchema = z.object({
  /** Where decisions live: in memory per connection, or durable (IndexedDB). */
  store: StoreScopeSchema,
  /** The reason table: each reason's retryable flag and TTL, defaults overridden per run. */
  reasons: ReasonTableSchema,
  /** Drop denial frames instead of sending them (a teaching switch: watch what silence causes). */
  silence: z.boolean(),
  /** RFC 8785 + NFC before hashing; off = hash the params as received. */
  canonicalize: z.boolean(),
  /** Which params members make up a request's identity. */
  identityFields: z.array(z.string()),
  /** Annotate trimmed context in `_meta.context`; off = trim silently. */
  annotateTrim: z.boolean(),
  /** Store allowed verdicts ("do not ask the user again"), and for how long. */
  storeAllowed: z.boolean(),
  allowedTtl: TtlSchema,
  /** How long a consent dialog waits before it counts as a denial. */
  consentTimeoutMs: count,
  /** How long the provider may take before the request passes its deadline. */
  deadlineMs: count,
  /** The retry-loop alert, read live on every presentation. */
  alert: AlertConfigSchema,
  /** RFC open question: a pre-flight cost refusal as a result (`budget_exceeded`) or as an error. */
  refusalAs: RefusalAsSchema,
  /** RFC open question: a per-call cap, or a pool per connection. */
  capScope: CapScopeSchema,
  sessionPool: MoneySchema,
  /** RFC open question: advertise the per-call ceiling at initialize. */
  advertiseCeiling: z.boolean(),
  /** When a request states no `budget.onExceeded`: refuse pre-flight, or run and stop at the cap. */
  preflightDefault: OnExceededSchema,
  /**
   * The frame a refusal is sent as: `lab` (-32003 with `data.reason`), or exactly what the MCP
   * spec's example, VS Code, the Inspector, the Python SDK's default or Cursor send.
   */
  denialStyle: DenialStyleSchema,
  /** The MCP revision the lane runs: who hears a refusal (see {@link ProtocolSchema}). */
  protocol: ProtocolSchema,
  /**
   * 2026-07-28 only: how many times the host's agent loop calls a tool again after the call failed
   * at the host (a refused sampling round), and how long it waits first.
   */
  hostRetries: count,
  hostRetryDelayMs: count
});
export type ClientConfig = z.infer<typeof ClientConfigSchema>;

/** The RFC's decision basis: what a server needs to shrink deterministically. */
export const BudgetDecisionSchema = z.object({
  estimatedCost: MoneySchema,
  limitApplied: z.object({ amount: z.string(), currency: z.string() }),
  limitSource: z.enum(['host_policy', 'budget_window', 'session_pool', 'token_meter']),
  meterBasis: z.string(),
  estimatedTokens: z.object({ input: count, output: count }),
  actualCost: MoneySchema.optional(),
  actualTokens: z.object({ input: count, output: count }).optional(),
  /** Whether the server's advisory intent was honoured (intent ≥ cost, or no intent). */
  requestHonored: z.boolean().optional()
});
export type BudgetDecision = z.infer<typeof BudgetDecisionSchema>;

/**
 * What the decision store holds: a verdict and a reason, never a completion (SPEC §4).
 * Keyed (server, identity).
 */
export const StoredDecisionSchema = z.object({
  server: z.string(),
  identity: z.string(),
  verdict: z.enum(['allowed', 'denied']),
  reason: ReasonCodeSchema.nullable(),
  retryable: z.boolean(),
  /** Virtual ms when the decision was made. */
  decidedAt: z.number(),
  /** Virtual ms after which the entry is expired; null = until policy edit / session end. */
  expiresAt: z.number().nullable(),
  resetsAt: z.string().optional(),
  retryAfterMs: count.optional(),
  /**
   * Virtual ms a retryable denial told the server to come back at (`decidedAt + retryAfterMs`):
   * a replay says how long is left until then, not how long the entry has left to live.
   */
  retryAt: z.number().optional(),
  /** The denial's own words when they were not the reason's default (a replay repeats them). */
  message: z.string().optional(),
  /**
   * A denial decided about *when* (volume, deadline) for an identity the person had approved:
   * the approval, which answers again once the denial expires ("do not ask again" outlives it).
   */
  approval: z.object({ decidedAt: z.number(), expiresAt: z.number().nullable() }).optional(),
  /** The server's effective policy block hash when decided; an edit invalidates the entry. */
  policyHash: z.string(),
  /** How many times the same identity was presented again and answered from this entry. */
  represented: count,
  /**
   * Kept for entries written by older builds; the retry-loop alert now reads the host's
   * presentation history (presentations.ts), which outlives the entry.
   */
  recent: z.array(z.number())
});
export type StoredDecision = z.infer<typeof StoredDecisionSchema>;

export const JsonRpcIdSchema = z.union([z.string(), z.number()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

export const AuditRecordSchema = z.object({
  seq: count,
  /** Virtual ms since the epoch of the run's clock. */
  t: z.number(),
  time: z.string(),
  server: z.string(),
  connection: z.string(),
  requestId: JsonRpcIdSchema,
  identity: z.string(),
  outcome: OutcomeSchema,
  reason: z.string().nullable(),
  retryable: z.boolean().nullable(),
  replayed: z.boolean(),
  represented: count,
  consentShown: z.boolean(),
  consent: z.enum(['approved', 'denied', 'timeout', 'not-asked']),
  /**
   * The basis of a dialog the policy would have shown but skipped (`askAbove`): the pre-flight
   * estimate and the threshold it was at or below. Absent whenever nothing was skipped, so
   * records of runs without `askAbove` are byte-identical to those written before it.
   */
  consentSkipped: z.object({ estimatedCost: MoneySchema, askAbove: MoneySchema }).optional(),
  model: z.string().nullable(),
  tokensIn: count,
  tokensOut: count,
  /** Decimal string in the rate card's currency. */
  cost: z.string(),
  currency: z.string(),
  durationMs: z.number(),
  contextRequested: IncludeContextSchema,
  contextApplied: IncludeContextSchema.nullable(),
  budgetDecision: BudgetDecisionSchema.nullable(),
  /** True when the learner's silence switch dropped the frame. */
  silenced: z.boolean(),
  /** True when this presentation tripped the retry-loop alert. */
  alert: z.boolean(),
  lane: z.string().optional()
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;
