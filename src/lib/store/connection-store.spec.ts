import { describe, expect, it } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { decision as storedDecision } from './decision.testing';
import { ConnectionDecisionStore } from './connection-store';

/** The shared stored decision, with this spec's defaults. */
const decision = (over: Partial<StoredDecision> = {}): StoredDecision =>
  storedDecision({ reason: 'user.denied', ...over });

describe('ConnectionDecisionStore', () => {
  it('answers synchronously with plain values, never promises', () => {
    const s = new ConnectionDecisionStore();
    const d = decision();
    expect(s.commit('c1', d)).toBeUndefined();
    const hit = s.lookup(d.server, 'c1', d.identity, 'h1', 1);
    expect(hit).not.toBeInstanceOf(Promise);
    expect(hit?.decision.represented).toBe(1);
    expect(s.count()).toBe(1);
  });

  it('a decision on connection c1 is a miss on c2 of the same server (the reconnect bypass)', () => {
    const s = new ConnectionDecisionStore();
    const d = decision();
    s.commit('c1', d);
    expect(s.lookup(d.server, 'c2', d.identity, 'h1', 1)).toBeNull();
    expect(s.lookup(d.server, 'c1', d.identity, 'h1', 1)).not.toBeNull();
  });

  it("closeConnection drops that connection's entries for that server only", () => {
    const s = new ConnectionDecisionStore();
    s.commit('c1', decision({ server: 'a', identity: 'a:1' }));
    s.commit('c1', decision({ server: 'a', identity: 'a:2' }));
    // Connection ids may be per server: the same id on another server must survive.
    s.commit('c1', decision({ server: 'b', identity: 'b:1' }));
    s.commit('c2', decision({ server: 'a', identity: 'a:1' }));
    s.closeConnection('a', 'c1');
    expect(s.lookup('a', 'c1', 'a:1', 'h1', 1)).toBeNull();
    expect(s.lookup('b', 'c1', 'b:1', 'h1', 1)).not.toBeNull();
    expect(s.lookup('a', 'c2', 'a:1', 'h1', 1)).not.toBeNull();
    expect(s.count()).toBe(2);
    s.closeConnection('a', 'never-opened');
    expect(s.count()).toBe(2);
  });

  it("invalidateServer reaches the server's entries on every connection", () => {
    const s = new ConnectionDecisionStore();
    s.commit('c1', decision({ server: 'a', identity: 'a:1' }));
    s.commit('c2', decision({ server: 'a', identity: 'a:1' }));
    s.commit('c2', decision({ server: 'b', identity: 'b:1' }));
    expect(s.invalidateServer('a')).toBe(2);
    expect(s.entries().map((e) => e.server)).toEqual(['b']);
    expect(s.count()).toBe(1);
  });

  it('stays fast and consistent across 100k requests on many connections', () => {
    const s = new ConnectionDecisionStore();
    let hits = 0;
    for (let i = 0; i < 100_000; i++) {
      const conn = `c${i % 50}`;
      const identity = `id${i % 500}`;
      if (s.lookup('srv', conn, identity, 'h1', i)) hits++;
      else s.commit(conn, decision({ server: 'srv', identity, decidedAt: i }));
    }
    // i % 50 is fixed by i % 500, so there are exactly 500 (connection, identity) pairs, each new once.
    expect(s.count()).toBe(500);
    expect(hits).toBe(100_000 - 500);
  });
});
