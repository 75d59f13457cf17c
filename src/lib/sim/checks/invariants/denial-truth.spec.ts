/**
 * The checks issue #18 asked for, on hand-made streams shaped like what the host sent before its
 * fixes: an exhausted window that had the money, a replay naming the wrong wait, and a person
 * asked again about a request they approved. Each must break its guarantee, naming the request.
 */
import { describe, expect, it } from 'vitest';
import type { AuditRecord, Frame, StoredDecision } from '../../../machine/types';
import { DEFAULT_PROVIDER, cardsByModel } from '../../actors/provider';
import { InvariantChecker, type ChargeContext, type InvariantId } from './index';
import { record, storedDecision, T0 } from './records.testing';
import { emptyCounters } from '../../engine/metrics';

const cards = cardsByModel(DEFAULT_PROVIDER.cards);
const budget = { micros: 20_000, windowMs: 420_000, currency: 'USD' };

const deny = (id: number, data: Record<string, unknown>): Frame => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32003, message: 'Sampling denied', data: { server: 's', ...data } }
});

const params = (chars: number) => ({
  messages: [
    { role: 'user' as const, content: { type: 'text' as const, text: 'y'.repeat(chars) } }
  ],
  maxTokens: 100
});

function feed(
  c: InvariantChecker,
  r: AuditRecord,
  frame: Frame,
  ctx: ChargeContext,
  windows?: { rateResetsAt: number | null; budgetResetsAt: number | null }
) {
  c.request('A', r.connection, r.requestId, r.t - r.durationMs, { silence: false });
  c.audit(r, ctx);
  c.frame('A', r.connection, frame, r.t, windows);
}

function status(c: InvariantChecker, id: InvariantId) {
  const counters = { A: emptyCounters() };
  const res = c.results(T0 + 3_600_000, counters, 1e12).find((x) => x.id === id)!;
  return res;
}

describe('denials-true', () => {
  it('a fresh budget_exhausted while the money spent still covered the input is broken', () => {
    const c = new InvariantChecker({ cards });
    // 4,000 characters: 1,000 input tokens, 3,000 µ$ at the dearest card; 0 µ$ spent of 20,000.
    const r = record({ requestId: 1, reason: 'policy.budget_exhausted' });
    feed(c, r, deny(1, { reason: 'policy.budget_exhausted', retryable: false }), {
      budget,
      pool: null,
      params: params(4_000),
      spentMicros: 0
    });
    const x = status(c, 'denials-true');
    expect(x.status).toBe('broken');
    expect(x.offenders[0]!.what).toBe(
      'budget_exhausted while the window had 20,000 µ$ unspent, enough for the input (3,000 µ$)'
    );
    // Spent to where the input no longer fits: true.
    const ok = new InvariantChecker({ cards });
    feed(ok, record({ requestId: 2, reason: 'policy.budget_exhausted' }), deny(2, {}), {
      budget,
      pool: null,
      params: params(4_000),
      spentMicros: 17_001
    });
    expect(status(ok, 'denials-true').status).toBe('held');
  });

  it('a replayed rate-limit denial whose retryAfterMs is not the window reset is broken', () => {
    const c = new InvariantChecker({ cards });
    const reset = T0 + 600_000;
    const at = T0 + 50_000;
    const windows = { rateResetsAt: reset, budgetResetsAt: null };
    const r = record({ requestId: 1, reason: 'policy.rate_limit', replayed: true, t: at });
    feed(
      c,
      r,
      deny(1, { reason: 'policy.rate_limit', retryable: true, retryAfterMs: 12_000 }),
      { budget: null, pool: null },
      windows
    );
    const x = status(c, 'denials-true');
    expect(x.status).toBe('broken');
    expect(x.offenders[0]!.what).toBe(
      'a rate-limit denial says retryAfterMs 12,000, the window resets in 550,000 ms'
    );
    const ok = new InvariantChecker({ cards });
    feed(
      ok,
      record({ requestId: 2, reason: 'policy.rate_limit', replayed: true, t: at }),
      deny(2, { reason: 'policy.rate_limit', retryable: true, retryAfterMs: 550_000 }),
      { budget: null, pool: null },
      windows
    );
    expect(status(ok, 'denials-true')).toMatchObject({ status: 'held', checked: 1 });
  });
});

describe('one-consent: an approval outlives a denial about when', () => {
  const stored = (over: Partial<StoredDecision>) =>
    storedDecision({ verdict: 'allowed', reason: null, ...over });
  const dialog = (id: number, t: number) =>
    record({
      requestId: id,
      t,
      outcome: 'allowed',
      reason: null,
      consentShown: true,
      consent: 'approved',
      durationMs: 1_000
    });
  const ctx: ChargeContext = { budget: null, pool: null, keepsApprovals: true };

  function run(carry: boolean) {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'opened', scope: 'durable', held: [] } as never);
    c.store('A', T0 + 1_000, {
      type: 'commit',
      scope: 'durable',
      connection: 's#1',
      decision: stored({})
    } as never);
    feed(c, dialog(1, T0 + 1_000), deny(1, {}), ctx);
    // Rate-limited at 9 s: the old host stored the denial without the approval under it.
    const denial = stored({
      verdict: 'denied',
      reason: 'policy.rate_limit',
      retryable: true,
      decidedAt: T0 + 9_000,
      expiresAt: T0 + 69_000,
      ...(carry ? { approval: { decidedAt: T0 + 1_000, expiresAt: null } } : {})
    });
    c.store('A', T0 + 9_000, {
      type: 'commit',
      scope: 'durable',
      connection: 's#1',
      decision: denial
    } as never);
    // Asked again at 701 s.
    feed(c, dialog(2, T0 + 701_000), deny(2, {}), ctx);
    return status(c, 'one-consent');
  }

  it('asked again after a rate-limit denial that dropped the approval: broken', () => {
    const x = run(false);
    expect(x.status).toBe('broken');
    expect(x.offenders[0]!.what).toMatch(/a consent dialog for a request the person approved at/);
  });

  it('the denial carried the approval: the dialog is still a repeat (the store should have answered)', () => {
    expect(run(true).status).toBe('broken');
  });
});
