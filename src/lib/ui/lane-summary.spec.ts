import { describe, expect, it } from 'vitest';
import { configWords, laneHeading, storeWords } from './lane-summary';

describe('lane headers from the live configuration', () => {
  it('names only what differs from the defaults', () => {
    expect(configWords({})).toEqual([]);
    expect(configWords({ reasons: { 'policy.sampling_disabled': { retryable: true } } })).toEqual([
      'sampling_disabled retryable'
    ]);
    expect(configWords({ reasons: { 'policy.rate_limit': { retryable: false } } })).toEqual([
      'rate_limit permanent'
    ]);
    expect(configWords({ silence: true, canonicalize: false })).toEqual([
      'silence on denial',
      'hashes the bytes as received'
    ]);
    expect(
      configWords({ reasons: { 'policy.budget_exhausted': { ttl: { kind: 'session' } } } })
    ).toEqual(['budget_exhausted TTL session']);
  });

  it('says the store once, and the scenario name only when it adds something', () => {
    expect(storeWords('connection-scoped')).toBe('Connection-scoped store');
    expect(laneHeading('Connection-scoped store', 'Connection-scoped store', false)).toEqual({
      main: 'Connection-scoped store',
      note: ''
    });
    // The scenario's name says the live words and more: it stands in for them.
    expect(laneHeading('Durable store (was connection-scoped)', 'Durable store', false)).toEqual({
      main: 'Durable store (was connection-scoped)',
      note: ''
    });
    expect(laneHeading('retryable: false (default)', 'Durable store', false)).toEqual({
      main: 'Durable store',
      note: 'retryable: false (default)'
    });
    // After a live change the scenario's name is what the lane was.
    expect(
      laneHeading('retryable: false (default)', 'Durable store · sampling_disabled retryable', true)
    ).toEqual({
      main: 'Durable store · sampling_disabled retryable',
      note: 'as loaded: retryable: false (default)'
    });
  });
});
