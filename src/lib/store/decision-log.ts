/**
 * How the durable decision store lays its changes out in IndexedDB: a log of group commits. Each
 * commit appends its (already coalesced) changes as records whose value is a string of JSON lines,
 * one line a change, keyed `[...namespace, seq]`.
 *
 * Why a log: in live play almost every request is a new identity (13,809 of 15,839 puts a
 * simulated hour per lane in bench/ui-50-servers.json are first saves), and Chromium's IndexedDB
 * costs about the same per record whatever it holds. One record a decision took the browser's
 * IndexedDB threads ~21 µs of CPU a request at live speed, the log ~9 (`npm run bench:ui`, 11
 * interleaved runs each), and the worker's ~25 µs a request went to ~23; a string is also the
 * cheapest value to clone (scripts/bench-idb-decisions.mjs; the audit log's chunks, audit-chunks.ts,
 * measured the same).
 *
 * A line is one change: a put is the StoredDecision's JSON (an object), a delete
 * `[server, identity]`, a server's invalidation (a policy edit) `[server]`. A clear needs no line:
 * it deletes the namespace's records in its transaction, everything before it being gone anyway.
 *
 * `seq` is a number, so a log key sorts apart from the per-decision keys `[...ns, server,
 * identity]` of the layout before it (a string at ns.length), which a load still reads first:
 * a database the previous build wrote loads the same decisions, with no migration step. Every
 * commit reads the namespace's last seq in its readwrite transaction and appends after it; the
 * transactions of one object store run one at a time, so two tabs of one run interleave whole
 * commits in one order, and a replay in key order sees what each tab did in that order: a
 * server's invalidation removes everything of that server before it, another tab's included.
 *
 * The log is kept bounded by compaction (see {@link needsCompaction}): a commit's transaction
 * reads the namespace, replays it, deletes it and writes the live set back as a fresh log.
 *
 * The replay is pure (no IndexedDB): the storage tests replay what they read from the page with it.
 */
import type { StoredDecision } from '../machine/types';
import { isStoredDecision } from './decision-store';
import { prefixRange, type Namespace } from './idb';

/**
 * Lines a record holds at most. 320 (~96 KB of ~300-character lines) puts a busy commit's records
 * over the ~64 KB past which Chromium stores a value as a file beside its LevelDB, cheaper for
 * its IndexedDB threads than a value inside it (as for the audit log's chunks, audit-chunks.ts):
 * `npm run bench:ui` on a profile on disk, 3 interleaved pairs, those threads 63–66 ms a second of
 * play against 77–83 at 128 lines a record under 60,000 characters.
 */
export const LOG_LINES = 320;
/**
 * Characters a record holds at most (one long line excepted), so a few decisions with long
 * messages do not make one record of megabytes.
 */
export const LOG_CHARS = 240_000;
/** Ops on disk beyond twice the live decisions that wait for compaction (see needsCompaction). */
export const COMPACT_SLACK = 4_096;

/** One change, as the log holds it. */
export type LogOp =
  | { op: 'put'; value: StoredDecision }
  | { op: 'del'; server: string; identity: string }
  | { op: 'server'; server: string };

export function encodePut(d: StoredDecision): string {
  return JSON.stringify(d);
}

export function encodeDel(server: string, identity: string): string {
  return JSON.stringify([server, identity]);
}

export function encodeServer(server: string): string {
  return JSON.stringify([server]);
}

/** A line read back, or null for a damaged one (not JSON, not a decision, not a change). */
export function decodeLine(line: string): LogOp | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (Array.isArray(v)) {
    if (v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string')
      return { op: 'del', server: v[0], identity: v[1] };
    if (v.length === 1 && typeof v[0] === 'string') return { op: 'server', server: v[0] };
    return null;
  }
  return isStoredDecision(v) ? { op: 'put', value: v } : null;
}

/** `lines` as record values: at most LOG_LINES lines and (past the first) LOG_CHARS characters. */
export function packLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  let part: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (part.length > 0 && (part.length >= LOG_LINES || chars + line.length + 1 > LOG_CHARS)) {
      out.push(part.join('\n'));
      part = [];
      chars = 0;
    }
    part.push(line);
    chars += line.length + 1;
  }
  if (part.length > 0) out.push(part.join('\n'));
  return out;
}

/**
 * Whether a commit should compact the log: ops on disk (lines and per-decision records) beyond
 * twice the live decisions plus COMPACT_SLACK. After a compaction the log holds the live set, so
 * at least `live + COMPACT_SLACK` ops are appended before the next: each compaction (reading the
 * ops, writing the live set) is paid for by as many appended ops, and the log never holds more than
 * about three times what it must. Its cost falls on the worker's thread inside one transaction
 * (replaying, about 1.5 µs an op): 42,000 ops holding 16,000 live decisions took ~60 ms
 * (scripts/bench-idb-decisions.mjs, the expiry half); the IndexedDB commit after it runs off that
 * thread.
 */
export function needsCompaction(opsOnDisk: number, live: number): boolean {
  return opsOnDisk > 2 * live + COMPACT_SLACK;
}

/** What a replay of a namespace finds: its decisions (server → identity → decision). */
export class LogReplay {
  readonly servers = new Map<string, Map<string, StoredDecision>>();
  /** Ops read (lines and per-decision records, damaged ones included): what compaction bounds. */
  ops = 0;
  /** Damaged lines or records skipped. */
  damaged = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  apply(o: LogOp): void {
    if (o.op === 'put') {
      let m = this.servers.get(o.value.server);
      if (m === undefined) {
        m = new Map();
        this.servers.set(o.value.server, m);
      }
      if (!m.has(o.value.identity)) this.#size += 1;
      m.set(o.value.identity, o.value);
    } else if (o.op === 'del') {
      const m = this.servers.get(o.server);
      if (m?.delete(o.identity)) {
        this.#size -= 1;
        if (m.size === 0) this.servers.delete(o.server);
      }
    } else {
      this.#size -= this.servers.get(o.server)?.size ?? 0;
      this.servers.delete(o.server);
    }
  }

  /** A log record's value: its lines, in order; a damaged line is skipped, not the rest. */
  applyRecord(value: unknown): void {
    if (typeof value !== 'string') {
      this.ops += 1;
      this.damaged += 1;
      return;
    }
    for (const line of value.split('\n')) {
      if (line === '') continue;
      this.ops += 1;
      const o = decodeLine(line);
      if (o) this.apply(o);
      else this.damaged += 1;
    }
  }

  /** A record of the per-decision layout (the build before the log). */
  applyLegacy(value: unknown): void {
    this.ops += 1;
    if (isStoredDecision(value)) this.apply({ op: 'put', value });
    else this.damaged += 1;
  }

  *decisions(): IterableIterator<StoredDecision> {
    for (const m of this.servers.values()) yield* m.values();
  }

  /** The live set as log lines (what compaction writes). */
  lines(): string[] {
    const out: string[] = [];
    for (const d of this.decisions()) out.push(encodePut(d));
    return out;
  }
}

/** The seq of a log key of `ns`, or null for a key that is not one. */
export function seqOf(ns: Namespace, key: unknown): number | null {
  if (!Array.isArray(key) || key.length !== ns.length + 1) return null;
  const seq: unknown = key[ns.length];
  return typeof seq === 'number' ? seq : null;
}

/** Whether `key` is a per-decision key of `ns` (`[...ns, server, identity]`). */
function isLegacyKey(ns: Namespace, key: unknown): boolean {
  return (
    Array.isArray(key) &&
    key.length === ns.length + 2 &&
    typeof key[ns.length] === 'string' &&
    typeof key[ns.length + 1] === 'string'
  );
}

/**
 * Replay a namespace read as parallel `keys` and `values` (IndexedDB's key order): the
 * per-decision records first (they were written before any log), then the log in seq order.
 * Keys of neither kind (another layout, another namespace's) are not read.
 */
export function replayNamespace(
  ns: Namespace,
  keys: readonly unknown[],
  values: readonly unknown[],
  into = new LogReplay()
): LogReplay {
  const log: [number, unknown][] = [];
  for (let i = 0; i < keys.length; i++) {
    const seq = seqOf(ns, keys[i]);
    if (seq !== null) log.push([seq, values[i]]);
    else if (isLegacyKey(ns, keys[i])) into.applyLegacy(values[i]);
  }
  log.sort((a, b) => a[0] - b[0]);
  for (const [, v] of log) into.applyRecord(v);
  return into;
}

// ───────────── inside a transaction (IndexedDB from here on; the rest above is pure) ─────────────

/** Every log key of `ns`: `[...ns, n]` for any number n (per-decision keys sort after them). */
function logRange(ns: Namespace): IDBKeyRange {
  return IDBKeyRange.bound([...ns, -Infinity], [...ns, Infinity]);
}

/**
 * Wraps a request's callback that places more requests, so that what it throws aborts the
 * transaction with that error (inTransaction's `guard`).
 */
export type Guard = <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => void;
const unguarded: Guard = (fn) => fn;

/** Within a transaction: read and replay the namespace (its log and any per-decision records). */
export function readNamespace(
  s: IDBObjectStore,
  ns: Namespace,
  done: (replay: LogReplay) => void,
  guard: Guard = unguarded
): void {
  const range = prefixRange(ns);
  const keys = s.getAllKeys(range);
  const values = s.getAll(range);
  values.onsuccess = guard(() => done(replayNamespace(ns, keys.result, values.result)));
}

/** Within a transaction: delete every record of the namespace (its log and any older records). */
export function deleteNamespace(s: IDBObjectStore, ns: Namespace): void {
  const all = prefixRange(ns);
  if (all === undefined) s.clear();
  else s.delete(all);
}

/** Put `records` as log records `first`, `first + 1`, … */
function putRecords(s: IDBObjectStore, ns: Namespace, first: number, records: string[]): void {
  for (let i = 0; i < records.length; i++) s.put(records[i], [...ns, first + i]);
}

/** Within a transaction: append `lines` after the namespace's last log record, then `then()`. */
export function appendLog(
  s: IDBObjectStore,
  ns: Namespace,
  lines: readonly string[],
  then: () => void,
  guard: Guard = unguarded
): void {
  if (lines.length === 0) return then();
  const records = packLines(lines);
  const last = s.openKeyCursor(logRange(ns), 'prev');
  last.onsuccess = guard(() => {
    const seq = last.result ? seqOf(ns, last.result.key) : null;
    putRecords(s, ns, seq === null ? 0 : Math.floor(seq) + 1, records);
    then();
  });
}

/**
 * Within a transaction: compaction. Replay the namespace, apply `lines` after it, delete the
 * namespace and write what is live as a fresh log; `then(live)` with how many decisions that is.
 */
export function compactLog(
  s: IDBObjectStore,
  ns: Namespace,
  lines: readonly string[],
  then: (live: number) => void,
  guard: Guard = unguarded
): void {
  readNamespace(
    s,
    ns,
    (replay) => {
      for (const line of lines) {
        const o = decodeLine(line);
        if (o) replay.apply(o);
      }
      deleteNamespace(s, ns);
      putRecords(s, ns, 0, packLines(replay.lines()));
      then(replay.size);
    },
    guard
  );
}
