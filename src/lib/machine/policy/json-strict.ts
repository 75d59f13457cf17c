/**
 * JSON text as every input of the lab reads it: `JSON.parse`, and beside it what `JSON.parse`
 * does not do. A member name given twice is refused with its path (`JSON.parse` silently keeps
 * the last: `"sampling": false, "sampling": true` would run with sampling on, while the author
 * reads it as off), and a syntax error is reported with its line and column in the lab's own
 * words, which quote no input verbatim (V8's messages echo the text, NUL bytes, byte order marks
 * and all, and every engine words them differently).
 */
import { quote } from '../excerpt';
import { JsonScanner, JsonSyntaxError, lineColumn } from './json-text';
import { formatPath, type PathSegment } from './path';

/** The message for a member name given twice in one object (`where`: "line 3, column 5"). */
export function duplicateMessage(name: string, where?: string): string {
  return `duplicate member ${quote(name)}${where ? ` at ${where}` : ''}: JSON would silently keep only the last one`;
}

export interface JsonDuplicate {
  /** The path of the second occurrence (the member name is the last segment). */
  segments: PathSegment[];
  /** The offset of the second occurrence's name in the text. */
  at: number;
}

/** Past this many names, an object's are also kept in a set (below it, a scan is faster). */
const SMALL = 16;

/**
 * The first member name given twice in one object of `text`, or null. `text` must be valid JSON
 * (call it after `JSON.parse` succeeded): the scan then needs to tell only strings from structure.
 * Linear and iterative (no recursion, whatever the depth). It runs beside `JSON.parse` on every
 * line of a 64-million-character trace, so it allocates next to nothing: a string is skipped with
 * `indexOf`, names are compared where they stand in the text (as spans, decoded only when they
 * hold an escape), and the names of all open objects share one pair of arrays.
 */
export function findDuplicateMember(text: string): JsonDuplicate | null {
  // Stacks that never shrink (a depth and a count say how much is in use): truncating an array
  // makes V8 trim its store, which costs more than the scan itself.
  let depth = 0;
  /** Per open container: the current member name (an index into the spans), or the index. */
  const at: number[] = [];
  const isObject: boolean[] = [];
  /** Per open container: the index of its first name in the spans. */
  const from: number[] = [];
  /** An open object's names as a set, once it has more than SMALL. */
  const sets: (Set<string> | null)[] = [];
  /** The names of every open object, one after another, as spans of the text. */
  let count = 0;
  const starts: number[] = [];
  const ends: number[] = [];
  /** Whether a name holds an escape (it is then compared decoded). */
  const escapes: boolean[] = [];
  let expectName = false;
  /** The next backslash at or after where the scan is (-1: none left). */
  let backslash = text.indexOf('\\');
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = text.indexOf('"', i + 1);
      if (backslash !== -1 && backslash < i) backslash = text.indexOf('\\', i);
      const escaped = backslash !== -1 && backslash < j;
      // A quote preceded by an odd run of backslashes is escaped: look further.
      while (escaped && text.charCodeAt(j - 1) === 0x5c) {
        let b = j - 2;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((j - 1 - b) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (expectName) {
        expectName = false;
        const top = depth - 1;
        const k = count++;
        starts[k] = i + 1;
        ends[k] = j;
        escapes[k] = escaped;
        const first = from[top]!;
        let dup = false;
        const set = sets[top];
        if (set) {
          const name = nameAt(text, starts, ends, escapes, k);
          dup = set.has(name);
          set.add(name);
        } else {
          for (let m = first; m < k && !dup; m++) dup = sameName(text, starts, ends, escapes, m, k);
          if (k - first >= SMALL) {
            const names = new Set<string>();
            for (let m = first; m <= k; m++) names.add(nameAt(text, starts, ends, escapes, m));
            sets[top] = names;
          }
        }
        if (dup) {
          const segments: PathSegment[] = [];
          for (let d = 0; d < top; d++)
            segments.push(isObject[d] ? nameAt(text, starts, ends, escapes, at[d]!) : at[d]!);
          segments.push(nameAt(text, starts, ends, escapes, k));
          return { segments, at: i };
        }
        at[top] = k;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      const object = c === 0x7b;
      at[depth] = object ? -1 : 0;
      isObject[depth] = object;
      from[depth] = count;
      sets[depth] = null;
      depth++;
      expectName = object;
    } else if (c === 0x7d || c === 0x5d) {
      // `{}` leaves expectName set: what follows the close is a value or a comma, never a name.
      expectName = false;
      depth--;
      count = from[depth]!;
      sets[depth] = null;
    } else if (c === 0x2c) {
      const top = depth - 1;
      if (isObject[top]) expectName = true;
      else at[top] = at[top]! + 1;
    }
  }
  return null;
}

/** The name at span k, decoded when it holds an escape. */
function nameAt(
  text: string,
  starts: number[],
  ends: number[],
  escapes: boolean[],
  k: number
): string {
  const raw = text.slice(starts[k]!, ends[k]!);
  return escapes[k] ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/** Whether spans a and b spell the same name: compared in place unless one holds an escape. */
function sameName(
  text: string,
  starts: number[],
  ends: number[],
  escapes: boolean[],
  a: number,
  b: number
): boolean {
  if (escapes[a] || escapes[b])
    return nameAt(text, starts, ends, escapes, a) === nameAt(text, starts, ends, escapes, b);
  const sa = starts[a]!;
  const sb = starts[b]!;
  const len = ends[a]! - sa;
  if (len !== ends[b]! - sb) return false;
  for (let k = 0; k < len; k++)
    if (text.charCodeAt(sa + k) !== text.charCodeAt(sb + k)) return false;
  return true;
}

/**
 * The first member name given twice in `text`, which `JSON.parse` turned into `value`; or null.
 * Most texts have none, and that is cheaper to prove than to search: every member name in the
 * text is followed by a `:` outside a string, and becomes one own key of the parsed value unless
 * it repeats an earlier one. So when the text's colons and the value's keys are as many, no name
 * repeats (about a third of the cost of the search on a trace); otherwise the search names it.
 */
export function duplicateIn(text: string, value: unknown): JsonDuplicate | null {
  if (value === null || typeof value !== 'object') return null;
  const keys = countKeys(value, 0);
  if (keys >= 0 && keys === countColons(text)) return null;
  return findDuplicateMember(text);
}

/** Colons outside strings: the member names of valid JSON text. */
function countColons(text: string): number {
  let colons = 0;
  let backslash = text.indexOf('\\');
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) colons++;
    else if (c === 0x22) {
      let j = text.indexOf('"', i + 1);
      if (backslash !== -1 && backslash < i) backslash = text.indexOf('\\', i);
      while (backslash !== -1 && backslash < j && text.charCodeAt(j - 1) === 0x5c) {
        let b = j - 2;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((j - 1 - b) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      i = j;
    }
  }
  return colons;
}

/** Own keys in a parsed value, all levels; -1 past 200 levels (the search has no depth limit). */
function countKeys(v: object, depth: number): number {
  if (depth > 200) return -1;
  let n = 0;
  if (Array.isArray(v)) {
    for (const x of v as unknown[]) {
      if (x !== null && typeof x === 'object') {
        const k = countKeys(x, depth + 1);
        if (k < 0) return -1;
        n += k;
      }
    }
    return n;
  }
  // JSON.parse makes plain objects whose keys are all own, enumerable strings (`__proto__` too).
  for (const key in v) {
    n++;
    const x = (v as Record<string, unknown>)[key];
    if (x !== null && typeof x === 'object') {
      const k = countKeys(x, depth + 1);
      if (k < 0) return -1;
      n += k;
    }
  }
  return n;
}

export interface JsonTextProblem {
  /** `$` for a syntax error; the duplicate's path otherwise. */
  path: string;
  segments: PathSegment[];
  message: string;
  /** The message without the place ("unexpected '}': expected a value"). */
  detail: string;
  line: number;
  column: number;
}

export type JsonTextParse = { ok: true; value: unknown } | { ok: false; error: JsonTextProblem };

/**
 * The place and words of a syntax error in text `JSON.parse` refused, from the lab's own scanner.
 */
export function jsonSyntaxProblem(text: string): JsonTextProblem {
  try {
    new JsonScanner(text, false).scan();
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    const { line, column } = lineColumn(text, e.at);
    return {
      path: '$',
      segments: [],
      message: `not valid JSON: line ${line}, column ${column}: ${e.message}`,
      detail: e.message,
      line,
      column
    };
  }
  // The scanner is stricter than JSON.parse, never looser; this is for an engine's own limit.
  const detail = 'the text is not JSON this engine can read';
  return {
    path: '$',
    segments: [],
    message: `not valid JSON: ${detail}`,
    detail,
    line: 1,
    column: 1
  };
}

/**
 * Parse JSON text strictly: the value, or the one thing wrong with the text — a syntax error at
 * `$`, or the first member name given twice, at its path — with its line and column.
 */
export function parseJsonText(text: string): JsonTextParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: jsonSyntaxProblem(text) };
  }
  const dup = duplicateIn(text, value);
  if (dup) {
    const { line, column } = lineColumn(text, dup.at);
    const name = String(dup.segments[dup.segments.length - 1]);
    return {
      ok: false,
      error: {
        path: formatPath(dup.segments),
        segments: dup.segments,
        message: duplicateMessage(name, `line ${line}, column ${column}`),
        detail: duplicateMessage(name),
        line,
        column
      }
    };
  }
  return { ok: true, value };
}
