/**
 * Every outcome of a sampling request, in the order the metrics count them: plain data, so the
 * runtime that counts and matches outcomes (the playground's worker) loads no zod (issue #24);
 * vocabulary.ts builds the schema from it.
 */
export const OUTCOMES = [
  'allowed',
  'trimmed',
  'denied',
  'budget_exceeded',
  'budget_exhausted',
  'transport_error',
  'provider_error'
] as const;
