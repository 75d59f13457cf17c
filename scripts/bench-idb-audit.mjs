// Audit rows per second through the durable audit log's write path (audit-log.ts → write-behind.ts
// → IndexedDB) in Chromium: N rows appended, then flushed the way the worker's group commit does.
// For comparison, the same rows put straight into IndexedDB in 5,000-row transactions (the best
// the path can do), and the same bytes packed 100 rows to a record (fewer, larger records).
// Usage: node scripts/bench-idb-audit.mjs [rows=100000] [rounds=3]
import { createServer } from 'node:http';
import { build } from 'esbuild';
import { chromium } from '@playwright/test';
import { findChromium, chromiumArgs } from './chromium.mjs';

const rows = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const entry = `
import { DurableAuditLog } from './src/lib/store/audit-log.ts';
const row = (i) => ({
  seq: i, t: i * 1000, time: '2026-01-01T00:00:00.000Z', server: 'billing', connection: 'c' + (i % 40),
  requestId: 'r' + i, identity: 'id-' + (i % 997), outcome: 'denied', reason: 'budget exceeded',
  retryable: true, replayed: false, represented: i % 3, consentShown: false, consent: null,
  model: 'model-small', tokensIn: 1200, tokensOut: 300, cost: { amount: 0.0123, currency: 'USD' },
  currency: 'USD', durationMs: 42, contextRequested: 'page', contextApplied: 'page',
  budgetDecision: { estimatedCost: { amount: 0.01, currency: 'USD' }, limitApplied: { amount: 5, currency: 'USD' },
    limitSource: 'server', meterBasis: 'tokens', estimatedTokens: { input: 1200, output: 300 } },
  silenced: false, alert: null, lane: 'A'
});
globalThis.raw = async (rows, pack) => {
  const db = await new Promise((res, rej) => {
    const r = indexedDB.open('bench-raw-' + pack + '-' + Date.now());
    r.onupgradeneeded = () => r.result.createObjectStore('s');
    r.onsuccess = () => res(r.result);
    r.onerror = () => rej(r.error);
  });
  const all = [];
  for (let i = 0; i < rows; i++) all.push(row(i));
  const t0 = performance.now();
  for (let lo = 0; lo < rows; lo += 5000)
    await new Promise((res, rej) => {
      const tx = db.transaction('s', 'readwrite');
      const s = tx.objectStore('s');
      const hi = Math.min(rows, lo + 5000);
      for (let i = lo; i < hi; i += pack) s.put(pack === 1 ? all[i] : all.slice(i, i + pack), ['run', i]);
      tx.oncomplete = res;
      tx.onerror = tx.onabort = () => rej(tx.error);
    });
  const ms = performance.now() - t0;
  db.close();
  return ms;
};
globalThis.bench = async (rows) => {
  const opened = await DurableAuditLog.open({ dbName: 'bench-audit-' + Date.now(), namespace: ['run'] });
  if (!opened.ok) throw new Error(opened.error);
  const log = opened.store;
  const t0 = performance.now();
  for (let i = 0; i < rows; i++)
    log.append(row(i));
  const t1 = performance.now();
  const ok = await log.flush();
  const t2 = performance.now();
  return { ok, appendMs: t1 - t0, flushMs: t2 - t1, saved: log.status().saved, commits: log.writeProgress };
};
`;
const out = await build({
  stdin: { contents: entry, resolveDir: process.cwd(), loader: 'ts' },
  bundle: true,
  format: 'iife',
  write: false,
  target: 'es2022'
});
const js = out.outputFiles[0].text;
const server = createServer((req, res) => {
  if (req.url === '/bench.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
  else res.writeHead(200, { 'content-type': 'text/html' }).end('<script src="/bench.js"></script>');
});
await new Promise((r) => server.listen(Number(process.env.E2E_PORT ?? 4197), '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  const rate = (ms) => Math.round(rows / (ms / 1000));
  // Rounds alternate the three, so a machine busy with other work slows each about alike.
  for (let round = 1; round <= rounds; round++) {
    const r = await page.evaluate((n) => globalThis.bench(n), rows);
    console.log(
      `audit log: ${rows} rows, append ${r.appendMs.toFixed(0)} ms, flush ${r.flushMs.toFixed(0)} ms in ${r.commits} transactions → ${rate(r.flushMs)} rows/s (saved ${r.saved}, ok ${r.ok})`
    );
    for (const pack of [1, 100]) {
      const ms = await page.evaluate(([n, p]) => globalThis.raw(n, p), [rows, pack]);
      console.log(`raw IndexedDB, ${pack} row(s) a record: ${rate(ms)} rows/s`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
