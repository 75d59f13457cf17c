/**
 * What a tab remembers about its run so a reload can bring it back (issue #10: reload is a client
 * restart). Kept in sessionStorage, which is per tab and outlives a reload: the run's IndexedDB
 * namespace, a fingerprint of what was loaded, the seed, where the run was (virtual time) and the
 * outside changes applied so far (the engine's timeline actions: edits, restarts, extensions, a
 * person's consent answers) and the fork the run is on, as the share link carries it plus the
 * actions it was made from. A reload re-simulates to that time with those actions (the fork
 * first) and restarts the client there. What is read back is checked like any outside input:
 * a damaged entry is named (its path and what is wrong) and the run starts over.
 */
import type { TimelineAction } from '$lib/sim/engine/engine';
import type { TimelineFork } from '$lib/sim/session/protocol';
import type { TraceEvent } from '$lib/sim/input/trace';

export const RUN_KEY = 'sampling-policy-lab-run';

export interface SavedRun {
  /** The run's namespace in IndexedDB. */
  id: string;
  /** {@link runKey} of what was loaded. */
  key: string;
  /** The seed the run was loaded with (the seed field changes it; the URL does not carry it). */
  seed: number | null;
  /** Virtual time the run had reached (its end included), or null where it began. */
  t: number | null;
  /**
   * On a fork, the actions taken after it (the fork's own are in `fork.base`); after a seek back,
   * those still ahead of the run too (a reload re-applies the ones up to `t`: it would not know
   * of those the run met again since).
   */
  actions: TimelineAction[];
  /** The fork the run is on: the ForkSpec a share link's `&f=` carries, and its base actions. */
  fork: TimelineFork | null;
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
export function runKey(
  data: Record<string, unknown>,
  trace: TraceEvent[] | null,
  link?: unknown
): string {
  const rest = { ...data };
  delete rest.seed;
  // A share link's timeline is part of what was loaded: another link of the scenario is another run.
  const text = JSON.stringify(link === undefined ? [rest, trace] : [rest, trace, link]);
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
  actions: readonly TimelineAction[],
  fork: TimelineFork | null = null
): Record<string, unknown> {
  // A fork's base up to the fork point is the forked run's history too (the fork itself the
  // editors show from the fork: time-travel.svelte.ts); so is each base of a fork of a fork.
  const start = typeof data.start === 'string' ? Date.parse(data.start) : NaN;
  const levels = fork ? [...(fork.parents ?? []), fork] : [];
  const before = levels.flatMap((f) => f.base.filter((a) => !(a.t > start + f.spec.atMs)));
  const edits = [...before, ...actions].filter((a) => a.kind === 'config' || a.kind === 'policy');
  if (edits.length === 0) return data;
  const lanes = structuredClone(data.lanes) as Record<string, Record<string, unknown>>;
  for (const a of edits) {
    if (a.kind === 'config') lanes[a.lane] = { ...lanes[a.lane], client: a.client };
    else if (a.kind === 'policy') lanes[a.lane] = { ...lanes[a.lane], policy: a.policy };
  }
  return { ...data, lanes };
}

/**
 * The `load` command's members that resume `saved` (none: the run starts over). The namespace
 * goes only with the time it belongs to: its decisions are those of time t, and a run handed
 * them at any other clock would replay a future it has not lived (issue #18).
 */
export function resumeOf(saved: SavedRun | null): {
  resume?: string;
  at?: { t: number; actions: TimelineAction[]; fork: TimelineFork | null };
} {
  return saved?.t != null
    ? { resume: saved.id, at: { t: saved.t, actions: saved.actions, fork: saved.fork } }
    : {};
}

function isSaved(v: unknown): v is SavedRun {
  if (!v || typeof v !== 'object') return false;
  const r = v as Partial<SavedRun>;
  return (
    typeof r.id === 'string' &&
    typeof r.key === 'string' &&
    (r.seed === null || typeof r.seed === 'number') &&
    (r.t === null || typeof r.t === 'number')
  );
}

export class RunMemory {
  readonly #kv: () => KeyValue | null;
  #run: SavedRun | null = null;

  /** `kv` may throw or give null (no sessionStorage: a sandboxed frame); nothing is kept then. */
  constructor(kv: () => KeyValue | null) {
    this.#kv = kv;
  }

  /**
   * Why the last `read` found a run it could not resume (a damaged timeline, with its path), or
   * ''. The page says so; the run starts over.
   */
  problem = '';

  /**
   * The tab's run, or null (none, junk in storage, or a timeline that does not check out). The
   * timeline's checker (zod and the policy schemas) loads only when there is a timeline to check:
   * a first visit fetches none of it.
   */
  async read(): Promise<SavedRun | null> {
    this.problem = '';
    let v: unknown;
    try {
      v = JSON.parse(this.#kv()?.getItem(RUN_KEY) ?? 'null') as unknown;
    } catch {
      return null; // junk or no storage: start a new run
    }
    if (!isSaved(v)) return null;
    const r = v as SavedRun & { fork?: unknown };
    const bare = r.t === null && Array.isArray(r.actions) && !r.actions.length && r.fork == null;
    if (bare) return { ...r, actions: [], fork: null };
    const { parseTimeline } = await import('$lib/sim/timeline/actions');
    const timeline = parseTimeline({ t: r.t ?? 0, actions: r.actions, fork: r.fork ?? null }, '$');
    if (!timeline.ok) {
      const e = timeline.errors[0]!;
      this.problem = `The run could not be resumed after the reload: its saved timeline is damaged at ${e.path}: ${e.message}. It starts over.`;
      return null;
    }
    return { ...r, fork: timeline.fork };
  }

  /**
   * Where the run began (virtual ms): its start, or a share link's fork point. A reload there
   * loads it again as it was loaded (a link's timeline ahead of it included).
   */
  #start = -Infinity;

  /** A run was loaded: remember it from where it began (null id: nothing durable to resume). */
  started(id: string | null, key: string, seed: number | null, start = -Infinity): void {
    this.#run = id ? { id, key, seed, t: null, actions: [], fork: null } : null;
    this.#start = start;
    this.#write();
  }

  /**
   * The run is at `t`. A reload resumes it there — at the end too, as a client restart at
   * t = end — except where it began, where it is loaded again in a fresh namespace (null): either
   * way never a fresh clock over decisions the run made later.
   */
  at(t: number | null): void {
    if (!this.#run) return;
    const place = this.#place(t);
    if (this.#run.t === place) return;
    this.#run.t = place;
    this.#write();
  }

  #place(t: number | null): number | null {
    return t !== null && t > this.#start ? t : null;
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

  /**
   * The engine's timeline so far (after a restart, an edit, a seek, a fork, an answer): on a
   * fork, the fork and the actions taken since (the session's `timeline` reply).
   */
  timeline(t: number, actions: TimelineAction[], fork: TimelineFork | null = null): void {
    if (!this.#run) return;
    this.#run.actions = actions;
    this.#run.fork = fork;
    this.#run.t = this.#place(t);
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
