/**
 * The handler's identity (fresh-identity.ts: the canonical payload written as UTF-8 into the
 * buffer it is hashed from) must be `requestIdentity`'s on every input — the same identity, or
 * the same refusal — whether it takes the input itself or leaves it to `requestIdentity`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_IDENTITY_FIELDS, MAX_PARAMS_DEPTH, requestIdentity } from '../identity';
import type { IdentityOptions } from '../identity';
import { hash } from 'node:crypto';
import { freshIdentity, useDigest } from './fresh-identity';
import { sha256Hex } from '../sha256';

/** Text of every kind the writer treats apart: ASCII, Latin-1, escapes, NFC changes, surrogates. */
const piece = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.string({ unit: 'binary-ascii', maxLength: 6 }),
  fc.constantFrom(
    'Summarise the page.',
    'café',
    '\u00ff\u0080\u00a0',
    'e\u0301',
    '\u212b',
    '\ud800',
    '\ud83d\ude00',
    '"',
    '\\',
    '\n\t\u0000\u001f\u007f',
    '\u2028',
    '__proto__',
    'toJSON',
    ''
  )
);
const text = fc.array(piece, { maxLength: 3 }).map((p) => p.join(''));
/** Member names the writer takes (printable ASCII) and ones it leaves (anything else). */
const name = fc.oneof(
  fc.constantFrom('role', 'content', 'type', 'text', 'b', 'a', 'B', '10', '2', ' ', '~'),
  text
);
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, 1e21, 1e-7, 5e-324, 0.1 + 0.2, 2 ** 53)
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.constantFrom(undefined, () => 1, 10n),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(name, tie('value'), { maxKeys: 5 })
  )
}));

/** A request's params: the identity fields (as a server sends them) and others. */
const params = fc.record(
  {
    messages: fc.array(
      fc.record({
        role: fc.constantFrom('user', 'assistant'),
        content: fc.oneof(fc.record({ type: fc.constant('text'), text }), value)
      }),
      { maxLength: 3 }
    ),
    systemPrompt: fc.oneof(text, value),
    includeContext: fc.constantFrom('none', 'thisServer', 'allServers'),
    modelPreferences: value,
    maxTokens: fc.nat(),
    extra: value
  },
  { requiredKeys: ['messages'] }
);

function outcome(f: () => string): string {
  try {
    return f();
  } catch (e) {
    return `threw ${(e as Error).message}`;
  }
}

function nest(v: unknown, depth: number): unknown {
  let out = v;
  for (let i = 0; i < depth; i++) out = i % 2 ? [out] : { ['k' + i]: out };
  return out;
}

describe("the handler's identity, written as it is hashed", () => {
  it("is requestIdentity's on arbitrary params and field sets (fixed seed)", () => {
    fc.assert(
      fc.property(
        params,
        fc.option(fc.array(fc.oneof(name, fc.constantFrom(...DEFAULT_IDENTITY_FIELDS))), {
          nil: undefined
        }),
        fc.boolean(),
        (p, fields, canonicalize) => {
          const opts: IdentityOptions = { ...(fields ? { fields } : {}), canonicalize };
          expect(outcome(() => freshIdentity('everything', p, opts))).toBe(
            outcome(() => requestIdentity('everything', p, opts))
          );
        }
      ),
      { seed: 20_261_203, numRuns: 3_000 }
    );
  });

  it("is requestIdentity's for params of any shape and at the depth limit", () => {
    const opts: IdentityOptions = {};
    const cases: unknown[] = [
      null,
      [],
      'text',
      7,
      { messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(10_000) } }] },
      { messages: nest('deep', MAX_PARAMS_DEPTH - 1) },
      { messages: nest('deep', MAX_PARAMS_DEPTH) },
      { messages: [], extra: nest('deep', MAX_PARAMS_DEPTH + 3) },
      { messages: [{ toJSON: () => 'x' }] },
      // eslint-disable-next-line no-sparse-arrays
      { messages: [1, , 3] }
    ];
    for (const p of cases)
      expect(outcome(() => freshIdentity('everything', p, opts))).toBe(
        outcome(() => requestIdentity('everything', p, opts))
      );
  });

  it("is requestIdentity's with a runtime's SHA-256 installed (the handler installs Node's)", () => {
    useDigest((bytes, length) => hash('sha256', bytes.subarray(0, length), 'hex').slice(0, 32));
    try {
      fc.assert(
        fc.property(params, (p) => {
          expect(outcome(() => freshIdentity('everything', p, {}))).toBe(
            outcome(() => requestIdentity('everything', p, {}))
          );
        }),
        { seed: 20_261_204, numRuns: 500 }
      );
    } finally {
      useDigest((bytes, length) => sha256Hex(bytes, length, 16));
    }
  });
});
