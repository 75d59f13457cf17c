/// <reference lib="webworker" />
/**
 * The simulation's Web Worker: the engine runs here, off the main thread, so a fast-forward of a
 * simulated day never freezes the page. Commands come in, replies go out (see sim/session/protocol.ts).
 *
 * This file is the entry: message routing, the command queue, the fast-forward pump and live
 * play. Each run's IndexedDB namespace (opening, locks, pruning, group commit) is run-storage.ts;
 * the audit table's index, reads back and questions are audit-feed.ts.
 */
import type { Command, Reply, WorkerReply, WorkerRequest } from '../../sim/session/protocol';
import { Session } from '../../sim/session/session';
import { chartWords, thinningWords } from '../../sim/report/long-run';
import { LANE_IDS } from '../../sim/input/lanes';
import { loadParsers, parsersLoaded } from '../../sim/input/parsers';
import { loadSnapshots } from '../../sim/session/snapshots-loader';
import { prepareReadyMade } from '../../sim/input/ready-made';
import { MAX_CHART_POINTS, thinSeries, type ThinnedSeries } from '../chart-thin';
import { LivePacer, isLiveCommand, type LiveCommand, type LiveRequest } from './live';
import {
  auditCommitAge,
  auditCommitted,
  auditReadBackFailed,
  currentRun,
  deleteLegacyDbs,
  flushRun,
  groupCommit,
  listenStorage,
  openDbs,
  reopenStorage,
  startRun
} from './run-storage';
import {
  answerAudit,
  auditRows,
  heldAudit,
  holdAudit,
  idbReader,
  indexMore,
  indexResumed,
  releaseAudit,
  takeAudit,
  type ResumedLog
} from './audit-feed';
import type { RecordReader } from './audit-service';

const session = new Session();
// A seek back or a fork re-simulates into a fresh namespace and shows the branch's own audit rows.
session.replayAudit = true;

/**
 * Post replies, each naming the request it answers (`re`; null: news nobody asked for). A live
 * snapshot may go without the audit table's view (`withView` false): the page shows the table's
 * rows a few times a second while playing, and the view is the bulk of a snapshot.
 */
const post = (replies: Reply[], re: number | null, withView = true) => {
  for (const r of replies) {
    if (r.type === 'snapshot') {
      // The page gets the table's view, never the records themselves.
      takeAudit(r.audit);
      r.audit = [];
      // A reload's index still being built: no view (the table keeps its loading state).
      if (withView && !indexing) r.auditView = auditRows.view();
      // What the run thinned to stay within its memory (engine checkpoints: the worker's, so the
      // session's own snapshots stay the same with copies or without), and the charts' points.
      const notes: string[] = [];
      const th = session.engineCheckpoints.thinning;
      if (th) notes.push(thinningWords(th, r.start));
      let chart: ThinnedSeries | null = null;
      for (const id of LANE_IDS) {
        const thin = thinSeries(r.lanes[id].series, chartPoints);
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
      if (waitingForIndex && indexing)
        notes.push(
          `Waiting for the audit log's index: after the reload it is read back from this browser's storage, and the ${heldAudit().toLocaleString('en-US')} records the run made meanwhile wait in memory until it is built. The run goes on by itself then.`
        );
      if (notes.length) r.longRun = notes;
    }
    self.postMessage({ re, reply: r } satisfies WorkerReply);
  }
};

let lastStorage = '';
/** Tell the page what is on disk now, when it changed (after every group commit). */
function postStorage(): void {
  if (!session.sim) return;
  const view = session.storageView();
  const json = JSON.stringify(view);
  if (json === lastStorage) return;
  lastStorage = json;
  post([{ type: 'storage', ...view }], null);
}

/**
 * Group commit: one batch per store after each command or slice, each store on its own (a call
 * while a store is writing makes that store write once more; run-storage.ts), so the lanes'
 * decisions never wait behind the audit log. Resolves when what was queued before the call is
 * written (or storage has failed); the page hears of each store's commit as it settles.
 */
function flush(): Promise<void> {
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
function loadSnapshotsQuietly(): Promise<unknown> {
  return loadSnapshots().catch(() => null);
}

/**
 * The run stopped (a pause, a fast-forward's or the run's end, a command done): save its snapshot
 * for a reload (issue #21; the session saves during long runs by itself). A snapshot is a
 * convenience: whatever goes wrong with it, the run goes on, and a reload re-simulates.
 */
function saveSnapshot(): void {
  try {
    session.saveSnapshot();
  } catch {
    // The reload re-simulates instead.
  }
}

async function retryStorage(): Promise<void> {
  if (await reopenStorage()) postStorage();
}

/**
 * Events per slice, adapted so a slice takes about SLICE_MS of wall time: long enough to keep
 * the overhead of yielding small, short enough that `cancel` is heard at once.
 */
const SLICE_MS = 40;
let sliceEvents = 500;
/** Bumped by every fast-forward started: a pump waiting on the disk belongs to one of them. */
let pumpGen = 0;
/** The `fastForward` request the running fast-forward's slices answer. */
let fastForwardRe: number | null = null;
/**
 * How often a long fast-forward shows the run so far (issue #24): a snapshot every this many ms
 * of wall time, so the clock, the counters and the charts move while it runs, not only at its end.
 */
const FF_SNAPSHOT_MS = 500;
let lastFfSnapshot = 0;

function pump() {
  if (!session.fastForwarding) return;
  const memory = memoryCheck();
  if (memory === 'index') {
    const gen = pumpGen;
    waitForIndex(null, () => {
      if (gen === pumpGen) setTimeout(pump, 0);
    });
    return;
  }
  if (memory === 'wait') {
    // The run is ahead of the disk: let the writes catch up before the next slice (unless a
    // new fast-forward has started its own pump meanwhile).
    const gen = pumpGen;
    void flush().then(() => {
      if (gen === pumpGen) setTimeout(pump, 0);
    });
    return;
  }
  if (memory) {
    post([memory, ...session.handle({ type: 'cancel' })], fastForwardRe);
    return;
  }
  const t0 = performance.now();
  try {
    // An engine error ends the fast-forward in the session, with what broke (as live play's).
    post(session.fastForwardSlice(sliceEvents), fastForwardRe);
    takeAudit(session.drainAudit());
    if (!session.fastForwarding) saveSnapshot();
    if (session.fastForwarding && performance.now() - lastFfSnapshot >= FF_SNAPSHOT_MS) {
      lastFfSnapshot = performance.now();
      post([session.snapshot()], null);
    }
  } catch (err) {
    // Anything else: the fast-forward still ends, and says why, instead of spinning silently.
    session.handle({ type: 'cancel' });
    const error = err instanceof Error ? err.message : String(err);
    post([{ type: 'fastForwardDone', cancelled: false, error }], fastForwardRe);
  }
  const took = Math.max(1, performance.now() - t0);
  sliceEvents = Math.max(50, Math.min(50_000, Math.round((sliceEvents * SLICE_MS) / took)));
  void flush();
  if (session.fastForwarding) setTimeout(pump, 0);
}

/**
 * Audit rows the run may be ahead of the disk before a fast-forward waits for the writes (about
 * 1 KB of memory each while they wait: on a slow or busy machine a week's run got ever further
 * ahead of IndexedDB, and everything it had not written stayed in memory).
 */
const MAX_BACKLOG = 5_000;
/**
 * How long a group commit may run while the run goes on adding rows. A commit writes until the
 * queue is empty, so a fast-forward that never pauses kept one commit going past the write time
 * limit (8 s), and storage was reported failed while it was writing fine: then every later row
 * stayed in memory (a week of the retry storm on a busy machine: all 2.8 million of them).
 */
const FLUSH_PATIENCE_MS = 2_000;
/**
 * Audit rows kept in memory only (storage failed, or none) at which a run stops rather than grow
 * until the tab crashes (issue #19): about 1 KB each, this is a few hundred MB.
 */
let maxHeld = 250_000;
/** Chart points per lane sent to the page (chart-thin.ts). */
let chartPoints = MAX_CHART_POINTS;

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
/** The run is waiting for a reload's index (HOLD_WHILE_INDEXING): its snapshots say so. */
let waitingForIndex = false;

/**
 * Whether the run may go on: 'wait' while the audit log's writes are far behind, 'index' while it
 * holds as many records as it may until a reload's index is built, a notice to stop on when too
 * many rows are held in memory with nowhere to go, else null.
 */
function memoryCheck(): Extract<Reply, { type: 'fastForwardClamped' }> | 'wait' | 'index' | null {
  if (indexing && heldAudit() >= Math.min(HOLD_WHILE_INDEXING, maxHeld)) return 'index';
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

/**
 * The run holds as many records as it may while a reload's index is built: `go` once it is built.
 * The first time, the page is shown the run where it stands, with why it waits (post()), and what
 * it made is written (the rows the index will follow).
 */
function waitForIndex(re: number | null, go: () => void): void {
  const built = indexing;
  if (!built) return go();
  if (!waitingForIndex) {
    waitingForIndex = true;
    post([session.snapshot()], re);
    void flush();
  }
  void built.then(go, go);
}

// ---- Live play (issue #9; live.ts): the worker runs on its own clock, the page only shows ----

/** The play in progress: the `live` request its snapshots answer, and whether the page is ready
 *  for the next one (it has shown the last). */
let live: { re: number; pacer: LivePacer; credit: boolean; viewAt: number } | null = null;
let liveTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * The next batch, in the command queue: a command never runs in the middle of one. At once
 * through a message channel — a chain of `setTimeout(0)` is clamped to 4 ms a link, a quarter of
 * a batch left idle — else after `ms`.
 */
const nextBatch = new MessageChannel();
let batchQueued = false;
nextBatch.port1.onmessage = () => {
  batchQueued = false;
  if (live) queue = queue.then(liveBatch);
};
function scheduleLive(ms: number): void {
  clearTimeout(liveTimer);
  if (ms > 0)
    liveTimer = setTimeout(() => {
      queue = queue.then(liveBatch);
    }, ms);
  else if (!batchQueued) {
    batchQueued = true;
    nextBatch.port2.postMessage(null);
  }
}

function stopLive(): void {
  live = null;
  clearTimeout(liveTimer);
}

/** While playing, group commits at most this often (each is an IndexedDB transaction). */
const LIVE_FLUSH_MS = 50;
let liveFlushAt = -Infinity;

/**
 * One batch of live play: the simulated time the wall clock owes, at most the events that fit in
 * a slice; then its snapshot — posted when the page is ready for it, else only its audit records
 * taken (the page gets the next batch's). The run's end or a breakpoint stops play, and that
 * snapshot is always posted.
 */
function liveBatch(): void {
  const l = live;
  const sim = session.sim;
  if (!l || !sim) return;
  // A fast-forward has the engine: play waits (its time is not owed afterwards).
  if (session.fastForwarding) {
    l.pacer.due(performance.now());
    l.pacer.owed = 0;
    scheduleLive(LIVE_WAIT_FF_MS);
    return;
  }
  const memory = memoryCheck();
  if (memory === 'index') {
    // The clock stands still while it waits: the wall time waited is not owed afterwards.
    waitForIndex(l.re, () => {
      if (live !== l) return;
      l.pacer.due(performance.now());
      l.pacer.owed = 0;
      scheduleLive(0);
    });
    return;
  }
  if (memory === 'wait') {
    // Go on as soon as the group commit under way has settled (its writes have a time limit:
    // run-storage.ts), not at the next 50 ms poll: the bench:profile:worker profile of live play
    // at 2×50 servers spent ~16 % of the worker's time idle in those polls while the writes had
    // already landed. The commit under way is awaited, not re-armed (a call while one runs makes
    // it write once more), so it ends once it has written what the run queued.
    // Settled either way: a commit that threw must not leave play waiting for good.
    const go = () => {
      if (live === l) scheduleLive(0);
    };
    void auditCommitted().then(go, go);
    return;
  }
  if (memory) {
    stopLive();
    post([memory, session.snapshot()], l.re);
    return;
  }
  const t0 = performance.now();
  l.pacer.due(t0);
  const from = sim.now;
  try {
    const [snap] = session.handle({
      type: 'advance',
      to: l.pacer.target(from),
      maxEvents: l.pacer.events
    });
    if (snap?.type !== 'snapshot') return;
    const took = performance.now() - t0;
    l.pacer.ran(sim.now - from, snap.events, took);
    if (snap.done || snap.paused) {
      stopLive();
      post([snap], l.re);
      saveSnapshot();
    } else if (l.credit) {
      l.credit = false;
      const withView = t0 - l.viewAt >= LIVE_VIEW_MS;
      if (withView) l.viewAt = t0;
      post([snap], l.re, withView);
    } else takeAudit(snap.audit);
    if (!live || t0 - liveFlushAt >= LIVE_FLUSH_MS) {
      liveFlushAt = t0;
      void flush();
    }
    if (live === l) scheduleLive(l.pacer.wait(took));
  } catch (err) {
    stopLive();
    post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }], l.re);
  }
}

/** How often a play held up by a fast-forward looks again. */
const LIVE_WAIT_FF_MS = 50;
/** How often a live snapshot carries the audit table's view (the page's AUDIT_MS). */
const LIVE_VIEW_MS = 500;

function handleLive(cmd: LiveCommand, id: number): void {
  switch (cmd.type) {
    case 'live':
      if (live) {
        live.pacer.speed = cmd.speed;
        return;
      }
      if (!session.sim) {
        post([{ type: 'error', message: 'no scenario is loaded' }], id);
        return;
      }
      live = {
        re: id,
        pacer: new LivePacer(cmd.speed, performance.now()),
        credit: true,
        viewAt: -Infinity
      };
      scheduleLive(0);
      return;
    case 'liveSpeed':
      if (live) live.pacer.speed = cmd.speed;
      return;
    case 'liveAck':
      if (live) live.credit = true;
      return;
    case 'liveStop':
      stopLive();
      if (session.sim) post([session.snapshot()], id);
      saveSnapshot();
      void flush();
      return;
  }
}

// ---- What loads on first use (issue #24): the worker starts without zod ----

/** Commands that neither parse a person's input nor run the engine. */
const WITHOUT_PARSERS = new Set<Command['type']>([
  'timeline',
  'fork?',
  'checkpoints',
  // Breakpoint conditions are parsed without zod (sim/timeline/breakpoints.ts).
  'setBreakpoints',
  'inspect',
  'memoryBudget',
  'retryStorage',
  'cancel',
  'auditQuery',
  'auditRows',
  'auditExport',
  'auditWindow'
]);

/**
 * Load what `cmd` needs before the session handles it. The parsers and the SDK's frame schemas
 * (sim/input/parsers.ts: zod) come on first use: a ready-made scenario loads precompiled
 * (ready-made.ts), an advance that reaches no event runs nothing to check, and the commands above
 * need neither; anything else — a person's own scenario, a reload's or a link's timeline, a fork,
 * the first Play or fast-forward — waits for them (once; then they are there).
 */
async function prepare(cmd: Command): Promise<void> {
  if (parsersLoaded() || WITHOUT_PARSERS.has(cmd.type)) return;
  if (cmd.type === 'load' && !cmd.at && !cmd.link && (await prepareReadyMade(cmd.scenario))) return;
  // An advance that runs no event (the page's advance to a new run's start: the engine runs an
  // event due at t only on its way past t, or owed by a slice cut short — and no slice has run
  // before the parsers are here). Were one run all the same, its frame check would throw, not pass.
  if (cmd.type === 'advance' && session.sim && !session.fastForwarding) {
    const next = session.sim.clock.nextAt();
    if (cmd.to <= session.sim.now || next === null || next > cmd.to) return;
  }
  // The snapshot code with them: the engine is about to run, or a reload to resume.
  await Promise.all([loadParsers(), loadSnapshotsQuietly()]);
}

/**
 * A reload's audit index being built in the background (null: none). The run goes on meanwhile
 * (its new records wait in audit-feed.ts and follow the rows read back). The commands below wait
 * for it, as they replace or cut the index (a new run, a seek, a fork, a client restart, storage
 * tried again); the table's own questions are answered once it is built, without holding up the
 * commands after them.
 */
let indexing: Promise<void> | null = null;
/**
 * Exports asked for while a reload's index was being built: they answer once it is, over the
 * whole log. What replaces or cuts the index (AFTER_INDEXING) waits for them too, so a Reset
 * clicked while one waits still gives the file of the log it was asked of, not a failure.
 */
let exportsWaiting: Promise<unknown> = Promise.resolve();
const AFTER_INDEXING = new Set<Command['type']>([
  'load',
  'seek',
  'fork',
  'restart',
  'retryStorage'
]);

/**
 * The reload's index is built (`found`; null: storage failed it): the records made meanwhile go
 * in after its rows, and the table is told. A failed read starts the table at the restart, as a
 * load does at once without storage: the rows made again are not its rows.
 */
function resumeIndexed(
  found: ResumedLog | null,
  reader: RecordReader | null,
  restored: number
): void {
  const made = [...releaseAudit(), ...session.drainAudit()];
  indexing = null;
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
  if (waitingForIndex) {
    waitingForIndex = false;
    if (session.sim) post([session.snapshot()], null);
  }
}

// Start opening the databases now, so the first load does not wait for it.
const opening = openDbs();
deleteLegacyDbs();

// Commands are handled in order.
let queue = Promise.resolve();
self.onmessage = (e: MessageEvent<WorkerRequest | LiveRequest>) => {
  const { id, cmd } = e.data;
  if (isLiveCommand(cmd)) {
    // Play runs the engine, whose frames are checked against the SDK's schemas (loaded on first
    // use): the first Play waits for them.
    queue = queue.then(async () => {
      if (cmd.type === 'live' && !live && !parsersLoaded()) {
        try {
          await Promise.all([loadParsers(), loadSnapshotsQuietly()]);
        } catch (err) {
          post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }], id);
          return;
        }
      }
      handleLive(cmd, id);
    });
    return;
  }
  queue = queue.then(async () => {
    try {
      await opening;
      // What replaces or cuts the audit index waits for a reload's to be built.
      if (indexing && AFTER_INDEXING.has(cmd.type)) await indexing;
      if (AFTER_INDEXING.has(cmd.type)) await exportsWaiting;
      await prepare(cmd);
      if (cmd.type.startsWith('audit')) {
        const audit = cmd as Extract<Command, { type: `audit${string}` }>;
        // An export takes a while, and a reload's index may still be being built: answer later
        // commands meanwhile (the page's first advance makes the run ready).
        if (indexing) {
          const answered = indexing.then(() => answerAudit(audit, id, post, flush));
          if (audit.type === 'auditExport')
            exportsWaiting = Promise.all([exportsWaiting, answered]);
        } else if (audit.type === 'auditExport') void answerAudit(audit, id, post, flush);
        else await answerAudit(audit, id, post, flush);
        return;
      }
      if (cmd.type === 'memoryBudget') {
        if (cmd.heldRecords !== undefined) maxHeld = cmd.heldRecords;
        if (cmd.chartPoints !== undefined) chartPoints = cmd.chartPoints;
      }
      // A reload mid-run resuming this tab's run: its log holds the run's rows so far.
      let resuming = false;
      // A new run never goes on playing the old one (the page pauses first; this makes sure).
      if (cmd.type === 'load') stopLive();
      if (cmd.type === 'load') {
        session.setStorage(await startRun(cmd.resume));
        lastStorage = '';
        // A reload mid-run: the log's rows so far are the run's rows up to the restart.
        const current = currentRun();
        const resumed = !!cmd.resume && current?.storage.run === cmd.resume;
        if (cmd.at && resumed) resuming = true;
        // Resumed without a time (the page remembered none: it plays the run from its start
        // again): the log's rows are another branch's. The session writes and the table reads
        // row n at key n, so they go, as a reload at t cuts the rows after t — else the new
        // rows would be taken as already written and read back from keys holding other ones.
        if (!cmd.at && resumed) current?.audit?.truncate(0);
      }
      // Time travel back (a seek back, a valid fork) re-simulates the run: into a fresh
      // namespace, so the durable decisions and audit rows of the abandoned branch stay behind.
      const rewind = session.rewinds(cmd);
      if (rewind) {
        session.setStorage(await startRun(undefined, true));
        lastStorage = '';
      }
      // Where this command's own rows start in the log (a reload's restart writes some at once).
      const key0 = currentRun()?.audit?.nextKey ?? 0;
      // Rows the resumed log counts as on disk before the reload's re-simulation writes any.
      const saved0 = currentRun()?.audit?.status().saved ?? 0;
      const wasRunning = session.fastForwarding;
      const replies = session.handle(cmd);
      if (cmd.type === 'load' && replies[0]?.type === 'loaded' && replies[0].ok) {
        const current = currentRun();
        const log = current?.audit;
        const run = current?.storage.run;
        // The rows up to where the run was (the log may have held later ones of a seek back:
        // the session cut them, as the restart begins a new branch there).
        const upTo = replies[0].auditRows;
        // Rows whose writes were behind at the reload are not on disk: the table takes the rows
        // that are (from row 0 to the first missing one); the re-simulation made the ones the
        // log lacked again (rows key0 … upTo − 1, written and handed to the table), and the
        // restart's follow them, from where the log goes on (the session cut it to `upTo` if
        // it was longer).
        const restored = resuming && upTo !== undefined ? Math.max(0, upTo - key0) : 0;
        if (resuming && run && upTo !== undefined) {
          // Built in the background (issue #21: at 12 h it takes seconds): the run is ready at
          // once; the table's questions wait for it, its snapshots carry no view meanwhile.
          holdAudit();
          indexing = indexResumed(
            run,
            upTo,
            Math.min(key0, upTo),
            { rows: restored, savedWhenDone: saved0 + restored },
            key0
          ).then((found) =>
            resumeIndexed(found, log && run ? idbReader(run, upTo) : null, restored)
          );
        } else {
          auditRows.reset(log && run ? idbReader(run, upTo ?? key0) : null);
          // The table starts at the restart: the rows made again are not its rows.
          if (restored > 0) takeAudit(session.drainAudit().slice(restored));
        }
      }
      if (rewind) {
        const current = currentRun();
        const run = current?.storage.run;
        auditRows.reset(current?.audit && run ? idbReader(run, key0) : null);
      }
      // Restored in place: the table shows the rows up to t — fewer (back), or more, read from
      // the log that holds them (forward: the copy wrote none).
      let inPlace = false;
      for (const r of replies)
        if (r.type === 'seeked' && r.inPlace) {
          inPlace = true;
          const current = currentRun();
          const run = current?.storage.run;
          if (r.auditRows <= auditRows.size) await auditRows.truncate(r.auditRows);
          else if (current && run) {
            // Everything queued so far on disk first (whatever flush is under way), then read.
            await flushRun(current);
            // Rows missing from the log (a write that failed): the table starts at t instead of
            // numbering later rows wrong.
            if (!(await indexMore(run, r.auditRows)))
              auditRows.reset(current.audit ? idbReader(run, r.auditRows) : null);
          }
        }
      post(replies, id);
      if (!session.fastForwarding && !live) saveSnapshot();
      // Its snapshot told what was on disk before the restore's writes: say it again after them
      // (the next group commit posts the storage even if it equals the last one posted).
      if (inPlace) lastStorage = '';
      if (cmd.type === 'retryStorage') await retryStorage();
      else void flush();
      if (session.fastForwarding && cmd.type === 'fastForward') fastForwardRe = id;
      if (!wasRunning && session.fastForwarding) {
        lastFfSnapshot = performance.now();
        pumpGen++;
        setTimeout(pump, 0);
      }
    } catch (err) {
      post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }], id);
    }
  });
};
