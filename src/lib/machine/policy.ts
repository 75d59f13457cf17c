/**
 * The policy format (SPEC §4, §5, §6, §9 "Policy editor"), defined once, in zod. The TypeScript
 * types, the runtime validation and the JSON Schema the editor validates against all come from the
 * schemas below, so they cannot drift apart.
 *
 * A policy is `{ version: 1, defaults: <full block>, servers: { <name>: <partial block> } }`. A
 * server's block overrides the defaults member by member; a nested object (a budget, a rate limit,
 * a cap) replaces the default one whole — it is never merged field by field, so what the author
 * reads in the server's block is exactly what applies.
 *
 * Error paths are JSONPath style: `$` is the document, `.name` a member whose name is an
 * identifier, `["release-notes"]` any other member name (JSON-quoted), `[0]` an array index:
 * `$.servers["release-notes"].budget.amount`.
 */
import { z } from 'zod';
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { AMOUNT_PATTERN, CURRENCY_PATTERN, parseMoneyAmount } from './money';
import { nameRecord } from './names';

// ───────────────────────────── the schema ─────────────────────────────

const AmountSchema = z
  .string()
  // abort: a string that fails the grammar gets one message, not a second from the range check.
  .regex(AMOUNT_PATTERN, { error: 'not a decimal amount', abort: true })
  .refine((s) => parseMoneyAmount(s).ok, 'amount is too large to hold exactly')
  .describe(
    'A decimal string, never a number: digits, optionally a point and up to 6 decimals, no sign, no exponent. Example: "0.05".'
  )
  .meta({ examples: ['0.05', '5.00'] });

const CurrencySchema = z
  .string()
  .regex(CURRENCY_PATTERN, 'not a currency code')
  .describe(
    'Three upper-case letters (ISO 4217), e.g. "USD". Amounts are never converted: a cap in another currency than the rate card makes the model unusable.'
  )
  .meta({ examples: ['USD', 'EUR'] });

/**
 * Bounds on every number a policy holds, so no arithmetic downstream (windows aligned since the
 * epoch, token caps priced at the rate card) meets a value it cannot hold exactly.
 */
export const POLICY_LIMITS = {
  /** A window of at most a year (leap year): 366 × 86 400 000 ms. */
  windowMs: 31_622_400_000,
  /** Requests per window. */
  requests: 1_000_000_000,
  /** Input tokens, and input + maxTokens for a token cap: far above any model's context. */
  tokens: 100_000_000
} as const;

/**
 * A name in a policy (a model, a server): non-empty, at most 200 characters, and well-formed
 * UTF-16. A lone surrogate (which `JSON.parse` makes from `"\ud800"`) has no UTF-8 encoding, so
 * the block could not be hashed (RFC 8785 refuses it) — refused here, with its place.
 */
const NameSchema = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (s) => s.isWellFormed(),
    'contains a lone surrogate (half of a UTF-16 pair): not valid text'
  );

const WindowMsSchema = z
  .int()
  .positive()
  .max(POLICY_LIMITS.windowMs)
  .describe(
    'Window length in milliseconds. Windows are aligned to multiples of this length since the epoch, so 86400000 resets at 00:00Z.'
  );

const RateLimitSchema = z
  .strictObject({
    requests: z
      .int()
      .positive()
      .max(POLICY_LIMITS.requests)
      .describe('How many requests a server may make per window, whatever their content.'),
    windowMs: WindowMsSchema
  })
  .describe('At most `requests` requests per window.');

const BudgetSchema = z
  .strictObject({
    amount: AmountSchema,
    currency: CurrencySchema,
    windowMs: WindowMsSchema
  })
  .describe('The most a server may spend per window.');

const MoneyCapSchema = z
  .strictObject({ amount: AmountSchema, currency: CurrencySchema })
  .describe(
    'A cost meter: the pre-flight estimate (input × input price + maxTokens × output price) must not exceed this amount.'
  );

const TokenCapSchema = z
  .strictObject({
    tokens: z
      .int()
      .positive()
      .max(POLICY_LIMITS.tokens)
      .describe('Input tokens + maxTokens must not exceed this count.')
  })
  .describe('A token meter: verifiable, and blind to price.');

/** One policy block: every member required in `defaults`, any subset in a server's block. */
export const PolicyBlockSchema = z.strictObject({
  sampling: z
    .boolean()
    .describe(
      'Whether this server may sample at all. false denies every request with policy.sampling_disabled.'
    ),
  allowedModels: z
    .array(NameSchema)
    .describe(
      'Models this server may use. A model hint matches a name exactly or as a substring; "*" allows any model with a rate card.'
    ),
  defaultModel: NameSchema.describe('The model used when a request carries no model hints.'),
  maxInputTokens: z
    .int()
    .positive()
    .max(POLICY_LIMITS.tokens)
    .describe(
      'The largest input (system prompt + messages) accepted, in tokens; above it: policy.input_too_large.'
    ),
  maxContext: z
    .enum(['none', 'thisServer', 'allServers'])
    .describe(
      'The widest includeContext granted. A wider request is trimmed to this and the result says so in _meta.context.'
    ),
  rateLimit: RateLimitSchema.nullable().describe(
    'Requests per window, counted regardless of content (what a prompt mutator cannot dodge); null = no rate limit.'
  ),
  budget: BudgetSchema.nullable().describe(
    'Spend per window; once spent: policy.budget_exhausted with resetsAt. null = no budget window.'
  ),
  perCallCap: z
    .union([MoneyCapSchema, TokenCapSchema])
    .nullable()
    .describe(
      'The per-call cap (the RFC): { "amount", "currency" } for a cost meter, { "tokens" } for a token meter, null for none.'
    ),
  consent: z
    .enum(['ask', 'allow', 'deny'])
    .describe('Ask the user, allow without asking, or deny (user.denied) without asking.')
});

/** A server's block: any subset of the members, each replacing the default one whole. */
export const ServerBlockSchema = PolicyBlockSchema.partial().describe(
  "This server's overrides. Each member present replaces the default one whole (objects are not merged)."
);

export const PolicySchema = z
  .strictObject({
    version: z.literal(1).describe('The policy format version: always 1.'),
    defaults: PolicyBlockSchema.describe(
      'The block every server gets, member by member, unless its own block overrides the member.'
    ),
    servers: nameRecord(
      NameSchema,
      ServerBlockSchema,
      'Per-server overrides, keyed by the server name (any non-empty string; `__proto__` and `constructor` are names like any other). Editing a block invalidates that server’s stored decisions.'
    )
  })
  .describe('A Sampling Policy Lab policy: what the host lets each MCP server sample.');

export type PolicyBlock = z.infer<typeof PolicyBlockSchema>;
export type ServerBlock = z.infer<typeof ServerBlockSchema>;
export type Policy = z.infer<typeof PolicySchema>;

/**
 * The policy JSON Schema (draft 2020-12, generated from `PolicySchema`), with a `description` on
 * every member for the editor's hovers and completions. A fresh object each call.
 */
export function policyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(PolicySchema, { target: 'draft-2020-12', io: 'input' }) as Record<
    string,
    unknown
  >;
}

/**
 * The starter policy. Shared: never mutate it — take `defaultPolicy()` for a copy to edit.
 * (Not frozen, so UI state libraries that proxy objects can hold it.)
 */
export const DEFAULT_POLICY: Policy = {
  version: 1,
  defaults: {
    sampling: true,
    allowedModels: ['example-model-v2'],
    defaultModel: 'example-model-v2',
    maxInputTokens: 32000,
    maxContext: 'thisServer',
    rateLimit: { requests: 30, windowMs: 60000 },
    budget: { amount: '5.00', currency: 'USD', windowMs: 86400000 },
    perCallCap: { amount: '0.05', currency: 'USD' },
    consent: 'ask'
  },
  servers: {
    'release-notes': { budget: { amount: '0.50', currency: 'USD', windowMs: 86400000 } }
  }
};

/** A deep copy of `DEFAULT_POLICY`, safe to edit. */
export function defaultPolicy(): Policy {
  return structuredClone(DEFAULT_POLICY);
}

// ───────────────────────────── paths ─────────────────────────────

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `['servers', 'release-notes', 'budget']` → `$.servers["release-notes"].budget`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

// ───────────────────────────── errors ─────────────────────────────

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

// ───────────────────────────── a JSON scanner with positions ─────────────────────────────

interface Span {
  start: number;
  end: number;
}
interface Located {
  value: Span;
  /** The member name's span, when the value is an object member. */
  key?: Span;
}

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly at: number
  ) {
    super(message);
  }
}

/** Deeper than any policy needs; bounded so a hostile paste cannot overflow the stack. */
const MAX_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * A strict RFC 8259 scanner run over policy text before `JSON.parse`. `JSON.parse` reports syntax
 * errors differently in every engine (Safari gives no position at all), says nothing about
 * duplicate member names (it silently keeps the last — a policy that means something other than
 * what its author sees), and forgets where each value was. This scanner gives the same message and
 * line/column everywhere, flags duplicates, and records the span of every value and member name
 * by path so a schema error can be underlined in the editor.
 */
class JsonScanner {
  private i = 0;
  private depth = 0;
  readonly locations = new Map<string, Located>();
  readonly duplicates: { segments: PathSegment[]; key: Span }[] = [];

  constructor(private readonly text: string) {}

  scan(): void {
    this.ws();
    if (this.i >= this.text.length) this.fail('the text is empty: expected a JSON object');
    this.value([]);
    this.ws();
    if (this.i < this.text.length) this.fail('unexpected text after the end of the JSON value');
  }

  private fail(message: string, at = this.i): never {
    throw new JsonSyntaxError(message, at);
  }

  private ws(): void {
    const t = this.text;
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }

  private describeHere(): string {
    const c = this.text[this.i];
    if (c === undefined) return 'the end of the text';
    return `'${c}'`;
  }

  /** Fail at the current character, recognising the usual non-JSON habits by name. */
  private unexpected(expected: string): never {
    const c = this.text[this.i];
    if (c === "'") this.fail('strings and member names use double quotes, not single quotes');
    if (c === '/') this.fail('JSON has no comments');
    this.fail(`unexpected ${this.describeHere()}: expected ${expected}`);
  }

  private value(path: PathSegment[]): void {
    this.ws();
    const start = this.i;
    const c = this.text[this.i];
    if (c === undefined) this.fail('unexpected end of the text: expected a value');
    if (c === '{') this.object(path);
    else if (c === '[') this.array(path);
    else if (c === '"') this.string();
    else if (c === '-' || (c >= '0' && c <= '9')) this.number();
    else if (!(this.literal('true') || this.literal('false') || this.literal('null'))) {
      this.unexpected('a value');
    }
    this.locations.set(formatPath(path), { value: { start, end: this.i } });
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.i)) return false;
    this.i += word.length;
    return true;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
  }

  private object(path: PathSegment[]): void {
    const open = this.i;
    this.enter();
    this.i++;
    this.ws();
    const seen = new Set<string>();
    const keys: { key: string; span: Span }[] = [];
    if (this.text[this.i] === '}') {
      this.i++;
      this.depth--;
      return;
    }
    for (;;) {
      this.ws();
      if (this.i >= this.text.length) this.unclosed('object', open);
      if (this.text[this.i] !== '"') {
        if (this.text[this.i] === '}' && keys.length > 0) this.fail("trailing comma before '}'");
        this.unexpected('a member name in double quotes');
      }
      const keyStart = this.i;
      this.string();
      const span = { start: keyStart, end: this.i };
      const key = JSON.parse(this.text.slice(keyStart, this.i)) as string;
      if (seen.has(key)) this.duplicates.push({ segments: [...path, key], key: span });
      seen.add(key);
      keys.push({ key, span });
      this.ws();
      if (this.text[this.i] !== ':') this.unexpected("':' after the member name");
      this.i++;
      this.value([...path, key]);
      const loc = this.locations.get(formatPath([...path, key]));
      if (loc) loc.key = span;
      this.ws();
      const c = this.text[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === '}') {
        this.i++;
        break;
      }
      if (c === undefined) this.unclosed('object', open);
      this.unexpected("',' or '}' after a member");
    }
    this.depth--;
  }

  private array(path: PathSegment[]): void {
    const open = this.i;
    this.enter();
    this.i++;
    this.ws();
    if (this.text[this.i] === ']') {
      this.i++;
      this.depth--;
      return;
    }
    for (let index = 0; ; index++) {
      this.ws();
      if (this.text[this.i] === ']' && index > 0) this.fail("trailing comma before ']'");
      if (this.i >= this.text.length) this.unclosed('array', open);
      this.value([...path, index]);
      this.ws();
      const c = this.text[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === ']') {
        this.i++;
        break;
      }
      if (c === undefined) this.unclosed('array', open);
      this.unexpected("',' or ']' after an element");
    }
    this.depth--;
  }

  private unclosed(what: 'object' | 'array', open: number): never {
    const { line, column } = lineColumn(this.text, open);
    this.fail(
      `unexpected end of the text: the ${what} opened at line ${line}, column ${column} is not closed`
    );
  }

  private string(): void {
    const t = this.text;
    const start = this.i;
    this.i++;
    for (;;) {
      if (this.i >= t.length) this.fail('unterminated string', start);
      const c = t.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c < 0x20)
        this.fail('a control character (such as a line break) inside a string must be escaped');
      if (c === 0x5c) {
        const e = t[this.i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(t.slice(this.i + 2, this.i + 6))) {
            this.fail('\\u must be followed by four hex digits');
          }
          this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
        else this.fail(`invalid escape '\\${e ?? ''}'`);
      } else this.i++;
    }
  }

  private number(): void {
    const start = this.i;
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.text);
    const next = m ? this.text[start + m[0].length] : undefined;
    if (!m || (next !== undefined && /[0-9.eE+-]/.test(next))) {
      this.fail(
        'invalid number (no leading zeros; digits after a sign, a point or an exponent)',
        start
      );
    }
    this.i += m[0].length;
  }
}

/** 1-based line and column (UTF-16 units) of an offset; \r\n, \r and \n each end a line. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function spanPosition(text: string, span: Span): Required<Omit<PolicyError, 'path' | 'message'>> {
  const a = lineColumn(text, span.start);
  const b = lineColumn(text, span.end);
  return { line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
}

// ───────────────────────────── validation and messages ─────────────────────────────

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

interface RawError {
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
  let msg = `unknown member ${JSON.stringify(key)}`;
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
  if (typeof v === 'string')
    return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'object') return 'an object';
  return typeof v;
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

type KeysAt = (segments: PathSegment[]) => string[];

/** One zod issue → errors with paths and plain messages, checked against the raw value. */
function explain(
  issue: Issue,
  prefix: PathSegment[],
  root: unknown,
  out: RawError[],
  keysAt: KeysAt = allowedKeysAt
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
    out.push({ segments, message: `missing required member ${JSON.stringify(String(last))}` });
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
      const expected = EXPECTED[issue.expected ?? ''] ?? issue.expected ?? 'another type';
      out.push({ segments, message: `expected ${expected}, got ${describeValue(value)}` });
      return;
    }
    case 'invalid_value': {
      const values = (issue.values ?? []).map((v) => JSON.stringify(v));
      const message =
        last === 'version'
          ? `unsupported policy version ${JSON.stringify(value) ?? String(value)}: the only version is 1`
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
        message = `currency ${JSON.stringify(value)} must be three upper-case letters, e.g. "USD"`;
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
            : `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}, got ${describeValue(value)}`;
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
            : `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}, got ${describeValue(value)}`;
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
          ? `unknown name ${JSON.stringify(String(last))}: expected one of ${inner.values.map((v) => JSON.stringify(v)).join(', ')}`
          : `invalid name ${JSON.stringify(String(last))}: ${inner?.message ?? issue.message}`;
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
      for (const i of best) explain(i, segments, root, out, keysAt);
      return;
    }
    default:
      out.push({ segments, message: issue.message });
  }
}

/**
 * Plain messages for zod issues of any format built from these parts (a scenario, a trace line):
 * "missing required member", "expected an integer, got the string …", the shapes a union
 * accepts. `keysAt` lists the members allowed where an unknown one was found, for suggestions.
 */
export function describeIssues(
  issues: readonly unknown[],
  root: unknown,
  keysAt: KeysAt = () => []
): { path: string; segments: PathSegment[]; message: string }[] {
  const out: RawError[] = [];
  for (const issue of issues as Issue[]) explain(issue, [], root, out, keysAt);
  return out.map((e) => ({
    path: formatPath(e.segments),
    segments: e.segments,
    message: e.message
  }));
}

/** {@link allowedKeysAt} for a policy found at `prefix` inside a larger document. */
export function policyKeysAt(prefixLength: number): KeysAt {
  return (segments) => allowedKeysAt(segments.slice(prefixLength));
}

function validate(
  value: unknown
): { ok: true; policy: Policy } | { ok: false; errors: RawError[] } {
  const errors: RawError[] = [];
  const result = PolicySchema.safeParse(value);
  if (!result.success) {
    for (const issue of result.error.issues as unknown as Issue[])
      explain(issue, [], value, errors);
  }
  if (errors.length > 0 || !result.success) return { ok: false, errors };
  return { ok: true, policy: result.data };
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
    message: `duplicate member ${JSON.stringify(d.segments[d.segments.length - 1])}: JSON would silently keep only the last one`,
    span: d.key
  }));
  const r = validate(JSON.parse(text));
  if (r.ok && raw.length === 0) return r;
  if (!r.ok) raw.push(...r.errors);
  const located = raw.map((e, order) => {
    // The nearest place that exists in the text: a missing member is reported on its parent.
    let loc: Located | undefined;
    for (let n = e.segments.length; n >= 0 && !loc && !e.span; n--) {
      loc = scanner.locations.get(formatPath(e.segments.slice(0, n)));
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

// ───────────────────────────── effective blocks and hashes ─────────────────────────────

/**
 * The block that applies to `server`: the defaults, with each member the server's own block
 * states replacing the default one whole. Server names come from servers and are never trusted:
 * only the policy's own keys count (`constructor` or `toString` find nothing inherited).
 */
export function effectiveBlock(policy: Policy, server: string): PolicyBlock {
  const own = Object.hasOwn(policy.servers, server) ? policy.servers[server] : undefined;
  const block: PolicyBlock = { ...policy.defaults };
  if (own) {
    for (const key of Object.keys(own) as (keyof PolicyBlock)[]) {
      if (own[key] !== undefined) (block as Record<string, unknown>)[key] = own[key];
    }
  }
  return block;
}

/**
 * The first 16 hex digits of SHA-256 over the RFC 8785 canonical JSON of the server's effective
 * block. Stored decisions carry it: when it changes, they are stale. Hashing the effective block
 * (not the text) means an edit to one server's block changes only that server's hash, an edit to
 * `defaults` changes every server that does not override the edited member, and reformatting or
 * reordering keys changes nothing.
 */
export function policyHash(policy: Policy, server: string): string {
  const json = canonicalize(effectiveBlock(policy, server));
  if (json === undefined) throw new Error('policyHash: the effective block is not serialisable');
  return bytesToHex(sha256(utf8ToBytes(json))).slice(0, 16);
}

/** The servers (of those given, each once, in order) whose effective block differs between the two. */
export function changedServers(oldPolicy: Policy, newPolicy: Policy, servers: string[]): string[] {
  return [...new Set(servers)].filter((s) => policyHash(oldPolicy, s) !== policyHash(newPolicy, s));
}
