/**
 * The one stream meter the machine uses: what a call has cost so far, and whether the next chunk
 * would take it over its limits. It prices cumulative totals (never chunk by chunk), so the
 * metered cost equals the estimate for the same counts and never drifts from it.
 */
import { estimateCostMicros, type RateCard } from './pricing';

/** What has been generated so far. `inputTokens` counts all input, cached included. */
export interface MeterReading {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** A call's limits: money (micro-units of the card's currency) and tokens (input + output). */
export interface MeterLimits {
  limitMicros: number | null;
  limitTokens: number | null;
}

/** The cost of `r` in micro-units: uncached input at the input price, cached at the cached price. */
export function meteredCost(card: RateCard, r: MeterReading): number {
  const cached = Math.min(r.cachedInputTokens, r.inputTokens);
  return estimateCostMicros(card, r.inputTokens - cached, r.outputTokens, cached);
}

/**
 * True when accepting `chunkTokens` more output would cross either limit: the host stops before
 * that chunk, keeps what was accepted, and the actual cost never exceeds the limit. RFC numbers:
 * 1,000 input at $3/Mtok, chunks of 400 at $15/Mtok, cap 0.0140: after one chunk 0.0090; the
 * second would make 0.0150, so the call stops there with 0.0090 spent.
 */
export function chunkCrosses(
  card: RateCard,
  limits: MeterLimits,
  r: MeterReading,
  chunkTokens: number
): boolean {
  const next = { ...r, outputTokens: r.outputTokens + chunkTokens };
  if (limits.limitTokens !== null && next.inputTokens + next.outputTokens > limits.limitTokens)
    return true;
  return limits.limitMicros !== null && meteredCost(card, next) > limits.limitMicros;
}
