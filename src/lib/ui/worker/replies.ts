/**
 * What the worker tells the page: replies and news (`post`), what is on disk after each group
 * commit, and the run's snapshot saved for a reload.
 */
import type { Reply, WorkerReply } from '../../sim/session/protocol';
import { chartWords, thinningWords } from '../../sim/report/long-run';
import { LANE_IDS } from '../../sim/input/lanes';
import { loadSnapshots } from '../../sim/session/snapshots-loader';
import { thinSeries, type ThinnedSeries } from '../chart-thin';
import { auditReadBackFailed, groupCommit, listenStorage, reopenStorage } from './run-storage';
import { auditRows, heldAudit, takeAudit } from './audit-feed';
import { budgets, reindex, session } from './worker-state';

/**
 * Post replies, each naming the request it answers (`re`; null: news nobody asked for). A live
 * snapshot may go without the audit table's view (`withView` false): the page shows the table's
 * rows a few times a second while playing, and the view is the bulk of a snapshot.
 */
export const post = (replies: Reply[], re: number | null, withView = true) => {
  for (const r of replies) {
    if (r.type === 'snapshot') {
      // The page gets the table's view, never the records themselves.
      takeAudit(r.audit);
      r.audit = [];
      // A reload's index still being built: no view (the table keeps its loading state).
      if (withView && !reindex.building) r.auditView = auditRows.view();
      // What the run thinned to stay within its memory (engine checkpoints: the worker's, so the
      // session's own snapshots stay the same with copies or without), and the charts' points.
      const notes: string[] = [];
      const th = session.engineCheckpoints.thinning;
      if (th) notes.push(thinningWords(th, r.start));
      let chart: ThinnedSeries | null = null;
      for (const id of LANE_IDS) {
        const thin = thinSeries(r.lanes[id].series, budgets.chartPoints);
        r.lanes[id].series = thin.series;
        if (thin.stride > 1) chart = thin;
      }
      if (chart && session.sim)
        notes.push(
          chartWords(chart.stride, session.sim.scenario.sampleMs, chart.fullFrom - r.start)
        );
      const spill = auditRows.indexSpillFailure;
      if (spill)
        notes.push(
          `Long run: the audit table's index could not be written to this browser's storage (${spill}), so all of it is kept in memory (${Math.round(auditRows.memory.indexBytes / 2 ** 20)} MB, 36 bytes a row).`
        );
      if (reindex.waiting && reindex.building)
        notes.push(
          `Waiting for the audit log's index: after the reload it is read back from this browser's storage, and the ${heldAudit().toLocaleString('en-US')} records the run made meanwhile wait in memory until it is built. The run goes on by itself then.`
        );
      if (notes.length) r.longRun = notes;
    }
    self.postMessage({ re, reply: r } satisfies WorkerReply);
  }
};

let lastStorage = '';
/**
 * The page is told what is on disk at most this often. Live play at full speed commits the audit
 * log's rows in ~35 batches a second now that they are written fast, and each told the page
 * (bench:ui: 700 storage posts in 20 s), whose figures were laid out again every time — twice
 * the main thread's time of play. A change within the interval is told at its end.
 */
const STORAGE_POST_MS = 250;
let storageAt = -Infinity;
let storageLater: ReturnType<typeof setTimeout> | null = null;
/** Tell the page what is on disk now, when it changed (after every group commit). */
export function postStorage(): void {
  if (!session.sim) return;
  const wait = storageAt + STORAGE_POST_MS - performance.now();
  if (wait > 0) {
    storageLater ??= setTimeout(() => {
      storageLater = null;
      postStorage();
    }, wait);
    return;
  }
  const view = session.storageView();
  const json = JSON.stringify(view);
  if (json === lastStorage) return;
  lastStorage = json;
  storageAt = performance.now();
  post([{ type: 'storage', ...view }], null);
}

/** The next group commit tells the page what is on disk even if it equals what it was told last. */
export function storageChanged(): void {
  lastStorage = '';
}

/**
 * Group commit: one batch per store after each command or slice, each store on its own (a call
 * while a store is writing makes that store write once more; run-storage.ts), so the lanes'
 * decisions never wait behind the audit log. Resolves when what was queued before the call is
 * written (or storage has failed); the page hears of each store's commit as it settles.
 */
export function flush(): Promise<void> {
  return groupCommit();
}

// Storage taken away from outside is said at once, not at the next group commit.
listenStorage({
  changed() {
    lastStorage = '';
    postStorage();
  },
  auditLost(words) {
    auditRows.markLost(words);
  },
  committed: postStorage
});
auditRows.onMissing = () => auditReadBackFailed();

/** The snapshot code; a failure to load it only means no snapshots (a reload re-simulates). */
export function loadSnapshotsQuietly(): Promise<unknown> {
  return loadSnapshots().catch(() => null);
}

/**
 * The run stopped (a pause, a fast-forward's or the run's end, a command done): save its snapshot
 * for a reload (issue #21; the session saves during long runs by itself). A snapshot is a
 * convenience: whatever goes wrong with it, the run goes on, and a reload re-simulates.
 */
export function saveSnapshot(): void {
  try {
    session.saveSnapshot();
  } catch {
    // The reload re-simulates instead.
  }
}

export async function retryStorage(): Promise<void> {
  if (await reopenStorage()) postStorage();
}
