// Decisions per second through the durable decision store's write path (cached-durable-store.ts
// → write-behind.ts → IndexedDB, a log of group commits: decision-log.ts) in Chromium: N new
// decisions committed, flushed in group commits of `batch` the way the worker's group commit
// does, then as many deleted (expired) and flushed again, so compaction runs as it does in a long
// run. Committing encodes nothing; a flush encodes each change as its JSON line.
// For comparison, the same decisions put straight into IndexedDB in transactions of `batch`, with
// strict durability: one record a decision as objects (the layout before the log), and N decisions
// a record as JSON lines (the log's layout; LOG_LINES is 128) for a few N. Wall-clock rates move
// with the machine's load; each line also says the CPU the browser process's threads (IndexedDB's
// among them) and the page's thread spent a decision (bench-ui-threads.mjs: Linux only).
// Usage: node scripts/bench-idb-decisions.mjs [decisions=50000] [rounds=3] [batch=2000]
import { openIdbBenchPage } from './bench-idb-page.mjs';
import { cpuSince, threadCpu } from './bench-ui-threads.mjs';

const decisions = Number(process.argv[2] ?? 50_000);
const rounds = Number(process.argv[3] ?? 3);
const batch = Number(process.argv[4] ?? 2_000);
const entry = `
import { CachedDurableStore } from './src/lib/store/cached-durable-store.ts';
const hex = (i) => (i * 2654435761 >>> 0).toString(16).padStart(8, '0');
// A decision as live play stores it: a new identity (a server's name and a digest), a denial with
// its reason, a TTL.
const decision = (i) => ({
  server: 'server-' + (i % 50), identity: 'server-' + (i % 50) + ':' + hex(i).repeat(5).slice(0, 43),
  verdict: i % 3 ? 'denied' : 'allowed', reason: i % 3 ? 'policy.rate_limited' : null,
  retryable: i % 3 === 1, decidedAt: i * 37, expiresAt: i * 37 + 60_000,
  policyHash: 'sha256-' + hex(i % 50).repeat(8), represented: 0, recent: []
});
globalThis.raw = async (n, batch, pack) => {
  const db = await new Promise((res, rej) => {
    const r = indexedDB.open('bench-raw-' + pack + '-' + Date.now());
    r.onupgradeneeded = () => r.result.createObjectStore('s');
    r.onsuccess = () => res(r.result);
    r.onerror = () => rej(r.error);
  });
  const t0 = performance.now();
  let bytes = 0;
  let workerMs = 0;
  for (let lo = 0; lo < n; lo += batch) {
    const hi = Math.min(n, lo + batch);
    await new Promise((res, rej) => {
      const tx = db.transaction('s', 'readwrite', { durability: 'strict' });
      const s = tx.objectStore('s');
      const p0 = performance.now();
      if (pack === 0) {
        for (let i = lo; i < hi; i++) {
          const d = decision(i);
          s.put(d, ['run', 'B', d.server, d.identity]);
        }
      } else {
        for (let i = lo; i < hi; i += pack) {
          const lines = [];
          for (let j = i; j < Math.min(hi, i + pack); j++) lines.push(JSON.stringify(decision(j)));
          const v = lines.join('\\n');
          bytes += v.length;
          s.put(v, ['run', 'B', i]);
        }
      }
      workerMs += performance.now() - p0;
      tx.oncomplete = res;
      tx.onerror = tx.onabort = () => rej(tx.error);
    });
  }
  const ms = performance.now() - t0;
  db.close();
  indexedDB.deleteDatabase(db.name);
  return { ms, bytes, workerMs };
};
globalThis.bench = async (n, batch) => {
  const opened = await CachedDurableStore.open({ dbName: 'bench-decisions-' + Date.now(), namespace: ['run', 'B'] });
  if (!opened.ok) throw new Error(opened.error);
  const s = opened.store;
  // Wall time of the flushes (encoding, put() and the commits).
  let wall = 0;
  // The longest flush: one that compacts reads and rewrites the namespace.
  let longest = 0;
  const flush = async () => {
    const t = performance.now();
    await s.flush();
    const ms = performance.now() - t;
    wall += ms;
    longest = Math.max(longest, ms);
  };
  const t0 = performance.now();
  for (let lo = 0; lo < n; lo += batch) {
    for (let i = lo; i < Math.min(n, lo + batch); i++) s.commit('c1', decision(i));
    await flush();
  }
  const putMs = wall;
  const putLongest = longest;
  const saved = s.status().saved;
  wall = 0;
  longest = 0;
  // The same decisions expire, a batch at a time (each sweep removes one batch's worth).
  for (let lo = 0; lo < n; lo += batch) {
    s.sweep((Math.min(n, lo + batch) - 1) * 37 + 60_000);
    await flush();
  }
  const delMs = wall;
  return { putLongest, delLongest: longest, putMs, delMs, saved, left: s.status().saved, commits: s.writeProgress, total: performance.now() - t0 };
};
`;
const { server, browser, page } = await openIdbBenchPage(entry);
try {
  const rate = (ms) => Math.round(decisions / (ms / 1000)).toLocaleString('en-US');
  /** `fn()`, and the CPU µs a decision of the browser process's threads and of the page's. */
  const timed = async (fn, n) => {
    const before = threadCpu();
    const r = await fn();
    const spent = cpuSince(before, threadCpu());
    if (!spent) return [r, ''];
    const sum = (prefix) =>
      spent.filter(([name]) => name.startsWith(prefix)).reduce((a, [, ms]) => a + ms, 0);
    const us = (ms) => ((ms * 1000) / n).toFixed(1);
    return [
      r,
      `; CPU: browser process ${us(sum('browser '))} µs, page ${us(sum('renderer chromium'))} µs a decision`
    ];
  };
  // Rounds alternate the layouts, so a machine busy with other work slows each about alike.
  for (let round = 1; round <= rounds; round++) {
    const [r, cpu] = await timed(
      () => page.evaluate(([n, b]) => globalThis.bench(n, b), [decisions, batch]),
      2 * decisions
    );
    console.log(
      `decision store (log): ${decisions} decisions in commits of ${batch}: saved ${rate(r.putMs)}/s (${r.saved} saved; longest flush ${r.putLongest.toFixed(0)} ms), expired ${rate(r.delMs)}/s (${r.left} left; longest flush, a compaction, ${r.delLongest.toFixed(0)} ms) in ${r.commits} transactions${cpu} (saved or expired)`
    );
    for (const pack of [0, 64, 128, 256, 512]) {
      const [{ ms, bytes, workerMs }, cpu] = await timed(
        () => page.evaluate(([n, b, p]) => globalThis.raw(n, b, p), [decisions, batch, pack]),
        decisions
      );
      const what =
        pack === 0
          ? 'one record a decision (objects)'
          : `${pack} a record (JSON lines, ${(bytes / (decisions / pack) / 1024).toFixed(0)} KB)`;
      console.log(
        `raw IndexedDB, ${what}: ${rate(ms)} decisions/s (put() and encoding ${((workerMs * 1000) / decisions).toFixed(2)} µs/decision${cpu})`
      );
    }
  }
} finally {
  await browser.close();
  server.close();
}
