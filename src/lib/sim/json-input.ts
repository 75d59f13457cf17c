/**
 * The first step of every file the lab reads whole (a scenario, a lesson): an object as it is, or
 * JSON text parsed, with a syntax error reported at the document (`$`) as the parsers' other
 * errors are reported at their paths.
 */
export function jsonInput(
  input: unknown
): { ok: true; value: unknown } | { ok: false; errors: { path: string; message: string }[] } {
  if (typeof input !== 'string') return { ok: true, value: input };
  try {
    return { ok: true, value: JSON.parse(input) };
  } catch (e) {
    return {
      ok: false,
      errors: [{ path: '$', message: `not valid JSON: ${(e as Error).message}` }]
    };
  }
}
