/**
 * The host's presentation history: how often each request identity was presented recently, for
 * the retry-loop alert (SPEC §4, the seed: an identity *re-presented* 40 times in 10 minutes is a
 * retry loop — the 41st presentation in the window trips it, `represented` 40).
 *
 * It lives beside the decision store, not in it, because the history must outlive the stored
 * entry: a loop answered by transient denials, cost refusals or expired entries is still a loop,
 * and a counter that dies with a 60-second `user.denied` entry never sees 40 of anything. The
 * alert settings are read on every presentation, so a learner's change takes effect at once.
 *
 * Bounded by count, not by time: each identity keeps its most recent `max(threshold + 1, 64)` times
 * and past `maxIdentities` the least recently presented identities are dropped. Nothing is dropped
 * for being older than the window, because the window is the learner's to change mid-run: widened
 * from 1 s to 3 min, the alert must count the presentations of the last 3 min, which a history
 * pruned by the old window would have forgotten (the fuzz found exactly that).
 */
import type { AlertConfig } from '../machine/vocabulary';
import { copyable } from '../machine/clone';
import { checkpointMemo, sameNumbers, type CheckpointMemo } from '../store/checkpoint-memo';

export interface PresentationResult {
  /** Presentations of this identity inside the window, this one included. */
  inWindow: number;
  /**
   * True when the identity has been re-presented at least `threshold` times in the window, this
   * presentation included (`inWindow - 1 >= threshold`; level-triggered).
   */
  alert: boolean;
}

/** An alert config a learner typed can be nonsense: zero, negative or NaN fall back to the SPEC's numbers. */
export function saneAlert(alert: Partial<AlertConfig> | undefined): AlertConfig {
  return { threshold: saneThreshold(alert), windowMs: saneWindow(alert) };
}

/** `saneAlert(alert).threshold`, without the object (read once per presentation). */
function saneThreshold(alert: Partial<AlertConfig> | undefined): number {
  const threshold = alert?.threshold;
  return typeof threshold === 'number' && Number.isFinite(threshold) && threshold >= 1
    ? Math.floor(threshold)
    : 40;
}

/** `saneAlert(alert).windowMs`, without the object. */
function saneWindow(alert: Partial<AlertConfig> | undefined): number {
  const windowMs = alert?.windowMs;
  return typeof windowMs === 'number' && Number.isFinite(windowMs) && windowMs > 0
    ? windowMs
    : 600_000;
}

export const RETAIN_AT_LEAST = 64;

/** A map entry with its array of times, before the times themselves (engine-size.ts). */
export const ENTRY_BYTES = 96;

export class PresentationHistory {
  /**
   * key → presentation times, oldest first; Map order = least recently presented first. An
   * identity presented once holds its one time as a number: most are presented once (a flood of
   * distinct requests, 10,000 of them held, each promoted to the old heap), and an array of one
   * is an object and its store besides.
   */
  private readonly times = new Map<string, number | number[]>();
  /**
   * Where the next identity to drop is: an iterator over `times` that only ever moves to drop
   * one. Every entry it has passed was deleted (dropped, or presented again and so moved to the
   * end), and a Map's iterator skips deleted entries and reaches entries added after it began, so
   * its next key is always the least recently presented. `keys().next()` afresh would walk every
   * deleted slot from the start of the table each time — thousands, under a flood of distinct
   * requests, before the table is next compacted.
   */
  private oldest: Iterator<string> | null = null;
  /**
   * Set in an engine checkpoint's copy only (checkpoint-memo.ts): the history as a flat list of
   * identities and their times, `times` empty. A checkpoint is never run, only copied, and its
   * copy has the map again.
   */
  private frozen: FrozenHistory | null = null;

  constructor(readonly maxIdentities = 10_000) {}

  /** Record one presentation of `key` at `now` under the alert settings current at `now`. */
  record(key: string, now: number, settings: Partial<AlertConfig> | undefined): PresentationResult {
    if (this.frozen) frozenHistory();
    const threshold = saneThreshold(settings);
    const windowMs = saneWindow(settings);
    const held = this.times.get(key);
    let times: number[] | null = null;
    if (held === undefined) this.times.set(key, now);
    else {
      // Moved to the end of the Map's order (least recently presented first). A literal of two
      // for the second time: `[]` and pushes would give the array room for 17 (V8's growth).
      this.times.delete(key);
      if (typeof held === 'number') times = [held, now];
      else {
        times = held;
        times.push(now);
      }
      // The same retention as the loop guarantee's own count (loops.ts), so the two agree.
      const keep = Math.max(threshold + 1, RETAIN_AT_LEAST);
      const excess = times.length - keep;
      // One over (a loop at its cap: every presentation): `shift` moves the array's start in
      // place, where `splice` makes an array of what it removed.
      if (excess === 1) times.shift();
      else if (excess > 0) times.splice(0, excess);
      this.times.set(key, times);
    }
    this.dropOldest();
    let inWindow = 0;
    // Presented for the first time: its one time is now, in any window longer than zero.
    if (times === null) inWindow = windowMs > 0 ? 1 : 0;
    else for (let i = times.length - 1; i >= 0 && now - times[i]! < windowMs; i--) inWindow++;
    return { inWindow, alert: inWindow - 1 >= threshold };
  }

  /** Past `maxIdentities`, the least recently presented identity is forgotten. */
  private dropOldest(): void {
    if (this.times.size > this.maxIdentities) {
      this.oldest ??= this.times.keys();
      let next = this.oldest.next();
      if (next.done) {
        // Not reached (the key just set is live), but an ended iterator stays ended.
        this.oldest = this.times.keys();
        next = this.oldest.next();
      }
      if (!next.done) this.times.delete(next.value);
    }
  }

  /** Identities currently remembered (for the memory bound's tests and the UI). */
  get size(): number {
    return this.frozen ? this.frozen.keys.length : this.times.size;
  }

  clear(): void {
    if (this.frozen) frozenHistory();
    this.times.clear();
    this.oldest = null;
  }

  /** Roughly what this history holds in memory, bytes (engine-size.ts: a checkpoint's budget). */
  approxBytes(): number {
    let n = 0;
    for (const times of this.times.values()) n += typeof times === 'number' ? 1 : times.length;
    return this.times.size * ENTRY_BYTES + n * 8;
  }
}

/**
 * A history as an engine checkpoint holds it (checkpoint-memo.ts): the identities in the map's
 * order and their times, each list a copy shared with the checkpoints before while it is the same.
 */
interface FrozenHistory {
  readonly keys: readonly string[];
  /** A number for an identity presented once (a value: nothing to copy or share). */
  readonly times: readonly (number | readonly number[])[];
}

/** Estimated bytes of one identity's times as a checkpoint holds them: the array beside its numbers. */
export const TIMES_COPY_BYTES = 32;

function frozenHistory(): never {
  throw new Error("an engine checkpoint's history is never run: copy the checkpoint to run it");
}

function freeze(times: Map<string, number | number[]>, memo: CheckpointMemo): FrozenHistory {
  // Sized, then filled (by `forEach`: no [key, value] array per entry): pushed, the two lists of
  // a history of 10,000 identities grew by copies, and the entries were arrays of their own —
  // ~2 MB/s of the sim worker's garbage in live play, where checkpoints are taken several times a
  // second (bench:profile:worker --heap).
  const keys = new Array<string>(times.size);
  const lists = new Array<number | readonly number[]>(times.size);
  let i = 0;
  times.forEach((list, key) => {
    keys[i] = key;
    lists[i++] =
      typeof list === 'number'
        ? list
        : memo.reuse(list, sameNumbers, copyTimes, TIMES_COPY_BYTES + 8 * list.length);
  });
  return { keys, times: lists };
}

const copyTimes = (list: readonly number[]): number[] => list.slice();

function thaw(f: FrozenHistory): Map<string, number | number[]> {
  const out = new Map<string, number | number[]>();
  for (let i = 0; i < f.keys.length; i++) {
    const t = f.times[i]!;
    out.set(f.keys[i]!, typeof t === 'number' ? t : t.slice());
  }
  return out;
}

// A copy has its own history, in the same (least recently presented first) order; where the next
// identity to drop is, it finds again on first use (an iterator over the original's map is not
// the copy's). An engine checkpoint's copy holds it frozen instead (see FrozenHistory), and a copy
// of that has its map again.
copyable(PresentationHistory, {
  name: 'presentations.PresentationHistory',
  fields: {
    oldest: { fresh: () => null },
    times: {
      fresh: (h: PresentationHistory, m) => {
        const frozen = h['frozen'];
        if (frozen) return thaw(frozen);
        return checkpointMemo() ? new Map() : m.get(h['times']);
      }
    },
    frozen: {
      fresh: (h: PresentationHistory) => {
        const memo = checkpointMemo();
        return h['frozen'] || !memo ? null : freeze(h['times'], memo);
      }
    }
  },
  blank: () => new PresentationHistory()
});
