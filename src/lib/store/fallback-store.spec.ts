import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { DurableDecisionStore } from './durable-store';
import { FallbackDurableStore } from './fallback-store';

let seq = 0;
const decision = (identity: string): StoredDecision => ({
  server: 's',
  identity,
  verdict: 'denied',
  reason: 'user.denied',
  retryable: false,
  decidedAt: 0,
  expiresAt: null,
  policyHash: 'h',
  represented: 0,
  recent: []
});

async function open() {
  const r = await DurableDecisionStore.open({ dbName: `fallback-spec-${++seq}` });
  if (!r.ok) throw new Error(r.error);
  return new FallbackDurableStore(r.store);
}

afterEach(() => vi.restoreAllMocks());

describe('FallbackDurableStore', () => {
  it('is durable while IndexedDB works', async () => {
    const s = await open();
    await s.commit('c1', decision('a'));
    expect(s.scope).toBe('durable');
    expect(await s.saved()).toBe(1);
    expect(s.heldInMemory).toBe(0);
    expect(await s.lookup('s', 'c2', 'a', 'h', 1)).not.toBeNull();
  });

  it('a failed commit is held connection-scoped and said in words; retry saves it', async () => {
    const s = await open();
    await s.commit('c1', decision('a'));
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    await s.commit('c1', decision('b'));
    expect(s.scope).toBe('connection');
    expect(s.failure?.words).toMatch(/storage for this site is full/);
    expect(await s.saved()).toBe(1);
    expect(s.heldInMemory).toBe(1);
    expect(await s.count()).toBe(2);
    // Held for its connection only.
    expect(await s.lookup('s', 'c1', 'b', 'h', 1)).not.toBeNull();
    expect(await s.lookup('s', 'c2', 'b', 'h', 1)).toBeNull();
    expect(await s.retry()).toBe(false);
    put.mockRestore();
    expect(await s.retry()).toBe(true);
    expect(s.scope).toBe('durable');
    expect(await s.saved()).toBe(2);
    expect(s.heldInMemory).toBe(0);
  });
});
