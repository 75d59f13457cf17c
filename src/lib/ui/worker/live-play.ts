/**
 * Live play (issue #9; live.ts paces it): the worker runs on its own clock, the page only shows.
 * Each batch runs in the command queue (worker-state.ts), so a command never runs in the middle
 * of one.
 */
import { LivePacer, type LiveCommand } from './live';
import { auditCommitted, commitStores } from './run-storage';
import { takeAudit } from './audit-feed';
import { memoryCheck } from './memory-check';
import { waitForIndex } from './reindex';
import { flush, post, saveSnapshot } from './replies';
import { enqueue, session } from './worker-state';

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
  if (live) enqueue(liveBatch);
};
function scheduleLive(ms: number): void {
  clearTimeout(liveTimer);
  if (ms > 0) liveTimer = setTimeout(() => enqueue(liveBatch), ms);
  else if (!batchQueued) {
    batchQueued = true;
    nextBatch.port2.postMessage(null);
  }
}

/** Play stops (a pause, a new run, a stop by memory or an error). */
export function stopLive(): void {
  live = null;
  clearTimeout(liveTimer);
}

/**
 * While playing, the audit log's group commits at most this often, and the lanes' decisions'
 * (each is an IndexedDB transaction, strict: flushed to the disk). The browser's own work per
 * transaction is not small: at 50 ms each, its IndexedDB threads took ~25 µs of CPU per request
 * played, as much again as half the worker's (bench:ui's thread CPU; two cores shared with the
 * page and the worker). The decisions go at the pace the page hears what is saved
 * (replies.ts: STORAGE_POST_MS); the audit log's rows wait in memory meanwhile (memory-check.ts
 * bounds them), so it goes more often.
 */
const LIVE_AUDIT_FLUSH_MS = 100;
const LIVE_DECISIONS_FLUSH_MS = 250;
let auditFlushAt = -Infinity;
let decisionsFlushAt = -Infinity;

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
    if (!live) void flush();
    else {
      if (t0 - auditFlushAt >= LIVE_AUDIT_FLUSH_MS) {
        auditFlushAt = t0;
        void commitStores('audit');
      }
      if (t0 - decisionsFlushAt >= LIVE_DECISIONS_FLUSH_MS) {
        decisionsFlushAt = t0;
        void commitStores('decisions');
      }
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

/** The page's play commands: start (or change the speed of) play, its credit, stop. */
export function handleLive(cmd: LiveCommand, id: number): void {
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
        pacer: new LivePacer(cmd.speed, performance.now(), cmd.cap),
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

/** Whether the run is playing. */
export function playing(): boolean {
  return live !== null;
}
