/**
 * Records keyed by names that come from outside (server names, parameter names, reason codes).
 *
 * A server chooses its own name, so a name must stay data: `__proto__`, `constructor`,
 * `prototype`, `toString` and `hasOwnProperty` are ordinary names. zod's `z.record` drops a
 * `__proto__` key without a word (assigning it to a plain `{}` would replace the prototype), which
 * let a server named `__proto__` escape its own policy block. {@link nameRecord} parses the same
 * shape into a null-prototype object, where every key — `__proto__` included — is an own,
 * ordinary member, and reports key and value problems with their paths as zod would.
 */
import { z } from 'zod';

// No `new Function`: zod's JIT for object schemas compiles parsers with it, and under the site's
// Content-Security-Policy (no 'unsafe-eval') even zod's probe for it is reported as a violation.
// zod reads this flag when a schema is built, so it is set here, in the module every schema
// module imports first (policy.ts → names.ts), and the same in Node, the page and the worker.
z.config({ jitless: true });

/** A fresh object with no prototype: `o["__proto__"] = v` makes an own member, nothing more. */
function bareObject<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

export { ownValue } from './own';

type RawIssue = z.core.$ZodRawIssue;

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * `z.record(key, value)` with names as data: the output is a null-prototype object holding every
 * valid member, `__proto__` included. Types, JSON Schema (for editors) and error paths are those of
 * `z.record(key, value)`; only the runtime differs. A description goes in here, not through
 * `.describe()` afterwards (zod's `.describe` clones the schema and the clone would lose the JSON
 * Schema hook).
 */
export function nameRecord<K extends z.ZodType<string, string>, V extends z.ZodType>(
  key: K,
  value: V,
  description: string | undefined,
  opts: { partial: true }
): z.ZodRecord<K & z.core.$partial, V>;
export function nameRecord<K extends z.ZodType<string, string>, V extends z.ZodType>(
  key: K,
  value: V,
  description?: string,
  opts?: { partial?: false }
): z.ZodRecord<K, V>;
// The partial overload types as z.partialRecord does (every key optional), so a schema's
// `z.input`/`z.infer` says what the parser accepts.
export function nameRecord<K extends z.ZodType<string, string>, V extends z.ZodType>(
  key: K,
  value: V,
  description?: string,
  opts: { partial?: boolean } = {}
): z.ZodRecord<K, V> {
  // `partial`: for a key set that is an enum, not every key is required (z.partialRecord's schema).
  let docs: z.ZodType = opts.partial ? z.partialRecord(key, value) : z.record(key, value);
  if (description) docs = docs.describe(description);
  let safe: z.ZodType = z.unknown().transform((input, ctx) => {
    if (!isPlainRecord(input)) {
      ctx.issues.push({ code: 'invalid_type', expected: 'record', input } as RawIssue);
      return z.NEVER;
    }
    const out = bareObject<unknown>();
    for (const k of Object.keys(input)) {
      const kr = key.safeParse(k);
      if (!kr.success) {
        ctx.issues.push({
          code: 'invalid_key',
          origin: 'record',
          issues: kr.error.issues,
          input: k,
          path: [k],
          message: kr.error.issues[0]?.message ?? 'invalid name'
        } as RawIssue);
        continue;
      }
      const vr = value.safeParse(input[k]);
      if (vr.success) out[k] = vr.data;
      else
        for (const i of vr.error.issues)
          ctx.issues.push({ ...i, path: [k, ...i.path] } as RawIssue);
    }
    return out;
  });
  if (description) safe = safe.describe(description);
  // JSON Schema: describe the record, not the `unknown` the transform starts from.
  const internals = safe._zod as unknown as {
    processJSONSchema?: (ctx: unknown, json: unknown, params: unknown) => void;
  };
  internals.processJSONSchema = (ctx, json, params) => {
    const c = ctx as { processors: Record<string, (...a: unknown[]) => void> };
    c.processors.record!(docs, ctx, json, params);
  };
  return safe as unknown as z.ZodRecord<K, V>;
}
