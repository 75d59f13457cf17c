/**
 * The worker's side of the audit table (sim.worker.ts routes to it): the session's audit records
 * go into one index of the whole log (`auditRows`), older rows are read back from the run's
 * namespace in IndexedDB (run-storage.ts), a reload's resumed run is indexed again, and the
 * table's questions are answered.
 */
import { inTransaction } from '../../store/idb';
import type { AuditRecord } from '../../machine/types';
import type { AuditView, Command, Reply, RestoredRows } from '../../sim/session/protocol';
import { AuditService, type RecordReader } from './audit-service';
import { indexChunkStore } from './index-chunks';
import { auditStore, currentRun } from './run-storage';

/**
 * The audit index, and what a reload's resume could not find of the log (rows the run had made
 * but that had not reached disk) and what it made again. Kept with the index, so a new index (a
 * new run, a seek back re-simulated into a fresh namespace, which writes every row again)
 * forgets it.
 */
class FeedIndex extends AuditService {
  /** The run's audit rows a reload found missing from disk and could not make again (0: none). */
  lostOnReload = 0;
  /** The rows it found missing and made again by re-simulating the run (null: none). */
  restoredOnReload: RestoredRows | null = null;

  override reset(reader: RecordReader | null): void {
    super.reset(reader);
    this.lostOnReload = 0;
    this.restoredOnReload = null;
  }

  /**
   * A seek back restored in place cuts the log and the table: the rows a reload made again may be
   * gone with it, so its count no longer says what is written.
   */
  override truncate(rows: number): Promise<void> {
    this.restoredOnReload = null;
    return super.truncate(rows);
  }

  override view(): AuditView {
    const v = super.view();
    return {
      ...v,
      ...(this.lostOnReload > 0 ? { lostOnReload: this.lostOnReload } : {}),
      ...(this.restoredOnReload ? { restoredOnReload: this.restoredOnReload } : {})
    };
  }
}

/**
 * The audit table's questions: the whole log as a column index (its full chunks written to
 * IndexedDB, index-chunks.ts), older records read back.
 */
export const auditRows = new FeedIndex({ chunkStore: indexChunkStore });

/** Audit rows appended but not yet on disk (they must stay in memory). */
function auditNotOnDisk(): number {
  const log = currentRun()?.audit;
  return log ? log.pendingWrites : Infinity;
}

/**
 * Records made while a reload's index is being built in the background (`holdAudit`): they
 * follow the rows read back, so they wait and go in after them, in order (null: none held).
 */
let held: AuditRecord[][] | null = null;
/** How many records `held` holds (the worker bounds it: sim.worker.ts). */
let heldCount = 0;

/** Hand the session's new audit records to the audit index. */
export function takeAudit(records: AuditRecord[]): void {
  if (records.length === 0) return;
  if (held) {
    held.push(records);
    heldCount += records.length;
  } else auditRows.append(records, auditNotOnDisk());
}

/** Hold the session's new records until `releaseAudit` (a reload's index is being built). */
export function holdAudit(): void {
  held = [];
  heldCount = 0;
}

/** The records held since `holdAudit` (0: none, or not holding). */
export function heldAudit(): number {
  return heldCount;
}

/** The records held since `holdAudit`, in order; new ones go to the index again. */
export function releaseAudit(): AuditRecord[] {
  const out = (held ?? []).flat();
  held = null;
  heldCount = 0;
  return out;
}

/**
 * Reads log rows back from this run's audit log in IndexedDB: rows appended from `key0` on have
 * keys `[run, key0 + row]`. One read over the key range when the rows are dense, else one get per
 * row, in one transaction either way; a row not there is `undefined` (never a short answer).
 */
export function idbReader(run: string, key0: number): RecordReader {
  return (rows) => {
    const db = auditStore();
    if (!db) return Promise.reject(new Error("the browser's storage is not available"));
    return inTransaction<(AuditRecord | undefined)[]>(db, 'readonly', (s, done) => {
      const n = rows.length;
      if (n === 0) return done([]);
      const lo = rows[0]!;
      const hi = rows[n - 1]!;
      if (hi - lo + 1 <= 4 * n) {
        const range = IDBKeyRange.bound([run, key0 + lo], [run, key0 + hi]);
        const keys = s.getAllKeys(range);
        const values = s.getAll(range);
        values.onsuccess = () => {
          const slot = new Array<AuditRecord | undefined>(hi - lo + 1);
          const all = values.result as AuditRecord[];
          (keys.result as [string, number][]).forEach((k, i) => {
            slot[k[1] - key0 - lo] = all[i];
          });
          done(Array.from(rows, (r) => slot[r - lo]));
        };
        return;
      }
      const out = new Array<AuditRecord | undefined>(n);
      let left = n;
      rows.forEach((r, j) => {
        const req = s.get([run, key0 + r]);
        req.onsuccess = () => {
          out[j] = req.result as AuditRecord | undefined;
          if (--left === 0) done(out);
        };
      });
    });
  };
}

/** Rows read at a time when a reload indexes its run's log again (bounded memory). */
const RESUME_CHUNK = 20_000;

/** What a reload found of its run's audit log: the rows indexed, and the rows not on disk. */
export interface ResumedLog {
  /** Rows 0 … onDisk − 1, read back and indexed (the whole stretch from row 0 with no gap). */
  onDisk: number;
  /**
   * The run's rows after them that were not on disk (writes behind at the reload) and that the
   * reload's re-simulation did not make again.
   */
  lost: number;
}

/**
 * A reload resumed its run at the moment it had reached (issue #10): the audit table shows the
 * rows the run wrote before it, read back from the namespace in chunks into a fresh index (they
 * are on disk; only a window of them stays in memory). The run had made `rows` rows; the group
 * commit can be thousands behind the run, and a reload drops whatever had not reached disk, so
 * the index takes every row from row 0 up to the first one missing and the rest are counted as
 * lost (and said so: the view carries the count) — unless the reload's re-simulation made them
 * again (`restored`: the session wrote the rows the log lacked, from key `restartKey` on, and
 * hands them to the table next, ahead of the restart's own rows, which follow in the log).
 * Null (and nothing indexed) when storage is not there or a read failed.
 */
export async function indexResumed(
  run: string,
  rows: number,
  restartKey?: number,
  restored?: RestoredRows,
  onDiskAtMost = rows
): Promise<ResumedLog | null> {
  if (!auditStore()) return null;
  // Rows below `found` are keys 0 … found − 1; the ones after it are the restart's, from key
  // `restartKey` on. Normally the same numbering (rows land on disk in key order and the log goes
  // on from the count found); not when rows sat on disk past a gap (a database emptied from
  // outside and written again): those are not the table's rows.
  let found = Infinity;
  const low = idbReader(run, 0);
  let high = low;
  auditRows.reset(async (r) => {
    if (high === low) return low(r);
    let i = 0;
    while (i < r.length && r[i]! < found) i++;
    const [a, b] = await Promise.all([low(r.subarray(0, i)), high(r.subarray(i))]);
    return [...a, ...b];
  });
  try {
    // No further than the log held at the reload: built in the background, the index must not
    // take rows the restart writes meanwhile (they reach the table as the session's records).
    const onDisk = await indexPrefix(run, Math.min(rows, onDiskAtMost));
    found = onDisk;
    if (restartKey !== undefined && restartKey !== onDisk)
      high = idbReader(run, restartKey - onDisk);
    // The rows made again sit right after the ones found, in the table as in the log (from key
    // `restartKey`); only a gap before them (rows on disk past a hole) stays lost.
    const remade = restored?.rows ?? 0;
    const lost = Math.max(0, rows - onDisk - remade);
    auditRows.lostOnReload = lost;
    if (remade > 0) auditRows.restoredOnReload = restored!;
    return { onDisk, lost };
  } catch {
    return null;
  }
}

/**
 * A seek forward restored in place from an engine checkpoint (session.ts): the copy wrote no rows,
 * and the rows from the table's last one up to `to` are the timeline's rows already in the log.
 * Read them back in chunks into the index. False when they are not all there (then the table
 * shows what it has, and says no more than it knows).
 */
export async function indexMore(run: string, to: number): Promise<boolean> {
  try {
    return (await indexPrefix(run, to)) >= to;
  } catch {
    return false;
  }
}

/**
 * Index the log's rows from the index's end up to `to` (exclusive), chunk by chunk, stopping at
 * the first row not on disk: the index's size after it (no row is numbered past a gap).
 * Throws when storage is not there or refuses a read.
 */
async function indexPrefix(run: string, to: number): Promise<number> {
  const db = auditStore();
  if (!db) throw new Error("the browser's storage is not available");
  for (let k = auditRows.size; k < to; k += RESUME_CHUNK) {
    const hi = Math.min(to, k + RESUME_CHUNK) - 1;
    const [keys, got] = await inTransaction<[[string, number][], AuditRecord[]]>(
      db,
      'readonly',
      (s, done) => {
        const range = IDBKeyRange.bound([run, k], [run, hi]);
        const keys = s.getAllKeys(range);
        const values = s.getAll(range);
        values.onsuccess = () =>
          done([keys.result as [string, number][], values.result as AuditRecord[]]);
      }
    );
    // Keys come in order: the rows from k on with no gap are the first ones whose key is k + i.
    let n = 0;
    while (n < keys.length && keys[n]![1] === k + n) n++;
    auditRows.append(n === got.length ? got : got.slice(0, n), 0);
    if (k + n <= hi) break;
  }
  return auditRows.size;
}

/** The audit table's questions, each answered with its id. */
export async function answerAudit(
  cmd: Extract<Command, { type: `audit${string}` }>,
  re: number,
  post: (replies: Reply[], re: number) => void,
  flush: () => Promise<void>
): Promise<void> {
  try {
    switch (cmd.type) {
      case 'auditWindow':
        auditRows.window = Math.max(1, Math.floor(cmd.window));
        return;
      case 'auditQuery':
        post(
          [{ type: 'auditView', id: cmd.id, view: await auditRows.setQuery(cmd.id, cmd.query) }],
          re
        );
        return;
      case 'auditRows': {
        const r = await auditRows.rows(cmd.start, cmd.count);
        post([{ type: 'auditRows', id: cmd.id, start: cmd.start, ...r }], re);
        return;
      }
      case 'auditExport': {
        // Everything appended so far should be readable: write it first.
        await flush();
        let last = 0;
        const r = await auditRows.exportFile(cmd.kind, (done, of) => {
          const now = performance.now();
          if (now - last < 100 && done < of) return;
          last = now;
          post([{ type: 'auditExportProgress', id: cmd.id, done, of }], re);
        });
        post([{ type: 'auditExport', id: cmd.id, ok: true, ...r }], re);
        return;
      }
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (cmd.type === 'auditExport')
      post([{ type: 'auditExport', id: cmd.id, ok: false, error: message }], re);
    else if (cmd.type !== 'auditWindow') post([{ type: 'auditError', id: cmd.id, message }], re);
  }
}
