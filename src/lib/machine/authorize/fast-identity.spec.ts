import { describe, expect, it } from 'vitest';
import { requestIdentity, MAX_PARAMS_DEPTH } from '../identity';
import { identityMemoStats, memoisedIdentity } from './fast-identity';

const params = () => ({
  systemPrompt: 'You summarise.',
  messages: [{ role: 'user', content: { type: 'text', text: 'Summarise 2.3, café.' } }],
  maxTokens: 100
});

describe('the memoised identity', () => {
  it('is the identity, for the same object presented again and for an equal new one', () => {
    const p = params();
    const want = requestIdentity('s', p);
    expect(memoisedIdentity('s', p, {})).toBe(want);
    expect(memoisedIdentity('s', p, {})).toBe(want);
    expect(memoisedIdentity('s', params(), {})).toBe(want);
  });

  it('keys on the server, the field set and the switch, not on the object alone', () => {
    const p = params();
    const opts = [
      {},
      { canonicalize: false },
      { fields: ['systemPrompt'] },
      { fields: ['messages'], canonicalize: false }
    ];
    for (const server of ['a', 'b'])
      for (const o of opts)
        expect(memoisedIdentity(server, p, o)).toBe(requestIdentity(server, p, o));
    expect(new Set(opts.map((o) => memoisedIdentity('a', p, o))).size).toBe(opts.length);
  });

  it('answers an equal field set in another array from the object, and a different one apart', () => {
    // Two lanes resolve their configs apart: equal field sets, two arrays.
    const p = params();
    const before = identityMemoStats.byObject;
    const first = memoisedIdentity('s', p, { fields: ['messages', 'systemPrompt'] });
    expect(memoisedIdentity('s', p, { fields: ['messages', 'systemPrompt'] })).toBe(first);
    expect(identityMemoStats.byObject).toBe(before + 1);
    for (const fields of [['messages'], ['systemPrompt', 'messages'], ['messages', 'maxTokens']])
      expect(memoisedIdentity('s', p, { fields })).toBe(requestIdentity('s', p, { fields }));
  });

  it('throws for params nested too deep on every presentation, as the identity does', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < MAX_PARAMS_DEPTH + 1; i++) deep = [deep];
    const p = { systemPrompt: 'x', messages: deep };
    expect(() => memoisedIdentity('s', p, {})).toThrow(/nested deeper than/);
    expect(() => memoisedIdentity('s', p, {})).toThrow(/nested deeper than/);
  });

  it('takes any JSON value as params, as the identity does', () => {
    for (const v of [null, 3, 'text', [1, 2]])
      expect(memoisedIdentity('s', v, {})).toBe(requestIdentity('s', v));
  });
});

describe('the memoised identity on the canonical payload', () => {
  it('gives a serialiser variant (other key order, other normalisation) the identity it has', () => {
    const p = params();
    const variant = {
      maxTokens: 100,
      messages: [{ content: { text: 'Summarise 2.3, cafe\u0301.', type: 'text' }, role: 'user' }],
      systemPrompt: 'You summarise.'
    };
    expect(memoisedIdentity('s', p, {})).toBe(requestIdentity('s', p));
    expect(memoisedIdentity('s', variant, {})).toBe(requestIdentity('s', variant));
    expect(requestIdentity('s', variant)).toBe(requestIdentity('s', p));
    // Teaching mode hashes the text as received: the variant is a different request there.
    expect(memoisedIdentity('s', variant, { canonicalize: false })).toBe(
      requestIdentity('s', variant, { canonicalize: false })
    );
    expect(memoisedIdentity('s', variant, { canonicalize: false })).not.toBe(
      memoisedIdentity('s', p, { canonicalize: false })
    );
  });

  it('keeps servers apart for the same text', () => {
    const a = memoisedIdentity('a', params(), {});
    const b = memoisedIdentity('b', params(), {});
    expect(a).toBe(requestIdentity('a', params()));
    expect(b).toBe(requestIdentity('b', params()));
    expect(a).not.toBe(b);
  });

  it("canonicalises a params object once for every server that presents it (a group's shared request)", () => {
    const p = params();
    const first = identityMemoStats.byObject;
    const ids = ['g1', 'g2', 'g3'].map((server) => memoisedIdentity(server, p, {}));
    expect(ids).toEqual(['g1', 'g2', 'g3'].map((server) => requestIdentity(server, p)));
    expect(identityMemoStats.byObject).toBe(first + 2);
  });

  it('hashes a text once for every server that sends it, each server its own identity', () => {
    const text = () => ({ ...params(), systemPrompt: 'A prompt sent by three servers.' });
    const hashed = identityMemoStats.hashed;
    const ids = ['x', 'y', 'z', 'y'].map((server) => memoisedIdentity(server, text(), {}));
    expect(ids).toEqual(['x', 'y', 'z', 'y'].map((server) => requestIdentity(server, text())));
    expect(identityMemoStats.hashed).toBe(hashed + 1);
  });
});
