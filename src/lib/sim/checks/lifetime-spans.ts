/**
 * The lifetime tracker's spans (lifetimes.ts), flat: a store lifetime, a dialog or an approval is
 * a span of virtual time, and a key holds a few of each.
 */

/**
 * Spans, flat: `from`, `to` (exclusive; Infinity = until something ends it) and `seq` (the audit
 * record's, NaN for none) of each, one after another in a list of numbers. Not an object per
 * span: a span's times are not small integers, so an object of them was three allocations (the
 * object and a box per time) on every dialog and commit, and three objects to keep per span.
 */
export type Spans = number[];
/** Numbers per span in {@link Spans}. */
export const SPAN = 3;
export const seqOf = (x: number): number | null => (Number.isNaN(x) ? null : x);

/** Whether a span of `a` ends after `t` (is open at `t`). */
export function openAt(a: Spans, t: number): boolean {
  for (let i = 1; i < a.length; i += SPAN) if (a[i]! > t) return true;
  return false;
}

/** Ends every span of `a` at `t` at the latest. */
export function endAll(a: Spans, t: number): void {
  for (let i = 1; i < a.length; i += SPAN) a[i] = Math.min(a[i]!, t);
}

/** Whether a span of `a` starts at or after `t`. */
export function startsFrom(a: Spans, t: number): boolean {
  for (let i = 0; i < a.length; i += SPAN) if (a[i]! >= t) return true;
  return false;
}

/** Whether a span of `a` ended at or before `t`. */
export function endedBy(a: Spans, t: number): boolean {
  for (let i = 1; i < a.length; i += SPAN) if (a[i]! <= t) return true;
  return false;
}

/** The spans of `a` that end after `t`, or `a` itself when all do. */
export function keptAfter(a: Spans, t: number): Spans {
  let all = true;
  for (let i = 1; i < a.length; i += SPAN) if (!(a[i]! > t)) all = false;
  if (all) return a;
  const out: Spans = [];
  for (let i = 0; i < a.length; i += SPAN) if (a[i + 1]! > t) out.push(a[i]!, a[i + 1]!, a[i + 2]!);
  return out;
}
