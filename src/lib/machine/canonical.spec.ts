import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNfc } from './canonical';
import {
  canonicalIdentityPayload,
  DEFAULT_IDENTITY_FIELDS,
  depthExceeded,
  MAX_PARAMS_DEPTH,
  referencePayload,
  type IdentityOptions
} from './identity';

/**
 * Strings that exercise every part of the writer: lone surrogates (binary units), whole
 * graphemes, text that NFC changes (decomposed accents, singletons such as U+212B ANGSTROM SIGN,
 * Hangul jamo), controls, quotes and backslashes, and names two of which normalise alike.
 */
const piece = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.string({ unit: 'binary-ascii', maxLength: 6 }),
  fc.constantFrom(
    'e\u0301',
    'é',
    '\u212b',
    'Å',
    '\u1100\u1161',
    '가',
    '\ud800',
    '\udc00x',
    '\ud83d\ude00',
    '"',
    '\\',
    '\u0000\u0008\u001f\u007f',
    '\u2028\u2029',
    '__proto__',
    'toJSON',
    '10',
    '2',
    ''
  )
);
const text = fc.array(piece, { maxLength: 3 }).map((p) => p.join(''));

const names = fc.constantFrom('e\u0301', 'é', '\u212b', 'Å', 'A\u030a', '\ud800', '\ufffd', 'a');

/** Numbers RFC 8785 writes in particular ways, and any double. */
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, 0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -1e-7, 2 ** 53)
);

/** Any JSON value (and the non-finite numbers a JavaScript caller may pass), members in any order. */
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 5 }),
    // Names from a few that normalise alike (and one with a lone surrogate that becomes U+FFFD).
    fc.dictionary(names, tie('value'), { maxKeys: 4 })
  )
}));

/** `v` inside `depth` levels of arrays and objects, alternating (the params object is level 1). */
function nest(v: unknown, depth: number): unknown {
  let out = v;
  for (let i = 0; i < depth; i++) out = i % 2 ? [out] : { ['k' + i]: out };
  return out;
}

/** What `f` returns, or the message it throws: the writer must also fail where the reference does. */
function outcome(f: () => string): string {
  try {
    return f();
  } catch (e) {
    return `threw ${(e as Error).message}`;
  }
}

/**
 * The selection the identity hashes, for the reference: each field under its NFC name, in the
 * field list's order (a later field whose name normalises like an earlier one's wins).
 */
function selection(params: Record<string, unknown>, fields: readonly string[]) {
  const picked = Object.create(null) as Record<string, unknown>;
  for (const f of fields)
    picked[f.toWellFormed().normalize('NFC')] = Object.prototype.hasOwnProperty.call(params, f)
      ? (params[f] ?? null)
      : null;
  return picked;
}

describe('canonical writer (one pass) against canonicalize (RFC 8785) as the reference', () => {
  it('writes the identity payload byte for byte as canonicalize over the NFC-normalised selection', () => {
    fc.assert(
      fc.property(
        fc.dictionary(text, value, { maxKeys: 6 }),
        fc.array(text, { maxLength: 3 }),
        (params, extra) => {
          // Every member of the params counts, plus some names it does not have.
          const fields = [...Object.keys(params), ...extra];
          const opts: IdentityOptions = { fields };
          expect(outcome(() => canonicalIdentityPayload(params, opts))).toBe(
            outcome(() => referencePayload(selection(params, fields)))
          );
        }
      ),
      { numRuns: 2_000 }
    );
  });

  it('equals canonicalize itself on values whose strings are already NFC and well formed', () => {
    const wellFormed = (v: unknown): boolean =>
      typeof v === 'string'
        ? v.isWellFormed() && v.normalize('NFC') === v
        : Array.isArray(v)
          ? v.every(wellFormed)
          : typeof v === 'object' && v !== null
            ? Object.entries(v).every(([k, x]) => wellFormed(k) && wellFormed(x))
            : typeof v !== 'number' || Number.isFinite(v);
    fc.assert(
      fc.property(value.filter(wellFormed), (v) => {
        expect(canonicalNfc(v)).toBe(canonicalize(v));
      }),
      { numRuns: 2_000 }
    );
  });

  it('agrees with the reference at every depth up to the limit', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: MAX_PARAMS_DEPTH - 2 }), (v, depth) => {
        const params = { messages: nest(v, depth) };
        fc.pre(depthExceeded(params) === null);
        expect(outcome(() => canonicalIdentityPayload(params))).toBe(
          outcome(() => referencePayload(selection(params, DEFAULT_IDENTITY_FIELDS)))
        );
      }),
      { numRuns: 300 }
    );
  });

  it('takes Latin-1 text as already NFC: every pair of U+0000–U+00FF is unchanged by NFC', () => {
    // NFC is decided within a character and its neighbour (a combining mark composes with the
    // character before it); Latin-1 holds no combining mark, so pairs cover every string of it.
    const changed: string[] = [];
    for (let a = 0; a < 256; a++)
      for (let b = 0; b < 256; b++) {
        const s = String.fromCharCode(a, b);
        if (s.normalize('NFC') !== s) changed.push(s);
      }
    expect(changed).toEqual([]);
  });

  it('quotes and escapes text as JSON.stringify does', () => {
    for (const s of [
      'plain',
      'café "quoted" \\ back',
      'tab\tnew\nline\u0000\u001f\u007f',
      'é\u00ff',
      '\ud83d\ude00 "'
    ])
      expect(canonicalNfc(s)).toBe(JSON.stringify(s.normalize('NFC')));
  });

  it('follows a field list changed in place (its order is worked out per list, and checked)', () => {
    const fields = ['systemPrompt', 'messages'];
    const params = { systemPrompt: 's', messages: [], includeContext: 'none' };
    expect(canonicalIdentityPayload(params, { fields })).toBe('{"messages":[],"systemPrompt":"s"}');
    fields[1] = 'includeContext';
    expect(canonicalIdentityPayload(params, { fields })).toBe(
      '{"includeContext":"none","systemPrompt":"s"}'
    );
  });

  it('writes the numbers RFC 8785 names as ECMAScript does', () => {
    expect(canonicalNfc([-0, 1e21, 1e-7, 5e-324, 0.1 + 0.2, 1e20, 123.456e-10])).toBe(
      '[0,1e+21,1e-7,5e-324,0.30000000000000004,100000000000000000000,1.23456e-8]'
    );
  });

  it('sorts member names by UTF-16 code units, not code points', () => {
    // U+FB01 sorts after U+1F600 by code point, before it by UTF-16 code units (\ud83d…).
    expect(canonicalNfc({ '\ufb01': 1, '\ud83d\ude00': 2, a: 3, '10': 4, '2': 5 })).toBe(
      '{"10":4,"2":5,"a":3,"\ud83d\ude00":2,"\ufb01":1}'
    );
  });

  it('normalises names and text to NFC, and lone surrogates to U+FFFD', () => {
    expect(canonicalNfc({ 'e\u0301': 'A\u030a', x: '\ud800' })).toBe('{"x":"\ufffd","é":"Å"}');
  });

  it('keeps the original names when two of them normalise alike, as the reference does', () => {
    const o = { 'e\u0301': 1, é: 2 };
    expect(canonicalNfc(o)).toBe(canonicalize(o));
    expect(canonicalIdentityPayload({ messages: o })).toBe(
      referencePayload({
        systemPrompt: null,
        messages: o,
        includeContext: null,
        modelPreferences: null
      })
    );
  });

  it('leaves what it does not take to the reference: toJSON, sparse arrays, colliding lone surrogates', () => {
    expect(canonicalNfc({ when: new Date(0) })).toBeNull();
    // eslint-disable-next-line no-sparse-arrays
    expect(canonicalNfc([1, , 2])).toBeNull();
    expect(canonicalNfc({ '\ud800': 1, '\ufffd': 2 })).toBeNull();
    // …and the payload is then the reference's, or the reference's error.
    const date = { messages: [{ when: new Date(0) }] };
    expect(canonicalIdentityPayload(date)).toBe(
      '{"includeContext":null,"messages":[{"when":"1970-01-01T00:00:00.000Z"}],"modelPreferences":null,"systemPrompt":null}'
    );
    expect(() => canonicalIdentityPayload({ messages: { '\ud800': 1, '\ufffd': 2 } })).toThrow(
      /Lone surrogate/
    );
  });

  it('writes what JSON cannot hold as JSON.stringify maps it', () => {
    const f = () => 1;
    expect(canonicalNfc({ a: f, b: undefined, c: [f, undefined, NaN, Infinity], d: 1n })).toBe(
      '{"c":[null,null,null,null]}'
    );
    expect(canonicalIdentityPayload({ messages: f, systemPrompt: Symbol('s') })).toBe(
      '{"includeContext":null,"messages":null,"modelPreferences":null,"systemPrompt":null}'
    );
  });
});
