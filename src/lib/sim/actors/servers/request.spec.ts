import { describe, expect, it } from 'vitest';
import { inputTokensOf } from '../../../machine/budget';
import { requestIdentity } from '../../../machine/identity';
import type { SamplingParams, TextContent } from '../../../machine/types';
import type { RequestTemplate } from '../../world/world';
import { applyWireStyle, buildParams, mutateOneCharacter } from './request';

const template: RequestTemplate = {
  systemPrompt: 'You write release notes.',
  prompt: 'Summarise ticket {n} ({n} of many).',
  promptTokens: 200,
  prefixTokens: 100,
  includeContext: 'thisServer',
  modelHints: ['claude-3-haiku', 'small'],
  maxTokens: 512,
  temperature: 0.2,
  budget: { intent: { maxCost: { amount: '0.05', currency: 'USD' } }, onExceeded: 'reject' }
};

function texts(p: SamplingParams): string[] {
  return p.messages.map((m) => (m.content as TextContent).text);
}

function diffCount(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  if (x.length !== y.length) return Infinity;
  return x.filter((c, i) => c !== y[i]).length;
}

describe('buildParams', () => {
  it('replaces {n}, pads the prompt to promptTokens and carries every template member', () => {
    const p = buildParams(template, 7);
    const [prefix, prompt] = texts(p);
    expect(prompt!.startsWith('Summarise ticket 7 (7 of many).')).toBe(true);
    expect(prompt).toHaveLength(200 * 4);
    expect(prefix).toHaveLength(100 * 4);
    expect(p.systemPrompt).toBe('You write release notes.');
    expect(p.includeContext).toBe('thisServer');
    expect(p.modelPreferences).toEqual({ hints: [{ name: 'claude-3-haiku' }, { name: 'small' }] });
    expect(p.maxTokens).toBe(512);
    expect(p.temperature).toBe(0.2);
    expect(p.budget).toEqual(template.budget);
    expect(p.budget).not.toBe(template.budget);
    // system (24 chars = 6 tokens) + prefix (100) + prompt (200)
    expect(inputTokensOf(p)).toBe(306);
    expect(Object.keys(p)).toEqual([
      'messages',
      'systemPrompt',
      'includeContext',
      'modelPreferences',
      'maxTokens',
      'temperature',
      'budget'
    ]);
  });

  it('is deterministic, shares the prefix across tasks and differs in the prompt', () => {
    expect(JSON.stringify(buildParams(template, 3))).toBe(JSON.stringify(buildParams(template, 3)));
    const [prefix3, prompt3] = texts(buildParams(template, 3));
    const [prefix4, prompt4] = texts(buildParams(template, 4));
    expect(prefix3).toBe(prefix4);
    expect(prompt3).not.toBe(prompt4);
  });

  it("gives one params object to a task number asked again, though many were built between (a group's servers drift apart)", () => {
    const t: RequestTemplate = { prompt: 'Task {n}.', promptTokens: 500, maxTokens: 10 };
    const first = buildParams(t, 1);
    for (let n = 2; n <= 200; n++) buildParams(t, n);
    expect(buildParams(t, 1)).toBe(first);
    // A shrunk build is another request, kept apart.
    const shrunk = buildParams(t, 1, { inputTokens: 50 });
    expect(shrunk).not.toBe(first);
    expect(buildParams(t, 1, { inputTokens: 50 })).toBe(shrunk);
    expect(inputTokensOf(buildParams(t, 1))).toBe(500);
  });

  it('leaves out absent members and never cuts a prompt longer than promptTokens', () => {
    const p = buildParams({ prompt: 'x'.repeat(50), promptTokens: 5, maxTokens: 10 }, 1);
    expect(p).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(50) } }],
      maxTokens: 10
    });
  });

  it('shrinks to inputTokens by cutting the padding first, then the prefix', () => {
    const full = buildParams(template, 1);
    // 306 tokens in all; 250 keeps the whole prefix and cuts only the padding.
    const a = buildParams(template, 1, { inputTokens: 250 });
    expect(inputTokensOf(a)).toBe(250);
    expect(texts(a)[0]).toBe(texts(full)[0]);
    expect(texts(a)[1]!.startsWith('Summarise ticket 1 (1 of many).')).toBe(true);
    // 50 tokens: no padding left, the prefix cut (a prefix of the same text).
    const b = buildParams(template, 1, { inputTokens: 50 });
    expect(inputTokensOf(b)).toBeLessThanOrEqual(50);
    expect(texts(full)[0]!.startsWith(texts(b)[0]!)).toBe(true);
    expect(texts(b)[1]).toBe('Summarise ticket 1 (1 of many).');
    // Below the system prompt + prompt: the prefix goes, nothing else can.
    const c = buildParams(template, 1, { inputTokens: 3 });
    expect(c.messages).toHaveLength(1);
    expect(b.maxTokens).toBe(512);
  });

  it('hits the RFC sizes exactly: 24,000 tokens, shrunk to 11,683 and 6,426', () => {
    const t: RequestTemplate = {
      prompt: 'Draft the changelog.',
      promptTokens: 24_000,
      maxTokens: 2048
    };
    expect(inputTokensOf(buildParams(t, 1))).toBe(24_000);
    expect(inputTokensOf(buildParams(t, 1, { inputTokens: 11_683 }))).toBe(11_683);
    expect(inputTokensOf(buildParams(t, 1, { inputTokens: 6426 }))).toBe(6426);
  });
});

describe('mutateOneCharacter', () => {
  const base = buildParams(template, 1);

  it('changes exactly one character of the prompt, a different one for every k', () => {
    const seen = new Set<string>();
    for (let k = 0; k < 300; k++) {
      const m = mutateOneCharacter(base, k);
      expect(diffCount(texts(m)[1]!, texts(base)[1]!)).toBe(1);
      expect(texts(m)[0]).toBe(texts(base)[0]); // the prefix is untouched
      expect(inputTokensOf(m)).toBe(inputTokensOf(base));
      seen.add(requestIdentity('srv', m));
    }
    expect(seen.size).toBe(300);
    expect(seen.has(requestIdentity('srv', base))).toBe(false);
  });

  it('does not touch its input and stays distinct past one pass over a short prompt', () => {
    const short = buildParams({ prompt: 'abc', maxTokens: 8 }, 1);
    const before = JSON.stringify(short);
    const out = new Set(
      Array.from({ length: 75 }, (_, k) => texts(mutateOneCharacter(short, k))[0])
    );
    expect(out.size).toBe(75); // 3 positions × 25 letters
    expect(JSON.stringify(short)).toBe(before);
    expect(() => mutateOneCharacter({ messages: [], maxTokens: 1 }, 0)).toThrow(/no user text/);
  });
});

describe('applyWireStyle', () => {
  const p = buildParams({ ...template, prompt: 'Résumé of ticket {n}, café edition.' }, 2);

  it('reverses the key order at every depth, and the canonical identity does not notice', () => {
    const r = applyWireStyle(p, { reverseKeys: true });
    expect(Object.keys(r)).toEqual(Object.keys(p).reverse());
    expect(Object.keys(r.messages[0]!)).toEqual(['content', 'role']);
    expect(Object.keys(r.budget!)).toEqual(['onExceeded', 'intent']);
    expect(JSON.stringify(r)).not.toBe(JSON.stringify(p));
    expect(requestIdentity('srv', r)).toBe(requestIdentity('srv', p));
    expect(requestIdentity('srv', r, { canonicalize: false })).not.toBe(
      requestIdentity('srv', p, { canonicalize: false })
    );
  });

  it('writes text in NFD: different bytes, same canonical identity', () => {
    const d = applyWireStyle(p, { nfd: true });
    const prompt = texts(d)[1]!;
    expect(prompt.startsWith('Re\u0301sume\u0301')).toBe(true);
    expect(prompt.normalize('NFC')).toBe(texts(p)[1]);
    expect(Object.keys(d)).toEqual(Object.keys(p));
    expect(requestIdentity('srv', d)).toBe(requestIdentity('srv', p));
    expect(requestIdentity('srv', d, { canonicalize: false })).not.toBe(
      requestIdentity('srv', p, { canonicalize: false })
    );
  });

  it('with no style is a deep copy', () => {
    const c = applyWireStyle(p, {});
    expect(c).toEqual(p);
    expect(JSON.stringify(c)).toBe(JSON.stringify(p));
    expect(c.messages).not.toBe(p.messages);
  });

  it('keeps keys named like Object.prototype members as plain keys, in order', () => {
    // As JSON.parse makes them: `__proto__` an own key, not the object's prototype.
    const odd = JSON.parse(
      '{"maxTokens":1,"metadata":{"__proto__":{"x":1},"constructor":"c","toString":"t","a":[{"__proto__":2}]}}'
    ) as SamplingParams;
    for (const wire of [{}, { reverseKeys: true }, { nfd: true }]) {
      const reversed = 'reverseKeys' in wire;
      const r = applyWireStyle(odd, wire);
      const meta = r.metadata as Record<string, unknown>;
      expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
      const keys = ['__proto__', 'constructor', 'toString', 'a'];
      expect(Object.keys(meta)).toEqual(reversed ? keys.reverse() : keys);
      expect(Object.getOwnPropertyDescriptor(meta, '__proto__')).toEqual({
        value: { x: 1 },
        enumerable: true,
        writable: true,
        configurable: true
      });
      expect(meta.constructor).toBe('c');
      expect(JSON.stringify(r)).toBe(
        !reversed
          ? JSON.stringify(odd)
          : '{"metadata":{"a":[{"__proto__":2}],"toString":"t","constructor":"c","__proto__":{"x":1}},"maxTokens":1}'
      );
    }
  });
});
