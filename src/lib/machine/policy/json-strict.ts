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

const OBJECT = 0;
const ARRAY = 1;
/** Up to this many names, an object's are compared in a list; past it, in a set. */
const SMALL = 12;

/**
 * The first member name given twice in one object of `text`, or null. `text` must be valid JSON
 * (call it after `JSON.parse` succeeded): the scan then needs to tell only strings from structure.
 * Linear and iterative (no recursion, whatever the depth); a string is skipped with `indexOf`, so
 * long prompt texts cost little.
 */
export function findDuplicateMember(text: string): JsonDuplicate | null {
  const kinds: number[] = [];
  /** Per open container: the current member name, or the current index. */
  const names: PathSegment[] = [];
  /** Per open object: the names seen so far. */
  const seen: (string[] | Set<string>)[] = [];
  let expectName = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = text.indexOf('"', i + 1);
      // A quote preceded by an odd run of backslashes is escaped: look further.
      for (;;) {
        let b = j - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((j - 1 - b) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (expectName) {
        let name = text.slice(i + 1, j);
        if (name.includes('\\')) name = JSON.parse(text.slice(i, j + 1)) as string;
        const top = kinds.length - 1;
        const s = seen[top]!;
        if (Array.isArray(s)) {
          if (s.includes(name)) return { segments: [...names.slice(0, top), name], at: i };
          if (s.length < SMALL) s.push(name);
          else seen[top] = new Set([...s, name]);
        } else {
          if (s.has(name)) return { segments: [...names.slice(0, top), name], at: i };
          s.add(name);
        }
        names[top] = name;
        expectName = false;
      }
      i = j;
    } else if (c === 0x7b) {
      kinds.push(OBJECT);
      names.push('');
      seen.push([]);
      expectName = true;
    } else if (c === 0x5b) {
      kinds.push(ARRAY);
      names.push(0);
      seen.push([]);
    } else if (c === 0x7d || c === 0x5d) {
      kinds.pop();
      names.pop();
      seen.pop();
    } else if (c === 0x2c) {
      const top = kinds.length - 1;
      if (kinds[top] === OBJECT) expectName = true;
      else names[top] = (names[top] as number) + 1;
    }
  }
  return null;
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
  const dup = findDuplicateMember(text);
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
