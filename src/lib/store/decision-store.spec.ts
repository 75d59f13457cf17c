import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { decision as storedDecision } from './decision.testing';
import { DEFAULT_REASONS, REASONS } from '../machine/reasons';
import {
  expiresAtFor,
  isExpired,
  recordPresentation,
  toStoredDecision,
  type DecisionStore
} from './decision-store';
import { ConnectionDecisionStore } from './connection-store';
import { CachedDurableStore } from './cached-durable-store';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileStore } from '../handler/file-store';

/** The shared stored decision, with this spec's defaults. */
const decision = (over: Partial<StoredDecision> = {}): StoredDecision =>
  storedDecision({
    reason: 'user.denied',
    identity: 'release-notes:0123456789abcdef0123456789abcdef',
    ...over
  });

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
      'user.timeout': now + 60_000,
      'policy.rate_limit': now + 60_000,
      'policy.deadline': now + 30_000,
      'policy.budget_reserved': now + 30_000,
      // Never stored: asked anyway, it is dead at once.
      'policy.currency_unsupported': now
    });
  });

  it('is expired at expiresAt, not one ms later; null never expires', () => {
    expect(isExpired({ expiresAt: 100 }, 99)).toBe(false);
    expect(isExpired({ expiresAt: 100 }, 100)).toBe(true);
    expect(isExpired({ expiresAt: null }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe('recordPresentation', () => {
  it('counts a re-presentation on the entry (the alert is the host history, not the store)', () => {
    const d = decision();
    recordPresentation(d);
    recordPresentation(d);
    expect(d.represented).toBe(2);
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

// ───────── the contract every scope honours (connection, durable, file) ─────────

let dbSeq = 0;
const uniqueDb = (label: string) => `decision-contract-${label}-${++dbSeq}`;

async function unwrap<T>(p: Promise<{ ok: true; store: T } | { ok: false; error: string }>) {
  const r = await p;
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

const scopes: { name: string; make: () => Promise<DecisionStore> }[] = [
  {
    name: 'ConnectionDecisionStore',
    make: async () => new ConnectionDecisionStore()
  },
  {
    name: 'CachedDurableStore',
    make: () => unwrap(CachedDurableStore.open({ dbName: uniqueDb('cached') }))
  },
  {
    // The handler's durable store for Node (a fresh directory each time).
    name: 'FileDecisionStore',
    make: async () => fileStore(mkdtempSync(join(tmpdir(), 'decision-contract-')))
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
    const second = await s.lookup(d.server, C, d.identity, 'h1', 2_000);
    expect(second?.decision.represented).toBe(2);
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

  // Issue #18: approved at 2 s, rate-limited at 9 s, asked again at 701 s. A denial about *when*
  // carries the approval it stood on; once it expires, the approval answers again.
  it('a denial carrying an approval becomes the approval when it expires (lookup and sweep)', async () => {
    const s = await make();
    const carrying = (identity: string) =>
      decision({
        identity,
        reason: 'policy.rate_limit',
        retryable: true,
        decidedAt: 9_000,
        expiresAt: 69_000,
        retryAt: 600_000,
        approval: { decidedAt: 2_000, expiresAt: 900_000 }
      });
    await s.commit(C, carrying('a'));
    await s.commit(C, carrying('b'));
    expect((await s.lookup('release-notes', C, 'a', 'h1', 68_999))?.decision.verdict).toBe(
      'denied'
    );
    const after = await s.lookup('release-notes', C, 'a', 'h1', 69_000);
    expect(after?.decision).toMatchObject({
      verdict: 'allowed',
      reason: null,
      decidedAt: 2_000,
      expiresAt: 900_000
    });
    expect(await s.count()).toBe(2);
    // The sweep turns the other one into its approval rather than dropping it.
    expect(await s.sweep(70_000)).toBe(0);
    expect(await s.count()).toBe(2);
    expect((await s.lookup('release-notes', C, 'b', 'h1', 70_001))?.decision.verdict).toBe(
      'allowed'
    );
    // The approval's own TTL still ends it.
    expect(await s.lookup('release-notes', C, 'a', 'h1', 900_000)).toBeNull();
    expect(await s.sweep(900_000)).toBe(1);
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
