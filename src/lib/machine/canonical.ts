/**
 * RFC 8785 (JCS) canonical JSON of a value with every string NFC-normalised (keys included, any
 * depth), written in one pass: the identity payload's hot path (identity.ts).
 *
 * The reference is `canonicalize` (the RFC 8785 library) applied to the NFC-normalised copy of the
 * value; identity.ts keeps that as the path for the rare value this writer does not take, and
 * canonical.spec.ts checks, on arbitrary JSON, that both write the same bytes. Why not the
 * library on the hot path: identity is the per-request floor of a fast-forward, and the two-step
 * way walks every request twice (normalise, then serialise), copies every changed object, and
 * checks each string for lone surrogates with a JavaScript loop over its characters — for a 16 KB
 * prompt that loop alone costs more than serialising it. Here the normalisation has already made
 * every string well formed (`toWellFormed`), so the check can only pass and is skipped, and
 * nothing is copied.
 *
 * What makes the output RFC 8785 without the library:
 * - strings: `JSON.stringify` of a well-formed string escapes exactly what RFC 8785 §3.2.2.2
 *   escapes (`"`, `\`, controls as \b \t \n \f \r or \u00xx lower-case), everything else as is;
 * - numbers: `JSON.stringify` is ECMAScript's Number-to-String, which is what RFC 8785 §3.2.2.3
 *   prescribes (-0 → 0, 1e21 → 1e+21, 5e-7 → 5e-7);
 * - members sorted by their names' UTF-16 code units (§3.2.3): `Array.prototype.sort`'s default
 *   order.
 */

/** Pure ASCII is already NFC and cannot hold a surrogate: the common case skips `normalize`. */
// The range must start at \x00: control characters are ASCII too, and belong on the fast path.
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/**
 * NFC-normalise one string. A lone surrogate (which `JSON.parse` happily produces from `"\ud800"`)
 * is replaced by U+FFFD first: RFC 8785 forbids lone surrogates, and U+FFFD is exactly what UTF-8
 * encoding of the string would have produced anyway, so this is the SPEC's "UTF-8 encoded" made
 * explicit rather than a new equivalence.
 */
export function nfc(s: string): string {
  if (ASCII.test(s)) return s;
  return (s.isWellFormed() ? s : s.toWellFormed()).normalize('NFC');
}

/**
 * Text that is already written as RFC 8785 writes it: Latin-1 (U+0000–U+00FF: no combining mark,
 * no singleton, no surrogate, so already NFC — canonical.spec.ts checks every pair) with nothing
 * JSON escapes (`"`, `\`, controls below U+0020). One scan of it, where NFC and `JSON.stringify`
 * each take one and each copy: most of a padded prompt's text is like this.
 */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\xff]*$/;
/** Nothing to escape in well-formed text (a surrogate pair is written as it is). */
// eslint-disable-next-line no-control-regex -- the controls are what JSON escapes
const UNESCAPED = /^[^"\\\x00-\x1f]*$/;

/** The canonical text of a string: NFC, then quoted with RFC 8785's escapes (JSON.stringify's). */
function quote(s: string): string {
  if (PLAIN.test(s)) return '"' + s + '"';
  const n = nfc(s);
  return UNESCAPED.test(n) ? '"' + n + '"' : JSON.stringify(n);
}

/**
 * Thrown (and caught in {@link canonicalNfc}) on a value this writer leaves to the reference: an
 * object with a `toJSON` method or a sparse array (never in a parsed request; only a JavaScript
 * caller's Date and the like), or an object whose member names collide under NFC and hold a lone
 * surrogate (which the reference refuses, and must go on refusing the same way).
 */
class ReferenceOnly extends Error {}
const REFERENCE_ONLY = new ReferenceOnly('left to the reference canonicaliser');

/**
 * The canonical text of a JSON value, every string NFC-normalised, or `null` when the value is one
 * of the rare ones {@link ReferenceOnly} names (the caller then uses the reference). The value
 * must be within the caller's depth limit: this recurses.
 *
 * Values JSON cannot hold are written as `JSON.stringify` maps them (and as the reference does):
 * non-finite numbers as `null`; functions, symbols, bigints and `undefined` leave an object's
 * member out and are `null` in an array, and `null` at the top.
 */
export function canonicalNfc(value: unknown): string | null {
  try {
    return write(value) ?? 'null';
  } catch (e) {
    if (e === REFERENCE_ONLY) return null;
    throw e;
  }
}

/** The canonical text of `v`, or `undefined` for a value an object leaves out. */
function write(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      if (v === null) return 'null';
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw REFERENCE_ONLY;
      return Array.isArray(v) ? writeArray(v) : writeObject(v as Record<string, unknown>);
    default:
      return undefined;
  }
}

function writeArray(a: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < a.length; i++) {
    // A hole (a JavaScript caller's sparse array; JSON has none): the reference writes it empty.
    if (!(i in a)) throw REFERENCE_ONLY;
    if (i > 0) out += ',';
    out += write(a[i]) ?? 'null';
  }
  return out + ']';
}

/**
 * `names.sort()` (UTF-16 code unit order, which `<` on strings is), done in place by insertion
 * for the few names a request's objects have: `Array.prototype.sort` sets up a merge sort's
 * state for any length, ten times the work and most of a kilobyte for two names (measured).
 */
function sortNames(names: string[]): string[] {
  if (names.length > 8) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const x = names[i]!;
    let j = i - 1;
    while (j >= 0 && names[j]! > x) {
      names[j + 1] = names[j]!;
      j--;
    }
    names[j + 1] = x;
  }
  return names;
}

function writeObject(o: Record<string, unknown>): string {
  const keys = Object.keys(o);
  let names: string[] | null = null;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const n = nfc(k);
    if (n !== k && names === null) names = keys.slice(0, i);
    if (names !== null) names.push(n);
  }
  if (names === null) return members(o, sortNames(keys), null);
  // Member names that change under NFC: sorted by their normalised form. Two names that normalise
  // alike would make two different requests one (and a shared identity replays a stored
  // decision), so such an object keeps its original names (identity.ts says more).
  const original = new Map<string, string>();
  for (let i = 0; i < keys.length; i++) original.set(names[i]!, keys[i]!);
  if (original.size < keys.length) {
    for (const k of keys) if (!k.isWellFormed()) throw REFERENCE_ONLY;
    return members(o, sortNames(keys), null);
  }
  return members(o, sortNames(names), original);
}

/**
 * `{"name":value,…}` over `sorted` names (each already as written: normalised, or an object's own
 * when its names collide); `original` maps a normalised name back to the object's.
 */
function members(
  o: Record<string, unknown>,
  sorted: readonly string[],
  original: Map<string, string> | null
): string {
  let out = '{';
  let first = true;
  for (const name of sorted) {
    const text = write(o[original === null ? name : original.get(name)!]);
    if (text === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(name) + ':' + text;
  }
  return out + '}';
}
