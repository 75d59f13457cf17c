/**
 * The deterministic shrink a server can compute from a refusal's decision basis (the RFC): the
 * naive ratio (wrong in a useful way) and the exact input size.
 */
import { MICROS_PER_UNIT, currencyMismatch, fromMicros, parseMoneyAmount } from '../money';
import type { BudgetDecision } from '../types';
import { TOKEN_UNIT, costOf, parseMeterBasis, pricesOf, type RateCard } from './pricing';

// ───────────────────────────── deterministic shrink ─────────────────────────────

/** Basis points: the naive ratio is quoted to four decimals (48.68 %). */
const BP = 10_000;

/** The decision's limit and estimate as comparable integers, or null when they are not. */
function limitAndEstimate(decision: BudgetDecision): { limit: number; estimate: number } | null {
  // A decision may come over the wire: token counts that are not counts make it unusable.
  const { input, output } = decision.estimatedTokens;
  for (const n of [input, output]) if (!Number.isSafeInteger(n) || n < 0) return null;
  if (decision.limitApplied.currency === TOKEN_UNIT) {
    if (!/^\d+$/.test(decision.limitApplied.amount)) return null;
    const limit = Number(decision.limitApplied.amount);
    if (!Number.isSafeInteger(limit)) return null;
    return { limit, estimate: decision.estimatedTokens.input + decision.estimatedTokens.output };
  }
  if (currencyMismatch(decision.limitApplied.currency, decision.estimatedCost.currency))
    return null;
  const limit = parseMoneyAmount(decision.limitApplied.amount);
  const estimate = parseMoneyAmount(decision.estimatedCost.amount);
  if (!limit.ok || !estimate.ok) return null;
  return { limit: limit.micros, estimate: estimate.micros };
}

function ratioBp(decision: BudgetDecision): number | null {
  const le = limitAndEstimate(decision);
  if (!le || le.estimate <= 0) return null;
  return Math.min(BP, Math.floor((le.limit * BP) / le.estimate));
}

/**
 * The naive shrink a server reads off a refusal: limit / estimate, rounded down to four decimals
 * (and never above 1). RFC numbers: 0.0500 / 0.1027 → 0.4868, "retry at ~48 % of the input".
 * It is wrong in a useful way: it scales the whole estimate, but only the input shrinks — the
 * output side (maxTokens × output price) stays, so the retry is refused again.
 * Null when the decision's figures are unusable (unparseable, other currency, zero estimate).
 * For a token-meter decision the ratio is limit tokens / (input + output).
 */
export function naiveShrinkRatio(decision: BudgetDecision): number | null {
  const bp = ratioBp(decision);
  return bp === null ? null : bp / BP;
}

/** floor(input × naive ratio): 11,683 of 24,000 for the RFC numbers. Null as `naiveShrinkRatio`. */
export function naiveShrinkInputTokens(decision: BudgetDecision): number | null {
  const bp = ratioBp(decision);
  return bp === null ? null : Math.floor((decision.estimatedTokens.input * bp) / BP);
}

export type ExactShrink =
  { ok: true; inputTokens: number; ratio: number } | { ok: false; error: string };

/**
 * The exact shrink: the largest input token count n with n × input price + output × output price
 * ≤ limit, the output (maxTokens) held fixed, never more than the original input. The prices come
 * from `card` when given, else from parsing the decision's meter basis, so a server can compute it
 * from the decision alone. All input is priced at the full input price: a retry cannot count on a
 * warm cache. Exact integer arithmetic — since estimates round up once on the total,
 * ceil(x / 1e6) ≤ L ⇔ x ≤ L × 1e6, so n = floor((L × 1e6 − output × outPrice) / inPrice).
 *
 * RFC numbers: (50,000 × 1e6 − 2,048 × 15e6) / 3e6 = 6,426.67 → 6,426 tokens (26.8 % of 24,000):
 * 6,426 × 3 + 30,720 = 49,998 µ$ ≤ 50,000; 6,427 would cost 50,001.
 * For a token-meter decision n = limit − output. Refused as a value when the output alone exceeds
 * the limit (shrink maxTokens instead), or when the basis cannot be read.
 */
export function exactShrink(decision: BudgetDecision, card?: RateCard): ExactShrink {
  const le = limitAndEstimate(decision);
  if (!le) return { ok: false, error: 'the decision has no usable limit and estimate' };
  const original = decision.estimatedTokens.input;
  const output = decision.estimatedTokens.output;
  const ratioOf = (n: number) => ({
    ok: true as const,
    inputTokens: n,
    ratio: original > 0 ? n / original : 1
  });
  if (decision.limitApplied.currency === TOKEN_UNIT) {
    const n = le.limit - output;
    if (n < 0)
      return { ok: false, error: `the output side alone (${output} tokens) exceeds the limit` };
    return ratioOf(Math.min(n, original));
  }
  let inPrice: number;
  let outPrice: number;
  if (card) {
    if (currencyMismatch(card.currency, decision.limitApplied.currency)) {
      return { ok: false, error: currencyMismatch(card.currency, decision.limitApplied.currency)! };
    }
    const p = pricesOf(card);
    inPrice = p.inPerMtok;
    outPrice = p.outPerMtok;
  } else {
    const parsed = parseMeterBasis(decision.meterBasis);
    if (!parsed.ok) return parsed;
    inPrice = parsed.basis.inPerMtokMicros;
    outPrice = parsed.basis.outPerMtokMicros;
  }
  const room = BigInt(le.limit) * BigInt(MICROS_PER_UNIT) - BigInt(output) * BigInt(outPrice);
  if (room < 0n) {
    const outputCost = fromMicros(costOf([[output, outPrice]]));
    return {
      ok: false,
      error: `the output side alone (${output} tokens, ${outputCost}) exceeds the limit ${decision.limitApplied.amount}: shrink maxTokens`
    };
  }
  if (inPrice === 0) return ratioOf(original); // free input: any size fits
  const n = room / BigInt(inPrice);
  return ratioOf(n > BigInt(original) ? original : Number(n));
}

/** `exactShrink(...).inputTokens`, or null when no input size fits or the basis is unreadable. */
export function exactShrinkInputTokens(decision: BudgetDecision, card?: RateCard): number | null {
  const r = exactShrink(decision, card);
  return r.ok ? r.inputTokens : null;
}
