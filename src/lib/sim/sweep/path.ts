/**
 * A sweep's grid keys: dotted paths into the scenario, with JSON-quoted segments for member
 * names that have dots in them (`lanes.A.client.reasons["user.denied"].ttl`) and `[0]` for an
 * array index (`servers[0].intervalMs`). A path is parsed once, when the sweep file is read, so a
 * typo is reported against the grid key before anything runs.
 */
import type { PathSegment } from '../../machine/policy';

export type PathParse = { ok: true; segments: PathSegment[] } | { ok: false; error: string };

/** Characters a bare segment may not contain: they start the next segment. */
const BARE = /^[^.[\]"]+/;

export function parsePath(text: string): PathParse {
  const segments: PathSegment[] = [];
  let i = 0;
  const fail = (what: string): PathParse => ({
    ok: false,
    error: `${what} at character ${i + 1} (write a.b.c, with ["name.with.dots"] or [0] for an index)`
  });
  if (text.length === 0) return { ok: false, error: 'an empty path' };
  while (i < text.length) {
    const c = text[i];
    if (c === '[') {
      const close = text.indexOf(']', i);
      if (text[i + 1] === '"') {
        // A JSON string: find its closing quote (skipping escaped ones) before the bracket.
        let j = i + 2;
        while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
        if (j >= text.length || text[j + 1] !== ']') return fail('an unclosed quoted segment');
        let name: unknown;
        try {
          name = JSON.parse(text.slice(i + 1, j + 1));
        } catch {
          return fail('a quoted segment that is not a JSON string');
        }
        if (typeof name !== 'string' || name.length === 0) return fail('an empty quoted segment');
        segments.push(name);
        i = j + 2;
      } else {
        if (close < 0) return fail('an unclosed [');
        const inner = text.slice(i + 1, close);
        if (!/^(0|[1-9]\d{0,5})$/.test(inner))
          return fail(`[${inner}] is not an index such as [0]`);
        segments.push(Number(inner));
        i = close + 1;
      }
    } else {
      if (segments.length > 0) {
        if (c !== '.') return fail(`${JSON.stringify(c)} where . or [ was expected`);
        i++;
      }
      const m = BARE.exec(text.slice(i));
      if (!m) return fail('an empty segment');
      segments.push(m[0]);
      i += m[0].length;
    }
  }
  return { ok: true, segments };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `root` (a deep copy the caller owns) with the member at `segments` set to `value`. Missing
 * members on the way are created as objects (a lane without `reasons` gets them); an index must
 * name an existing element. Names are data: `__proto__` is an own member like any other, never
 * the prototype. An error says where the path stopped fitting the scenario.
 */
export function setPath(
  root: unknown,
  segments: readonly PathSegment[],
  value: unknown
): string | null {
  let at: unknown = root;
  for (let k = 0; k < segments.length; k++) {
    const s = segments[k]!;
    const last = k === segments.length - 1;
    if (typeof s === 'number') {
      if (!Array.isArray(at)) return `${where(segments, k)} is not a list, so [${s}] names nothing`;
      if (s >= at.length)
        return `${where(segments, k)} has ${at.length} element${at.length === 1 ? '' : 's'}, so [${s}] names nothing`;
      if (last) at[s] = value;
      else at = at[s];
      continue;
    }
    if (!isRecord(at)) return `${where(segments, k)} is not an object, so .${s} names nothing`;
    if (last) {
      Object.defineProperty(at, s, { value, enumerable: true, writable: true, configurable: true });
    } else {
      if (!Object.hasOwn(at, s) || at[s] === undefined || at[s] === null) {
        Object.defineProperty(at, s, {
          value: {},
          enumerable: true,
          writable: true,
          configurable: true
        });
      }
      at = at[s];
    }
  }
  return null;
}

/** The path up to (not including) segment `k`, as the grid key writes it. */
function where(segments: readonly PathSegment[], k: number): string {
  return k === 0 ? 'the scenario' : pathText(segments.slice(0, k));
}

/** Segments back as a grid key: `lanes.A.client.reasons["user.denied"].ttl`. */
export function pathText(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (BARE.exec(s)?.[0] === s) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
