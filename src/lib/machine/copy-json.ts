/**
 * The project's one deep-copy helper, for plain JSON data (scenario params, metric counters,
 * offender lists, records about to be stored). JSON semantics on purpose: a copy is what a
 * serialised run or an IndexedDB record will hold anyway (keys whose value is `undefined` are
 * dropped), it is faster than `structuredClone` on the small objects copied per request, and
 * it strips Svelte's state proxies, which `structuredClone` refuses. Not for class instances,
 * Maps, Sets, functions or cycles.
 */
export function copyJson<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
