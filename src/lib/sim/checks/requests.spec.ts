/**
 * The checker's requests in flight are kept by lane, connection and id (requests.ts): what it
 * reports about them is as when one map held them all in the order they arrived.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyCounters, type LaneCounters } from '../engine/metrics';
import { DEFAULT_PROVIDER, cardsByModel } from '../actors/provider';
import { InvariantChecker } from './invariants';
import { record, T0 } from './invariants/records.testing';
import { idKey } from './requests';

const counters = { A: emptyCounters(), B: emptyCounters() } as Record<string, LaneCounters>;

describe('request ids as the maps key them', () => {
  it('two ids are one key exactly when their strings are equal', () => {
    const id = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(0, -0, NaN, Infinity, 1e21, 5),
      fc.string(),
      fc.constantFrom('0', '-0', 'NaN', 'Infinity', '1e21', '1e+21', '05', '5', ' 5', '0x5', '')
    );
    fc.assert(
      fc.property(id, id, (a, b) => {
        const one = new Map([[idKey(a), true]]).has(idKey(b));
        expect(one).toBe(String(a) === String(b));
      }),
      { numRuns: 5000 }
    );
  });
});

describe('requests in flight', () => {
  it('are listed in the order they arrived, whatever their lane and connection', () => {
    const c = new InvariantChecker({ cards: cardsByModel(DEFAULT_PROVIDER.cards) });
    const arrivals: [string, string, number | string][] = [
      ['B', 'b#2', 7],
      ['A', 'a#1', 1],
      ['B', 'b#1', '1'],
      ['A', 'a#2', 3],
      ['A', 'a#1', 2],
      ['B', 'b#2', 8]
    ];
    arrivals.forEach(([lane, connection, id], i) =>
      c.request(lane, connection, id, T0 + i, { silence: false })
    );
    // Audited, never answered: each is listed, in arrival order.
    for (const [lane, connection, id] of [...arrivals].reverse())
      c.audit(record({ lane, connection, requestId: id as number }), { budget: null, pool: null });
    // A request arriving again under an id still in flight keeps the first one's place.
    c.request('B', 'b#2', 7, T0 + 10, { silence: false });
    // (Waiting longer than 5 ms counts as never answered.)
    const oneFrame = c.results(T0 + 20, counters, 5).find((r) => r.id === 'one-frame')!;
    expect(oneFrame.offenders.map((o) => [o.lane, o.request, o.what])).toEqual([
      ['B', 'b#2/7', 'a second request with an id still in flight on its connection'],
      ['B', 'b#2/7', 'no answer after 10 ms'],
      ['A', 'a#1/1', 'an audit record but no frame'],
      ['B', 'b#1/1', 'an audit record but no frame'],
      ['A', 'a#2/3', 'an audit record but no frame'],
      ['A', 'a#1/2', 'an audit record but no frame'],
      ['B', 'b#2/8', 'an audit record but no frame']
    ]);
  });

  it('a number id and the same digits as a string are one request', () => {
    const c = new InvariantChecker({ cards: cardsByModel(DEFAULT_PROVIDER.cards) });
    c.request('A', 'a#1', 5, T0, { silence: false });
    c.request('A', 'a#1', '5', T0, { silence: false });
    const oneFrame = c.results(T0, counters, 60_000).find((r) => r.id === 'one-frame')!;
    expect(oneFrame.offenders.map((o) => o.what)).toEqual([
      'a second request with an id still in flight on its connection'
    ]);
  });
});
