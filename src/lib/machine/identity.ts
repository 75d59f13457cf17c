/**
 * Request identity (SPEC §3): a short digest of what a sampling request *asks for*, derived by the
 * client from the request's content. The JSON-RPC id cannot serve: the server picks it and bumps
 * it on every send, and the server is the party whose repetition we are trying to recognise.
 *
 * identity = server + ":" + hex(sha256(utf8(C)))[0:32], where C is the RFC 8785 (JCS) canonical
 * JSON of the identity fields, every string NFC-normalised first.
 */
import canonicalize from 'canonicalize';
import { canonicalNfc, nfc } from './canonical';
import { sha256Hex } from './sha256';

// The identity fields live in a module of their own, so the page can list them without loading
// the hashing.
import { DEFAULT_IDENTITY_FIELDS } from './identity-fields';
export { DEFAULT_IDENTITY_FIELDS };
// The depth limit lives apart so that readers of the number alone skip this module's hashing.
import { MAX_PARAMS_DEPTH } from './params-depth';
export { MAX_PARAMS_DEPTH };

/** How an identity is computed; a learner can change both in the playground. */
export interface IdentityOptions {
  /** Which `params` members count. Default: {@link DEFAULT_IDENTITY_FIELDS}. */
  fields?: readonly string[];
  /**
   * RFC 8785 + NFC over the selected fields (default `true`). `false` is a teaching mode: hash
   * `JSON.stringify(params)` as received, so the same request from two serialisers looks new.
   */
  canonicalize?: boolean;
}

/** Params nested deeper than {@link MAX_PARAMS_DEPTH}; `path` leads to the first too-deep value. */
export class ParamsDepthError extends Error {
  constructor(readonly path: readonly (string | number)[]) {
    super(
      `nested deeper than ${MAX_PARAMS_DEPTH} levels (the limit for a request's params) at ${depthPathText(path)}`
    );
    this.name = 'ParamsDepthError';
  }
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Where a too-deep value sits, as a JSONPath: the first few steps, then how deep it goes — the
 * full path of a 64-level value is a screenful of `[0]`s that helps nobody; the message names
 * the limit.
 */
export function depthPathText(path: readonly (string | number)[], prefix = '$'): string {
  const shown = path.length > 8 ? path.slice(0, 6) : path;
  const more = path.length > shown.length ? '…' : '';
  return pathText(shown, prefix) + more;
}

function pathText(path: readonly (string | number)[], prefix = '$'): string {
  let out = prefix;
  for (const s of path) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += IDENT.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  }
  return out;
}

/**
 * The path (from the params) to the first object or array nested deeper than `limit`, or `null`
 * when the value is within it. Iterative — a 100,000-deep value costs a loop, not the stack — and
 * linear in the size of the value. Run it before anything recursive sees the value.
 */
export function depthExceeded(
  value: unknown,
  limit: number = MAX_PARAMS_DEPTH
): (string | number)[] | null {
  // Nearly every value is within the limit: say so without building the walk's nodes.
  if (within(value, 1, limit)) return null;
  interface Node {
    v: unknown;
    depth: number;
    key: string | number | null;
    parent: Node | null;
  }
  const stack: Node[] = [{ v: value, depth: 1, key: null, parent: null }];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (typeof n.v !== 'object' || n.v === null) continue;
    if (n.depth > limit) {
      const path: (string | number)[] = [];
      for (let m: Node | null = n; m && m.key !== null; m = m.parent) path.push(m.key);
      return path.reverse();
    }
    if (Array.isArray(n.v)) {
      for (let i = n.v.length - 1; i >= 0; i--)
        stack.push({ v: n.v[i], depth: n.depth + 1, key: i, parent: n });
    } else {
      const o = n.v as Record<string, unknown>;
      const keys = Object.keys(o);
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({ v: o[keys[i]!], depth: n.depth + 1, key: keys[i]!, parent: n });
    }
  }
  return null;
}

/** What a request whose params hold a lone surrogate is refused with, after its path. */
export const LONE_SURROGATE =
  'contains a lone surrogate (half of a UTF-16 pair): not valid text, and RFC 8785 refuses it — hashed as U+FFFD it would share an identity with a request that says "\ufffd"';

/**
 * The path to the first string — an object key or a value — that is not well-formed UTF-16 (a lone
 * surrogate, which `JSON.parse` makes from `"\ud800"`), or null. RFC 8785 refuses such text, and
 * the identity writer's replacement by U+FFFD would give `"\ud800"` and `"\ufffd"` one identity,
 * so every place params enter (a trace line, `lab identity`, a scenario's text) refuses them first.
 * Iterative, like {@link depthExceeded}; run it after the depth check.
 */
export function loneSurrogateAt(value: unknown): (string | number)[] | null {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        if (!k.isWellFormed()) return [...path, k];
        stack.push({ v: o[k], path: [...path, k] });
      }
    }
  }
  return null;
}

/**
 * True when no object or array in `v` (at `depth`) is nested deeper than `limit`. Recursive, but
 * never deeper than `limit` + 1 calls: it answers `false` at the first level past the limit.
 */
function within(v: unknown, depth: number, limit: number): boolean {
  if (typeof v !== 'object' || v === null) return true;
  if (depth > limit) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!within(v[i], depth + 1, limit)) return false;
  } else {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!within(o[k], depth + 1, limit)) return false;
  }
  return true;
}

/** One encoder for the module: identity is the per-request floor of the benchmark. */
const encoder = new TextEncoder();

/** 32 hex characters = 16 bytes = 128 bits; ample against a store of a few thousand entries. */
const DIGEST_BYTES = 16;

/**
 * NFC-normalise every string of a JSON value, keys included, at any depth. Copy-on-write: a value
 * with nothing to change is returned as the same reference, so the usual all-ASCII request costs
 * one scan of its strings and no allocation.
 *
 * Values JSON cannot hold (from a caller that passed a JS object, never from `JSON.parse`) are
 * mapped the way `JSON.stringify` maps them, so hashing never throws on them: non-finite numbers
 * become `null`; functions, symbols and bigints become `undefined` (dropped from objects, `null`
 * in arrays). Cycles are outside the contract: params are a JSON value.
 */
function nfcDeep(v: unknown): unknown {
  switch (typeof v) {
    case 'string':
      return nfc(v);
    case 'number':
      return Number.isFinite(v) ? v : null;
    case 'boolean':
    case 'undefined':
      return v;
    case 'object':
      if (v === null) return null;
      return Array.isArray(v) ? nfcArray(v) : nfcObject(v as Record<string, unknown>);
    default:
      return undefined;
  }
}

function nfcArray(a: readonly unknown[]): readonly unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = nfcDeep(x);
    if (out !== undefined) out.push(y);
    else if (y !== x) {
      out = a.slice(0, i);
      out.push(y);
    }
  }
  return out ?? a;
}

/** A fresh object with no prototype, so a server-sent `"__proto__"` key stays a plain key. */
function bare(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

function nfcObject(o: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(o);
  let out: Record<string, unknown> | undefined;
  let collided = false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = o[k];
    const nk = nfc(k);
    const nv = nfcDeep(v);
    if (out === undefined) {
      if (nk === k && nv === v) continue;
      out = bare();
      for (let j = 0; j < i; j++) {
        const kj = keys[j] as string;
        out[kj] = o[kj];
      }
    }
    // Original keys are unique, so a key already present means two of them normalise alike.
    if (Object.prototype.hasOwnProperty.call(out, nk)) collided = true;
    out[nk] = nv;
  }
  if (!collided) return out ?? o;
  // Two keys that differ only in normalisation form ({"é":…, "e\u0301":…}) would collapse onto
  // one and silently lose a value, making two different requests share an identity — and a
  // shared identity replays a stored decision. Failing closed costs nothing: a server can always
  // get a fresh identity by changing one character, but must never be able to borrow another
  // request's. So such an object keeps its original keys and only its values are normalised.
  const safe = bare();
  for (const k of keys) safe[k] = nfcDeep(o[k]);
  return safe;
}

/** Untrusted params of any shape: only a JSON object has members; anything else counts as `{}`. */
function asObject(params: unknown): Record<string, unknown> {
  return typeof params === 'object' && params !== null && !Array.isArray(params)
    ? (params as Record<string, unknown>)
    : {};
}

/**
 * The exact string that is hashed for a request's identity — shown by the UI so a learner can see
 * what two requests have (or do not have) in common.
 *
 * Both modes hash the same selection: `{ field: params[field] ?? null }` for each identity field,
 * in the field list's order. Canonical mode (default) writes it as RFC 8785 canonical JSON, every
 * string (keys and values, any depth) NFC-normalised first. Teaching mode (`canonicalize: false`)
 * changes only the serialisation: `JSON.stringify` of the selection as received — member order,
 * escapes and normalisation form as the server wrote them — so the serialiser lesson shows one
 * effect, not two.
 *
 * Never throws on a JSON value of any shape within {@link MAX_PARAMS_DEPTH}; non-object params
 * count as `{}`. Deeper params throw a {@link ParamsDepthError} before anything recursive runs.
 */
export function canonicalIdentityPayload(params: unknown, opts: IdentityOptions = {}): string {
  const p = asObject(params);
  const deep = depthExceeded(p);
  if (deep) throw new ParamsDepthError(deep);
  const fields = opts.fields ?? DEFAULT_IDENTITY_FIELDS;
  if (opts.canonicalize === false) {
    const picked = bare();
    for (const f of fields) picked[f] = own(p, f) ?? null;
    return JSON.stringify(picked);
  }
  // The selection is written member by member in its canonical order (the same for every request
  // of a field set: worked out once), each value by the one-pass writer (canonical.ts); a value
  // that writer leaves alone sends the whole selection to the reference.
  const { names, sources } = canonicalOrder(fields);
  let out = '{';
  for (let i = 0; i < names.length; i++) {
    const text = canonicalNfc(jsonOrNull(own(p, sources[i]!)));
    if (text === null) return referencePayload(selection(p, fields));
    out += (i > 0 ? ',' : '') + names[i] + ':' + text;
  }
  return out + '}';
}

/**
 * Own members only: a field set naming `constructor` or `toString` must not pick up
 * Object.prototype's functions and make every request share one identity.
 */
function own(p: Record<string, unknown>, f: string): unknown {
  return Object.prototype.hasOwnProperty.call(p, f) ? p[f] : undefined;
}

/** `{ nfc(field): params[field] }` in the field list's order: a later field of the same name wins. */
function selection(p: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const picked = bare();
  for (const f of fields) picked[nfc(f)] = jsonOrNull(own(p, f));
  return picked;
}

/**
 * A field set's members as the canonical payload writes them: the NFC names, sorted by UTF-16
 * code units and quoted, and for each the field it is read from (the last of the list with that
 * name, as in {@link selection}). By array: a lane's configuration holds one for its life.
 */
const orders = new WeakMap<readonly string[], Order>();

export interface Order {
  /** The field list as it was when the order was worked out (an array can change). */
  fields: string[];
  names: string[];
  sources: string[];
}

export function canonicalOrder(fields: readonly string[]): Order {
  let order = orders.get(fields);
  if (order === undefined || !sameList(order.fields, fields)) {
    const source = new Map<string, string>();
    for (const f of fields) source.set(nfc(f), f);
    const sorted = [...source.keys()].sort();
    order = {
      fields: [...fields],
      names: sorted.map((n) => JSON.stringify(n)),
      sources: sorted.map((n) => source.get(n)!)
    };
    orders.set(fields, order);
  }
  return order;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A selected field's value as the selection holds it: what JSON cannot hold there is `null`. */
function jsonOrNull(v: unknown): unknown {
  switch (typeof v) {
    case 'undefined':
    case 'function':
    case 'symbol':
    case 'bigint':
      return null;
    default:
      return v;
  }
}

/**
 * The canonical payload by the reference: `canonicalize` (RFC 8785) of the NFC-normalised copy of
 * the selection. canonical.ts writes the same bytes in one pass (canonical.spec.ts holds it to
 * this); this path takes the values that writer leaves alone, and is exported for that test.
 */
export function referencePayload(picked: Record<string, unknown>): string {
  const normalised = bare();
  for (const k of Object.keys(picked)) normalised[nfc(k)] = nfcDeep(picked[k]) ?? null;
  // canonicalize returns undefined only for a top-level undefined; this is always an object.
  return canonicalize(normalised) ?? 'null';
}

/**
 * A request's identity: `serverId + ":" + ` the first 32 lowercase hex characters of the SHA-256
 * of {@link canonicalIdentityPayload}, UTF-8 encoded. The server id is part of the key so that two
 * servers sending the same prompt never share a stored decision.
 *
 * @param serverId the server the request came from (used verbatim, not normalised)
 * @param params the request's `params`, any JSON value from an untrusted server
 * @param opts field set and canonicalisation switch (defaults: the four fields, canonical)
 */
export function requestIdentity(serverId: string, params: unknown, opts?: IdentityOptions): string {
  return identityOfPayload(serverId, canonicalIdentityPayload(params, opts));
}

/**
 * UTF-8 of the payload lands here (grown as needed), not in a fresh array per request: the
 * encoding is written straight into memory the hash then reads.
 */
let utf8 = new Uint8Array(4_096);
/** Payloads up to this many bytes keep their buffer; a rare larger one gets a buffer of its own. */
const KEEP_BYTES = 1 << 20;

/** The identity of a request whose {@link canonicalIdentityPayload} is `payload`. */
export function identityOfPayload(serverId: string, payload: string): string {
  return serverId + ':' + payloadDigest(payload);
}

/**
 * The hex digest part of {@link identityOfPayload}: the first 32 lowercase hex characters of the
 * SHA-256 of `payload`, UTF-8 encoded. The server is not in it, so one text's digest serves
 * every server that sends it (fast-identity.ts memoises it so).
 */
export function payloadDigest(payload: string): string {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4 bytes).
  const most = payload.length * 3;
  let buf = utf8;
  if (most > buf.length) {
    buf = new Uint8Array(most);
    if (most <= KEEP_BYTES) utf8 = buf;
  }
  const { written } = encoder.encodeInto(payload, buf);
  // Hex only the bytes we keep, straight from the hash's state (no digest array per request).
  return sha256Hex(buf, written, DIGEST_BYTES);
}
