/**
 * Store lifetimes, for the "one consent dialog per identity per store lifetime" guarantee.
 *
 * A lifetime is kept per (lane, scope key, identity): the scope key is the connection for a
 * connection-scoped store (so a reconnect starts a new lifetime, which is the lesson) and one key
 * for a durable store. Within it, a consent dialog is a repeat when it starts
 * - while another presentation of the identity that showed a dialog is still in flight (it should
 *   have joined that evaluation), or
 * - while a decision stored for the identity is live (the lookup should have answered it).
 * A lifetime ends when the stored decision expires, is overwritten by a shorter one, or is
 * dropped by a policy edit to its server, a clear, or a new store (a change of scope). A dialog
 * whose answer was not stored (a timeout, or allowed verdicts not kept) ends its lifetime when its
 * request ends: asking again afterwards is legitimate.
 *
 * Over 400 lines on purpose: the tracker's changes from store events, dialogs and records, its
 * prune and its copy all work on the same key states and their ownership (a state is copied before
 * a tracker that does not own it changes it); split, each part would reach into the others'
 * private maps. The span arithmetic, which needs none of that, is lifetime-spans.ts.
 */
import type { AuditRecord } from '../../machine/types';
import type { StoreScope } from '../../machine/vocabulary';
import { copyable } from '../../machine/clone';
import { checkpointMemo } from '../../store/checkpoint-memo';
import type { StoreEvent } from '../engine/store-tap';
import { innerMap } from './requests';
import {
  SPAN,
  endAll,
  endedBy,
  keptAfter,
  openAt,
  seqOf,
  startsFrom,
  type Spans
} from './lifetime-spans';

interface KeyState {
  lane: string;
  /** The connection for a connection-scoped store, `*` for a durable one. */
  scopeKey: string;
  server: string;
  /** The `mine` token of the tracker that made or copied it: only that tracker changes it. */
  owner: object;
  stored: Spans;
  dialogs: Spans;
  /**
   * When the person's approval of the identity stands: from the dialog that approved it (in a
   * lane that keeps approvals) until its TTL, a policy edit, a clear or a new store — and not
   * ended by a later denial about *when* (rate, budget, deadline), which must carry it. A dialog
   * inside one is the person asked again about a request they allowed.
   */
  approvals: Spans;
}

/** Why a dialog was a repeat. */
export type Repeat =
  | { kind: 'in-flight'; other: number | null; since: number }
  | { kind: 'stored'; since: number }
  | { kind: 'approved'; since: number };

export function lifetimeBroken(r: Repeat): string {
  const since = new Date(r.since).toISOString();
  switch (r.kind) {
    case 'in-flight':
      return `a second consent dialog while dialog${r.other !== null ? ` (audit seq ${r.other})` : ''} from ${since} was still in flight`;
    case 'stored':
      return `a consent dialog while the decision stored at ${since} was live`;
    case 'approved':
      return `a consent dialog for a request the person approved at ${since} ("do not ask again" was lost)`;
  }
}

const PRUNE_EVERY = 4096;

/** Memory of a key's state (map entry, record, its two arrays; the key string is shared). */
const KEY_BYTES = 200;
/**
 * Memory of one span, as the checkpoints' budget counts it (calibrated when a span was an object
 * of three numbers; kept so that a checkpoint is taken when it was).
 */
const SPAN_BYTES = 72;
/**
 * Memory of a state made or copied since the last checkpoint, as the checkpoints hold it: the
 * record, its three arrays and their spans (calibrated: engine-size.ts).
 */
const STATE_COPY_BYTES = 700;

/** Key states by lane, then scope key, then identity. */
type Keys = Map<string, Map<string, Map<string, KeyState>>>;

/** Lifetime ends of one lane: all of its servers', and one server's. */
interface LaneEnds {
  all: number[];
  byServer: Map<string, number[]>;
}

export class LifetimeTracker {
  private readonly scope = new Map<string, StoreScope>();
  /**
   * The lifetimes by key: lane, then scope key, then identity (nested, not one key composed of
   * the three: a new string per dialog and commit, where these are the run's own). A copy (an
   * engine checkpoint's) shares the key states with the tracker it was taken from, and each
   * copies a state before it first changes it (`own`): most keys do not change between two
   * checkpoints, and a run holds dozens of checkpoints, so the spans of a long run (a decision
   * that never expires keeps its span) are held once, not once per checkpoint.
   */
  private keys: Keys = new Map();
  /**
   * This tracker's token, held (`owner`) by the key states it made or copied since it was last
   * copied: only these it changes. A token, not a WeakSet of the states: a weak collection of
   * every key of a run cost a hash lookup per dialog and commit, and the garbage collector's
   * work on its entries (a third of the tracker's time in live play).
   */
  private mine: object = {};
  /** How many those are (engine-size.ts: what the next checkpoint holds that the last did not). */
  private made = 0;
  /**
   * Set in an engine checkpoint's copy only (checkpoint-memo.ts): the identities and their
   * (shared) states as one flat list, `keys` empty (a state names its lane and scope key). A
   * checkpoint is never run, only copied, and its copy has the maps again.
   */
  private frozen: (string | KeyState)[] | null = null;
  /**
   * Per lane and server: the policy hashes its commits carried since the last edit, and those an
   * edit made stale. A request decided under the old policy may commit after the edit; the store
   * never answers from that entry (its hash is stale), so it starts no lifetime.
   */
  private readonly hashes = new Map<
    string,
    Map<string, { current: Set<string>; stale: Set<string> }>
  >();
  /**
   * When lifetimes ended, per lane, for all its servers and per server: a dialog learnt of later
   * (its record arrives when its request ends) that was open across one of these ended its
   * lifetime there too.
   */
  private readonly ends = new Map<string, LaneEnds>();
  private longest = 0;
  private since = 0;

  /** The state of `identity` in `states` (`s`), this tracker's own to change: copied first if it is shared. */
  private own(states: Map<string, KeyState>, identity: string, s: KeyState): KeyState {
    if (s.owner === this.mine) return s;
    const c: KeyState = {
      lane: s.lane,
      scopeKey: s.scopeKey,
      server: s.server,
      owner: this.mine,
      stored: s.stored.slice(),
      dialogs: s.dialogs.slice(),
      approvals: s.approvals.slice()
    };
    this.made++;
    states.set(identity, c);
    return c;
  }

  /** The state of a key, to change. */
  private state(lane: string, scopeKey: string, identity: string, server: string): KeyState {
    const states = innerMap(innerMap(this.keys, lane), scopeKey);
    const s = states.get(identity);
    if (s) return this.own(states, identity, s);
    const made: KeyState = {
      lane,
      scopeKey,
      server,
      owner: this.mine,
      stored: [],
      dialogs: [],
      approvals: []
    };
    this.made++;
    states.set(identity, made);
    return made;
  }

  private hashesOf(lane: string, server: string) {
    const byServer = innerMap(this.hashes, lane);
    let h = byServer.get(server);
    if (!h) {
      h = { current: new Set(), stale: new Set() };
      byServer.set(server, h);
    }
    return h;
  }

  /** How many keys the tracker holds. */
  private keyCount(): number {
    let n = 0;
    for (const byScope of this.keys.values())
      for (const states of byScope.values()) n += states.size;
    return n;
  }

  /** End every lifetime of the lane (or of one server in it) at `t`. */
  private end(lane: string, t: number, server?: string): void {
    let ends = this.ends.get(lane);
    if (!ends) {
      ends = { all: [], byServer: new Map() };
      this.ends.set(lane, ends);
    }
    if (server === undefined) ends.all.push(t);
    else {
      const of = ends.byServer.get(server);
      if (of) of.push(t);
      else ends.byServer.set(server, [t]);
    }
    for (const states of this.keys.get(lane)?.values() ?? [])
      for (const [identity, shared] of states) {
        if (server !== undefined && shared.server !== server) continue;
        // A state with no span still open is left as it is (and shared, when it is).
        if (!openAt(shared.stored, t) && !openAt(shared.dialogs, t) && !openAt(shared.approvals, t))
          continue;
        const s = this.own(states, identity, shared);
        endAll(s.stored, t);
        endAll(s.dialogs, t);
        endAll(s.approvals, t);
      }
  }

  /**
   * `currentHash`: the server's policy hash at `t`, when known. A commit under another hash was
   * decided before a policy edit (found by the time-travel fuzz: an edit before the old policy's
   * first commit left that hash unknown to `hashes`), and no lookup will answer from it.
   */
  store(lane: string, t: number, e: StoreEvent, currentHash?: string): void {
    if (this.frozen) frozenTracker();
    switch (e.type) {
      case 'opened':
        this.scope.set(lane, e.scope);
        this.end(lane, t);
        break;
      case 'commit': {
        const d = e.decision;
        const h = this.hashesOf(lane, d.server);
        if (h.stale.has(d.policyHash)) break;
        if (currentHash !== undefined && d.policyHash !== currentHash) break;
        h.current.add(d.policyHash);
        const scopeKey = e.scope === 'durable' ? '*' : e.connection;
        const s = this.state(lane, scopeKey, d.identity, d.server);
        // A commit replaces the entry: the one before it answers no more lookups. A denial that
        // carries an approval answers (as the approval) until that expires.
        endAll(s.stored, t);
        const end = (x: number | null) => x ?? Infinity;
        const to = d.approval
          ? Math.max(end(d.expiresAt), end(d.approval.expiresAt))
          : end(d.expiresAt);
        s.stored.push(t, to, NaN);
        if (d.verdict === 'allowed') {
          s.approvals.push(t, end(d.expiresAt), NaN);
        } else if (d.approval) {
          // The denial carries the approval: it stands until its own expiry (the spans open
          // now last until then; none open: one from when it was given).
          const until = end(d.approval.expiresAt);
          const a = s.approvals;
          let open = false;
          for (let i = 1; i < a.length; i += SPAN)
            if (a[i]! > t) {
              a[i] = until;
              open = true;
            }
          if (!open) a.push(Math.min(t, d.approval.decidedAt), until, NaN);
        } else if (d.reason === 'user.denied') {
          // The person's own "no" replaces their earlier "yes".
          endAll(s.approvals, t);
        }
        break;
      }
      case 'invalidate': {
        const h = this.hashesOf(lane, e.server);
        for (const x of h.current) h.stale.add(x);
        h.current.clear();
        this.end(lane, t, e.server);
        break;
      }
      case 'clear':
        this.end(lane, t);
        break;
      case 'close':
        // A closed connection's key is never used again (connection ids are not reused), so its
        // lifetime ends by itself; nothing to scan.
        break;
    }
  }

  /**
   * A presentation that showed a consent dialog ended (its audit record): is the dialog a repeat
   * within a store lifetime? Unknown scope (no store was reported for the lane): not judged.
   */
  dialog(lane: string, r: AuditRecord, keepsApprovals = false): Repeat | null {
    if (this.frozen) frozenTracker();
    const scope = this.scope.get(lane);
    if (!scope) return null;
    const from = r.t - r.durationMs;
    let to = Math.max(r.t, from + 1);
    // A lifetime that ended while this dialog was open (a policy edit, a clear, a new store).
    const ends = this.ends.get(lane);
    if (ends) {
      for (const t of ends.all) if (t > from && t < to) to = t;
      const ofServer = ends.byServer.get(r.server);
      if (ofServer) for (const t of ofServer) if (t > from && t < to) to = t;
    }
    const s = this.state(lane, scope === 'durable' ? '*' : r.connection, r.identity, r.server);
    let repeat: Repeat | null = null;
    const { stored, approvals, dialogs } = s;
    for (let i = 0; i < stored.length; i += SPAN)
      if (stored[i]! < from && from < stored[i + 1]!)
        repeat = { kind: 'stored', since: stored[i]! };
    for (let i = 0; i < approvals.length; i += SPAN)
      if (approvals[i]! < from && from < approvals[i + 1]!)
        repeat = { kind: 'approved', since: approvals[i]! };
    for (let i = 0; i < dialogs.length; i += SPAN)
      if (dialogs[i]! < to && from < dialogs[i + 1]!)
        repeat = { kind: 'in-flight', other: seqOf(dialogs[i + 2]!), since: dialogs[i]! };
    s.dialogs.push(from, to, r.seq ?? NaN);
    // Approved in a lane that keeps approvals, and no commit during the request recorded the
    // approval (an allowed entry, or a denial carrying it): the approval was lost, and stands
    // here from the answer on, so a later dialog shows it. A request that ended in an internal
    // error (a crash, a cancel) stores nothing by design, and starts nothing.
    if (
      keepsApprovals &&
      r.consent === 'approved' &&
      r.outcome !== 'provider_error' &&
      !startsFrom(s.approvals, from)
    )
      s.approvals.push(r.t, Infinity, r.seq ?? NaN);
    this.longest = Math.max(this.longest, r.durationMs);
    if (++this.since >= PRUNE_EVERY) this.prune(r.t);
    return repeat;
  }

  /**
   * A copy is being made (its rules below): from now on the key states are shared, and neither
   * tracker changes one without copying it first (`own`): each has a new token. Returns the
   * copy's.
   */
  private shareKeys(): object {
    this.mine = {};
    this.made = 0;
    return {};
  }

  /**
   * Roughly what a checkpoint of the tracker taken now holds that the one before does not, bytes
   * (engine-size.ts): its list of the keys, and the states made or changed since the last copy —
   * the others it shares.
   */
  checkpointBytes(): number {
    // A tracker decoded from a snapshot of an older build has no count (NaN once counted on).
    const made = this.made || 0;
    return this.keyCount() * 16 + made * STATE_COPY_BYTES + this.endCount() * 8;
  }

  /** How many lifetime ends the tracker holds. */
  private endCount(): number {
    let n = 0;
    for (const e of this.ends.values()) {
      n += e.all.length;
      for (const of of e.byServer.values()) n += of.length;
    }
    return n;
  }

  /**
   * Roughly what the tracker holds in memory, bytes (engine-size.ts: a checkpoint's budget). A
   * stored span that never expires stays as long as the run: this is one of the parts of an engine
   * copy that grows with a long run.
   */
  approxBytes(): number {
    let spans = 0;
    let keys = 0;
    for (const byScope of this.keys.values())
      for (const states of byScope.values()) {
        keys += states.size;
        for (const s of states.values()) spans += (s.stored.length + s.dialogs.length) / SPAN;
      }
    return keys * KEY_BYTES + spans * SPAN_BYTES + this.endCount() * 8;
  }

  /** Forget spans no future dialog can start inside (dialogs are at most `longest` long). */
  private prune(now: number): void {
    this.since = 0;
    const horizon = now - 2 * this.longest - 1;
    // By `forEach`, not `for…of` over the entries: that made a [key, value] array per key per
    // prune, and live play holds tens of thousands of keys (issue #24).
    for (const byScope of this.keys.values())
      for (const states of byScope.values())
        states.forEach((shared, identity) => {
          // A state with nothing to forget is left as it is (and shared, when it is).
          const empty = !shared.stored.length && !shared.dialogs.length && !shared.approvals.length;
          if (
            !empty &&
            !endedBy(shared.stored, horizon) &&
            !endedBy(shared.dialogs, horizon) &&
            !endedBy(shared.approvals, horizon)
          )
            return;
          const s = this.own(states, identity, shared);
          // A list with nothing to drop is kept as it is.
          s.stored = keptAfter(s.stored, horizon);
          s.dialogs = keptAfter(s.dialogs, horizon);
          s.approvals = keptAfter(s.approvals, horizon);
          if (!s.stored.length && !s.dialogs.length && !s.approvals.length) states.delete(identity);
        });
    const keptEnds = (ends: number[]) => ends.filter((t) => t > horizon);
    for (const [lane, e] of this.ends) {
      e.all = keptEnds(e.all);
      for (const [server, of] of e.byServer) {
        const k = keptEnds(of);
        if (k.length) e.byServer.set(server, k);
        else e.byServer.delete(server);
      }
      if (!e.all.length && !e.byServer.size) this.ends.delete(lane);
    }
  }
}

function frozenTracker(): never {
  throw new Error(
    "an engine checkpoint's invariants are never run: copy the checkpoint to run them"
  );
}

// A copy shares the key states (a new map of the same ones) until either tracker changes one:
// copying makes both copy-on-write (`shareKeys`). Its scopes, hashes and ends are its own. An
// engine checkpoint's copy holds the keys and states as a flat list instead (`frozen`: half the
// memory of a map), and a copy of that has its map again.
copyable(LifetimeTracker, {
  name: 'lifetimes.LifetimeTracker',
  fields: {
    keys: {
      fresh: (t: LifetimeTracker) => {
        const frozen = t['frozen'];
        const keys: Keys = new Map();
        if (frozen) {
          for (let i = 0; i < frozen.length; i += 2) {
            const s = frozen[i + 1] as KeyState;
            let byScope = keys.get(s.lane);
            if (!byScope) keys.set(s.lane, (byScope = new Map()));
            let states = byScope.get(s.scopeKey);
            if (!states) byScope.set(s.scopeKey, (states = new Map()));
            states.set(frozen[i] as string, s);
          }
          return keys;
        }
        if (checkpointMemo()) return keys;
        for (const [lane, byScope] of t['keys']) {
          const c = new Map<string, Map<string, KeyState>>();
          for (const [scopeKey, states] of byScope) c.set(scopeKey, new Map(states));
          keys.set(lane, c);
        }
        return keys;
      }
    },
    mine: { fresh: (t: LifetimeTracker) => t['shareKeys']() },
    made: { fresh: () => 0 },
    frozen: {
      fresh: (t: LifetimeTracker) => {
        if (t['frozen'] || !checkpointMemo()) return null;
        // Sized first, then filled: pushed, a list of a live run's tens of thousands of keys grew
        // by copies to about twice its size, ~4 MB/s of the sim worker's garbage in live play
        // (bench:profile:worker --heap: checkpoints are taken several times a second there).
        let n = 0;
        for (const byScope of t['keys'].values())
          for (const states of byScope.values()) n += 2 * states.size;
        const flat = new Array<string | KeyState>(n);
        let i = 0;
        for (const byScope of t['keys'].values())
          for (const states of byScope.values())
            states.forEach((s, k) => {
              flat[i++] = k;
              flat[i++] = s;
            });
        return flat;
      }
    }
  },
  blank: () => new LifetimeTracker()
});
