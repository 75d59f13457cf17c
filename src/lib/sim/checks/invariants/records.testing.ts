/**
 * Test support for the invariant checker's specs: an audit record with every field filled, to be
 * overridden where a test cares. Imported by tests only.
 */
import type { AuditRecord, StoredDecision } from '../../../machine/types';

export const T0 = Date.parse('2026-03-10T09:00:00Z');

let seq = 0;

/** A denial record of server `s` at T0 on lane A, each with the next seq. */
export function record(over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    seq: ++seq,
    t: T0,
    time: new Date(T0).toISOString(),
    server: 's',
    connection: 's#1',
    requestId: 1,
    identity: 's:abc',
    outcome: 'denied',
    reason: 'user.denied',
    retryable: false,
    replayed: false,
    represented: 0,
    consentShown: false,
    consent: 'not-asked',
    model: null,
    tokensIn: 0,
    tokensOut: 0,
    cost: '0.0000',
    currency: 'USD',
    durationMs: 0,
    contextRequested: 'none',
    contextApplied: null,
    budgetDecision: null,
    silenced: false,
    alert: false,
    lane: 'A',
    ...over
  };
}

/** A stored denial of `s:abc` decided at T0 under policy hash `h`, to be overridden. */
export function storedDecision(over: Partial<StoredDecision> = {}): StoredDecision {
  return {
    server: 's',
    identity: 's:abc',
    verdict: 'denied',
    reason: 'user.denied',
    retryable: false,
    decidedAt: T0,
    expiresAt: null,
    policyHash: 'h',
    represented: 0,
    recent: [],
    ...over
  };
}
