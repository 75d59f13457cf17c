/**
 * The pre-flight estimate and its decision basis (the RFC): a cost meter and the token-meter
 * variant. Estimates are shown exact (at least four decimals, as many as it takes, up to six):
 * a rounded estimate can read as within a limit it exceeds, and a refusal must never show
 * estimate ≤ limit.
 */
import { currencyMismatch, fromMicrosExact, parseMoneyAmount } from '../money';
import type { BudgetDecision, BudgetIntent } from '../types';
import {
  TOKEN_UNIT,
  assertTokens,
  estimateCostMicros,
  meterBasis,
  tokenMeterBasis,
  type RateCard
} from './pricing';

// ───────────────────────────── pre-flight ─────────────────────────────

/**
 * Whether the server's advisory intent covers the estimate. No intent (or no `maxCost`) is
 * trivially honoured; an intent in another currency or with a malformed amount cannot be
 * honoured, because amounts are never converted. Advisory only: it never decides anything.
 */
export function intentHonored(
  intent: BudgetIntent['intent'] | undefined,
  estimateMicros: number,
  currency: string
): boolean {
  const maxCost = intent?.maxCost;
  if (!maxCost) return true;
  if (currencyMismatch(maxCost.currency, currency)) return false;
  const parsed = parseMoneyAmount(maxCost.amount);
  return parsed.ok && parsed.micros >= estimateMicros;
}

export interface PreflightInput {
  card: RateCard;
  /** Input tokens billed at the input price. */
  inputTokens: number;
  /** The request's `maxTokens`: the estimate assumes the whole allowance is used. */
  maxTokens: number;
  /** The enforced limit in micro-units of the card's currency. */
  limitMicros: number;
  limitSource: BudgetDecision['limitSource'];
  /** Further input tokens expected from a warm cache (usually 0: a pre-flight assumes cold). */
  cachedInputTokens?: number;
  /** The request's advisory `budget.intent`, recorded as `requestHonored`. */
  intent?: BudgetIntent['intent'];
}

export interface PreflightResult {
  /** True when the estimate is within the limit (estimate ≤ limit). */
  within: boolean;
  estimateMicros: number;
  decision: BudgetDecision;
}

/**
 * The pre-flight check of a cost meter: estimate = input × input price + maxTokens × output price,
 * compared with the limit in micro-units. `estimatedCost` and `limitApplied` are exact (at least
 * 4 decimals): the RFC's 102,720 µ$ reads "0.10272", not a half-up "0.1027" that under-states it,
 * and 6,427 input tokens refused against "0.0500" read "0.050001", never "0.0500". The limit is the
 * figure a server sizes its retry against, so a rounded limit would send it back over.
 */
export function preflight(input: PreflightInput): PreflightResult {
  const { card, inputTokens, maxTokens, limitMicros, limitSource } = input;
  const cached = input.cachedInputTokens ?? 0;
  const estimateMicros = estimateCostMicros(card, inputTokens, maxTokens, cached);
  return {
    within: estimateMicros <= limitMicros,
    estimateMicros,
    decision: {
      estimatedCost: { amount: fromMicrosExact(estimateMicros), currency: card.currency },
      limitApplied: { amount: fromMicrosExact(limitMicros), currency: card.currency },
      limitSource,
      meterBasis: meterBasis(card),
      estimatedTokens: { input: inputTokens + cached, output: maxTokens },
      requestHonored: intentHonored(input.intent, estimateMicros, card.currency)
    }
  };
}

export interface PreflightTokensInput {
  card: RateCard;
  inputTokens: number;
  maxTokens: number;
  /** The enforced limit in tokens: input + output. */
  limitTokens: number;
  cachedInputTokens?: number;
  intent?: BudgetIntent['intent'];
}

export interface PreflightTokensResult {
  /** True when input + maxTokens ≤ the token limit. */
  within: boolean;
  estimateTokens: number;
  estimateMicros: number;
  decision: BudgetDecision;
}

/**
 * The token-meter variant (the RFC's open question "cost or token meter"): the limit counts tokens,
 * input + output, and says nothing about money — verifiable, and blind to price, which is the
 * trade-off the playground shows. The decision keeps the same shape so a server reads one format:
 * - `limitSource: 'token_meter'`, `limitApplied: { amount: "<tokens>", currency: "tokens" }`;
 * - the compared figure is `estimatedTokens.input + estimatedTokens.output`;
 * - `estimatedCost` is still money, priced from the card (a cost is a cost, whatever the meter),
 *   so `actualCost` added after the run stays in the same currency;
 * - `meterBasis` is `tokenMeterBasis(card)`.
 */
export function preflightTokens(input: PreflightTokensInput): PreflightTokensResult {
  const { card, inputTokens, maxTokens, limitTokens } = input;
  assertTokens('limitTokens', limitTokens);
  const cached = input.cachedInputTokens ?? 0;
  const estimateMicros = estimateCostMicros(card, inputTokens, maxTokens, cached);
  const estimateTokens = inputTokens + cached + maxTokens;
  return {
    within: estimateTokens <= limitTokens,
    estimateTokens,
    estimateMicros,
    decision: {
      estimatedCost: { amount: fromMicrosExact(estimateMicros), currency: card.currency },
      limitApplied: { amount: String(limitTokens), currency: TOKEN_UNIT },
      limitSource: 'token_meter',
      meterBasis: tokenMeterBasis(card),
      estimatedTokens: { input: inputTokens + cached, output: maxTokens },
      requestHonored: intentHonored(input.intent, estimateMicros, card.currency)
    }
  };
}
