import { parseJsonText } from '../../machine/policy/json-strict';

/**
 * The first step of every file the lab reads whole (a scenario, a lesson, a fork): an object as
 * it is, or JSON text parsed strictly (see `parseJsonText`): a syntax error is reported at the
 * document (`$`) with its line and column, a member name given twice at its path, as the
 * parsers' other errors are reported at theirs.
 */
export function jsonInput(
  input: unknown
): { ok: true; value: unknown } | { ok: false; errors: { path: string; message: string }[] } {
  if (typeof input !== 'string') return { ok: true, value: input };
  const r = parseJsonText(input);
  if (r.ok) return r;
  return { ok: false, errors: [{ path: r.error.path, message: r.error.message }] };
}
