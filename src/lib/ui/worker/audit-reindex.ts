/**
 * The audit index built again from the run's log in IndexedDB: a reload's resumed run
 * (`indexResumed`), and the rows a seek forward restored in place did not write (`indexMore`).
 */
import { readRows } from '../../store/audit-chunks';
import type { AuditRecord } from '../../machine/types';
import type { RestoredRows } from '../../sim/session/protocol';
import { auditRows, idbReader } from './audit-feed';
import { auditStore } from './run-storage';

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
    const hi = Math.min(to, k + RESUME_CHUNK);
    const got = await readRows(
      db,
      [run],
      Uint32Array.from({ length: hi - k }, (_, i) => k + i)
    );
    // The rows from k on with no gap: up to the first one not on disk.
    let n = 0;
    while (n < got.length && got[n] !== undefined) n++;
    auditRows.append((n === got.length ? got : got.slice(0, n)) as AuditRecord[], 0);
    if (k + n < hi) break;
  }
  return auditRows.size;
}
