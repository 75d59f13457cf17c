/**
 * What a tab remembers about its run so a reload can bring it back (issue #10: reload is a client
 * restart). Kept in sessionStorage, which is per tab and outlives a reload: the run's IndexedDB
 * namespace, a fingerprint of what was loaded, the seed, where the run was (virtual time) and the
 * outside changes applied so far (the engine's timeline actions: edits, restarts, extensions).
 * A reload re-simulates to that time with those actions and restarts the client there.
 */
import type { TimelineAction } from '$lib/sim/engine';
import type { TraceEvent } from '$lib/sim/trace';

export const RUN_KEY = 'sampling-policy-lab-run';

export interface SavedRun {
  /** The run's namespace in IndexedDB. */
  id: string;
  /** {@link runKey} of what was loaded. */
  key: string;
  /** The seed the run was loaded with (the seed field changes it; the URL does not carry it). */
  seed: number | null;
  /** Virtual time the run had reached, or null at its start or once it has ended. */
  t: number | null;
  actions: TimelineAction[];
}

/** The part of sessionStorage this needs (a test passes a Map-backed one). */
export interface KeyValue {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * A short fingerprint of what was loaded, seed left out (it is kept beside): a reload resumes a
 * run only for the same scenario and trace.
 */
export function runKey(data: Record<string, unknown>, trace: TraceEvent[] | null): string {
  const rest = { ...data };
  delete rest.seed;
  const text = JSON.stringify([rest, trace]);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return `${text.length}:${(h >>> 0).toString(36)}`;
}

/**
 * The scenario as the learner now sees it: `data` with the lane edits among `actions` applied
 * (the editors and the share link show them after a reload as before it).
 */
export function scenarioAfter(
  data: Record<string, unknown>,
  actions: readonly TimelineAction[]
): Record<string, unknown> {
  const edits = actions.filter((a) => a.kind === 'config' || a.kind === 'policy');
  if (edits.length === 0) return data;
  const lanes = structuredClone(data.lanes) as Record<string, Record<string, unknown>>;
  for (const a of edits) {
    if (a.kind === 'config') lanes[a.lane] = { ...lanes[a.lane], client: a.client };
    else if (a.kind === 'policy') lanes[a.lane] = { ...lanes[a.lane], policy: a.policy };
  }
  return { ...data, lanes };
}

function isSaved(v: unknown): v is SavedRun {
  if (!v || typeof v !== 'object') return false;
  const r = v as Partial<SavedRun>;
  return (
    typeof r.id === 'string' &&
    typeof r.key === 'string' &&
    (r.seed === null || typeof r.seed === 'number') &&
    (r.t === null || typeof r.t === 'number') &&
    Array.isArray(r.actions)
  );
}

export class RunMemory {
  readonly #kv: () => KeyValue | null;
  #run: SavedRun | null = null;

  /** `kv` may throw or give null (no sessionStorage: a sandboxed frame); nothing is kept then. */
  constructor(kv: () => KeyValue | null) {
    this.#kv = kv;
  }

  /** The tab's run, or null (none, or junk in storage). */
  read(): SavedRun | null {
    try {
      const v = JSON.parse(this.#kv()?.getItem(RUN_KEY) ?? 'null') as unknown;
      if (isSaved(v)) return v;
    } catch {
      // Junk or no storage: start a new run.
    }
    return null;
  }

  /** A run was loaded: remember it from its start (null id: nothing durable to resume). */
  started(id: string | null, key: string, seed: number | null): void {
    this.#run = id ? { id, key, seed, t: null, actions: [] } : null;
    this.#write();
  }

  /** The run is at `t` (null: at its start, or ended — a reload then starts it over). */
  at(t: number | null): void {
    if (!this.#run || this.#run.t === t) return;
    this.#run.t = t;
    this.#write();
  }

  /**
   * The run went on in a fresh namespace (a seek back or a fork re-simulates into one): a reload
   * resumes that one; where the run is and its timeline follow with the next `timeline`.
   */
  moved(id: string): void {
    if (!this.#run || this.#run.id === id) return;
    this.#run.id = id;
    this.#write();
  }

  /** The engine's timeline so far (after a restart, an edit, a seek, a fork). */
  timeline(t: number, actions: TimelineAction[]): void {
    if (!this.#run) return;
    this.#run.t = t;
    this.#run.actions = actions;
    this.#write();
  }

  #write(): void {
    try {
      const kv = this.#kv();
      if (!kv) return;
      if (this.#run) kv.setItem(RUN_KEY, JSON.stringify(this.#run));
      else kv.removeItem(RUN_KEY);
    } catch {
      // Not resumable after a reload then; the run itself is unaffected.
    }
  }
}
