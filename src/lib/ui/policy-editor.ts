/**
 * What the policy editor (PolicyEditor.svelte) needs besides its component: the two lazy loads
 * (Monaco, and the policy parser with zod — neither is in the page's first load) and the pure
 * arithmetic of places in the text, kept here so it is unit-tested.
 */
import type { PolicyError } from '$lib/machine/policy';
import type { MonacoModule } from './monaco';

export type ParsePolicy = (typeof import('$lib/machine/policy'))['parsePolicy'];

/** Memoise a lazy import for every editor on the page; a failed load is forgotten, so opening an
 * editor again retries it (the network may be back). */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () =>
    (loading ??= load().catch((e: unknown) => {
      loading = null;
      throw e;
    }));
}

/** Monaco (see `monaco.ts`), loaded when an editor first opens. */
export const loadMonaco: () => Promise<MonacoModule> = once(() => import('./monaco'));

/** The policy parser (zod and the policy schemas): the worker parses the policies a scenario
 * brings, so the page needs it only when a learner edits one. */
export const loadPolicyParser: () => Promise<ParsePolicy> = once(() =>
  import('$lib/machine/policy').then((m) => m.parsePolicy)
);

/** The text offset of a 1-based line and column, clamped to the text. */
export function offsetOf(s: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = s.indexOf('\n', offset);
    if (next < 0) return s.length;
    offset = next + 1;
  }
  return Math.min(offset + column - 1, s.length);
}

export interface MarkerRange {
  startLineNumber: number;
  startColumn: number;
  endLineNumber: number;
  endColumn: number;
}

/**
 * Where to underline an error in an editor of `lines` lines: its own range, clamped to the text,
 * at least one character wide; an error with no place (a whole-policy problem) underlines the
 * first line.
 */
export function markerRange(
  e: PolicyError,
  lines: number,
  lineMaxColumn: (line: number) => number
): MarkerRange {
  const line = Math.min(Math.max(e.line ?? 1, 1), lines);
  const column = e.line === undefined ? 1 : (e.column ?? 1);
  let endLine = Math.min(e.endLine ?? line, lines);
  let endColumn = e.endColumn ?? column + 1;
  if (e.line === undefined) {
    endLine = line;
    endColumn = lineMaxColumn(line);
  }
  return {
    startLineNumber: line,
    startColumn: column,
    endLineNumber: endLine,
    endColumn: Math.max(endColumn, endLine === line ? column + 1 : 1)
  };
}

export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
