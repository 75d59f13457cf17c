/** A stored decision for the stores' specs: a denial of `release-notes:aa`, with overrides. */
import type { StoredDecision } from '../machine/types';

export function decision(over: Partial<StoredDecision> = {}): StoredDecision {
  return {
    server: 'release-notes',
    identity: 'release-notes:aa',
    verdict: 'denied',
    reason: 'policy.budget_exhausted',
    retryable: false,
    decidedAt: 0,
    expiresAt: null,
    policyHash: 'h1',
    represented: 0,
    recent: [],
    ...over
  };
}
