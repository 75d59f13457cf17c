// `npm run bench:memory [-- scenario rows]`: grows the audit log in the built site, in real
// Chromium, to `rows` rows (default 1,000,000, with bench/audit-storm.json: about 150,000 rows per
// simulated hour) by fast-forwarding an hour at a time at top speed, and prints after each hour
// the JS heap of the page and of the simulation worker (Chrome DevTools Protocol, after a forced
// GC) and what the site holds in IndexedDB. Then, with every row in the log, it times the audit
// table: a filter change until the new count and the first rows are on screen, and a scroll to
// the middle until the rows there are shown. Figures, not assertions (issue #8).
// `npm run bench:memory -- --week [days] [scenario]`: a long run's memory instead
// (bench-memory-week.mjs).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { chromiumArgs, findChromium } from './chromium.mjs';
import { attachHeaps, mb } from './bench-heaps.mjs';

if (process.argv.includes('--week')) {
  await import('./bench-memory-week.mjs');
  process.exit(process.exitCode ?? 0);
}
const [name = 'audit-storm', rowsArg = '1000000'] = process.argv.slice(2);
const target = Number(rowsArg);
const port = Number(process.env.BENCH_PORT ?? 4195);
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench-memory: no build/ — run `npm run build` first');
  process.exit(2);
}
const server = spawn(process.execPath, ['scripts/serve.mjs'], {
  env: { ...process.env, PORT: String(port) },
  stdio: 'ignore'
});
await new Promise((r) => setTimeout(r, 600));
const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
const num = (text) => Number(String(text).replace(/[^0-9]/g, ''));
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const { heaps } = await attachHeaps(page);

  const matching = page.locator('dt:text-is("Matching records") + dd').first();
  const clock = page.getByLabel('Simulated time', { exact: true });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const file = existsSync(`bench/${name}.json`)
    ? `bench/${name}.json`
    : `static/scenarios/${name}.json`;
  const data = JSON.parse(readFileSync(file, 'utf8'));
  await page.getByLabel('Upload scenario').setInputFiles({
    name: `${name}.json`,
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(data))
  });
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const start = await heaps();
  console.log(`${name}: grow the audit log to ${target.toLocaleString('en-US')} rows`);
  console.log(
    `at start              page ${mb(start.pageHeap)}   worker ${mb(start.workerHeap)} + buffers ${mb(start.workerBuffers)}   IndexedDB ${mb(start.idb)}`
  );
  const t0 = Date.now();
  let rows = 0;
  let last = start;
  for (let h = 1; rows < target && h * 3_600_000 <= data.durationMs; h++) {
    await page.getByLabel('Hours', { exact: true }).fill('1');
    await page.getByRole('button', { name: 'Simulate 1 h' }).click();
    await page.waitForFunction(
      (want) => document.querySelector('output[aria-label="Simulated time"]')?.textContent === want,
      `${h}:00:00`,
      { timeout: 900_000, polling: 500 }
    );
    await page
      .getByRole('progressbar', { name: 'Fast-forward progress' })
      .waitFor({ state: 'hidden', timeout: 900_000 });
    last = await heaps();
    rows = num(await matching.textContent());
    const secs = ((Date.now() - t0) / 1000).toFixed(0);
    console.log(
      `after ${String(h).padStart(2)} h (${secs.padStart(4)} s)  page ${mb(last.pageHeap)}   worker ${mb(last.workerHeap)} + buffers ${mb(last.workerBuffers)}   IndexedDB ${mb(last.idb)}   audit rows ${rows.toLocaleString('en-US')}   (clock ${await clock.textContent()})`
    );
  }
  const perRow = (a, b) => (rows > 0 ? ((b - a) / rows).toFixed(1) : '—');
  console.log(
    `growth per audit row: page ${perRow(start.pageHeap, last.pageHeap)} B, worker ${perRow(start.workerHeap, last.workerHeap)} B, IndexedDB ${perRow(start.idb, last.idb)} B`
  );

  // ───────── the audit table with every row ─────────
  const grid = page.getByRole('grid', { name: 'Audit records' });
  const scroller = page.getByRole('region', { name: 'Audit log' });
  /** The rows in the table's window are all shown (none still being fetched). */
  const shown = () =>
    page.waitForFunction(
      () => {
        const rs = document.querySelectorAll(
          '[role="grid"][aria-label="Audit records"] .body [role="row"]'
        );
        return rs.length > 0 && [...rs].every((r) => r.getAttribute('aria-busy') !== 'true');
      },
      null,
      { polling: 'raf', timeout: 60_000 }
    );
  await shown();
  const outcome = page.getByLabel('Outcome', { exact: true });
  const values = await outcome.locator('option').evaluateAll((os) => os.map((o) => o.value));
  for (const value of [...values.filter(Boolean), '']) {
    const before = await matching.textContent();
    const t = Date.now();
    await outcome.selectOption(value);
    await page.waitForFunction(
      (b) => document.querySelector('dd[aria-labelledby$="-count"]')?.textContent !== b,
      before,
      { polling: 'raf' }
    );
    await shown();
    console.log(
      `filter outcome=${(value || 'All').padEnd(16)} ${String(Date.now() - t).padStart(5)} ms  (${before} → ${await matching.textContent()} rows)`
    );
  }
  for (const where of [0.5, 0.25, 0, 1]) {
    const t = Date.now();
    await scroller.evaluate((el, f) => {
      el.scrollTop = (el.scrollHeight - el.clientHeight) * f;
    }, where);
    await page.waitForFunction(
      (f) => {
        const el = document.querySelector('[role="region"][aria-label="Audit log"]');
        const first = el?.querySelector('.body [role="row"]');
        const rowIndex = Number(first?.getAttribute('aria-rowindex') ?? 0);
        const count = Number(
          el?.querySelector('[role="grid"]')?.getAttribute('aria-rowcount') ?? 1
        );
        return Math.abs(rowIndex / count - f) < 0.01;
      },
      where,
      { polling: 'raf' }
    );
    await shown();
    console.log(
      `scroll to ${String(where * 100).padStart(3)} %        ${String(Date.now() - t).padStart(5)} ms`
    );
  }
  await grid.count();
  const after = await heaps();
  console.log(
    `after the table work  page ${mb(after.pageHeap)}   worker ${mb(after.workerHeap)} + buffers ${mb(after.workerBuffers)}   IndexedDB ${mb(after.idb)}`
  );
} finally {
  await browser.close();
  server.kill();
}
