/**
 * The snapshot code (session-snapshots.ts, the codec and the engine's registry) loads on first
 * use, as the parsers do (input/parsers.ts): the worker's first load fetches none of it (issue
 * #24's budget). The worker loads it with the parsers, before the engine first runs or a reload
 * resumes; until then the session neither saves nor restores snapshots (a reload re-simulates).
 */
import type * as Snapshots from './session-snapshots';

export type SnapshotModule = typeof Snapshots;

let loaded: SnapshotModule | null = null;

/** Load the snapshot code (once). */
export async function loadSnapshots(): Promise<SnapshotModule> {
  loaded ??= await import('./session-snapshots');
  return loaded;
}

/** The snapshot code if it has been loaded, else null. */
export function snapshotsLoaded(): SnapshotModule | null {
  return loaded;
}
