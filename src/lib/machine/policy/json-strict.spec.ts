import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateIn, findDuplicateMember, parseJsonText } from './json-strict';
import { JsonScanner } from './json-text';
import type { PathSegment } from './path';

/** A JSON value whose objects are lists of members, so a name can be given twice. */
type Tree =
  | { t: 'scalar'; v: string | number | boolean | null }
  | { t: 'array'; items: Tree[] }
  | { t: 'object'; members: { name: string; escaped: boolean; value: Tree }[] };

const NAMES = ['a', 'b', 'sampling', '"', '\\', 'é', '😀', '', 'a"b', '\\"', ':', '__proto__'];

const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .oneof(
        fc.string({ unit: 'grapheme', maxLength: 8 }),
        fc.constantFrom('\\', '"', '\\"', '\\\\', 'x\\'),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null)
      )
      .map((v) => ({ t: 'scalar' as const, v })),
    fc.array(tie('tree'), { maxLength: 4 }).map((items) => ({ t: 'array' as const, items })),
    fc
      .array(
        fc.record({
          name: fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 4 })),
          escaped: fc.boolean(),
          value: tie('tree')
        }),
        { maxLength: 5 }
      )
      .map((members) => ({ t: 'object' as const, members }))
  )
})).tree;

/** Every character as a `\u` escape: the same name in another spelling. */
function escapedName(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += '\\u' + s.charCodeAt(i).toString(16).padStart(4, '0');
  return `"${out}"`;
}

function text(t: Tree, ws: string): string {
  if (t.t === 'scalar') return JSON.stringify(t.v);
  if (t.t === 'array') return `[${ws}${t.items.map((i) => text(i, ws)).join(`,${ws}`)}${ws}]`;
  const members = t.members.map(
    (m) =>
      `${m.escaped ? escapedName(m.name) : JSON.stringify(m.name)}${ws}:${ws}${text(m.value, ws)}`
  );
  return `{${ws}${members.join(`,${ws}`)}${ws}}`;
}

/** The first name given twice, in document order, by walking the tree. */
function oracle(t: Tree, path: PathSegment[] = []): PathSegment[] | null {
  if (t.t === 'array') {
    for (let i = 0; i < t.items.length; i++) {
      const d = oracle(t.items[i]!, [...path, i]);
      if (d) return d;
    }
  }
  if (t.t === 'object') {
    const seen = new Set<string>();
    for (const m of t.members) {
      if (seen.has(m.name)) return [...path, m.name];
      seen.add(m.name);
      const d = oracle(m.value, [...path, m.name]);
      if (d) return d;
    }
  }
  return null;
}

const whitespace = fc.constantFrom('', ' ', '\n', '\t', ' \r\n ');

describe('findDuplicateMember', () => {
  it('agrees with a walk of the value and with the policy scanner, on generated JSON (fixed seed)', () => {
    let duplicates = 0;
    fc.assert(
      fc.property(tree, whitespace, (t, ws) => {
        const s = text(t, ws);
        expect(() => JSON.parse(s)).not.toThrow();
        const want = oracle(t);
        const got = findDuplicateMember(s);
        expect(got?.segments ?? null).toEqual(want);
        // The shortcut (colons in the text against keys in the value) gives the same answer.
        expect(duplicateIn(s, JSON.parse(s))?.segments ?? null).toEqual(want);
        const scanner = new JsonScanner(s, false);
        scanner.scan();
        expect(scanner.duplicates[0]?.segments ?? null).toEqual(want);
        if (got) {
          duplicates++;
          // The offset is the second name's own: the text there spells that name.
          const name = String(got.segments.at(-1));
          const at = s.slice(got.at);
          expect(at.startsWith(JSON.stringify(name)) || at.startsWith(escapedName(name))).toBe(
            true
          );
        } else {
          // No duplicate: JSON.parse kept every member.
          const count = (v: unknown): number =>
            Array.isArray(v)
              ? v.reduce((n: number, x) => n + count(x), 0)
              : v && typeof v === 'object'
                ? Object.values(v).reduce((n: number, x) => n + 1 + count(x), 0)
                : 0;
          const members = (x: Tree): number =>
            x.t === 'array'
              ? x.items.reduce((n, i) => n + members(i), 0)
              : x.t === 'object'
                ? x.members.reduce((n, m) => n + 1 + members(m.value), 0)
                : 0;
          expect(count(JSON.parse(s))).toBe(members(t));
        }
      }),
      { seed: 19, numRuns: 3000 }
    );
    // The generator does make duplicates (a property that never sees one proves nothing).
    expect(duplicates).toBeGreaterThan(300);
  });

  it('names the path of the second name, through arrays and escapes', () => {
    expect(findDuplicateMember('{"a":[{"x":1},{"x":1,"y":{"\\u0078":2,"x":3}}]}')).toEqual({
      segments: ['a', 1, 'y', 'x'],
      at: 37
    });
    expect(findDuplicateMember('{"a":"\\"a\\":1","b":{"a\\\\":1,"a":2}}')).toBeNull();
    // An empty object closes with no name to come (found by the property above, seed 19).
    expect(findDuplicateMember('[{}, "a", {"b": 1, "b": 2}]')?.segments).toEqual([2, 'b']);
  });

  it('is iterative: 100,000 levels deep cost a loop, not the stack', () => {
    const deep = '['.repeat(100_000) + '{"a":1,"a":2}' + ']'.repeat(100_000);
    expect(findDuplicateMember(deep)?.segments).toHaveLength(100_001);
    expect(duplicateIn(deep, JSON.parse(deep))?.segments).toHaveLength(100_001);
  });

  it('counts a member named __proto__ as any other', () => {
    const text = '{"__proto__": {"x": 1}, "__proto__": {"x": 1}}';
    expect(duplicateIn(text, JSON.parse(text))?.segments).toEqual(['__proto__']);
  });
});

describe('parseJsonText', () => {
  it('refuses a policy block with "sampling" twice, naming its path and place', () => {
    const r = parseJsonText('{"defaults": {\n  "sampling": false,\n  "sampling": true\n}}');
    expect(r).toEqual({
      ok: false,
      error: {
        path: '$.defaults.sampling',
        segments: ['defaults', 'sampling'],
        message:
          'duplicate member "sampling" at line 3, column 3: JSON would silently keep only the last one',
        detail: 'duplicate member "sampling": JSON would silently keep only the last one',
        line: 3,
        column: 3
      }
    });
  });

  it('words a syntax error itself, with its place, quoting nothing verbatim', () => {
    const r = parseJsonText('\uFEFF{"a": 1}');
    expect(!r.ok && r.error.message).toBe(
      'not valid JSON: line 1, column 1: unexpected \\uFEFF (a byte order mark): expected a value'
    );
    const nul = parseJsonText('{"a": 1,\n\u0000}');
    expect(!nul.ok && nul.error.message).toBe(
      'not valid JSON: line 2, column 1: unexpected \\u0000 (a NUL character): expected a member name in double quotes'
    );
  });

  it('gives the value when the text is JSON with distinct names', () => {
    expect(parseJsonText('{"a": [1, {"a": 2}], "b": {"a": 3}}')).toEqual({
      ok: true,
      value: { a: [1, { a: 2 }], b: { a: 3 } }
    });
  });
});
