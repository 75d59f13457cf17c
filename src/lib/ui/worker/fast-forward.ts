/**
 * The fast-forward pump: the run in slices of about SLICE_MS of wall time, each followed by a
 * group commit and a yield, so a simulated day never freezes the worker and `cancel` is heard.
 */
import { takeAudit } from './audit-feed';
import { memoryCheck } from './memory-check';
import { waitForIndex } from './reindex';
import { flush, post, saveSnapshot } from './replies';
import { session } from './worker-state';

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

/** The running fast-forward's slices answer request `re` (the `fastForward` that started it). */
export function fastForwardAnswers(re: number): void {
  fastForwardRe = re;
}

/** A fast-forward has started: its own pump runs its slices (an older one's stops). */
export function startPump(): void {
  lastFfSnapshot = performance.now();
  pumpGen++;
  setTimeout(pump, 0);
}

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
