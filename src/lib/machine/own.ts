/**
 * Reading a record keyed by names from outside (names.ts) by own members only. Apart from
 * names.ts, which builds such records with zod: the runtime that reads them (the policy's
 * effective block, in the playground's worker) loads no zod (issue #24).
 */

/** `o[name]` for an own member only: inherited `constructor`/`toString` are never found. */
export function ownValue<V>(o: Readonly<Record<string, V>>, name: string): V | undefined {
  return Object.hasOwn(o, name) ? o[name] : undefined;
}
