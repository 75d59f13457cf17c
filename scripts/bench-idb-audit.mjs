// Audit rows per second through the durable audit log's write path (audit-log.ts → write-behind.ts
// → IndexedDB, rows packed in chunks: audit-chunks.ts) in Chromium: N rows appended, then flushed
// the way the worker's group commit does. Both halves are the worker's time: appending encodes
// each row (its JSON line), so the rate is printed for the flush and for append + flush.
// For comparison, the same rows put straight into IndexedDB in 5,000-row transactions with strict
// durability, as the log writes: one row a record (the layout before chunks) and, with `all`,
// other layouts (one JSON string a row; N rows a record as objects, JSON lines, UTF-8 bytes, gzip).
// Usage: node scripts/bench-idb-audit.mjs [rows=100000] [rounds=3] [all]
import { openIdbBenchPage } from './bench-idb-page.mjs';

const rows = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
// [format, rows a record] compared beside the path: `node scripts/bench-idb-audit.mjs N R all`.
const variants =
  process.argv[4] === 'all'
    ? [
        ['object', 1],
        ['json', 1],
        ['object', 100],
        ['jsonl', 100],
        ['jsonl', 128],
        ['jsonl', 512],
        ['jsonl', 1000],
        ['jsonl', 5000],
        ['bytes', 1000],
        ['bytes', 5000],
        ['gzip', 1000],
        ['gzip', 5000]
      ]
    : [['object', 1]];
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
// One format of the same rows: what a record holds, and what it costs to make it (timed too: the
// worker pays for it). 'object': the row as is (structured clone of every field); 'json': one
// JSON string a row; 'jsonl': N rows as one string of JSON lines; 'bytes': the same as UTF-8
// bytes; 'gzip': those bytes through CompressionStream.
const encode = async (mode, rows) => {
  if (mode === 'object') return rows.length === 1 ? rows[0] : rows;
  if (mode === 'json') return JSON.stringify(rows[0]);
  let text = '';
  for (const r of rows) text += JSON.stringify(r) + '\\n';
  if (mode === 'jsonl') return text;
  const bytes = new TextEncoder().encode(text);
  if (mode === 'bytes') return bytes;
  const gz = new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(gz).arrayBuffer());
};
globalThis.raw = async (rows, pack, mode) => {
  const db = await new Promise((res, rej) => {
    const r = indexedDB.open('bench-raw-' + mode + pack + '-' + Date.now());
    r.onupgradeneeded = () => r.result.createObjectStore('s');
    r.onsuccess = () => res(r.result);
    r.onerror = () => rej(r.error);
  });
  const all = [];
  for (let i = 0; i < rows; i++) all.push(row(i));
  const t0 = performance.now();
  let bytes = 0;
  // Time inside put() itself: the value's clone on the calling thread (the worker's, in the app).
  let putMs = 0;
  for (let lo = 0; lo < rows; lo += 5000) {
    const hi = Math.min(rows, lo + 5000);
    const values = [];
    for (let i = lo; i < hi; i += pack) values.push(await encode(mode, all.slice(i, i + pack)));
    for (const v of values) bytes += typeof v === 'string' ? v.length : (v.byteLength ?? 0);
    await new Promise((res, rej) => {
      const tx = db.transaction('s', 'readwrite', { durability: 'strict' });
      const s = tx.objectStore('s');
      const p0 = performance.now();
      values.forEach((v, j) => s.put(v, ['run', lo + j * pack]));
      putMs += performance.now() - p0;
      tx.oncomplete = res;
      tx.onerror = tx.onabort = () => rej(tx.error);
    });
  }
  const ms = performance.now() - t0;
  db.close();
  indexedDB.deleteDatabase(db.name);
  return { ms, bytes, putMs };
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
const { server, browser, page } = await openIdbBenchPage(entry);
try {
  const rate = (ms) => Math.round(rows / (ms / 1000));
  // Rounds alternate the three, so a machine busy with other work slows each about alike.
  for (let round = 1; round <= rounds; round++) {
    const r = await page.evaluate((n) => globalThis.bench(n), rows);
    console.log(
      `audit log: ${rows} rows, append ${r.appendMs.toFixed(0)} ms, flush ${r.flushMs.toFixed(0)} ms in ${r.commits} transactions → ${rate(r.flushMs)} rows/s flushed, ${rate(r.appendMs + r.flushMs)} rows/s appended and flushed (saved ${r.saved}, ok ${r.ok})`
    );
    for (const [mode, pack] of variants) {
      const { ms, bytes, putMs } = await page.evaluate(
        ([n, p, m]) => globalThis.raw(n, p, m),
        [rows, pack, mode]
      );
      console.log(
        `raw IndexedDB, ${mode}, ${pack} row(s) a record: ${rate(ms)} rows/s (${(bytes / rows).toFixed(0)} B/row; put() ${((putMs * 1000) / rows).toFixed(2)} µs/row)`
      );
    }
  }
} finally {
  await browser.close();
  server.close();
}
