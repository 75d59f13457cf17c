/**
 * What this browser remembers about each lesson, in IndexedDB through idb-keyval: the learner's
 * committed prediction, whether the lesson was completed, and the completed run's numbers and
 * series (the handout prints them). One database of its own, as the decision store and audit
 * log have theirs.
 */
import { createStore, get, set, values, type UseStore } from 'idb-keyval';
import { copyJson } from '$lib/machine/copy-json';
import type { Answer } from '$lib/sim/input/lessons';
import type { LaneCounters, LaneSeries } from '$lib/sim/engine/metrics';
import type { TimelineMark } from '$lib/sim/engine/engine';
import type { LaneId } from '$lib/sim/input/scenario';

export const PROGRESS_DB = 'sampling-lab-lessons';

/** A finished run of a lesson's scenario: what Explain and the handout show. */
export interface LessonResult {
  lanes: Record<LaneId, LaneCounters>;
  series: Record<LaneId, LaneSeries>;
  labels: Record<LaneId, string>;
  start: number;
  now: number;
  /** The run's timeline marks (a restart, an edit); absent in results stored before they were kept. */
  marks?: TimelineMark[];
}

export interface LessonProgress {
  name: string;
  answer?: Answer;
  completed?: boolean;
  result?: LessonResult;
}

export class ProgressStore {
  #store: UseStore | null = null;

  constructor(store?: UseStore) {
    if (store) this.#store = store;
  }

  /** Opened on first use: there is no IndexedDB while the page is prerendered. */
  get #db(): UseStore {
    this.#store ??= createStore(PROGRESS_DB, 'progress');
    return this.#store;
  }

  async get(name: string): Promise<LessonProgress> {
    return (await get<LessonProgress>(name, this.#db)) ?? { name };
  }

  /** Merge `patch` into the lesson's record; returns the record as stored. */
  async update(
    name: string,
    patch: Omit<Partial<LessonProgress>, 'name'>
  ): Promise<LessonProgress> {
    const next = { ...(await this.get(name)), ...patch, name };
    // Svelte state proxies do not structured-clone: store plain data.
    await set(name, copyJson(next), this.#db);
    return next;
  }

  async all(): Promise<LessonProgress[]> {
    return values<LessonProgress>(this.#db);
  }
}
