/**
 * Policy text or value → a policy, or every error in it with its JSONPath and, for text, its place.
 */
import { explainIssues, type RawError } from './errors';
import { JsonScanner, JsonSyntaxError, lineColumn, spanPosition, type Located } from './json-text';
import { duplicateMessage } from './json-strict';
import { formatPath, pathKey } from './path';
import { PolicySchema, type Policy } from './schema';

/**
 * One thing wrong with a policy: where (a JSONPath, see the module comment) and what. When the
 * policy came as text, the place in the text too (1-based lines and columns, columns in UTF-16
 * units as the editor counts them), so the editor can underline it.
 */
export interface PolicyError {
  path: string;
  message: string;
  line?: number;
  column?: number;
  endLine?: number;
  endColumn?: number;
}

export type PolicyParse = { ok: true; policy: Policy } | { ok: false; errors: PolicyError[] };

function validate(
  value: unknown
): { ok: true; policy: Policy } | { ok: false; errors: RawError[] } {
  const result = PolicySchema.safeParse(value);
  if (result.success) return { ok: true, policy: result.data };
  return { ok: false, errors: explainIssues(result.error.issues, value, undefined, PolicySchema) };
}

/**
 * Validate a policy: a value, or JSON text (parsed first; a syntax error reports its line and
 * column). Every problem is reported, each with a JSONPath and a plain message — several at once,
 * in document order when the policy came as text. Pure: an invalid policy is never partially
 * applied; the caller keeps the last valid one.
 */
export function parsePolicy(input: unknown): PolicyParse {
  if (typeof input !== 'string') {
    const r = validate(input);
    return r.ok
      ? r
      : {
          ok: false,
          errors: r.errors.map((e) => ({ path: formatPath(e.segments), message: e.message }))
        };
  }
  const text = input;
  const scanner = new JsonScanner(text);
  try {
    scanner.scan();
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    const { line, column } = lineColumn(text, e.at);
    return {
      ok: false,
      errors: [
        {
          path: '$',
          message: `JSON syntax error at line ${line}, column ${column}: ${e.message}`,
          line,
          column
        }
      ]
    };
  }
  const raw: RawError[] = scanner.duplicates.map((d) => ({
    segments: d.segments,
    message: duplicateMessage(String(d.segments[d.segments.length - 1])),
    span: d.key
  }));
  const r = validate(JSON.parse(text));
  if (r.ok && raw.length === 0) return r;
  if (!r.ok) raw.push(...r.errors);
  const located = raw.map((e, order) => {
    // The nearest place that exists in the text: a missing member is reported on its parent.
    let loc: Located | undefined;
    for (let n = e.segments.length; n >= 0 && !loc && !e.span; n--) {
      loc = scanner.locations.get(pathKey(e.segments.slice(0, n)));
    }
    const span = e.span ?? (loc ? (e.atKey && loc.key ? loc.key : loc.value) : undefined);
    const pos = span ? spanPosition(text, span) : undefined;
    return {
      order,
      start: span?.start ?? 0,
      error: { path: formatPath(e.segments), message: e.message, ...pos }
    };
  });
  located.sort((a, b) => a.start - b.start || a.order - b.order);
  return { ok: false, errors: located.map((l) => l.error) };
}
