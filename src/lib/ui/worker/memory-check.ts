/**
 * Whether the run may go on (a fast-forward's next slice, live play's next batch): the audit log's
 * writes far behind, a reload's index not built yet, or too many rows held in memory with nowhere
 * to go.
 */
import type { Reply } from '../../sim/session/protocol';
import { auditCommitAge, currentRun } from './run-storage';
import { auditRows, heldAudit } from './audit-feed';
import { budgets, reindex } from './worker-state';

/**
 * Audit rows the run may be ahead of the disk before a fast-forward waits for the writes (each
 * waits as its record, about 1 KB, held by the audit table until it is on disk anyway; the log
 * encodes it when its chunk is written. On a slow or busy machine a week's run got ever further
 * ahead of IndexedDB, and everything it had not written stayed in memory.) Since the log writes
 * its rows in chunks (store/audit-chunks.ts) live play at full speed rarely reaches it: it waited
 * here 0.2 s of 20 in bench:ui, against 13 s of 20 with one row a record. Live play commits the
 * log every 100 ms (live-play.ts): at 1000× (~43,000 rows a second) that is ~4,300 rows queued
 * plus the batch being written, so the bound is a few times that (~20 MB of records at most).
 */
const MAX_BACKLOG = 20_000;
/**
 * How long a group commit may run while the run goes on adding rows. A commit used to write until
 * the queue was empty, so a fast-forward that never pauses kept one commit going past the write
 * time limit (8 s), and storage was reported failed while it was writing fine: then every later
 * row stayed in memory (a week of the retry storm on a busy machine: all 2.8 million of them).
 * A flush now writes what was queued when it began (write-behind.ts), so only a slow disk keeps
 * one going this long.
 */
const FLUSH_PATIENCE_MS = 2_000;
/**
 * Records a reload's run may make while the audit index is built again in the background (they
 * wait in memory, about 1 KB each, to follow the rows read back; at 12 h the index takes about
 * 3 s, in which fast play or a fast-forward made tens of thousands). At this many the run waits
 * for the index: its clock stands still (the time waited is not owed afterwards, as when a
 * fast-forward has the engine) and it goes on by itself once the index is built, saying so
 * meanwhile. Rather than stop play with a note: the wait ends by itself in seconds, so a user who
 * pressed Play would only have to press it again; rather than drop or re-read records: every row
 * must reach the table once. The `?heldRecords=N` knob lowers it too (tests).
 */
const HOLD_WHILE_INDEXING = 20_000;

/**
 * Whether the run may go on: 'wait' while the audit log's writes are far behind, 'index' while it
 * holds as many records as it may until a reload's index is built (reindex.ts: waitForIndex), a
 * notice to stop on when too many rows are held in memory with nowhere to go, else null.
 */
export function memoryCheck():
  Extract<Reply, { type: 'fastForwardClamped' }> | 'wait' | 'index' | null {
  const { maxHeld } = budgets;
  if (reindex.building && heldAudit() >= Math.min(HOLD_WHILE_INDEXING, maxHeld)) return 'index';
  const log = currentRun()?.audit;
  const failed = !log || log.status().failure !== null;
  if (!failed && log.pendingWrites > MAX_BACKLOG) return 'wait';
  if (!failed && auditCommitAge() > FLUSH_PATIENCE_MS) return 'wait';
  // Not on disk: a failed log's backlog, or (no log at all) every row the table holds.
  const held = log ? log.pendingWrites : auditRows.memory.recordsHeld;
  if (!failed || held < maxHeld) return null;
  const n = held.toLocaleString('en-US');
  return {
    type: 'fastForwardClamped',
    message: log
      ? `Stopped: ${n} audit records are held in memory because the browser's storage is not saving them; going on would fill the tab's memory. Retry storage, then go on.`
      : `Stopped: this run's audit log is kept in memory only (the browser's storage is not available to it) and holds ${n} records; going on would fill the tab's memory. Reset to start again.`,
    extendTo: null
  };
}
