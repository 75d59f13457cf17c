/**
 * A request's identity, memoised twice over — both are the same pure function of the same input:
 *
 * - on its params object: a server that retries sends the same params object again
 *   (servers/base.ts), and a group's servers send one object built from their shared template
 *   (servers/request.ts); a params object is never changed once sent (it is the request's frame),
 *   so the canonical text of its first presentation is the text of every later one, whichever
 *   server presents it;
 * - on its canonical payload: a request that is new as an object but asks for the same thing (a
 *   serialiser's variant: other key order, other normalisation form) canonicalises to the same
 *   text, and the same text has the same SHA-256 — the canonicalisation runs, the hash does not.
 *   The digest does not depend on the server (the identity is `server:digest`), so a text is
 *   hashed once for every server that sends it: fifty servers sending the same prompts hashed
 *   each text once per server (on the 50-server benchmark, 29,131 hashes of 2,212 texts).
 *
 * Kept apart from `requestIdentity` on purpose: the benchmark's identity floor calls that one, and
 * must keep measuring the whole of the hashing.
 */
import {
  canonicalIdentityPayload,
  DEFAULT_IDENTITY_FIELDS,
  identityOfPayload,
  payloadDigest,
  type IdentityOptions
} from '../identity';

/**
 * A canonical text's digest and the identities made of it (`server:digest`): the first server's
 * beside it, the others' in a map (most texts come from one server). The identity strings are
 * kept, not made per presentation: one string per identity is hashed once by every map it keys
 * and compared by reference.
 */
interface Ids {
  digest: string;
  server: string;
  id: string;
  others: Map<string, string> | null;
}

/** A params object's text under this field set and switch (its digest and identities). */
interface ObjectEntry {
  fields: readonly string[];
  canonical: boolean;
  ids: Ids;
}
/**
 * Texts by params object (the weak map lets them go), a short list scanned by field set
 * (`sameFields`). Not by server: the text does not depend on it — keyed by server too, each of a
 * group's servers canonicalised the object it shares again.
 */
const byObject = new WeakMap<object, ObjectEntry[]>();

/** One canonical text and its digest and identities. */
interface TextEntry {
  payload: string;
  ids: Ids;
}
/**
 * Texts by a fingerprint of the canonical payload, then the payload itself (compared whole: a
 * fingerprint only narrows the search). Not keyed on the payload directly: V8 hashes a string
 * longer than 16,383 characters by its length alone, so 16 KB payloads would all share one hash
 * bucket. Bounded by the characters it holds (texts and identities).
 */
const byPayload = new Map<number, TextEntry[]>();
let payloadChars = 0;
/** 16 M characters of payload text (32 MB) at most; then it starts again empty. */
const PAYLOAD_CHARS_MAX = 16 * 2 ** 20;

/**
 * A 31-bit hash (FNV-1a) of the payload — of its length, its first 256 characters and 64 more
 * sampled across it when longer than 1,024 — a number, so the bucket's key is a small integer: a
 * sampled string as the key was 64 concatenations and a 330-character string to hash per
 * presentation. Equal payloads have equal fingerprints; a collision only makes a bucket longer
 * (the payload is compared whole).
 */
function fingerprint(payload: string): number {
  const n = payload.length;
  let h = 0x811c9dc5 ^ n;
  const head = n <= 1_024 ? n : 256;
  for (let i = 0; i < head; i++) h = Math.imul(h ^ payload.charCodeAt(i), 0x01000193);
  if (n > head)
    for (let i = 1; i <= 64; i++)
      h = Math.imul(h ^ payload.charCodeAt(Math.floor((i * (n - 1)) / 64)), 0x01000193);
  return h >>> 1;
}

/** How often each memo answered, since the module loaded (the benchmark prints them). */
export const identityMemoStats = { byObject: 0, byPayload: 0, hashed: 0 };

/**
 * Forget every canonical text (the per-object memo goes with its objects). A pure function's
 * memo is never wrong to keep; the benchmark clears it so that a run does not start with the
 * texts of the run before it.
 */
export function clearPayloadMemo(): void {
  byPayload.clear();
  payloadChars = 0;
}

let enabled = true;

/** Turn both memos off or on: the benchmark reports the engine with every request hashed too. */
export function useIdentityMemo(on: boolean): void {
  enabled = on;
  clearPayloadMemo();
}

/** The digest and identities of a canonical payload, each text hashed once for every server. */
function payloadIds(server: string, payload: string): Ids {
  const fp = fingerprint(payload);
  let bucket = byPayload.get(fp);
  if (bucket)
    for (const e of bucket)
      if (e.payload === payload) {
        identityMemoStats.byPayload++;
        return e.ids;
      }
  identityMemoStats.hashed++;
  const digest = payloadDigest(payload);
  const ids: Ids = { digest, server, id: server + ':' + digest, others: null };
  if (payloadChars + payload.length + ids.id.length > PAYLOAD_CHARS_MAX) {
    byPayload.clear();
    payloadChars = 0;
    bucket = undefined;
  }
  if (!bucket) {
    bucket = [];
    byPayload.set(fp, bucket);
  }
  bucket.push({ payload, ids });
  payloadChars += payload.length + ids.id.length;
  return ids;
}

/** The identity of a text for `server`: made once per server (`server:digest`), then kept. */
function idFor(ids: Ids, server: string): string {
  if (ids.server === server) return ids.id;
  let id = ids.others?.get(server);
  if (id === undefined) {
    id = server + ':' + ids.digest;
    (ids.others ??= new Map()).set(server, id);
    payloadChars += id.length;
  }
  return id;
}

/**
 * The same field set: the same array, or the same names in the same order. Each lane resolves its
 * own config, so two lanes hold equal field sets in two arrays — compared by reference alone, the
 * other lane's presentation of a params object (the same object: servers/request.ts shares it)
 * missed here and canonicalised it again, for the payload memo to answer (a sixth of every
 * request's identity, on the 50-server benchmark).
 */
function sameFields(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `requestIdentity(server, params, opts)`, memoised as above. */
export function memoisedIdentity(server: string, params: unknown, opts: IdentityOptions): string {
  if (!enabled) {
    identityMemoStats.hashed++;
    return identityOfPayload(server, canonicalIdentityPayload(params, opts));
  }
  // A throw (params nested too deep) is not memoised: it is thrown again on every presentation.
  if (typeof params !== 'object' || params === null)
    return idFor(payloadIds(server, canonicalIdentityPayload(params, opts)), server);
  const fields = opts.fields ?? DEFAULT_IDENTITY_FIELDS;
  const canonical = opts.canonicalize !== false;
  let entries = byObject.get(params);
  if (entries !== undefined)
    for (const e of entries)
      if (e.canonical === canonical && sameFields(e.fields, fields)) {
        identityMemoStats.byObject++;
        return idFor(e.ids, server);
      }
  const ids = payloadIds(server, canonicalIdentityPayload(params, opts));
  if (entries === undefined) {
    entries = [];
    byObject.set(params, entries);
  }
  entries.push({ fields, canonical, ids });
  return idFor(ids, server);
}
