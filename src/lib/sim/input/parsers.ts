/**
 * What validates with zod, loaded on first use (issue #24): the parsers of a person's own input —
 * a scenario, a reload's or a share link's timeline, a fork, a digest's scenario — and the check
 * that every frame passes the MCP SDK's schemas (sim/checks/conformance.ts). The playground's
 * worker starts without zod: a ready-made scenario loads precompiled (ready-made.ts), and the
 * worker awaits {@link loadParsers} before any command that parses or runs the engine. The
 * session, which is synchronous, takes them from here; Node (vitest's setup file, the scripts
 * that drive a session) loads them first.
 */
import type * as Impl from './parsers-impl';

export type Parsers = typeof Impl;

let loaded: Parsers | null = null;
let loading: Promise<Parsers> | null = null;

/** Load the parsers (once; later calls share the first). */
export function loadParsers(): Promise<Parsers> {
  return (loading ??= import('./parsers-impl').then((m) => (loaded = m)));
}

/** Whether {@link loadParsers} has finished. */
export function parsersLoaded(): boolean {
  return loaded !== null;
}

/**
 * The loaded parsers. Throws before {@link loadParsers} has finished: a caller that reaches here
 * unloaded is a bug (no input may go unvalidated, no frame unchecked), and it says so.
 */
export function parsers(): Parsers {
  if (!loaded) throw new Error('the input parsers and frame checks are not loaded yet');
  return loaded;
}
