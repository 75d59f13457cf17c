/**
 * A reload's audit index, built again in the background (issue #21: at 12 h it takes seconds):
 * the run is ready at once and goes on meanwhile, its new records held (audit-feed.ts) to follow
 * the rows read back; what replaces or cuts the index waits for it, and the table's questions are
 * answered once it is built. The log is read back by audit-reindex.ts.
 */
import type { Command } from '../../sim/session/protocol';
import {
  answerAudit,
  auditRows,
  holdAudit,
  idbReader,
  releaseAudit,
  takeAudit
} from './audit-feed';
import { indexResumed, type ResumedLog } from './audit-reindex';
import { flush, post } from './replies';
import { reindex, session } from './worker-state';

/**
 * Commands that replace or cut the index (a new run, a seek, a fork, a client restart, storage
 * tried again): they wait for a reload's to be built.
 */
const AFTER_INDEXING = new Set<Command['type']>([
  'load',
  'seek',
  'fork',
  'restart',
  'retryStorage'
]);
/**
 * Exports asked for while a reload's index was being built: they answer once it is, over the
 * whole log. What replaces or cuts the index (AFTER_INDEXING) waits for them too, so a Reset
 * clicked while one waits still gives the file of the log it was asked of, not a failure.
 */
let exportsWaiting: Promise<unknown> = Promise.resolve();

/** Resolves when `cmd` may run: after a reload's index and the exports waiting on it, if it must. */
export async function indexReadyFor(cmd: Command): Promise<void> {
  if (!AFTER_INDEXING.has(cmd.type)) return;
  if (reindex.building) await reindex.building;
  await exportsWaiting;
}

/**
 * The table's questions. An export takes a while, and a reload's index may still be being built:
 * answer later commands meanwhile (the page's first advance makes the run ready).
 */
export async function routeAudit(
  audit: Extract<Command, { type: `audit${string}` }>,
  id: number
): Promise<void> {
  if (reindex.building) {
    const answered = reindex.building.then(() => answerAudit(audit, id, post, flush));
    if (audit.type === 'auditExport') exportsWaiting = Promise.all([exportsWaiting, answered]);
  } else if (audit.type === 'auditExport') void answerAudit(audit, id, post, flush);
  else await answerAudit(audit, id, post, flush);
}

/**
 * A reload resumed run `run`, which had made `upTo` rows: build its index in the background from
 * the log (audit-reindex.ts: indexResumed), holding the run's new records meanwhile. `key0`: where
 * the reload's own rows start in the log; `restored` of them are the rows it made again (the log
 * lacked them), `saved0` the rows the log counted as on disk before.
 */
export function indexInBackground(
  run: string,
  upTo: number,
  key0: number,
  restored: number,
  saved0: number,
  hasLog: boolean
): void {
  holdAudit();
  reindex.building = indexResumed(
    run,
    upTo,
    Math.min(key0, upTo),
    { rows: restored, savedWhenDone: saved0 + restored },
    key0
  ).then((found) => resumeIndexed(found, hasLog ? idbReader(run, upTo) : null, restored));
}

/**
 * The reload's index is built (`found`; null: storage failed it): the records made meanwhile go
 * in after its rows, and the table is told. A failed read starts the table at the restart, as a
 * load does at once without storage: the rows made again are not its rows.
 */
function resumeIndexed(
  found: ResumedLog | null,
  reader: ReturnType<typeof idbReader> | null,
  restored: number
): void {
  const made = [...releaseAudit(), ...session.drainAudit()];
  reindex.building = null;
  if (!found) {
    auditRows.reset(reader);
    takeAudit(made.slice(restored));
  } else {
    takeAudit(made);
    // The run's row numbers now run ahead of the log's by the rows lost: a restore in place
    // (it cuts and fills the log and the table by the run's numbers) would mix the two, so
    // every seek re-simulates into a fresh namespace instead, which writes every row again.
    if (found.lost > 0) session.setStorage(null);
  }
  const view = auditRows.view();
  post([{ type: 'auditView', id: view.queryId, view }], null);
  // The run waited for the index: the page's last snapshot says so; this one no more.
  if (reindex.waiting) {
    reindex.waiting = false;
    if (session.sim) post([session.snapshot()], null);
  }
}

/**
 * The run holds as many records as it may while a reload's index is built (memory-check.ts):
 * `go` once it is built. The first time, the page is shown the run where it stands, with why it
 * waits (replies.ts), and what it made is written (the rows the index will follow).
 */
export function waitForIndex(re: number | null, go: () => void): void {
  const built = reindex.building;
  if (!built) return go();
  if (!reindex.waiting) {
    reindex.waiting = true;
    post([session.snapshot()], re);
    void flush();
  }
  void built.then(go, go);
}
