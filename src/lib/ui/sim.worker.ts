/// <reference lib="webworker" />
/**
 * The simulation's Web Worker: the engine runs here, off the main thread, so a fast-forward of a
 * simulated day never freezes the page. Commands come in, replies go out (see sim/protocol.ts).
 *
 * Durable lanes keep their decisions in IndexedDB (one database per lane), loaded into memory
 * when the worker starts and written behind in batches after every command (group commit), so
 * they survive a reload and are seen by a second tab. If IndexedDB is unavailable, the lanes run
 * connection-scoped and every snapshot says why.
 */
import { CachedDurableStore } from '../store/durable-store';
import type { LaneId } from '../sim/scenario';
import type { Command, Reply } from '../sim/protocol';
import { Session } from '../sim/session';

const DECISION_DB = (lane: LaneId) => `sampling-policy-lab-decisions-lane-${lane}`;

async function openStores() {
  const stores: Partial<Record<LaneId, CachedDurableStore>> = {};
  let error: string | undefined;
  for (const lane of ['A', 'B'] as const) {
    const r = await CachedDurableStore.open({ dbName: DECISION_DB(lane) });
    if (r.ok) stores[lane] = r.store;
    else error = r.error;
  }
  return { stores, error };
}

const ready = openStores().then(({ stores, error }) => {
  const session = new Session({
    durable: (lane) => stores[lane] ?? null,
    ...(error ? { durableError: error } : {})
  });
  return { session, stores };
});

const post = (replies: Reply[]) => {
  for (const r of replies) self.postMessage(r);
};

async function flush() {
  const { stores } = await ready;
  await Promise.all(Object.values(stores).map((s) => s?.flush().catch(() => {})));
}

/**
 * Events per slice, adapted so a slice takes about SLICE_MS of wall time: long enough to keep
 * the overhead of yielding small, short enough that `cancel` is heard at once.
 */
const SLICE_MS = 40;
let sliceEvents = 500;

async function pump() {
  const { session } = await ready;
  if (!session.fastForwarding) return;
  const t0 = performance.now();
  post(session.fastForwardSlice(sliceEvents));
  const took = Math.max(1, performance.now() - t0);
  sliceEvents = Math.max(50, Math.min(50_000, Math.round((sliceEvents * SLICE_MS) / took)));
  void flush();
  if (session.fastForwarding) setTimeout(pump, 0);
}

// Commands are handled in order, after the stores have opened.
let queue = Promise.resolve();
self.onmessage = (e: MessageEvent<Command>) => {
  queue = queue.then(async () => {
    const { session } = await ready;
    try {
      const wasRunning = session.fastForwarding;
      post(session.handle(e.data));
      void flush();
      if (!wasRunning && session.fastForwarding) setTimeout(pump, 0);
    } catch (err) {
      post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }]);
    }
  });
};
