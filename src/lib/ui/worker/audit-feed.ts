/**
 * The worker's side of the audit table (sim.worker.ts routes to it): the session's audit records
 * go into one index of the whole log (`auditRows`), older rows are read back from the run's
 * namespace in IndexedDB (run-storage.ts), and the table's questions are answered. A reload's
 * resumed run is indexed again by audit-reindex.ts.
 */
import { readRows } from '../../store/audit-chunks';
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
 * Reads log rows back from this run's audit log in IndexedDB: rows appended from `key0` on are
 * rows `key0 + row` of the run's namespace, read in one transaction (audit-chunks.ts); a row not
 * there is `undefined` (never a short answer).
 */
export function idbReader(run: string, key0: number): RecordReader {
  return (rows) => {
    const db = auditStore();
    if (!db) return Promise.reject(new Error("the browser's storage is not available"));
    return readRows(db, [run], key0 === 0 ? rows : Array.from(rows, (r) => r + key0));
  };
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
