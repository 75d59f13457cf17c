/**
 * The worker's side of the audit table (sim.worker.ts routes to it): the session's audit records
 * go into one index of the whole log (`auditRows`), older rows are read back from the run's
 * namespace in IndexedDB (run-storage.ts), a reload's resumed run is indexed again, and the
 * table's questions are answered.
 */
import { inTransaction } from '../../store/idb';
import type { AuditRecord } from '../../machine/types';
import type { Command, Reply } from '../../sim/protocol';
import { AuditService, type RecordReader } from './audit-service';
import { indexChunkStore } from './index-chunks';
import { auditStore, currentRun } from './run-storage';

/**
 * The audit table's questions: the whole log as a column index (its full chunks written to
 * IndexedDB, index-chunks.ts), older records read back.
 */
export const auditRows = new AuditService({ chunkStore: indexChunkStore });

/** Audit rows appended but not yet on disk (they must stay in memory). */
function auditNotOnDisk(): number {
  const log = currentRun()?.audit;
  return log ? log.pendingWrites : Infinity;
}

/** Hand the session's new audit records to the audit index. */
export function takeAudit(records: AuditRecord[]): void {
  if (records.length > 0) auditRows.append(records, auditNotOnDisk());
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

/**
 * A reload resumed its run at the moment it had reached (issue #10): the audit table shows the
 * rows the run wrote before it, read back from the namespace in chunks into a fresh index (they
 * are on disk; only a window of them stays in memory). The restart's own rows follow them, as they
 * did on disk. False (and nothing indexed) when the rows on disk are not the whole log from row 0
 * (a write that failed before the reload): the table then starts at the restart, as before.
 */
export async function indexResumed(run: string, rows: number): Promise<boolean> {
  if (!auditStore()) return false;
  auditRows.reset(idbReader(run, 0));
  return indexMore(run, rows);
}

/**
 * A seek forward restored in place from an engine checkpoint (session.ts): the copy wrote no rows,
 * and the rows from the table's last one up to `to` are the timeline's rows already in the log.
 * Read them back in chunks into the index. False when they are not all there (then the table
 * shows what it has, and says no more than it knows).
 */
export async function indexMore(run: string, to: number): Promise<boolean> {
  const db = auditStore();
  if (!db) return false;
  try {
    for (let k = auditRows.size; k < to; k += RESUME_CHUNK) {
      const hi = Math.min(to, k + RESUME_CHUNK) - 1;
      const got = await inTransaction<AuditRecord[]>(db, 'readonly', (s, done) => {
        const req = s.getAll(IDBKeyRange.bound([run, k], [run, hi]));
        req.onsuccess = () => done(req.result as AuditRecord[]);
      });
      if (got.length !== hi - k + 1) throw new Error('a gap in the stored audit log');
      auditRows.append(got, 0);
    }
    return true;
  } catch {
    return false;
  }
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
