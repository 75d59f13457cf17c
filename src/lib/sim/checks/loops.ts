/**
 * Retry loops, for the "every loop is flagged" guarantee (SPEC §4): an identity *re-presented*
 * `threshold` times within the alert window (the seed's "re-presented forty times in ten
 * minutes": `threshold + 1` presentations) is a retry loop, whether or not a decision is stored
 * for it — transient denials, cost refusals and expired entries count too.
 *
 * Presentations are learnt from audit records, which arrive when a request ends, so a presentation
 * that started earlier but ended later is not counted yet: the count can only fall short, never
 * exceed the truth, and the guarantee never flags a presentation the host was right not to.
 */
import type { AuditRecord } from '../../machine/types';
import { copyable } from '../../machine/clone';
import { ENTRY_BYTES, RETAIN_AT_LEAST, TIMES_COPY_BYTES } from '../../client/presentations';
import { checkpointMemo, sameNumbers, type CheckpointMemo } from '../../store/checkpoint-memo';
import { innerMap } from './requests';

export interface AlertSettings {
  threshold: number;
  windowMs: number;
}

/**
 * Presentations between sweeps at least; at least half the identities held, too, so a sweep (a
 * walk over every identity) costs O(1) a presentation however many there are: live play at 2 lanes
 * × 50 servers holds tens of thousands late in the day, and a sweep every 4,096 was ~2.5 % of the
 * sim worker's time there (bench:profile:worker). A sweep only forgets identities out of every
 * window seen so far, so when it runs changes no count unless a window later grows past twice
 * the longest before (then, as ever, a count can only fall short).
 */
const SWEEP_EVERY = 4096;

/** Whether `inWindow` presentations within the window are a loop under `alert`. */
export function isLoop(inWindow: number, alert: AlertSettings): boolean {
  // The first presentation is not a re-presentation: a loop is `threshold` more after it.
  return inWindow - 1 >= Math.max(1, Math.floor(alert.threshold));
}

export class LoopTracker {
  /**
   * Per lane, per identity: presentation times (most recent `threshold + 1`, at least
   * `RETAIN_AT_LEAST`), ascending. Nested, not keyed by lane and identity together: the record's
   * identity is a string the run holds already, a composed key a new one per record.
   */
  private readonly times = new Map<string, Map<string, number[]>>();
  private since = 0;
  private longestWindow = 0;
  /**
   * Set in an engine checkpoint's copy only (checkpoint-memo.ts): the identities and their times
   * as flat lists, `times` empty. A checkpoint is never run, only copied, and its copy has the
   * maps again.
   */
  private frozen: FrozenLoops | null = null;

  /**
   * Count the presentation `r` under the lane's alert settings; returns how many presentations of
   * its identity fall inside the window ending at it (it included), and whether that is a loop.
   */
  presented(
    lane: string,
    r: AuditRecord,
    alert: AlertSettings
  ): { inWindow: number; loop: boolean } {
    const inWindow = this.count(lane, r, alert);
    return { inWindow, loop: isLoop(inWindow, alert) };
  }

  /** {@link presented}'s count alone (the checker's, for every record: no object). */
  count(lane: string, r: AuditRecord, alert: AlertSettings): number {
    if (this.frozen) frozenLoops();
    const at = r.t - r.durationMs;
    const threshold = Math.max(1, Math.floor(alert.threshold));
    const byIdentity = innerMap(this.times, lane);
    let times = byIdentity.get(r.identity);
    let i = 0;
    if (!times) {
      // A literal of one: `[]` and a push gave the array room for 17 (V8's growth), ~140 bytes
      // for each of the thousands of identities live play presents once.
      times = [at];
      byIdentity.set(r.identity, times);
    } else {
      // Keep the times sorted: records arrive in end order, presentations may start out of order.
      i = times.length;
      while (i > 0 && times[i - 1]! > at) i--;
      if (i === times.length) times.push(at);
      else times.splice(i, 0, at);
    }
    const keep = Math.max(threshold + 1, RETAIN_AT_LEAST);
    const excess = times.length - keep;
    if (excess === 1) {
      times.shift();
      i--;
    } else if (excess > 0) {
      times.splice(0, excess);
      i -= excess;
    }
    // The times at or before `at` are those up to its own (at `i`, when it was kept); those
    // within the window are the last of them (ascending): the first found by bisection.
    let inWindow = 0;
    if (i >= 0) {
      let lo = 0;
      let hi = i + 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (at - times[mid]! < alert.windowMs) hi = mid;
        else lo = mid + 1;
      }
      inWindow = i + 1 - lo;
    }
    this.longestWindow = Math.max(this.longestWindow, alert.windowMs);
    if (++this.since >= SWEEP_EVERY && this.since >= this.held() / 2) this.sweep(r.t);
    return inWindow;
  }

  /** Identities held, all lanes. */
  private held(): number {
    let n = 0;
    for (const byIdentity of this.times.values()) n += byIdentity.size;
    return n;
  }

  /** Roughly what the tracker holds in memory, bytes (engine-size.ts: a checkpoint's budget). */
  approxBytes(): number {
    let n = 0;
    let keys = 0;
    if (this.frozen) {
      keys = this.frozen.keys.length;
      for (const times of this.frozen.times) n += times.length;
    }
    for (const byIdentity of this.times.values()) {
      keys += byIdentity.size;
      for (const times of byIdentity.values()) n += times.length;
    }
    // Its keys are the run's own identities; the entry is counted as a composed key's was.
    return keys * (ENTRY_BYTES + 160) + n * 8;
  }

  /**
   * Forget identities whose last presentation left every window. By `forEach`, not `for…of` over
   * the entries: that made a [key, value] array per identity per sweep — in live play ~10,000
   * identities every 4,096 records, 2 % of all the run allocated (issue #24).
   */
  private sweep(now: number): void {
    this.since = 0;
    const longest = this.longestWindow;
    for (const byIdentity of this.times.values())
      byIdentity.forEach((times, k) => {
        const last = times[times.length - 1];
        if (last === undefined || now - last > 2 * longest) byIdentity.delete(k);
      });
  }
}

// A copy has its own presentation times and sweep counters (its members are TypeScript private,
// not #private, for the generic copier).
/**
 * The tracker as an engine checkpoint holds it (checkpoint-memo.ts): per lane, its identities in
 * the map's order and their times, each list a copy shared with the checkpoints before while it
 * is the same. At 2 lanes × 50 servers two hours in, the tracker holds ~20,000 identities: copied
 * whole, they were a sixth of each checkpoint's copy (11 of 67 ms).
 */
interface FrozenLoops {
  /** Each lane and how many of `keys` are its. */
  readonly lanes: readonly (string | number)[];
  readonly keys: readonly string[];
  readonly times: readonly (readonly number[])[];
}

function frozenLoops(): never {
  throw new Error(
    "an engine checkpoint's loop tracker is never run: copy the checkpoint to run it"
  );
}

const copyTimes = (list: readonly number[]): number[] => list.slice();

function freeze(times: Map<string, Map<string, number[]>>, memo: CheckpointMemo): FrozenLoops {
  let n = 0;
  for (const byIdentity of times.values()) n += byIdentity.size;
  const lanes: (string | number)[] = [];
  const keys = new Array<string>(n);
  const lists = new Array<readonly number[]>(n);
  let i = 0;
  times.forEach((byIdentity, lane) => {
    lanes.push(lane, byIdentity.size);
    byIdentity.forEach((list, key) => {
      keys[i] = key;
      lists[i++] = memo.reuse(list, sameNumbers, copyTimes, TIMES_COPY_BYTES + 8 * list.length);
    });
  });
  return { lanes, keys, times: lists };
}

function thaw(f: FrozenLoops): Map<string, Map<string, number[]>> {
  const out = new Map<string, Map<string, number[]>>();
  let i = 0;
  for (let l = 0; l < f.lanes.length; l += 2) {
    const byIdentity = new Map<string, number[]>();
    out.set(f.lanes[l] as string, byIdentity);
    const end = i + (f.lanes[l + 1] as number);
    for (; i < end; i++) byIdentity.set(f.keys[i]!, f.times[i]!.slice());
  }
  return out;
}

// A copy has its own maps, in the same order. An engine checkpoint's copy holds them frozen
// instead (see FrozenLoops), and a copy of that has its maps again.
copyable(LoopTracker, {
  name: 'loops.LoopTracker',
  fields: {
    times: {
      fresh: (t: LoopTracker, m) => {
        const frozen = t['frozen'];
        if (frozen) return thaw(frozen);
        return checkpointMemo() ? new Map() : m.get(t['times']);
      }
    },
    frozen: {
      fresh: (t: LoopTracker) => {
        const memo = checkpointMemo();
        return t['frozen'] || !memo ? null : freeze(t['times'], memo);
      }
    }
  },
  blank: () => new LoopTracker()
});
