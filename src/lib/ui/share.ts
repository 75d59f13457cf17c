/**
 * A whole scenario in the URL: `#s=` followed by the scenario JSON, compressed with lz-string into
 * URI-safe characters. The fragment never reaches a server, so a shared link works from any static
 * host. Decoding only turns the hash back into a value; whether that value is a valid scenario is
 * `parseScenario`'s question, asked by the page.
 */
// lz-string is CommonJS: named imports fail under SvelteKit's prerender (Node ESM).
import lzString from 'lz-string';
import { quote } from '$lib/machine/excerpt';
import { parseJsonText, type JsonTextProblem } from '$lib/machine/policy/json-strict';
import { FORK_PREFIX, HASH_PREFIX, TIMELINE_PREFIX, TRACE_PREFIX } from './share-prefixes';
export { FORK_PREFIX, HASH_PREFIX, TIMELINE_PREFIX, TRACE_PREFIX };

const { compressToEncodedURIComponent, decompressFromEncodedURIComponent } = lzString;

/**
 * Bounds on what a pasted link can make the page do. lz-string's alphabet carries 6 bits a
 * character and a JSON scenario compresses well, so 400 000 characters is far beyond any real
 * scenario; the decompressed bound stops a small hash that expands into megabytes.
 */
export const MAX_HASH_CHARS = 400_000;
export const MAX_JSON_CHARS = 5_000_000;

/** The characters `compressToEncodedURIComponent` writes. */
const ALPHABET = /^[A-Za-z0-9+\-$]*$/;

export type HashDecode = { ok: true; data: unknown } | { ok: false; error: string };

/**
 * `data` as JSON, compressed, prefixed `#s=`: ready to append to the page's address. With a fork
 * (a ForkSpec, sim/engine/fork.ts), it follows as `&f=` and its own compressed JSON; with a timeline, as
 * `&e=`. `&` is outside the compressed alphabet, so the parts never run into each other.
 */
export function encodeScenarioHash(
  data: unknown,
  fork?: unknown,
  timeline?: unknown,
  trace?: unknown
): string {
  const json = JSON.stringify(data);
  if (json === undefined) throw new TypeError('encodeScenarioHash: the value is not JSON');
  const part = (prefix: string, v: unknown) =>
    v == null ? '' : prefix + compressToEncodedURIComponent(JSON.stringify(v));
  return (
    HASH_PREFIX +
    compressToEncodedURIComponent(json) +
    part(FORK_PREFIX, fork) +
    part(TIMELINE_PREFIX, timeline) +
    part(TRACE_PREFIX, trace)
  );
}

/** One `&x=` member of a link: from its prefix to the next member, or null when absent. */
function member(hash: string, prefix: string): string | null {
  const i = hash.indexOf(prefix);
  if (i === -1) return null;
  const from = i + prefix.length;
  const end = hash.indexOf('&', from);
  return hash.slice(from, end === -1 ? undefined : end).replace(/ /g, '+');
}

function decodeMember(
  hash: string,
  prefix: string,
  what: string
): { ok: true; value: unknown } | { ok: false; error: string } {
  const payload = member(hash, prefix);
  if (payload === null) return { ok: true, value: null };
  if (payload.length > MAX_HASH_CHARS || !ALPHABET.test(payload))
    return { ok: false, error: `the ${what} in the link is corrupted` };
  let json: string | null = null;
  try {
    json = decompressFromEncodedURIComponent(payload);
  } catch {
    // Reported below.
  }
  if (!json || json.length > MAX_JSON_CHARS)
    return { ok: false, error: `the ${what} in the link is corrupted: it does not decompress` };
  // The same strict reading as every other input: a duplicate member is refused, not dropped.
  const parsed = parseJsonText(json);
  if (!parsed.ok)
    return { ok: false, error: `the ${what} in the link: ${jsonProblem(parsed.error)}` };
  return { ok: true, value: parsed.value };
}

/**
 * The fork a scenario link carries (`…&f=…`): null when it carries none, the decoded JSON value
 * (validate it with `parseFork`), or what is wrong with it.
 */
export function decodeForkHash(
  hash: string
): { ok: true; fork: unknown } | { ok: false; error: string } {
  const r = decodeMember(hash, FORK_PREFIX, 'fork');
  return r.ok ? { ok: true, fork: r.value } : r;
}

/**
 * The run's timeline a scenario link carries (`…&e=…`): null when it carries none (a link made
 * before the member existed, or of a run nobody changed), the decoded JSON value (validate it
 * with `parseLinkTimeline`), or what is wrong with it.
 */
export function decodeTimelineHash(
  hash: string
): { ok: true; timeline: unknown } | { ok: false; error: string } {
  const r = decodeMember(hash, TIMELINE_PREFIX, 'timeline');
  return r.ok ? { ok: true, timeline: r.value } : r;
}

/**
 * The client log a scenario link carries (`…&t=…`): null when it carries none, the decoded JSON
 * value (validate it with `parseTraceRef`, traces/trace-link.ts), or what is wrong with it.
 */
export function decodeTraceHash(
  hash: string
): { ok: true; trace: unknown } | { ok: false; error: string } {
  const r = decodeMember(hash, TRACE_PREFIX, 'client log');
  return r.ok ? { ok: true, trace: r.value } : r;
}

/** Whether the address's fragment is meant to be a scenario (`#s=…`), valid or not. */
export function hasScenarioHash(hash: string): boolean {
  return hash.startsWith(HASH_PREFIX) || hash.startsWith(HASH_PREFIX.slice(1));
}

/**
 * The value in a scenario hash (`#s=…`, or `s=…` without the `#`, as `URL.hash` and
 * `location.hash` give it with and without). Every failure says what is wrong: not a scenario
 * link at all, a link damaged in copying, or a payload that is not JSON.
 */
export function decodeScenarioHash(hash: string): HashDecode {
  const h = hash.startsWith('#') ? hash : `#${hash}`;
  if (!h.startsWith(HASH_PREFIX)) {
    return {
      ok: false,
      error: `not a scenario link: the address should end in "${HASH_PREFIX}…", not ${quote(hash, 24)}`
    };
  }
  // Mail and chat clients turn "+" into a space or percent-encode the odd character on the way.
  // A fork and a timeline, if the link carries them, follow the scenario (`decodeForkHash`,
  // `decodeTimelineHash`): the scenario ends at the first `&`, which its alphabet never holds.
  const end = h.indexOf('&');
  let payload = h.slice(HASH_PREFIX.length, end === -1 ? undefined : end).trim();
  if (/%[0-9A-Fa-f]{2}/.test(payload)) {
    try {
      payload = decodeURIComponent(payload);
    } catch {
      // Leave it: the alphabet check below names the problem.
    }
  }
  payload = payload.replace(/ /g, '+');
  if (payload.length === 0) {
    return { ok: false, error: `the scenario link is empty: nothing follows "${HASH_PREFIX}"` };
  }
  if (payload.length > MAX_HASH_CHARS) {
    return {
      ok: false,
      error: `the scenario link is too long (${payload.length} characters; at most ${MAX_HASH_CHARS}): share the scenario as a file instead`
    };
  }
  if (!ALPHABET.test(payload)) {
    const bad = [...payload].find((c) => !ALPHABET.test(c)) ?? '';
    return {
      ok: false,
      error: `the scenario link is corrupted: it contains ${quote(bad)}, which a scenario link never does`
    };
  }
  let json: string | null;
  try {
    json = decompressFromEncodedURIComponent(payload);
  } catch {
    json = null;
  }
  if (!json) {
    return {
      ok: false,
      error:
        'the scenario link is corrupted: it does not decompress (it may have been cut short when it was copied)'
    };
  }
  if (json.length > MAX_JSON_CHARS) {
    return {
      ok: false,
      error: `the scenario link expands to more than ${MAX_JSON_CHARS} characters, far larger than any scenario`
    };
  }
  const parsed = parseJsonText(json);
  if (!parsed.ok) {
    return { ok: false, error: `the scenario link is corrupted: ${jsonProblem(parsed.error)}` };
  }
  const data = parsed.value;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    const what = data === null ? 'null' : Array.isArray(data) ? 'an array' : `a ${typeof data}`;
    return {
      ok: false,
      error: `the scenario link does not hold a scenario: it decodes to ${what}, not a scenario object.`
    };
  }
  return { ok: true, data };
}

/** A link's JSON refused: a syntax error, or a member name given twice (at its path). */
function jsonProblem(e: JsonTextProblem): string {
  return e.path === '$'
    ? `its content is not JSON (line ${e.line}, column ${e.column}: ${e.detail})`
    : `${e.path}: ${e.message}`;
}
