/**
 * The identity of a request parsed afresh (IncomingRequest.fresh: the handler's), hashed while its
 * canonical payload is written: the payload's UTF-8 bytes go straight into one buffer the hash
 * reads, instead of a string built piece by piece, then encoded, then hashed. Why: for a small
 * request that string and its pieces were about 2 KB of garbage and a tenth of the handler's time.
 *
 * The same bytes as `canonicalIdentityPayload` (identity.ts, canonical mode), so the same
 * identity as `requestIdentity` — fresh-identity.spec.ts holds the two equal on arbitrary JSON.
 * The writer takes the common shapes only: objects whose member names are printable ASCII
 * without escapes (no NFC, no escaping to do: sorting them is all), arrays without holes, and any
 * string, number, boolean or null. Anything else — another member name, a `toJSON` method, params
 * nested too deep, teaching mode — is left to `requestIdentity`, which decides it as before.
 */
import { nfc } from '../canonical';
import {
  canonicalOrder,
  depthExceeded,
  DEFAULT_IDENTITY_FIELDS,
  MAX_PARAMS_DEPTH,
  requestIdentity,
  type IdentityOptions
} from '../identity';
import { sha256Hex } from '../sha256';

/** 32 hex characters: identity.ts's digest length. */
const DIGEST_BYTES = 16;
/** A buffer that grew past this is let go after its request (identity.ts keeps the same bound). */
const KEEP_BYTES = 1 << 20;

let buf = new Uint8Array(4_096);
let at = 0;
const encoder = new TextEncoder();

/** Nothing to escape in well-formed text (canonical.ts, `UNESCAPED`). */
// eslint-disable-next-line no-control-regex -- the controls are what JSON escapes
const UNESCAPED = /^[^"\\\x00-\x1f]*$/;
/**
 * A member name already NFC with nothing to escape: printable ASCII but `"` and `\` (the
 * pattern /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, as a loop: a few short names per request, where a
 * regular expression's call cost more than its match).
 */
function simpleName(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

const QUOTE = 0x22;

function room(n: number): void {
  if (at + n <= buf.length) return;
  const next = new Uint8Array(Math.max(buf.length * 2, at + n));
  next.set(buf.subarray(0, at));
  buf = next;
}

function byte(b: number): void {
  room(1);
  buf[at++] = b;
}

/** ASCII text (numbers, literals, quoted simple names): one byte a character. */
function ascii(s: string): void {
  room(s.length);
  for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
}

/**
 * Any well-formed text, UTF-8 encoded: its ASCII start byte by byte, the rest (if any) by the
 * encoder — which takes a view of the buffer, an object per call, so not for a member name.
 */
function text(s: string): void {
  room(s.length * 3);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      at += encoder.encodeInto(i === 0 ? s : s.slice(i), buf.subarray(at)).written;
      return;
    }
    buf[at++] = c;
  }
}

/**
 * A string as canonical.ts's `quote` writes it: NFC, then RFC 8785's escapes. Latin-1 text with
 * nothing JSON escapes (canonical.ts's `PLAIN`: U+0020 to U+00FF but `"` and `\`) is written as
 * it is — one byte below U+0080, two from there to U+00FF — and checked as it is written, not
 * matched against the pattern first: any other character, and it is written the general way.
 */
function quoted(s: string): void {
  room(s.length * 2 + 2);
  const start = at;
  buf[at++] = QUOTE;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c < 0x20 || c === 0x22 || c === 0x5c) return quotedSlow(s, start);
      buf[at++] = c;
    } else if (c <= 0xff) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 0x3f);
    } else return quotedSlow(s, start);
  }
  buf[at++] = QUOTE;
}

/** `quoted` for text that is not plain Latin-1: written again from `start`. */
function quotedSlow(s: string, start: number): void {
  at = start;
  const n = nfc(s);
  text(UNESCAPED.test(n) ? '"' + n + '"' : JSON.stringify(n));
}

/** What JSON cannot hold: left out of an object, `null` in an array (canonical.ts, `write`). */
function absent(v: unknown): boolean {
  const t = typeof v;
  return t === 'undefined' || t === 'function' || t === 'symbol' || t === 'bigint';
}

/** `names.sort()` by insertion for a few names (canonical.ts, `sortNames`). */
function sortNames(names: string[]): string[] {
  if (names.length > 8) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const x = names[i]!;
    let j = i - 1;
    while (j >= 0 && names[j]! > x) {
      names[j + 1] = names[j]!;
      j--;
    }
    names[j + 1] = x;
  }
  return names;
}

/** Write `v` (not absent) at `depth`; false for a value left to `requestIdentity`. */
function value(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
      quoted(v);
      return true;
    case 'number':
      // ECMAScript's Number-to-String, as JSON.stringify writes a finite number.
      ascii(Number.isFinite(v) ? String(v) : 'null');
      return true;
    case 'boolean':
      ascii(v ? 'true' : 'false');
      return true;
    case 'object': {
      if (v === null) {
        ascii('null');
        return true;
      }
      if (depth > MAX_PARAMS_DEPTH) return false;
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
      if (Array.isArray(v)) {
        byte(0x5b);
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) return false;
          if (i > 0) byte(0x2c);
          const x: unknown = v[i];
          if (absent(x)) ascii('null');
          else if (!value(x, depth + 1)) return false;
        }
        byte(0x5d);
        return true;
      }
      const o = v as Record<string, unknown>;
      const names = Object.keys(o);
      for (let i = 0; i < names.length; i++) if (!simpleName(names[i]!)) return false;
      sortNames(names);
      byte(0x7b);
      let first = true;
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        const x = o[name];
        if (absent(x)) continue;
        if (!first) byte(0x2c);
        first = false;
        byte(QUOTE);
        ascii(name);
        byte(QUOTE);
        byte(0x3a);
        if (!value(x, depth + 1)) return false;
      }
      byte(0x7d);
      return true;
    }
    default:
      return false;
  }
}

/**
 * The canonical payload's bytes into `buf[0, at)`, or false (see the module's comment).
 * `depthChecked`: the caller has found the params nested no deeper than `MAX_PARAMS_DEPTH`.
 */
function payload(params: unknown, fields: readonly string[], depthChecked: boolean): boolean {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const p = params as Record<string, unknown>;
  // As canonicalIdentityPayload: params nested too deep anywhere are refused (it throws).
  if (!depthChecked && depthExceeded(p)) return false;
  const { names, sources } = canonicalOrder(fields);
  at = 0;
  byte(0x7b);
  for (let i = 0; i < names.length; i++) {
    if (i > 0) byte(0x2c);
    text(names[i]!);
    byte(0x3a);
    const src = sources[i]!;
    // Own members only, and what JSON cannot hold is `null` (identity.ts, `own`, `jsonOrNull`).
    const v = Object.prototype.hasOwnProperty.call(p, src) ? p[src] : undefined;
    if (absent(v)) ascii('null');
    else if (!value(v, 2)) return false;
  }
  byte(0x7d);
  return true;
}

/** The first `length` bytes of `bytes` hashed with SHA-256: the first 16 bytes, in hex. */
export type Digest = (bytes: Uint8Array, length: number) => string;

let digest: Digest = (bytes, length) => sha256Hex(bytes, length, DIGEST_BYTES);

/**
 * Hash with a runtime's own SHA-256 instead of sha256.ts (the same 32 hex digits): the handler
 * installs Node's one-shot `crypto.hash`, about a microsecond less per request than the
 * JavaScript hash on a small request's ~160 bytes. The core cannot import it (it also runs in the
 * browser, where WebCrypto's digest is asynchronous).
 */
export function useDigest(d: Digest): void {
  digest = d;
}

/**
 * `requestIdentity(server, params, opts)`, written and hashed in one buffer when it can be.
 * `depthChecked`: the caller has already found `params` nested no deeper than `MAX_PARAMS_DEPTH`
 * (identity.ts `depthExceeded`), as the handler does of every request before it is authorised:
 * that walk is not made again.
 */
export function freshIdentity(
  server: string,
  params: unknown,
  opts: IdentityOptions,
  depthChecked = false
): string {
  if (opts.canonicalize === false) return requestIdentity(server, params, opts);
  const ok = payload(params, opts.fields ?? DEFAULT_IDENTITY_FIELDS, depthChecked);
  const id = ok ? server + ':' + digest(buf, at) : null;
  if (buf.length > KEEP_BYTES) buf = new Uint8Array(4_096);
  return id ?? requestIdentity(server, params, opts);
}
