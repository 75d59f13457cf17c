import { describe, expect, it } from 'vitest';
import { changedServers, effectiveBlock, policyHash } from './effective';
import { parsePolicy } from './parse';
import { DEFAULT_POLICY, defaultPolicy, type Policy } from './schema';

/** DEFAULT_POLICY with a change, as a plain value. */
function edited(edit: (p: Policy) => void): Policy {
  const p = defaultPolicy();
  edit(p);
  return p;
}

describe('effective blocks and policy hashes', () => {
  it('merges member by member; a nested object replaces, never merges', () => {
    const b = effectiveBlock(DEFAULT_POLICY, 'release-notes');
    expect(b.budget).toEqual({ amount: '0.50', currency: 'USD', windowMs: 86_400_000 });
    expect(b.perCallCap).toEqual(DEFAULT_POLICY.defaults.perCallCap);
    const p = edited((p) => (p.servers['x'] = { rateLimit: null }));
    expect(effectiveBlock(p, 'x').rateLimit).toBeNull();
  });

  it('gives unknown servers the defaults, including names that exist on Object.prototype', () => {
    for (const name of ['nobody', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(effectiveBlock(DEFAULT_POLICY, name)).toEqual(DEFAULT_POLICY.defaults);
    }
  });

  it('is 16 hex digits, deterministic, and blind to key order and whitespace', () => {
    const h = policyHash(DEFAULT_POLICY, 'release-notes');
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    const reordered = parsePolicy(
      '{"servers":{"release-notes":{"budget":{"windowMs":86400000,"currency":"USD","amount":"0.50"}}},' +
        `"defaults":${JSON.stringify(DEFAULT_POLICY.defaults)},"version":1}`
    );
    expect(reordered.ok && policyHash(reordered.policy, 'release-notes')).toBe(h);
    expect(policyHash(DEFAULT_POLICY, 'a')).not.toBe(h);
  });

  it("an edit to one server's block changes only that server's hash", () => {
    const servers = ['release-notes', 'summariser', 'translator'];
    const next = edited(
      (p) => (p.servers['release-notes']!.perCallCap = { amount: '0.01', currency: 'USD' })
    );
    expect(changedServers(DEFAULT_POLICY, next, servers)).toEqual(['release-notes']);
  });

  it('an edit to defaults changes every server that does not override the edited member', () => {
    const servers = ['release-notes', 'summariser', 'translator'];
    const budget = edited(
      (p) => (p.defaults.budget = { amount: '9.00', currency: 'USD', windowMs: 86_400_000 })
    );
    expect(changedServers(DEFAULT_POLICY, budget, servers)).toEqual(['summariser', 'translator']);
    const cap = edited((p) => (p.defaults.perCallCap = null));
    expect(changedServers(DEFAULT_POLICY, cap, servers)).toEqual(servers);
  });

  it('an override equal to the default changes nothing: the hash is of the effective block', () => {
    const same = edited((p) => (p.servers['translator'] = { consent: 'ask' }));
    expect(changedServers(DEFAULT_POLICY, same, ['translator', 'translator'])).toEqual([]);
    const moved = edited((p) => (p.servers['translator'] = { consent: 'allow' }));
    expect(changedServers(DEFAULT_POLICY, moved, ['translator', 'translator'])).toEqual([
      'translator'
    ]);
  });
});
