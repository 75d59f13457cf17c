/**
 * A request's identity, memoised on its params object: a server that retries sends the same
 * params object again (servers/base.ts), and hashing it again gives the same digest. The identity
 * is a pure function of (server, params value, field set, canonicalisation switch), and a params
 * object is never changed once it was sent — it is the request's frame — so the digest of the
 * first presentation is the digest of every later one. Requests that only look alike (a wire
 * variant, a mutated prompt, a trace's parsed line) are new objects and are hashed afresh.
 *
 * Kept apart from `requestIdentity` on purpose: the benchmark's identity floor calls that one, and
 * must keep measuring the hashing itself.
 */
import { DEFAULT_IDENTITY_FIELDS, requestIdentity, type IdentityOptions } from '../identity';

/** Digests by params object, then by server, field set and switch; the weak map lets them go. */
const memo = new WeakMap<object, Map<string, string>>();
/** A field set's part of the key, by array (a lane's config holds one array for its life). */
const fieldKeys = new WeakMap<readonly string[], string>();

function fieldKey(fields: readonly string[]): string {
  let k = fieldKeys.get(fields);
  if (k === undefined) {
    k = JSON.stringify(fields);
    fieldKeys.set(fields, k);
  }
  return k;
}

/** {@link requestIdentity}, computed once per params object and options. */
export function memoisedIdentity(server: string, params: unknown, opts: IdentityOptions): string {
  if (typeof params !== 'object' || params === null) return requestIdentity(server, params, opts);
  const key = `${opts.canonicalize === false ? 0 : 1}${fieldKey(opts.fields ?? DEFAULT_IDENTITY_FIELDS)}${server}`;
  let byKey = memo.get(params);
  const hit = byKey?.get(key);
  if (hit !== undefined) return hit;
  // A throw (params nested too deep) is not memoised: it is thrown again on every presentation.
  const id = requestIdentity(server, params, opts);
  if (!byKey) {
    byKey = new Map();
    memo.set(params, byKey);
  }
  byKey.set(key, id);
  return id;
}
