// The memory figures of the memory benchmarks (bench-memory.mjs): the JS heap of the page and of
// the simulation worker, read over the Chrome DevTools Protocol after a forced GC, what the site
// holds in IndexedDB, and the resident memory of the browser's renderer processes (from /proc).
import { readFileSync, readdirSync } from 'node:fs';

export const mb = (b) => `${(b / 2 ** 20).toFixed(1)} MB`;

/** Attach to `page` and its simulation worker; returns `heaps(gc)`. */
export async function attachHeaps(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  // The worker is a target of its own: attach to it to read its heap.
  let workerSession = null;
  let nextId = 1;
  const waiting = new Map();
  cdp.on('Target.attachedToTarget', (e) => {
    if (e.targetInfo.type === 'worker' && e.targetInfo.url.includes('sim.worker'))
      workerSession = e.sessionId;
  });
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const msg = JSON.parse(e.message);
    waiting.get(msg.id)?.(msg.result);
    waiting.delete(msg.id);
  });
  await cdp.send('Target.setAutoAttach', {
    autoAttach: true,
    waitForDebuggerOnStart: false,
    flatten: false
  });
  const inWorker = (method, params = {}) =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      void cdp.send('Target.sendMessageToTarget', {
        sessionId: workerSession,
        message: JSON.stringify({ id, method, params })
      });
    });

  /**
   * Resident memory of the renderer processes of the browser this process launched (the tab, its
   * worker with it), bytes: Playwright spawns Chromium as a child of this Node process.
   */
  function rendererRss() {
    const root = process.pid;
    const children = new Map();
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        children.set(Number(d), ppid);
      } catch {
        // gone meanwhile
      }
    }
    const under = new Set([root]);
    for (let grew = true; grew;) {
      grew = false;
      for (const [pid, ppid] of children)
        if (under.has(ppid) && !under.has(pid)) {
          under.add(pid);
          grew = true;
        }
    }
    let rss = 0;
    for (const pid of under) {
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
        const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (kb) rss += Number(kb[1]) * 1024;
      } catch {
        // gone meanwhile
      }
    }
    return rss;
  }

  /** The figures, after a forced GC in both (`gc` false: as they stand, for a running peak). */
  async function heaps(gc = true) {
    if (gc) await cdp.send('HeapProfiler.collectGarbage');
    const m = await cdp.send('Performance.getMetrics');
    const pageHeap = m.metrics.find((x) => x.name === 'JSHeapUsedSize').value;
    let workerHeap = NaN;
    // ArrayBuffer backing stores (the worker's column index) live outside the V8 heap: Chromium
    // reports them separately, as `backingStorageSize`, where it does.
    let workerBuffers = NaN;
    if (workerSession) {
      if (gc) await inWorker('HeapProfiler.collectGarbage');
      const u = await inWorker('Runtime.getHeapUsage');
      workerHeap = u.usedSize;
      workerBuffers = u.backingStorageSize ?? NaN;
    }
    const idb = gc
      ? await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0)
      : NaN;
    return { pageHeap, workerHeap, workerBuffers, idb, rss: rendererRss() };
  }
  return { heaps };
}
