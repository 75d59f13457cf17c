import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_IDENTITY_FIELDS,
  canonicalIdentityPayload,
  depthExceeded,
  loneSurrogateAt,
  MAX_PARAMS_DEPTH,
  ParamsDepthError,
  requestIdentity,
  type IdentityOptions
} from './identity';

const FORMAT = /^srv:[0-9a-f]{32}$/;

/** An independent reference: SHA-256 by node:crypto over a canonical string written out here. */
function expected(server: string, canonical: string): string {
  return server + ':' + createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 32);
}

const id = (params: unknown, opts?: IdentityOptions) => requestIdentity('srv', params, opts);

/** The same JSON value with the members of every object, at any depth, in reverse order. */
function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).reverse()) {
    Object.defineProperty(out, k, {
      value: reverseKeys((v as Record<string, unknown>)[k]),
      enumerable: true,
      writable: true,
      configurable: true
    });
  }
  return out;
}

/** Every string of a JSON value, keys included, mapped through `f`. */
function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).map(([k, x]) => [f(k), mapStrings(x, f)])
  );
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const content = fc.record({ type: fc.constant('text'), text });
const message = fc.record({
  role: fc.constantFrom('user', 'assistant'),
  content: fc.oneof(content, fc.array(content, { maxLength: 3 }))
});
const includeContext = fc.constantFrom('none', 'thisServer', 'allServers');
const modelPreferences = fc.record(
  {
    hints: fc.array(fc.record({ name: text }), { maxLength: 3 }),
    costPriority: fc.double({ min: 0, max: 1, noNaN: true }),
    speedPriority: fc.double({ min: 0, max: 1, noNaN: true }),
    intelligencePriority: fc.double({ min: 0, max: 1, noNaN: true })
  },
  { requiredKeys: [] }
);
/** Sampling params as an honest server might send them, including the non-identity knobs. */
const params = fc.record(
  {
    messages: fc.array(message, { maxLength: 4 }),
    systemPrompt: text,
    includeContext,
    modelPreferences,
    maxTokens: fc.integer({ min: 1, max: 100_000 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    stopSequences: fc.array(text, { maxLength: 3 }),
    metadata: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    budget: fc.record({
      intent: fc.record({
        maxCost: fc.record({
          amount: fc.constantFrom('0.01', '1.50'),
          currency: fc.constant('USD')
        })
      }),
      onExceeded: fc.constantFrom('reject', 'truncate')
    })
  },
  { requiredKeys: ['messages', 'maxTokens'] }
);

describe('requestIdentity: format and known answers', () => {
  it('is the server, a colon and 32 lowercase hex characters, for any JSON params', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (p) => {
        expect(id(p)).toMatch(FORMAT);
        expect(id(p, { canonicalize: false })).toMatch(FORMAT);
      })
    );
    expect(requestIdentity('release-notes', {})).toMatch(/^release-notes:[0-9a-f]{32}$/);
  });

  it('never throws on values JSON cannot hold, and treats non-object params as {}', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withSparseArray: true }), (p) => {
        expect(id({ systemPrompt: 'x', messages: [p], modelPreferences: p })).toMatch(FORMAT);
      })
    );
    const empty = id({});
    for (const p of [null, undefined, 42, 'text', true, [1, 2], [{ systemPrompt: 'x' }]]) {
      expect(id(p)).toBe(empty);
      expect(id(p, { canonicalize: false })).toBe(id({}, { canonicalize: false }));
    }
    // NaN and ±Infinity cannot come from JSON; if a caller passes them they hash as null would.
    expect(id({ modelPreferences: { costPriority: NaN } })).toBe(
      id({ modelPreferences: { costPriority: null } })
    );
  });

  it('matches SHA-256 of a canonical string written by hand', () => {
    const p = {
      systemPrompt: 'hi',
      maxTokens: 100,
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello' } }]
    };
    const canonical =
      '{"includeContext":null,"messages":[{"content":{"text":"Hello","type":"text"},"role":"user"}],"modelPreferences":null,"systemPrompt":"hi"}';
    expect(canonicalIdentityPayload(p)).toBe(canonical);
    expect(requestIdentity('srv', p)).toBe(expected('srv', canonical));
  });

  it('hashes RFC 8785 numbers and NFC text, UTF-8 encoded', () => {
    const p = {
      includeContext: 'thisServer',
      messages: [],
      modelPreferences: { intelligencePriority: 1e-7, costPriority: 1.0, hints: [{ name: 'x' }] },
      systemPrompt: 'cafe\u0301 \u{1f600}'
    };
    const canonical =
      '{"includeContext":"thisServer","messages":[],"modelPreferences":{"costPriority":1,"hints":[{"name":"x"}],"intelligencePriority":1e-7},"systemPrompt":"caf\u00e9 \u{1f600}"}';
    expect(canonicalIdentityPayload(p)).toBe(canonical);
    expect(requestIdentity('srv', p)).toBe(expected('srv', canonical));
  });

  it('hashes the same fields as received in teaching mode', () => {
    const p = { maxTokens: 5, systemPrompt: 'cafe\u0301' };
    const raw =
      '{"systemPrompt":"cafe\u0301","messages":null,"includeContext":null,"modelPreferences":null}';
    expect(canonicalIdentityPayload(p, { canonicalize: false })).toBe(raw);
    expect(requestIdentity('srv', p, { canonicalize: false })).toBe(expected('srv', raw));
  });

  it('keeps the server in the key: two servers never share an identity', () => {
    const p = { systemPrompt: 'same', messages: [] };
    expect(requestIdentity('a', p)).not.toBe(requestIdentity('b', p));
    expect(requestIdentity('a', p).slice(2)).toBe(requestIdentity('b', p).slice(2));
  });
});

describe('requestIdentity: what a human calls the same request gets one identity', () => {
  it('ignores member order at every depth', () => {
    fc.assert(
      fc.property(params, (p) => {
        expect(id(reverseKeys(p))).toBe(id(p));
      })
    );
    expect(
      id({ systemPrompt: 'a', messages: [{ role: 'user', content: { type: 'text', text: 'b' } }] })
    ).toBe(
      id({ messages: [{ content: { text: 'b', type: 'text' }, role: 'user' }], systemPrompt: 'a' })
    );
  });

  it('ignores insignificant whitespace in the JSON text', () => {
    fc.assert(
      fc.property(params, fc.constantFrom(1, 2, '\t', ' \n '), (p, indent) => {
        const compact = JSON.parse(JSON.stringify(p)) as unknown;
        const spaced = JSON.parse(JSON.stringify(reverseKeys(p), null, indent)) as unknown;
        expect(id(spaced)).toBe(id(compact));
      })
    );
    const a = '{"systemPrompt":"hi","messages":[]}';
    const b = '{ "messages" : [ ],\n  "systemPrompt" : "hi" }';
    expect(id(JSON.parse(a))).toBe(id(JSON.parse(b)));
  });

  it('treats a \\u00e9 escape, a literal é and a decomposed e + U+0301 alike', () => {
    const escaped = JSON.parse('{"systemPrompt":"caf\\u00e9","messages":[]}') as unknown;
    const literal = JSON.parse('{"systemPrompt":"café","messages":[]}') as unknown;
    const decomposed = JSON.parse('{"systemPrompt":"cafe\\u0301","messages":[]}') as unknown;
    expect(id(escaped)).toBe(id(literal));
    expect(id(decomposed)).toBe(id(literal));
    expect(canonicalIdentityPayload(decomposed)).toContain('"caf\u00e9"');
  });

  it('normalises every string to NFC, keys and values, at any depth', () => {
    fc.assert(
      fc.property(params, (p) => {
        const nfd = mapStrings(p, (s) => s.normalize('NFD'));
        const nfc = mapStrings(p, (s) => s.normalize('NFC'));
        expect(id(nfd)).toBe(id(p));
        expect(id(nfc)).toBe(id(p));
      })
    );
    const key = (k: string) => ({
      messages: [{ role: 'user', content: { type: 'text', text: 't', [k]: 'v' } }]
    });
    expect(id(key('re\u0301sume\u0301'))).toBe(id(key('r\u00e9sum\u00e9')));
  });

  it('leaves the params it is given untouched (frozen input, decomposed text)', () => {
    const p = deepFreeze({
      systemPrompt: 'cafe\u0301',
      messages: [{ role: 'user', content: { type: 'text', text: 'e\u0301', ['k\u0301']: 1 } }]
    });
    const before = JSON.stringify(p);
    expect(() => id(p)).not.toThrow();
    expect(JSON.stringify(p)).toBe(before);
  });
});

describe('requestIdentity: anything else gets another identity', () => {
  it('changes with any one character of the prompt', () => {
    fc.assert(
      fc.property(
        params,
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.constantFrom('x', 'Y', ' ', '\u00e9', '\u{1f600}'),
        (p, prompt, at, ch) => {
          // By code point, so a replacement never splits a surrogate pair.
          const cps = Array.from(prompt);
          cps[at % cps.length] = ch;
          const changed = cps.join('');
          fc.pre(changed.normalize('NFC') !== prompt.normalize('NFC'));
          expect(id({ ...p, systemPrompt: changed })).not.toBe(id({ ...p, systemPrompt: prompt }));
        }
      )
    );
    expect(id({ systemPrompt: 'Summarise the log' })).not.toBe(
      id({ systemPrompt: 'Summarise the log.' })
    );
  });

  it('changes with includeContext, a message, a hint or a priority', () => {
    const base = {
      systemPrompt: 's',
      messages: [{ role: 'user', content: { type: 'text', text: 'm' } }],
      includeContext: 'none',
      modelPreferences: { hints: [{ name: 'claude' }], costPriority: 0.5 },
      maxTokens: 10
    };
    const variants = [
      { ...base, includeContext: 'allServers' },
      { ...base, includeContext: undefined },
      { ...base, messages: [{ role: 'user', content: { type: 'text', text: 'M' } }] },
      { ...base, messages: [{ role: 'assistant', content: { type: 'text', text: 'm' } }] },
      { ...base, modelPreferences: { hints: [{ name: 'gpt' }], costPriority: 0.5 } },
      { ...base, modelPreferences: { hints: [{ name: 'claude' }], costPriority: 0.6 } },
      { ...base, systemPrompt: undefined }
    ];
    const ids = new Set([id(base), ...variants.map((v) => id(v))]);
    expect(ids.size).toBe(variants.length + 1);
  });

  it('ignores maxTokens, temperature, stopSequences, metadata and budget', () => {
    fc.assert(
      fc.property(params, params, (p, q) => {
        const { maxTokens, temperature, stopSequences, metadata, budget } = q;
        const knobs = { maxTokens, temperature, stopSequences, metadata, budget };
        expect(id({ ...p, ...knobs })).toBe(id(p));
      })
    );
  });

  it('counts a field once the field set includes it', () => {
    const fields = [...DEFAULT_IDENTITY_FIELDS, 'maxTokens'];
    const a = { systemPrompt: 's', messages: [], maxTokens: 100 };
    const b = { ...a, maxTokens: 50 };
    expect(id(a)).toBe(id(b));
    expect(id(a, { fields })).not.toBe(id(b, { fields }));
    expect(canonicalIdentityPayload(a, { fields })).toBe(
      '{"includeContext":null,"maxTokens":100,"messages":[],"modelPreferences":null,"systemPrompt":"s"}'
    );
  });

  it('reads own members only: a field named like an Object.prototype member is absent', () => {
    const fields = ['constructor', 'toString', '__proto__'];
    expect(canonicalIdentityPayload({}, { fields })).toBe(
      '{"__proto__":null,"constructor":null,"toString":null}'
    );
    const own = JSON.parse('{"__proto__":"x","constructor":"y"}') as unknown;
    expect(canonicalIdentityPayload(own, { fields })).toBe(
      '{"__proto__":"x","constructor":"y","toString":null}'
    );
  });

  it('keeps a server-sent "__proto__" key as data', () => {
    // The decomposed key forces a normalised copy of the object holding "__proto__".
    const a = JSON.parse('{"messages":[{"__proto__":"a","e\\u0301":1}]}') as unknown;
    const b = JSON.parse('{"messages":[{"__proto__":"b","e\\u0301":1}]}') as unknown;
    expect(id(a)).not.toBe(id(b));
    expect(canonicalIdentityPayload(a)).toContain('{"__proto__":"a","\u00e9":1}');
  });

  it('fails closed when two keys normalise alike: no two requests share an identity', () => {
    const p = (x: number, y: number, swap = false) =>
      JSON.parse(
        swap
          ? `{"messages":[{"e\\u0301":${y},"\\u00e9":${x}}]}`
          : `{"messages":[{"\\u00e9":${x},"e\\u0301":${y}}]}`
      ) as unknown;
    expect(id(p(1, 2))).not.toBe(id(p(1, 3)));
    expect(id(p(1, 2))).not.toBe(id(p(2, 1)));
    expect(id(p(1, 2, true))).toBe(id(p(1, 2)));
  });

  // The writer's fallback, kept so the hash never throws mid-run: it makes "\ud800" and "\ufffd"
  // one identity, which is why every place params enter refuses lone surrogates first
  // (loneSurrogateAt, below; a trace line, `lab identity`, a scenario's text).
  it('hashes a lone surrogate as UTF-8 would encode it (U+FFFD), without throwing', () => {
    const lone = JSON.parse('{"systemPrompt":"a\\ud800b"}') as unknown;
    expect(id(lone)).toMatch(FORMAT);
    expect(id(lone)).toBe(id({ systemPrompt: 'a\ufffdb' }));
  });

  it('finds the first lone surrogate, in a value or a key, with its path', () => {
    const v = JSON.parse(
      '{"messages":[{"role":"user","content":{"type":"text","text":"ok \\ud83d\\ude00"}},{"role":"user","content":{"type":"text","text":"x\\udc00"}}]}'
    ) as unknown;
    expect(loneSurrogateAt(v)).toEqual(['messages', 1, 'content', 'text']);
    expect(loneSurrogateAt(JSON.parse('{"metadata":{"\\ud800":1}}'))).toEqual([
      'metadata',
      '\ud800'
    ]);
    expect(loneSurrogateAt({ systemPrompt: 'a\ufffdb', n: [1, 'é'] })).toBeNull();
  });
});

describe('requestIdentity: teaching mode (canonicalize: false)', () => {
  const off = { canonicalize: false } as const;

  it('makes key order and normalisation form matter, and nothing else', () => {
    const a = { systemPrompt: 'x', modelPreferences: { costPriority: 1, speedPriority: 0 } };
    const b = { modelPreferences: { speedPriority: 0, costPriority: 1 }, systemPrompt: 'x' };
    expect(id(a)).toBe(id(b));
    expect(id(a, off)).not.toBe(id(b, off));
    expect(id({ systemPrompt: 'e\u0301' }, off)).not.toBe(id({ systemPrompt: '\u00e9' }, off));
    // The field selection is the same in both modes: a knob outside it never matters.
    expect(id({ ...a, maxTokens: 1 }, off)).toBe(id({ ...a, maxTokens: 2 }, off));
    expect(id({ ...a, metadata: { run: 1 } }, off)).toBe(id(a, off));
    // Top-level member order is the field list's, in both modes.
    expect(id({ messages: [], systemPrompt: 'x' }, off)).toBe(
      id({ systemPrompt: 'x', messages: [] }, off)
    );
  });

  it('honours a custom field list in teaching mode too', () => {
    const fields = ['systemPrompt'];
    expect(id({ systemPrompt: 'x', messages: [1] }, { ...off, fields })).toBe(
      id({ systemPrompt: 'x', messages: [2] }, { ...off, fields })
    );
  });

  it('is still deterministic for one serialisation', () => {
    fc.assert(
      fc.property(params, (p) => {
        expect(id(p, off)).toBe(id(JSON.parse(JSON.stringify(p)), off));
      })
    );
  });
});

describe('requestIdentity: nesting depth is checked before any recursion', () => {
  function nested(levels: number): unknown {
    let v: unknown = 'leaf';
    for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
    return v;
  }

  it('hashes params exactly at the limit and refuses one level more, naming the limit and path', () => {
    // params (level 1) → modelPreferences (level 2) → … : MAX_PARAMS_DEPTH containers in all.
    const atLimit = { modelPreferences: nested(MAX_PARAMS_DEPTH - 1) };
    expect(id(atLimit)).toMatch(FORMAT);
    expect(depthExceeded(atLimit)).toBeNull();
    const over = { modelPreferences: nested(MAX_PARAMS_DEPTH) };
    expect(() => id(over)).toThrow(ParamsDepthError);
    expect(() => id(over)).toThrow(
      /^nested deeper than 64 levels \(the limit for a request's params\) at \$\.modelPreferences/
    );
    expect(() => id(over, { canonicalize: false })).toThrow(ParamsDepthError);
    expect(depthExceeded(over)).toHaveLength(MAX_PARAMS_DEPTH);
  });

  it('walks a 100,000-deep value without overflowing the stack, wherever it sits', () => {
    const deep = nested(100_000);
    expect(depthExceeded({ metadata: deep })).toHaveLength(MAX_PARAMS_DEPTH);
    // Even a member outside the identity fields: nothing recursive may see such a value.
    expect(() => id({ metadata: deep })).toThrow(ParamsDepthError);
  });
});
