import { describe, expect, it } from 'vitest';
import { effectiveBlock } from './effective';
import { parsePolicy, type PolicyError } from './parse';
import { formatPath } from './path';
import { DEFAULT_POLICY, defaultPolicy, type Policy } from './schema';

/** The policy from the brief, as text. */
const BRIEF_POLICY = `{ "version": 1,
  "defaults": { "sampling": true, "allowedModels": ["example-model-v2"], "defaultModel": "example-model-v2",
                "maxInputTokens": 32000, "maxContext": "thisServer",
                "rateLimit": { "requests": 30, "windowMs": 60000 },
                "budget": { "amount": "5.00", "currency": "USD", "windowMs": 86400000 },
                "perCallCap": { "amount": "0.05", "currency": "USD" },
                "consent": "ask" },
  "servers": { "release-notes": { "budget": { "amount": "0.50", "currency": "USD", "windowMs": 86400000 } } } }`;

function errorsOf(input: unknown): PolicyError[] {
  const r = parsePolicy(input);
  if (r.ok) throw new Error('expected the policy to be invalid');
  return r.errors;
}

/** DEFAULT_POLICY with a change, as a plain value. */
function edited(edit: (p: Policy) => void): Policy {
  const p = defaultPolicy();
  edit(p);
  return p;
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

describe('parsePolicy: valid policies', () => {
  it('accepts the brief’s policy text, equal to DEFAULT_POLICY', () => {
    const r = parsePolicy(BRIEF_POLICY);
    expect(r).toEqual({ ok: true, policy: DEFAULT_POLICY });
  });

  it('accepts a value as well as text, and a frozen one without touching it', () => {
    const input = deepFreeze(defaultPolicy());
    const r = parsePolicy(input);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.policy).toEqual(DEFAULT_POLICY);
      expect(r.policy).not.toBe(input); // a new value: editing it cannot alter the caller's
    }
  });

  it('accepts null limits, token caps, "*" and partial server blocks', () => {
    const p = edited((p) => {
      p.defaults.rateLimit = null;
      p.defaults.budget = null;
      p.defaults.perCallCap = { tokens: 20_000 };
      p.defaults.allowedModels = ['*'];
      p.servers['greedy'] = { maxContext: 'none', consent: 'deny', perCallCap: null };
      p.servers['constructor'] = { sampling: false };
    });
    expect(parsePolicy(p)).toEqual({ ok: true, policy: p });
    expect(parsePolicy(JSON.stringify(p, null, 2))).toEqual({ ok: true, policy: p });
  });
});

describe('parsePolicy: every error, with a path', () => {
  it('reports several errors at once, in document order, each with a JSONPath and a place', () => {
    const text = `{
  "version": 1,
  "defaults": {
    "sampling": "yes",
    "allowedModels": ["example-model-v2"],
    "defaultModel": "example-model-v2",
    "maxInputTokens": 0,
    "maxContext": "everything",
    "rateLimit": { "requests": 30, "windowMs": 60000 },
    "budget": { "amount": "5.00", "currency": "usd", "windowMs": 86400000 },
    "perCallCap": { "amount": "0.05", "currency": "USD" },
    "consent": "ask",
    "colour": "blue"
  },
  "servers": {
    "release-notes": { "budget": { "amount": "0.0000001", "currency": "USD", "windowMs": 86400000 } }
  }
}`;
    expect(errorsOf(text)).toEqual([
      {
        path: '$.defaults.sampling',
        message: 'expected true or false, got the string "yes"',
        line: 4,
        column: 17,
        endLine: 4,
        endColumn: 22
      },
      {
        path: '$.defaults.maxInputTokens',
        message: 'must be greater than 0, got the number 0',
        line: 7,
        column: 23,
        endLine: 7,
        endColumn: 24
      },
      {
        path: '$.defaults.maxContext',
        message: 'expected one of "none", "thisServer", "allServers", got the string "everything"',
        line: 8,
        column: 19,
        endLine: 8,
        endColumn: 31
      },
      {
        path: '$.defaults.budget.currency',
        message: 'currency "usd" must be three upper-case letters, e.g. "USD"',
        line: 10,
        column: 47,
        endLine: 10,
        endColumn: 52
      },
      {
        path: '$.defaults.colour',
        message:
          'unknown member "colour" (allowed: sampling, allowedModels, defaultModel, maxInputTokens, maxContext, rateLimit, budget, perCallCap, consent, askAbove)',
        line: 13,
        column: 5,
        endLine: 13,
        endColumn: 13
      },
      {
        path: '$.servers["release-notes"].budget.amount',
        message: 'amount "0.0000001" has more than 6 decimals (the smallest unit is 0.000001)',
        line: 16,
        column: 46,
        endLine: 16,
        endColumn: 57
      }
    ]);
  });

  it('reports a JSON syntax error with its line and column', () => {
    const text = '{\n  "version": 1\n  "defaults": {}\n}';
    expect(errorsOf(text)).toEqual([
      {
        path: '$',
        message:
          "JSON syntax error at line 3, column 3: unexpected '\"': expected ',' or '}' after a member",
        line: 3,
        column: 3
      }
    ]);
  });

  it.each([
    ['', 1, 1, /the text is empty/],
    ['{"version": 1,}', 1, 15, /trailing comma before '}'/],
    ['{"a": [1, 2,]}', 1, 13, /trailing comma before '\]'/],
    ["{'version': 1}", 1, 2, /double quotes/],
    ['{\n  // a comment\n}', 2, 3, /no comments/],
    ['{"a": "unterminated}', 1, 7, /unterminated string/],
    ['{"a": "line\nbreak"}', 1, 12, /control character/],
    ['{"a": "\\x"}', 1, 8, /invalid escape/],
    ['{"a": 01}', 1, 7, /invalid number/],
    ['{"a": tru}', 1, 7, /unexpected 't'/],
    ['{"a": 1} x', 1, 10, /after the end/],
    ['{\r\n"a": {\r\n', 3, 1, /object opened at line 2, column 6 is not closed/],
    ['['.repeat(300), 1, 257, /nested deeper/]
  ])('syntax error in %j at line %d, column %d', (text, line, column, why) => {
    const [e, ...rest] = errorsOf(text);
    expect(rest).toEqual([]);
    expect(e).toMatchObject({ path: '$', line, column });
    expect(e!.message).toMatch(why);
    expect(e!.message).toContain(`line ${line}, column ${column}`);
  });

  it('names unknown members, suggesting the one meant', () => {
    const text = JSON.stringify({ ...DEFAULT_POLICY, severs: {} });
    expect(errorsOf(text)).toEqual([
      expect.objectContaining({
        path: '$.severs',
        message: 'unknown member "severs": did you mean "servers"?'
      })
    ]);
    const p = edited((p) => {
      (p.defaults.budget as Record<string, unknown>)['size'] = 1;
      (p.servers['release-notes'] as Record<string, unknown>)['maxInputToken'] = 5;
    });
    expect(errorsOf(p)).toEqual([
      {
        path: '$.defaults.budget.size',
        message: 'unknown member "size" (allowed: amount, currency, windowMs)'
      },
      {
        path: '$.servers["release-notes"].maxInputToken',
        message: 'unknown member "maxInputToken": did you mean "maxInputTokens"?'
      }
    ]);
  });

  it.each([
    ['1e-3', 'amount "1e-3" uses exponent notation; write it out, e.g. "0.001"'],
    ['-0.05', 'amount "-0.05" has a sign; amounts are never negative and carry no sign'],
    ['0.05 USD', 'amount "0.05 USD" is not a decimal string such as "0.05"'],
    ['', 'an amount must not be empty; write a decimal such as "0.05"'],
    ['99999999999', 'amount is too large to hold exactly']
  ])('explains the bad money string %j', (amount, message) => {
    const p = edited((p) => (p.defaults.perCallCap = { amount, currency: 'USD' }));
    expect(errorsOf(p)).toEqual([{ path: '$.defaults.perCallCap.amount', message }]);
  });

  it('says an amount is a string, not a number', () => {
    const p = edited((p) => {
      (p.defaults.budget as unknown as Record<string, unknown>)['amount'] = 5;
    });
    expect(errorsOf(p)).toEqual([
      { path: '$.defaults.budget.amount', message: 'expected a string, got the number 5' }
    ]);
  });

  it('accepts askAbove as money, and names what is wrong with a bad one by its path', () => {
    const ok = edited((p) => (p.defaults.askAbove = { amount: '0.002', currency: 'USD' }));
    expect(parsePolicy(ok).ok).toBe(true);
    const bad = edited((p) => {
      p.defaults.askAbove = { amount: 0.002 as unknown as string, currency: 'USD' };
      (p.servers['release-notes'] as Record<string, unknown>)['askAbove'] = {
        amount: '1',
        currency: 'USD',
        windowMs: 1
      };
    });
    expect(errorsOf(bad)).toEqual([
      { path: '$.defaults.askAbove.amount', message: 'expected a string, got the number 0.002' },
      {
        path: '$.servers["release-notes"].askAbove.windowMs',
        message: 'unknown member "windowMs" (allowed: amount, currency)'
      }
    ]);
  });

  it.each(['usd', 'US', 'USDT', 'U$D'])('refuses the currency %j', (currency) => {
    const p = edited(
      (p) => (p.servers['release-notes']!.budget = { amount: '1', currency, windowMs: 1 })
    );
    expect(errorsOf(p)).toEqual([
      {
        path: '$.servers["release-notes"].budget.currency',
        message: `currency ${JSON.stringify(currency)} must be three upper-case letters, e.g. "USD"`
      }
    ]);
  });

  it('explains a bad per-call cap by the shape the author evidently meant', () => {
    const cap = (perCallCap: unknown) =>
      errorsOf(edited((p) => ((p.defaults as Record<string, unknown>)['perCallCap'] = perCallCap)));
    const shapes = 'null, { "amount": "0.05", "currency": "USD" } or { "tokens": 20000 }';
    expect(cap('0.05')).toEqual([
      { path: '$.defaults.perCallCap', message: `expected ${shapes}, got the string "0.05"` }
    ]);
    expect(cap({})).toEqual([
      { path: '$.defaults.perCallCap', message: `expected ${shapes}, got an object` }
    ]);
    expect(cap({ tokens: 0 })).toEqual([
      { path: '$.defaults.perCallCap.tokens', message: 'must be greater than 0, got the number 0' }
    ]);
    expect(cap({ tokens: 1.5 })).toEqual([
      { path: '$.defaults.perCallCap.tokens', message: 'expected an integer, got the number 1.5' }
    ]);
    expect(cap({ amount: '0.05' })).toEqual([
      { path: '$.defaults.perCallCap.currency', message: 'missing required member "currency"' }
    ]);
    expect(cap({ tokens: 5, amount: '0.05' })).toEqual([
      {
        path: '$.defaults.perCallCap.amount',
        message:
          'unknown member "amount": a per-call cap is either { "amount", "currency" } or { "tokens" }, not both'
      }
    ]);
  });

  it('reports missing members, on their parent object when the text is given', () => {
    const errors = errorsOf('{"version": 1, "defaults": {"sampling": true}, "servers": {}}');
    expect(errors.map((e) => e.path)).toEqual([
      '$.defaults.allowedModels',
      '$.defaults.defaultModel',
      '$.defaults.maxInputTokens',
      '$.defaults.maxContext',
      '$.defaults.rateLimit',
      '$.defaults.budget',
      '$.defaults.perCallCap',
      '$.defaults.consent'
    ]);
    expect(errors[0]).toEqual({
      path: '$.defaults.allowedModels',
      message: 'missing required member "allowedModels"',
      line: 1,
      column: 28,
      endLine: 1,
      endColumn: 46
    });
  });

  it('refuses other versions and non-objects', () => {
    expect(errorsOf({ ...DEFAULT_POLICY, version: 2 })).toEqual([
      { path: '$.version', message: 'unsupported policy version 2: the only version is 1' }
    ]);
    expect(errorsOf(null)).toEqual([{ path: '$', message: 'expected an object, got null' }]);
    expect(errorsOf('[]')).toEqual([
      {
        path: '$',
        message: 'expected an object, got an array',
        line: 1,
        column: 1,
        endLine: 1,
        endColumn: 3
      }
    ]);
    expect(errorsOf({ version: 1 }).map((e) => e.message)).toEqual([
      'missing required member "defaults"',
      'missing required member "servers"'
    ]);
  });

  it('refuses an empty server name and keeps "__proto__" as an ordinary name', () => {
    const text =
      '{"version": 1, "defaults": DEFAULTS, "servers": {"": {}, "__proto__": {"sampling": false}}}'.replace(
        'DEFAULTS',
        JSON.stringify(DEFAULT_POLICY.defaults)
      );
    expect(errorsOf(text)).toEqual([
      expect.objectContaining({
        path: '$.servers[""]',
        message: 'a server name must not be empty'
      })
    ]);
    const ok = parsePolicy(text.replace('"": {}, ', ''));
    if (!ok.ok) throw new Error(JSON.stringify(ok.errors));
    expect(Object.keys(ok.policy.servers)).toEqual(['__proto__']);
    expect(effectiveBlock(ok.policy, '__proto__').sampling).toBe(false);
    expect(effectiveBlock(ok.policy, 'plain').sampling).toBe(true);
  });

  it('refuses duplicate member names, which JSON.parse would silently collapse', () => {
    const text = `{"version": 1, "defaults": ${JSON.stringify(DEFAULT_POLICY.defaults)},
 "servers": {"a": {"sampling": false}, "a": {"sampling": true}}}`;
    expect(errorsOf(text)).toEqual([
      {
        path: '$.servers.a',
        message: 'duplicate member "a": JSON would silently keep only the last one',
        line: 2,
        column: 40,
        endLine: 2,
        endColumn: 43
      }
    ]);
  });

  it('is pure: the same input gives the same answer, and nothing is partially applied', () => {
    const bad = JSON.stringify({
      ...DEFAULT_POLICY,
      defaults: { ...DEFAULT_POLICY.defaults, consent: 'maybe' }
    });
    expect(parsePolicy(bad)).toEqual(parsePolicy(bad));
    expect(parsePolicy(bad)).not.toHaveProperty('policy');
  });
});

describe('formatPath', () => {
  it('writes JSONPath: identifiers with dots, anything else quoted, indices in brackets', () => {
    expect(formatPath([])).toBe('$');
    expect(formatPath(['servers', 'release-notes', 'budget', 'amount'])).toBe(
      '$.servers["release-notes"].budget.amount'
    );
    expect(formatPath(['defaults', 'allowedModels', 0])).toBe('$.defaults.allowedModels[0]');
    expect(formatPath(['servers', 'a"b'])).toBe('$.servers["a\\"b"]');
    expect(formatPath(['servers', '0'])).toBe('$.servers["0"]');
  });
});
