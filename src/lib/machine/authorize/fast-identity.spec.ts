import { describe, expect, it } from 'vitest';
import { requestIdentity, MAX_PARAMS_DEPTH } from '../identity';
import { memoisedIdentity } from './fast-identity';

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
