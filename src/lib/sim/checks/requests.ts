/**
 * Values kept per request in flight, by lane, then connection, then request id: the guard's and
 * the checker's bookkeeping for every request of a run. Nested maps, not one map under a key
 * composed of the three: a composed key is a new string to build and hash on every frame and
 * record, where the lane, the connection and a string id are strings the run holds already (their
 * hashes kept) — live play checks tens of thousands of requests a second (issue #24).
 *
 * An id is keyed as the composed key had it, by its string (`String(id)`): a number id and the
 * same digits as a string are one request. A number is its own key (a Map compares keys as
 * `String` would tell them apart: 0 and -0 alike, NaN itself), and a string that is exactly a
 * number's `String` is keyed as that number — no string made per frame for a number id.
 */

/** A request id as the maps key it. */
export type IdKey = string | number;

/** lane → connection → request id (see {@link idKey}) → value. */
export type ByRequest<V> = Map<string, Map<string, Map<IdKey, V>>>;

/** A request id as the maps key it. */
export function idKey(id: string | number): IdKey {
  if (typeof id === 'number') return id;
  const n = Number(id);
  return String(n) === id ? n : id;
}

/** The map `m` holds under `key`, made (and held) when missing: the step of every nested map here. */
export function innerMap<K, K2, V>(m: Map<K, Map<K2, V>>, key: K): Map<K2, V> {
  let inner = m.get(key);
  if (inner === undefined) {
    inner = new Map();
    m.set(key, inner);
  }
  return inner;
}

/** The map of `lane`'s `connection`'s requests, made when missing. */
export function requestsOf<V>(m: ByRequest<V>, lane: string, connection: string): Map<IdKey, V> {
  return innerMap(innerMap(m, lane), connection);
}

/** The value of one request, if any. */
export function findRequest<V>(
  m: ByRequest<V>,
  lane: string,
  connection: string,
  id: IdKey
): V | undefined {
  return m.get(lane)?.get(connection)?.get(id);
}

/**
 * Drops the connections that hold no request any more (a connection's map is kept while it
 * empties and fills again request after request; a closed connection's would stay for good).
 */
export function dropIdle<V>(m: ByRequest<V>): void {
  for (const byConnection of m.values())
    for (const [connection, byId] of byConnection) if (!byId.size) byConnection.delete(connection);
}

/** How many requests `m` holds. */
export function requestCount<V>(m: ByRequest<V>): number {
  let n = 0;
  for (const byConnection of m.values()) for (const byId of byConnection.values()) n += byId.size;
  return n;
}
