/**
 * The RFC's worked budget example, for the specs that need a rate card or a budget decision
 * (paths, the budget-shrinking server, the fast frame check): 24,000 input and 2,048 output tokens
 * of example-model-v2 at $3.00/$15.00 per Mtok cost $0.10272, over a $0.05 per-call cap.
 */
import type { BudgetDecision } from '../types';
import type { RateCard } from './pricing';

export const RFC_CARD: RateCard = {
  model: 'example-model-v2',
  version: '2026-07-01',
  currency: 'USD',
  inputPerMtok: '3.00',
  outputPerMtok: '15.00'
};

export const RFC_DECISION: BudgetDecision = {
  estimatedCost: { amount: '0.10272', currency: 'USD' },
  limitApplied: { amount: '0.0500', currency: 'USD' },
  limitSource: 'host_policy',
  meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok',
  estimatedTokens: { input: 24_000, output: 2048 }
};
