import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { StoredDecision } from '../machine/types';
import { DEFAULT_REASONS, REASONS } from '../machine/reasons';
import {
  DEFAULT_ALERT,
  expiresAtFor,
  isExpired,
  recordPresentation,
  resolveAlert,
  toStoredDecision,
  type AlertConfig,
  type DecisionStore
} from './decision-store';
import { ConnectionDecisionStore } from './connection-store';
import { CachedDurableStore } from './cached-durable-store';
import { DurableDecisionStore } from './durable-store';

const MIN = 60_000;

function decision(over: Partial<StoredDecision> = {}): StoredDecision {
  return {
    server: 'release-notes',
    identity: 'release-notes:0123456789abcdef0123456789abcdef',
    verdict: 'denied',
    reason: 'user.denied',
    retryable: false,
    decidedAt: 0,
    expiresAt: null,
    policyHash: 'h1',
    represented: 0,
    recent: [],
    ...over
  };
}

/** The exact key set of a StoredDecision: anything else (content, text, result) is a leak. */
const DECISION_KEYS = [
  'decidedAt',
  'expiresAt',
  'identity',
  'policyHash',
  'reason',
  'recent',
  'represented',
  'retryable',
  'server',
  'verdict'
];

describe('expiresAtFor / isExpired', () => {
  it('maps each TTL kind: session → null, window → resetsAt, ms → now + ms', () => {
    expect(expiresAtFor({ kind: 'session' }, 5_000)).toBeNull();
    expect(expiresAtFor({ kind: 'window' }, 5_000, 86_400_000)).toBe(86_400_000);
    expect(expiresAtFor({ kind: 'ms', ms: 60_000 }, 5_000)).toBe(65_000);
    // No known reset: fail closed (kept) rather than hand the server a fresh evaluation.
    expect(expiresAtFor({ kind: 'window' }, 5_000)).toBeNull();
  });

  it('gives every default reason the TTL its rule names', () => {
    const now = 1_000;
    const resetsAt = 3_600_000;
    const got = Object.fromEntries(
      REASONS.map((r) => [r, expiresAtFor(DEFAULT_REASONS[r].ttl, now, resetsAt)])
    );
    expect(got).toEqual({
      'policy.sampling_disabled': null,
      'policy.budget_exhausted': resetsAt,
      'policy.input_too_large': null,
      'policy.model_not_allowed': null,
      'user.denied': null,
      'policy.rate_limit': now + 60_000,
      'policy.deadline': now + 30_000
    });
  });

  it('is expired at expiresAt, not one ms later; null never expires', () => {
    expect(isExpired({ expiresAt: 100 }, 99)).toBe(false);
    expect(isExpired({ expiresAt: 100 }, 100)).toBe(true);
    expect(isExpired({ expiresAt: null }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe('recordPresentation (the retry-loop alert)', () => {
  it('fires on the 40th re-presentation within 10 minutes, not on the 39th', () => {
    const d = decision();
    const fired: boolean[] = [];
    // 40 presentations, one every 15 s: 39 × 15 s = 9 min 45 s from first to last.
    for (let i = 0; i < 40; i++) fired.push(recordPresentation(d, i * 15_000, DEFAULT_ALERT));
    expect(fired.slice(0, 39).every((f) => !f)).toBe(true);
    expect(fired[39]).toBe(true);
    expect(d.represented).toBe(40);
  });

  it('does not fire when the same 40 are spread over 11 minutes', () => {
    const d = decision();
    const step = (11 * MIN) / 39;
    let any = false;
    for (let i = 0; i < 40; i++) any ||= recordPresentation(d, Math.round(i * step), DEFAULT_ALERT);
    expect(any).toBe(false);
    expect(d.represented).toBe(40);
  });

  it('uses a half-open window: exactly windowMs between first and last is outside', () => {
    const cfg: AlertConfig = { threshold: 2, windowMs: 1_000 };
    const d = decision();
    recordPresentation(d, 0, cfg);
    expect(recordPresentation(d, 1_000, cfg)).toBe(false);
    expect(recordPresentation(d, 1_999, cfg)).toBe(true);
  });

  it('honours a configured threshold and keeps only the last `threshold` timestamps', () => {
    const cfg: AlertConfig = { threshold: 3, windowMs: 1_000 };
    const d = decision();
    expect(recordPresentation(d, 0, cfg)).toBe(false);
    expect(recordPresentation(d, 10, cfg)).toBe(false);
    expect(recordPresentation(d, 20, cfg)).toBe(true);
    for (let t = 30; t < 1_000; t += 10) recordPresentation(d, t, cfg);
    expect(d.recent).toHaveLength(3);
    // The loop slows down: the alert drops once fewer than 3 fall inside the window.
    expect(recordPresentation(d, 5_000, cfg)).toBe(false);
  });

  it('agrees with a brute-force count over any presentation times (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3_000 }),
        (gaps, threshold, windowMs) => {
          const cfg = { threshold, windowMs };
          const d = decision();
          const times: number[] = [];
          let t = 0;
          for (const g of gaps) {
            t += g;
            times.push(t);
            const fired = recordPresentation(d, t, cfg);
            const inWindow = times.filter((x) => t - x < windowMs).length;
            if (fired !== inWindow >= threshold) return false;
            if (d.recent.length > threshold) return false;
          }
          return d.represented === gaps.length;
        }
      )
    );
  });

  it('resolveAlert fills defaults and replaces nonsense', () => {
    expect(resolveAlert()).toEqual({ threshold: 40, windowMs: 600_000 });
    expect(resolveAlert({ threshold: 5 })).toEqual({ threshold: 5, windowMs: 600_000 });
    expect(resolveAlert({ threshold: 0, windowMs: -1 })).toEqual(DEFAULT_ALERT);
    expect(resolveAlert({ threshold: Number.NaN })).toEqual(DEFAULT_ALERT);
  });
});

describe('toStoredDecision', () => {
  it('keeps the verdict fields and drops anything else, such as a completion', () => {
    const leaky = {
      ...decision({ retryAfterMs: 500 }),
      content: { type: 'text', text: 'the completion' }
    } as StoredDecision;
    const stored = toStoredDecision(leaky);
    expect(Object.keys(stored).sort()).toEqual([...DECISION_KEYS, 'retryAfterMs'].sort());
    expect(stored.recent).not.toBe(leaky.recent);
  });
});

// ───────────── the contract every scope honours (connection, durable, cached durable) ─────────────

let dbSeq = 0;
const uniqueDb = (label: string) => `decision-contract-${label}-${++dbSeq}`;

async function unwrap<T>(p: Promise<{ ok: true; store: T } | { ok: false; error: string }>) {
  const r = await p;
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

const scopes: { name: string; make: (alert?: Partial<AlertConfig>) => Promise<DecisionStore> }[] = [
  {
    name: 'ConnectionDecisionStore',
    make: async (alert) => new ConnectionDecisionStore({ alert })
  },
  {
    name: 'DurableDecisionStore',
    make: (alert) => unwrap(DurableDecisionStore.open({ dbName: uniqueDb('durable'), alert }))
  },
  {
    name: 'CachedDurableStore',
    make: (alert) => unwrap(CachedDurableStore.open({ dbName: uniqueDb('cached'), alert }))
  }
];

describe.each(scopes)('$name contract', ({ make }) => {
  const C = 'c1';

  it('misses when empty, hits after a commit, and counts re-presentations', async () => {
    const s = await make();
    const d = decision();
    expect(await s.lookup(d.server, C, d.identity, 'h1', 0)).toBeNull();
    await s.commit(C, d);
    const first = await s.lookup(d.server, C, d.identity, 'h1', 1_000);
    expect(first).not.toBeNull();
    expect(first?.decision.verdict).toBe('denied');
    expect(first?.decision.represented).toBe(1);
    expect(first?.alert).toBe(false);
    const second = await s.lookup(d.server, C, d.identity, 'h1', 2_000);
    expect(second?.decision.represented).toBe(2);
    expect(second?.decision.recent).toEqual([1_000, 2_000]);
    // The caller's object is not the stored one: committing copied it.
    expect(d.represented).toBe(0);
  });

  it('ms TTL (rate limit): hit until expiresAt, miss at it, and the entry is gone', async () => {
    const s = await make();
    const ttl = DEFAULT_REASONS['policy.rate_limit'].ttl;
    const d = decision({
      reason: 'policy.rate_limit',
      retryable: true,
      decidedAt: 10_000,
      expiresAt: expiresAtFor(ttl, 10_000)
    });
    await s.commit(C, d);
    expect(await s.lookup(d.server, C, d.identity, 'h1', 69_999)).not.toBeNull();
    expect(await s.lookup(d.server, C, d.identity, 'h1', 70_000)).toBeNull();
    expect(await s.count()).toBe(0);
  });

  it('window TTL (budget exhausted): expires when the budget window resets', async () => {
    const s = await make();
    const resetsAtMs = Date.UTC(2026, 2, 11);
    const d = decision({
      reason: 'policy.budget_exhausted',
      resetsAt: new Date(resetsAtMs).toISOString(),
      expiresAt: expiresAtFor(DEFAULT_REASONS['policy.budget_exhausted'].ttl, 0, resetsAtMs)
    });
    await s.commit(C, d);
    expect(await s.lookup(d.server, C, d.identity, 'h1', resetsAtMs - 1)).not.toBeNull();
    expect(await s.lookup(d.server, C, d.identity, 'h1', resetsAtMs)).toBeNull();
  });

  it('session TTL (user denied): never expires by time', async () => {
    const s = await make();
    const d = decision({ expiresAt: expiresAtFor(DEFAULT_REASONS['user.denied'].ttl, 0) });
    await s.commit(C, d);
    expect(await s.lookup(d.server, C, d.identity, 'h1', 365 * 24 * 3_600_000)).not.toBeNull();
  });

  it('a stale policyHash is a miss and deletes the entry', async () => {
    const s = await make();
    const d = decision();
    await s.commit(C, d);
    expect(await s.lookup(d.server, C, d.identity, 'h2', 1)).toBeNull();
    expect(await s.count()).toBe(0);
    expect(await s.lookup(d.server, C, d.identity, 'h1', 2)).toBeNull();
  });

  it("invalidateServer drops that server's entries and leaves another's intact", async () => {
    const s = await make();
    await s.commit(C, decision({ server: 'a', identity: 'a:1' }));
    await s.commit(C, decision({ server: 'a', identity: 'a:2' }));
    await s.commit(C, decision({ server: 'ab', identity: 'ab:1' }));
    await s.commit(C, decision({ server: 'b', identity: 'b:1' }));
    expect(await s.invalidateServer('a')).toBe(2);
    const left = (await s.entries()).map((e) => e.identity).sort();
    expect(left).toEqual(['ab:1', 'b:1']);
    expect(await s.lookup('b', C, 'b:1', 'h1', 1)).not.toBeNull();
    expect(await s.invalidateServer('nobody')).toBe(0);
  });

  it('keeps untrusted server names with separators apart', async () => {
    const s = await make();
    await s.commit(C, decision({ server: 'a\nb', identity: 'c', verdict: 'denied' }));
    await s.commit(C, decision({ server: 'a', identity: 'b\nc', verdict: 'allowed' }));
    expect((await s.lookup('a\nb', C, 'c', 'h1', 1))?.decision.verdict).toBe('denied');
    expect((await s.lookup('a', C, 'b\nc', 'h1', 1))?.decision.verdict).toBe('allowed');
    expect(await s.count()).toBe(2);
  });

  it('raises the retry-loop alert on the 40th re-presentation in 10 minutes', async () => {
    const s = await make();
    const d = decision();
    await s.commit(C, d);
    const alerts: boolean[] = [];
    for (let i = 1; i <= 40; i++) {
      const hit = await s.lookup(d.server, C, d.identity, 'h1', i * 10_000);
      alerts.push(hit?.alert ?? false);
    }
    expect(alerts.indexOf(true)).toBe(39);
  });

  it('applies a configured alert threshold', async () => {
    const s = await make({ threshold: 3, windowMs: 60_000 });
    const d = decision();
    await s.commit(C, d);
    const alerts: boolean[] = [];
    for (let i = 1; i <= 3; i++)
      alerts.push((await s.lookup(d.server, C, d.identity, 'h1', i))?.alert ?? false);
    expect(alerts).toEqual([false, false, true]);
  });

  it('never holds a completion: entries carry exactly the decision fields', async () => {
    const s = await make();
    const withResult = {
      ...decision({ verdict: 'allowed', reason: null }),
      content: { type: 'text', text: 'a completion that must not be stored' },
      text: 'nor this'
    } as StoredDecision;
    await s.commit(C, withResult);
    const all = await s.entries();
    expect(all).toHaveLength(1);
    expect(Object.keys(all[0] ?? {}).sort()).toEqual(DECISION_KEYS);
    expect(JSON.stringify(all)).not.toContain('completion');
  });

  it('clear drops everything and says how many', async () => {
    const s = await make();
    await s.commit(C, decision({ identity: 'x' }));
    await s.commit(C, decision({ identity: 'y' }));
    await s.commit(C, decision({ identity: 'y' })); // overwrite, not a second entry
    expect(await s.count()).toBe(2);
    expect(await s.clear()).toBe(2);
    expect(await s.count()).toBe(0);
  });
});
