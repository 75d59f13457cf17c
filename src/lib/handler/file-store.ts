/**
 * `fileStore(dir)`: the durable scope on disk, for a handler in Node (issue #20 item 3). Decisions
 * outlive the transport (one partition for every connection of a server, as the lab's durable
 * store) and the process: a new policy object on the same directory — a restarted client — meets
 * the decisions the old one made, with the same TTLs, approvals carried under denials and
 * policy-edit invalidation (a decision made under another policy hash is a miss and is dropped).
 *
 * On disk: `<dir>/decisions.jsonl`, an append-only JSON Lines log. Line 1 is a header naming the
 * format and its version; every later line is one change — `{"put":decision}`,
 * `{"del":[server,identity]}`, `{"drop":server}` (a policy edit to that server) or
 * `{"clear":true}`. Opening the store replays the log into memory; lookups answer from memory.
 *
 * Crash safety, without a library: appends are written at the known end of the good log and
 * `fdatasync`ed before a commit resolves (commits arriving while one is being written are grouped
 * into the next write, one sync for all), so a crash loses at most the decisions not yet
 * acknowledged — never an earlier line. A torn last line (no newline: the crash hit mid-write) is
 * dropped with a warning and cut off. A failed write (disk full) is cut off the same way and
 * rejects the commits it carried; the store goes on. When the log holds many more lines than live
 * decisions it is compacted: a temporary file with one line per decision is written, synced and
 * renamed over the log (rename is atomic), and the directory synced. `write-file-atomic` does the
 * temp-and-rename step but not the append log, the truncation or the directory sync this needs,
 * so the ~40 lines are here.
 *
 * A damaged file — not JSON, another format or version, a record that fails validation — is
 * refused when the store is opened, with an Error naming the file, the line and what is wrong; the
 * file is never rewritten or truncated (only a torn *last* line is cut, which is what a crash
 * leaves). `<dir>/decisions.lock` holds the owning process's id: a second store on the same
 * directory, in this process or another, is refused while that process lives (a lock left by a
 * dead process is taken over). `close()` releases it.
 *
 * Over 400 lines on purpose: reading the file back, appending and compacting share one line
 * format and one lock; a change to one is checked against the others here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoredDecision } from '../machine/types';
import { ConnectionDecisionStore } from '../store/connection-store';
import {
  isStoredDecision,
  toStoredDecision,
  type DecisionStore,
  type LookupResult
} from '../store/decision-store';

export const DECISIONS_FILE = 'decisions.jsonl';
export const LOCK_FILE = 'decisions.lock';
export const FILE_FORMAT = 'sampling-policy-lab/decisions';
export const FILE_VERSION = 1;
const HEADER = JSON.stringify({ format: FILE_FORMAT, version: FILE_VERSION }) + '\n';
/** The one partition of the durable scope (the connection id is ignored). */
const ALL = '*';

export interface FileStoreOptions {
  /** Told about a torn last line dropped on open; default `console.warn`. */
  onWarning?: (message: string) => void;
  /** Told about a failed background write (a lookup's counter); default `console.error`. */
  onError?: (error: Error) => void;
}

/** A store whose file could not be opened or read: names the file (and line) and what is wrong. */
export class FileStoreError extends Error {
  constructor(message: string) {
    super(`fileStore: ${message}`);
    this.name = 'FileStoreError';
  }
}

type Change =
  | { put: StoredDecision }
  | { del: [server: string, identity: string] }
  | { drop: string }
  | { clear: true };

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Why `d` is not a stored decision this build can answer from (null when it is one). */
function decisionProblem(d: unknown): string | null {
  if (!isStoredDecision(d))
    return 'not a stored decision (a field is missing or of the wrong type)';
  if (!Number.isFinite(d.decidedAt)) return 'decidedAt is not a finite number';
  if (d.expiresAt !== null && !Number.isFinite(d.expiresAt))
    return 'expiresAt is not a finite number';
  if (!Number.isSafeInteger(d.represented) || d.represented < 0)
    return 'represented is not a non-negative integer';
  const a = d.approval;
  if (
    a !== undefined &&
    (typeof a !== 'object' ||
      a === null ||
      typeof a.decidedAt !== 'number' ||
      (a.expiresAt !== null && typeof a.expiresAt !== 'number'))
  )
    return 'approval is not { decidedAt, expiresAt }';
  return null;
}

/** One line of the log as a change, or what is wrong with it. */
function parseChange(text: string): Change | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return `not JSON (${errorText(e)})`;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length !== 1)
    return `expected one of put, del, drop, clear; got keys ${keys.join(', ')}`;
  if ('put' in o) {
    const why = decisionProblem(o.put);
    return why ? `put: ${why}` : { put: toStoredDecision(o.put as StoredDecision) };
  }
  if ('del' in o) {
    const d = o.del;
    return Array.isArray(d) && d.length === 2 && d.every((x) => typeof x === 'string')
      ? { del: [d[0] as string, d[1] as string] }
      : 'del: not [server, identity]';
  }
  if ('drop' in o) return typeof o.drop === 'string' ? { drop: o.drop } : 'drop: not a server name';
  if ('clear' in o) return o.clear === true ? { clear: true } : 'clear: not true';
  return `unknown change '${keys[0]}'`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Take `<dir>/decisions.lock` for this process, or throw naming who holds it. */
function takeLock(lockPath: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new FileStoreError(`cannot create the lock ${lockPath}: ${errorText(e)}`);
    }
    const held = Number.parseInt(fs.readFileSync(lockPath, 'utf8').trim(), 10);
    if (Number.isSafeInteger(held) && held > 0 && processAlive(held))
      throw new FileStoreError(
        `${lockPath} is held by ${held === process.pid ? 'another store in this process' : `process ${held}`}: ` +
          'one store per directory (close the other, or give each client its own directory)'
      );
    // Left by a process that is gone: take it over.
    fs.rmSync(lockPath, { force: true });
  }
  throw new FileStoreError(`cannot take the lock ${lockPath}: another process keeps taking it`);
}

interface Pending {
  text: string;
  /** Run once the line is on disk, before the commit resolves. */
  apply?: () => void;
  done?: { resolve: () => void; reject: (e: Error) => void };
}

export class FileDecisionStore implements DecisionStore {
  readonly scope = 'durable' as const;
  readonly file: string;
  readonly #dir: string;
  readonly #lock: string;
  readonly #mem = new ConnectionDecisionStore();
  readonly #onError: (e: Error) => void;
  #fd: number;
  /** Bytes of the log known good (written and synced); appends go here. */
  #size: number;
  /** Lines in the log after the header (compaction compares them with live entries). */
  #lines: number;
  #queue: Pending[] = [];
  #writing: Promise<void> | null = null;
  #closed = false;

  constructor(dir: string, opts: FileStoreOptions = {}) {
    if (typeof dir !== 'string' || dir.length === 0)
      throw new FileStoreError('the directory must be a non-empty path');
    this.#dir = path.resolve(dir);
    this.file = path.join(this.#dir, DECISIONS_FILE);
    this.#lock = path.join(this.#dir, LOCK_FILE);
    this.#onError = opts.onError ?? ((e) => console.error(e.message));
    const warn = opts.onWarning ?? ((m: string) => console.warn(m));
    fs.mkdirSync(this.#dir, { recursive: true });
    takeLock(this.#lock);
    try {
      if (!fs.existsSync(this.file)) this.#writeAtomically(HEADER);
      const { size, lines } = this.#load(warn);
      this.#size = size;
      this.#lines = lines;
      this.#fd = fs.openSync(this.file, 'r+');
      if (fs.fstatSync(this.#fd).size !== size) {
        // Only ever a torn last line (#load refused anything else): cut it so appends follow a
        // whole line.
        fs.ftruncateSync(this.#fd, size);
        fs.fdatasyncSync(this.#fd);
      }
    } catch (e) {
      fs.rmSync(this.#lock, { force: true });
      throw e;
    }
  }

  /** Replay the log into memory; the good length and line count, or throw naming the line. */
  #load(warn: (m: string) => void): { size: number; lines: number } {
    const buf = fs.readFileSync(this.file);
    const where = (line: number) => `${this.file}:${line}`;
    if (buf.length === 0)
      throw new FileStoreError(
        `${where(1)}: the file is empty, not a decisions log (move it away to start afresh)`
      );
    let start = 0;
    let line = 0;
    let lines = 0;
    while (start < buf.length) {
      line += 1;
      const nl = buf.indexOf(0x0a, start);
      if (nl === -1) {
        // No newline: the last write was torn by a crash. It was never acknowledged.
        if (line === 1)
          throw new FileStoreError(`${where(1)}: no complete header line; not a decisions log`);
        warn(
          `fileStore: ${where(line)}: dropped a torn last line (${buf.length - start} bytes; ` +
            'a write cut short by a crash, never acknowledged)'
        );
        return { size: start, lines };
      }
      const text = buf.toString('utf8', start, nl);
      if (line === 1) this.#checkHeader(text, where(1));
      else {
        const change = parseChange(text);
        if (typeof change === 'string')
          throw new FileStoreError(
            `${where(line)}: ${change}; the file is left as it is (move it away or fix the line)`
          );
        this.#apply(change);
        lines += 1;
      }
      start = nl + 1;
    }
    return { size: buf.length, lines };
  }

  #checkHeader(text: string, where: string): void {
    let h: unknown;
    try {
      h = JSON.parse(text);
    } catch {
      throw new FileStoreError(`${where}: not a decisions log (the first line is not JSON)`);
    }
    const o = h as { format?: unknown; version?: unknown } | null;
    if (typeof o !== 'object' || o === null || o.format !== FILE_FORMAT)
      throw new FileStoreError(`${where}: not a decisions log (format is not '${FILE_FORMAT}')`);
    if (o.version !== FILE_VERSION)
      throw new FileStoreError(
        `${where}: version ${JSON.stringify(o.version)} is not ${FILE_VERSION}, the version this build reads`
      );
  }

  #apply(c: Change): void {
    if ('put' in c) this.#mem.commit(ALL, c.put);
    else if ('del' in c) this.#delete(c.del[0], c.del[1]);
    else if ('drop' in c) this.#mem.invalidateServer(c.drop);
    else this.#mem.clear();
  }

  /** Drop one entry from memory (a policy hash of '' never matches: the lookup deletes it). */
  #delete(server: string, identity: string): void {
    this.#mem.lookup(server, ALL, identity, '\u0000never', 0);
  }

  /** Write `text` as the whole log: a temp file, synced, renamed over, the directory synced. */
  #writeAtomically(text: string): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
    try {
      const d = fs.openSync(this.#dir, 'r');
      try {
        fs.fsyncSync(d);
      } finally {
        fs.closeSync(d);
      }
    } catch {
      // Some platforms cannot open a directory for syncing (Windows); the rename is still atomic.
    }
  }

  /** Queue a line; the promise resolves once it is on disk. */
  #append(change: Change, acknowledged: boolean, apply?: () => void): Promise<void> | void {
    if (this.#closed) {
      const e = new FileStoreError(`${this.file} is closed`);
      if (acknowledged) return Promise.reject(e);
      return;
    }
    const item: Pending = { text: JSON.stringify(change) + '\n' };
    if (apply) item.apply = apply;
    let p: Promise<void> | undefined;
    if (acknowledged) p = new Promise<void>((resolve, reject) => (item.done = { resolve, reject }));
    this.#queue.push(item);
    this.#writing ??= this.#drain();
    return p;
  }

  /** Write queued lines in groups: one write and one sync per group. */
  async #drain(): Promise<void> {
    // Let the commits of this turn join the group.
    await Promise.resolve();
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      const data = Buffer.from(batch.map((b) => b.text).join(''), 'utf8');
      try {
        await this.#write(data);
        this.#size += data.length;
        this.#lines += batch.length;
        for (const b of batch) {
          b.apply?.();
          b.done?.resolve();
        }
      } catch (e) {
        const err = new FileStoreError(`could not write ${this.file}: ${errorText(e)}`);
        this.#cutBack();
        if (batch.some((b) => !b.done)) this.#onError(err);
        for (const b of batch) b.done?.reject(err);
      }
      if (this.#lines > 1_000 && this.#lines > 4 * this.#mem.count()) this.#compact();
    }
    this.#writing = null;
  }

  #write(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      fs.write(this.#fd, data, 0, data.length, this.#size, (err, written) => {
        if (err) return reject(err);
        if (written !== data.length) return reject(new Error(`short write (${written} bytes)`));
        fs.fdatasync(this.#fd, (e) => (e ? reject(e) : resolve()));
      });
    });
  }

  /** A write failed part-way: cut the log back to its last whole line so appends can go on. */
  #cutBack(): void {
    try {
      fs.ftruncateSync(this.#fd, this.#size);
    } catch (e) {
      this.#onError(
        new FileStoreError(`could not cut ${this.file} back after a failed write: ${errorText(e)}`)
      );
    }
  }

  /** Rewrite the log as one line per live decision (atomically) and go on appending to it. */
  #compact(): void {
    const entries = this.#mem.entries();
    const text = HEADER + entries.map((d) => JSON.stringify({ put: d }) + '\n').join('');
    try {
      this.#writeAtomically(text);
      const fd = fs.openSync(this.file, 'r+');
      fs.closeSync(this.#fd);
      this.#fd = fd;
      this.#size = Buffer.byteLength(text, 'utf8');
      this.#lines = entries.length;
    } catch (e) {
      // The old log is intact (the rename did not happen); compaction is tried again later.
      this.#onError(new FileStoreError(`could not compact ${this.file}: ${errorText(e)}`));
    }
  }

  lookup(
    server: string,
    _connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): LookupResult | null {
    const before = this.#mem.count();
    const hit = this.#mem.lookup(server, ALL, identity, policyHash, now);
    // The re-presentation count (and an approval taking over from an expired denial) is kept;
    // a decision dropped for another policy must not answer again after a restart either.
    if (hit) void this.#append({ put: hit.decision }, false);
    else if (this.#mem.count() < before) void this.#append({ del: [server, identity] }, false);
    return hit;
  }

  /** Resolves once the decision is on disk (fdatasync); rejects when it could not be written. */
  commit(_connection: string, decision: StoredDecision): Promise<void> {
    if (this.#closed) return Promise.reject(new FileStoreError(`${this.file} is closed`));
    const stored = toStoredDecision(decision);
    // In memory once written: a decision that never reached the disk never answers.
    return this.#append({ put: stored }, true, () => this.#mem.commit(ALL, stored))!;
  }

  async invalidateServer(server: string): Promise<number> {
    const n = this.#mem.invalidateServer(server);
    if (n > 0) await this.#append({ drop: server }, true);
    return n;
  }

  closeConnection(): void {}

  /** Expired entries leave memory; the log needs no line (they are dead on replay too). */
  sweep(now: number): number {
    return this.#mem.sweep(now);
  }

  entries(): StoredDecision[] {
    return this.#mem.entries();
  }

  count(): number {
    return this.#mem.count();
  }

  async clear(): Promise<number> {
    const n = this.#mem.clear();
    await this.#append({ clear: true }, true);
    return n;
  }

  /** Every queued line written. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Write what is queued, close the file and release the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    fs.closeSync(this.#fd);
    fs.rmSync(this.#lock, { force: true });
  }
}

/**
 * A durable decision store in `dir` (created if missing): see the top of this file. Throws a
 * {@link FileStoreError} naming the file and line when the log there is damaged, or when another
 * live process holds the directory.
 */
export function fileStore(dir: string, opts: FileStoreOptions = {}): FileDecisionStore {
  return new FileDecisionStore(dir, opts);
}
