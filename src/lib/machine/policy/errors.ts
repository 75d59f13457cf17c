/**
 * zod issues as plain messages with their JSONPath: "missing required member", "expected an
 * integer, got the string …", "unknown member "budjet": did you mean "budget"?", the shapes a union
 * accepts. Written for the policy and shared by every format built from the same parts (a
 * scenario, a trace line).
 *
 * Over 400 lines on purpose: one switch from zod's issue codes to messages (`explain`) and the
 * helpers it shares (paths, values, bounds, near-miss keys); the messages read as a set, the same
 * words for the same fault whichever member it is in.
 */
import { quote } from '../excerpt';
import { parseMoneyAmount } from '../money';
import { formatPath, type PathSegment } from './path';
import type { Span } from './json-text';
import { BudgetSchema, PolicyBlockSchema, PolicySchema, RateLimitSchema } from './schema';

/** A zod issue, as much of it as the messages need (zod's own union type is wider than useful). */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  values?: unknown[];
  keys?: string[];
  minimum?: number | bigint;
  maximum?: number | bigint;
  origin?: string;
  inclusive?: boolean;
  errors?: Issue[][];
  issues?: Issue[];
  discriminator?: string;
  options?: unknown[];
}

/** A union's accepted shapes, from what each branch expected at its root. */
function unionExpected(branches: Issue[][]): string {
  const kinds = branches.map((b) => {
    const root = b.find((i) => i.path.length === 0 && i.code === 'invalid_type');
    return root ? (EXPECTED[root.expected ?? ''] ?? root.expected ?? 'another shape') : 'an object';
  });
  const unique = [...new Set(kinds)];
  return unique.length <= 1
    ? (unique[0] ?? 'another value')
    : `${unique.slice(0, -1).join(', ')} or ${unique[unique.length - 1]}`;
}

export interface RawError {
  segments: PathSegment[];
  message: string;
  /** Point at the member name rather than its value (unknown and duplicate members). */
  atKey?: boolean;
  /** The exact place, when known without a lookup (a duplicate's second name). */
  span?: Span;
}

const BLOCK_KEYS = Object.keys(PolicyBlockSchema.shape);

/** The member names allowed in the object at `segments`, for "unknown member" messages. */
function allowedKeysAt(segments: PathSegment[]): string[] {
  const last = segments[segments.length - 1];
  if (segments.length === 0) return Object.keys(PolicySchema.shape);
  if (segments.length === 1 && last === 'defaults') return BLOCK_KEYS;
  if (segments.length === 2 && segments[0] === 'servers') return BLOCK_KEYS;
  if (last === 'rateLimit') return Object.keys(RateLimitSchema.shape);
  if (last === 'budget') return Object.keys(BudgetSchema.shape);
  if (last === 'perCallCap') return ['amount', 'currency', 'tokens'];
  if (last === 'askAbove') return ['amount', 'currency'];
  return [];
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

function unknownKeyMessage(key: string, allowed: string[], segments: PathSegment[]): string {
  let msg = `unknown member ${quote(key)}`;
  if (allowed.includes(key) && segments[segments.length - 1] === 'perCallCap') {
    // Allowed in the other branch: the author mixed the two kinds of cap.
    return `${msg}: a per-call cap is either { "amount", "currency" } or { "tokens" }, not both`;
  }
  const near = allowed
    .map((k) => ({ k, d: editDistance(key.toLowerCase(), k.toLowerCase()) }))
    .filter((x) => x.d > 0 && x.d <= 2)
    .sort((x, y) => x.d - y.d)[0];
  if (near) msg += `: did you mean ${JSON.stringify(near.k)}?`;
  else if (allowed.length > 0) msg += ` (allowed: ${allowed.join(', ')})`;
  return msg;
}

function valueAt(root: unknown, segments: PathSegment[]): unknown {
  let v = root;
  for (const s of segments) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, s)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[s];
  }
  return v;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${quote(v)}`;
  if (typeof v === 'number') {
    // JSON has no Infinity: 1e400 and the like parse to it.
    if (v === Infinity) return 'a number too large to represent (such as 1e400)';
    if (v === -Infinity) return 'a negative number too large to represent (such as -1e400)';
    return Number.isNaN(v) ? 'NaN (not a number)' : `the number ${v}`;
  }
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'object') return 'an object';
  return typeof v;
}

/** A scalar as written (`2`, `"v2"`, quoted and escaped); anything else described. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return describeValue(v);
}

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  record: 'an object',
  null: 'null'
};

const PER_CALL_CAP_SHAPES = 'null, { "amount": "0.05", "currency": "USD" } or { "tokens": 20000 }';

/**
 * What a union-typed member accepts, by member name: a union's own message ("Invalid input")
 * tells the author nothing, so say which shapes are accepted.
 */
const UNION_SHAPES: Record<string, string> = {
  perCallCap: PER_CALL_CAP_SHAPES,
  content:
    'a content block such as { "type": "text", "text": "…" }, any other block with a "type", or an array of such blocks',
  ttl: '{ "kind": "session" }, { "kind": "window" } or { "kind": "ms", "ms": 60000 }',
  allowedTtl: '{ "kind": "session" }, { "kind": "window" } or { "kind": "ms", "ms": 60000 }'
};

export type KeysAt = (segments: PathSegment[]) => string[];

/** A schema whose issues for a value say what bound holds at each path. */
export interface Checkable {
  safeParse(v: unknown): { success: boolean; error?: { issues: readonly unknown[] } };
}

/**
 * The bound a schema states at each place where `root` holds a number that is not finite
 * (Infinity is what JSON's 1e400 parses to): the value is not a number to zod, so its own issue
 * says only "expected a number". Parsing a copy with ±Number.MAX_VALUE there makes it say
 * "at most …" — the bound to name. Keyed by the path's segments joined with NUL.
 */
function boundsOfNonFinite(root: unknown, schema: Checkable | undefined): Map<string, Issue> {
  const out = new Map<string, Issue>();
  if (!schema) return out;
  let found = false;
  const finite = (v: unknown): unknown => {
    if (typeof v === 'number' && !Number.isFinite(v)) {
      found = true;
      return v < 0 ? -Number.MAX_VALUE : Number.MAX_VALUE;
    }
    if (Array.isArray(v)) return v.map(finite);
    if (v === null || typeof v !== 'object') return v;
    const o: Record<string, unknown> = Object.create(Object.getPrototypeOf(v) as object | null);
    for (const k of Object.keys(v))
      Object.defineProperty(o, k, {
        value: finite((v as Record<string, unknown>)[k]),
        enumerable: true,
        writable: true,
        configurable: true
      });
    return o;
  };
  const copy = finite(root);
  if (!found) return out;
  const collect = (issues: readonly Issue[], prefix: PropertyKey[]) => {
    for (const i of issues) {
      const path = [...prefix, ...i.path];
      // A union's branches (perCallCap's { tokens }) state theirs inside.
      for (const branch of i.errors ?? []) collect(branch, path);
      if (i.code !== 'too_big' && i.code !== 'too_small') continue;
      const key = path.map(String).join('\u0000');
      if (!out.has(key) || !isImplicitBound(i)) out.set(key, i);
    }
  };
  collect((schema.safeParse(copy).error?.issues ?? []) as Issue[], []);
  return out;
}

/** zod's `int()` states the safe-integer range as a bound of its own, beside the real one. */
function isImplicitBound(i: Issue): boolean {
  return (
    (i.code === 'too_big' && Number(i.maximum) === Number.MAX_SAFE_INTEGER) ||
    (i.code === 'too_small' && Number(i.minimum) === Number.MIN_SAFE_INTEGER)
  );
}

const DAY = 86_400_000;

/** A bound with its unit where the member is a span: "2592000000 ms (30 days)". */
function boundText(n: number | bigint | undefined, segments: PathSegment[]): string {
  const v = Number(n);
  const last = segments[segments.length - 1];
  const name = typeof last === 'string' ? last : String(segments[segments.length - 2] ?? '');
  const span = /Ms$/.test(name) || name === 'ms' || name === 'restarts';
  if (!span) return String(n);
  const exact = (unit: number, one: string, many: string) =>
    v >= unit && v % unit === 0 ? ` (${v / unit} ${v === unit ? one : many})` : null;
  const human =
    exact(DAY, 'day', 'days') ??
    exact(3_600_000, 'hour', 'hours') ??
    exact(60_000, 'minute', 'minutes') ??
    exact(1_000, 'second', 'seconds') ??
    '';
  return `${v} ms${human}`;
}

/** "must be at most 2592000000 ms (30 days)" for a too_big or too_small issue. */
function boundMessage(i: Issue, segments: PathSegment[]): string {
  return i.code === 'too_big'
    ? `must be ${i.inclusive === false ? 'less than' : 'at most'} ${boundText(i.maximum, segments)}`
    : `must be ${i.inclusive === false ? 'greater than' : 'at least'} ${boundText(i.minimum, segments)}`;
}

/** One zod issue → errors with paths and plain messages, checked against the raw value. */
function explain(
  issue: Issue,
  prefix: PathSegment[],
  root: unknown,
  out: RawError[],
  keysAt: KeysAt = allowedKeysAt,
  bounds: Map<string, Issue> = new Map()
): void {
  const segments = [
    ...prefix,
    ...(issue.path.filter((p) => typeof p !== 'symbol') as PathSegment[])
  ];
  const value = valueAt(root, segments);
  const last = segments[segments.length - 1];
  const parent = segments.length > 0 ? valueAt(root, segments.slice(0, -1)) : undefined;
  const missing =
    value === undefined &&
    parent !== null &&
    typeof parent === 'object' &&
    (issue.code === 'invalid_type' ||
      issue.code === 'invalid_value' ||
      issue.code === 'invalid_union');
  if (missing) {
    out.push({ segments, message: `missing required member ${quote(String(last))}` });
    return;
  }
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = keysAt(segments);
      for (const key of issue.keys ?? []) {
        out.push({
          segments: [...segments, key],
          message: unknownKeyMessage(key, allowed, segments),
          atKey: true
        });
      }
      return;
    }
    case 'invalid_type': {
      if (typeof value === 'number' && !Number.isFinite(value)) {
        const bound = bounds.get(segments.map(String).join('\u0000'));
        const within = bound ? ` ${boundMessage(bound, segments).replace(/^must be /, '')}` : '';
        out.push({
          segments,
          message: `must be a finite number${within}, got ${describeValue(value)}`
        });
        return;
      }
      const expected = EXPECTED[issue.expected ?? ''] ?? issue.expected ?? 'another type';
      out.push({ segments, message: `expected ${expected}, got ${describeValue(value)}` });
      return;
    }
    case 'invalid_value': {
      const values = (issue.values ?? []).map((v) => JSON.stringify(v));
      const message =
        last === 'version'
          ? `unsupported policy version ${typeof value === 'number' && !Number.isFinite(value) ? describeValue(value) : valueText(value)}: the only version is 1`
          : `expected ${values.length === 1 ? values[0] : `one of ${values.join(', ')}`}, got ${describeValue(value)}`;
      out.push({ segments, message });
      return;
    }
    case 'invalid_format': {
      let message = issue.message;
      if (last === 'amount') {
        const r = parseMoneyAmount(value);
        message = r.ok ? message : r.error;
      } else if (last === 'currency') {
        message = `currency ${valueText(value)} must be three upper-case letters, e.g. "USD"`;
      }
      out.push({ segments, message });
      return;
    }
    case 'too_small': {
      const message =
        issue.origin === 'string'
          ? Number(issue.minimum) <= 1
            ? 'must not be empty'
            : `must be at least ${String(issue.minimum)} characters long`
          : issue.origin === 'array'
            ? `must hold at least ${String(issue.minimum)} item${Number(issue.minimum) === 1 ? '' : 's'}`
            : `${boundMessage(issue, segments)}, got ${describeValue(value)}`;
      out.push({ segments, message });
      return;
    }
    case 'too_big': {
      const max = String(issue.maximum);
      const message =
        issue.origin === 'string'
          ? `must be at most ${max} characters long`
          : issue.origin === 'array'
            ? `must hold at most ${max} items`
            : `${boundMessage(issue, segments)}, got ${describeValue(value)}`;
      out.push({ segments, message });
      return;
    }
    case 'invalid_key': {
      // A record key (a server name): zod puts the key's own issues under `issues`.
      const inner = issue.issues?.[0];
      const server = segments[segments.length - 2] === 'servers';
      const message = server
        ? inner?.code === 'too_small'
          ? 'a server name must not be empty'
          : `invalid server name: ${inner?.message ?? issue.message}`
        : inner?.code === 'invalid_value' && inner.values
          ? `unknown name ${quote(String(last))}: expected one of ${inner.values.map((v) => JSON.stringify(v)).join(', ')}`
          : `invalid name ${quote(String(last))}: ${inner?.message ?? issue.message}`;
      out.push({ segments, message, atKey: true });
      return;
    }
    case 'invalid_union': {
      // perCallCap: { amount, currency } | { tokens }. Report the branch the author evidently
      // meant (the one with the fewest complaints), unless the value is not even an object.
      const branches = issue.errors ?? [];
      const allRootType = branches.every((b) =>
        b.every((i) => i.code === 'invalid_type' && i.path.length === 0)
      );
      const empty = value !== null && typeof value === 'object' && Object.keys(value).length === 0;
      if (issue.discriminator !== undefined) {
        // A discriminated union whose tag matched no branch: the issue's path is the tag itself.
        const options = issue.options?.map((o) => JSON.stringify(o)).join(', ');
        out.push({
          segments,
          message: `${describeValue(value)} is not a known ${JSON.stringify(issue.discriminator)}${options ? `: expected one of ${options}` : ''}`
        });
        return;
      }
      const shapes = typeof last === 'string' ? UNION_SHAPES[last] : undefined;
      if (allRootType || branches.length === 0 || empty || shapes === undefined) {
        out.push({
          segments,
          message: `expected ${shapes ?? unionExpected(branches)}, got ${describeValue(value)}`
        });
        return;
      }
      const best = [...branches].sort((a, b) => a.length - b.length)[0] ?? [];
      for (const i of stated(best)) explain(i, segments, root, out, keysAt, bounds);
      return;
    }
    default:
      out.push({ segments, message: issue.message });
  }
}

/**
 * The issues worth a message: zod's `int()` adds the safe-integer range as a bound of its own
 * ("at most 9007199254740991") beside the one the schema states; only the stated one is named.
 */
function stated(issues: readonly Issue[]): Issue[] {
  const key = (i: Issue) => `${i.code}\u0000${i.path.map(String).join('\u0000')}`;
  const explicit = new Set(issues.filter((i) => !isImplicitBound(i)).map(key));
  return issues.filter((i) => !isImplicitBound(i) || !explicit.has(key(i)));
}

/**
 * Plain messages for zod issues of any format built from these parts (a scenario, a trace line):
 * "missing required member", "expected an integer, got the string …", the shapes a union
 * accepts. `keysAt` lists the members allowed where an unknown one was found, for suggestions;
 * `schema` (the one that gave the issues) names the bound where a number is not finite.
 */
export function describeIssues(
  issues: readonly unknown[],
  root: unknown,
  keysAt: KeysAt = () => [],
  schema?: Checkable
): { path: string; segments: PathSegment[]; message: string }[] {
  return explainIssues(issues, root, keysAt, schema).map((e) => ({
    path: formatPath(e.segments),
    segments: e.segments,
    message: e.message
  }));
}

/** {@link allowedKeysAt} for a policy found at `prefix` inside a larger document. */
export function policyKeysAt(prefixLength: number): KeysAt {
  return (segments) => allowedKeysAt(segments.slice(prefixLength));
}

/** Every issue explained against `root`, with the policy's member names for suggestions. */
export function explainIssues(
  issues: readonly unknown[],
  root: unknown,
  keysAt: KeysAt = allowedKeysAt,
  schema?: Checkable
): RawError[] {
  const out: RawError[] = [];
  const list = stated(issues as Issue[]);
  const bounds = boundsOfNonFinite(root, schema);
  for (const issue of list) explain(issue, [], root, out, keysAt, bounds);
  return out;
}
