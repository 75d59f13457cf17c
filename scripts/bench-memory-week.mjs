// `npm run bench:memory -- --week [days] [scenario]` (issue #19): a long run's memory in the
// built site, in real Chromium. The scenario (default bench/retry-storm.json) is stretched to
// `days` simulated days (default 7; the limits allow 30) and fast-forwarded a day at a time at
// top speed; after each day it prints the JS heap of the page and of the simulation worker (after
// a forced GC), the worker's ArrayBuffers, the renderer processes' resident memory and what the
// site holds in IndexedDB, and the page's own words on what a long run has thinned. Between the
// days the heaps are read without a GC every few seconds for the peak. Then Reset, and the same
// figures again: what Reset frees. The goal (issue #19): worker + page heap ≤ 1,500 MB at the
// peak, and back near the start after Reset. Figures, not assertions.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { chromium } from '@playwright/test';
import { chromiumArgs, findChromium } from './chromium.mjs';
import { attachHeaps, mb } from './bench-heaps.mjs';

const args = process.argv.slice(2).filter((a) => a !== '--week');
const days = Number(args.find((a) => /^\d+$/.test(a)) ?? 7);
const name = args.find((a) => !/^\d+$/.test(a)) ?? 'retry-storm';
const DAY = 86_400_000;
const port = Number(process.env.BENCH_PORT ?? 4195);
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench-memory: no build/ — run `npm run build` first');
  process.exit(2);
}
const file = existsSync(`bench/${name}.json`)
  ? `bench/${name}.json`
  : `static/scenarios/${name}.json`;
const data = JSON.parse(readFileSync(file, 'utf8'));
data.durationMs = Math.max(data.durationMs, days * DAY);

const server = spawn(process.execPath, ['scripts/serve.mjs'], {
  env: { ...process.env, PORT: String(port) },
  stdio: 'ignore'
});
await new Promise((r) => setTimeout(r, 600));
// A profile on disk, as a person's browser has: a new context of `chromium.launch` is an
// incognito one, whose storage quota (about 1.2 GB here) a week's audit log outgrows on day 6 —
// the page then says the storage is full and stops at 250,000 rows held, as it should, but that
// is a private window's limit, not the long run's memory.
const profile = mkdtempSync(join(tmpdir(), 'bench-memory-week-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: findChromium(),
  args: chromiumArgs,
  viewport: { width: 1440, height: 900 }
});
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const num = (text) => Number(String(text).replace(/[^0-9]/g, ''));
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  let crashed = false;
  page.on('crash', () => {
    crashed = true;
    console.log('THE TAB CRASHED');
  });
  const { heaps } = await attachHeaps(page);
  const matching = page.locator('dt:text-is("Matching records") + dd').first();
  const clock = page.getByLabel('Simulated time', { exact: true });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const span = await page.getByRole('slider', { name: 'Time' }).getAttribute('aria-valuemax');
  await page.getByLabel('Upload scenario').setInputFiles({
    name: `${name}.json`,
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(data))
  });
  await page.waitForFunction(
    (old) =>
      document.querySelector('[role=slider][aria-label=Time]')?.getAttribute('aria-valuemax') !==
      old,
    span
  );
  await page.getByRole('button', { name: 'Play' }).waitFor();

  const line = (what, h, extra = '') =>
    console.log(
      `${what.padEnd(16)} page ${mb(h.pageHeap).padStart(9)}   worker ${mb(h.workerHeap).padStart(9)} + buffers ${mb(h.workerBuffers).padStart(8)}   renderers RSS ${mb(h.rss).padStart(9)}   IndexedDB ${mb(h.idb).padStart(9)}${extra}`
    );
  console.log(`${file}: ${days} simulated days, a day at a time (load ${load()})`);
  const start = await heaps();
  line('at start', start);

  let peak = { sum: start.pageHeap + start.workerHeap, page: start.pageHeap, worker: 0, rss: 0 };
  const note = (h) => {
    peak.sum = Math.max(peak.sum, h.pageHeap + h.workerHeap);
    peak.page = Math.max(peak.page, h.pageHeap);
    peak.worker = Math.max(peak.worker, h.workerHeap);
    peak.rss = Math.max(peak.rss, h.rss);
  };
  const t0 = Date.now();
  for (let d = 1; d <= days && !crashed; d++) {
    await page.getByLabel('Hours', { exact: true }).fill('24');
    await page.getByRole('button', { name: 'Simulate 24 h' }).click();
    // The running peak: the heaps as they stand every few seconds while the day runs.
    let sampling = true;
    const sampler = (async () => {
      while (sampling && !crashed) {
        try {
          note(await heaps(false));
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 3000));
      }
    })();
    let stopped = '';
    try {
      // The day's end, or the run stopping short (its words are in the run notices).
      await page.waitForFunction(
        (want) =>
          document.querySelector('output[aria-label="Simulated time"]')?.textContent === want ||
          /Stopped:/.test(
            document.querySelector('[role=status][aria-label="Run notices"]')?.textContent ?? ''
          ),
        `${d * 24}:00:00`,
        { timeout: 1_800_000, polling: 1000 }
      );
      stopped = (await page.getByRole('status', { name: 'Run notices' }).textContent()) ?? '';
      if (!/Stopped:/.test(stopped)) stopped = '';
      await page
        .getByRole('progressbar', { name: 'Fast-forward progress' })
        .waitFor({ state: 'hidden', timeout: 1_800_000 });
    } finally {
      sampling = false;
      await sampler;
    }
    const h = await heaps();
    note(h);
    const rows = num(await matching.textContent());
    const secs = ((Date.now() - t0) / 1000).toFixed(0);
    line(
      `after day ${d}`,
      h,
      `   audit rows ${rows.toLocaleString('en-US')}   (${secs} s, clock ${await clock.textContent()}, load ${load()})`
    );
    for (const said of await page.getByText(/^Long run/).allTextContents())
      console.log(`                 the page says: ${said.replace(/\s+/g, ' ').trim()}`);
    for (const said of await page.getByRole('alert').allTextContents())
      console.log(`                 the page warns: ${said.replace(/\s+/g, ' ').trim()}`);
    if (stopped) {
      console.log(`                 the run stopped: ${stopped.replace(/\s+/g, ' ').trim()}`);
      break;
    }
  }
  console.log(
    `peak (incl. while running, no GC): page + worker ${mb(peak.sum)} (page ${mb(peak.page)}, worker ${mb(peak.worker)}), renderers RSS ${mb(peak.rss)}; goal ≤ 1500 MB`
  );
  if (!crashed) {
    const span2 = await page.getByRole('slider', { name: 'Time' }).getAttribute('aria-valuenow');
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await page.waitForFunction(
      (old) =>
        document.querySelector('output[aria-label="Simulated time"]')?.textContent === '0:00:00' &&
        document.querySelector('[role=slider][aria-label=Time]')?.getAttribute('aria-valuenow') !==
          old,
      span2,
      { timeout: 300_000, polling: 500 }
    );
    await page.getByRole('button', { name: 'Play' }).waitFor();
    // Let the previous run's last writes land and be released.
    await new Promise((r) => setTimeout(r, 3000));
    line('after Reset', await heaps());
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
  server.kill();
}
