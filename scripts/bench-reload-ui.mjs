// `npm run bench:reload:ui`: what a reload mid-run costs in the browser (issue #21, "Snapshots
// outlive the page"), on the built site in Chromium. bench/retry-storm.json (or the scenario given
// as the argument) is opened from a scenario link (a reload keeps the link, so the tab's run is
// resumed), simulated to 2 h and, in a second tab, to 12 h; then the page is reloaded and the wall
// time measured from the reload to the run being ready again: the clock showing the same simulated
// time and Play enabled — from the run's saved snapshot where there is one (it says whether).
// Figures, not assertions. BENCH_UI_PORT sets the port; BENCH_RELOAD_HOURS
// the points (comma-separated, default "2,12").
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import lz from 'lz-string';
import { serveAndLaunch } from './bench-browser.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4193);
const file = process.argv[2] ?? 'bench/retry-storm.json';
const hours = (process.env.BENCH_RELOAD_HOURS ?? '2,12').split(',').map(Number);
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench:reload:ui: no build/ — run `npm run build` first');
  process.exit(2);
}
const data = readFileSync(file, 'utf8');
const hash = '#s=' + lz.compressToEncodedURIComponent(JSON.stringify(JSON.parse(data)));
const LONG = { timeout: 900_000 };

/** "h:mm:ss" as the page's clock shows it. */
const clock = (h) => `${Math.floor(h)}:${String(Math.round((h % 1) * 60)).padStart(2, '0')}:00`;

const { server, browser } = await serveAndLaunch(port);
try {
  console.log(`${file} (load ${loadavg()[0].toFixed(2)})`);
  for (const h of hours) {
    // A tab of its own for each point: its own run, its own IndexedDB namespace.
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/${hash}`);
    const play = page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled'));
    await play.waitFor(LONG);
    const time = page.getByLabel('Simulated time', { exact: true });
    await page.getByLabel('Hours', { exact: true }).fill(String(h));
    const t0 = performance.now();
    await page.getByRole('button', { name: `Simulate ${h} h` }).click();
    await page.waitForFunction(
      (c) => document.querySelector('[aria-label="Simulated time"]')?.textContent === c,
      clock(h),
      { ...LONG, polling: 100 }
    );
    await page
      .getByRole('progressbar', { name: 'Fast-forward progress' })
      .waitFor({ state: 'hidden', ...LONG });
    await play.waitFor(LONG);
    const ran = performance.now() - t0;
    // The run's writes settle (the saved-decisions counter stops moving) before the reload.
    await page.waitForTimeout(1500);
    const shown = await time.textContent();
    // Whether the run's snapshot is saved (issue #21): a reload then resumes from it.
    const saved = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const run = JSON.parse(sessionStorage.getItem('sampling-policy-lab-run') ?? 'null');
          const req = indexedDB.open('sampling-policy-lab-run-snapshots', 1);
          req.onupgradeneeded = () => req.result.createObjectStore('snapshots');
          req.onerror = () => resolve(null);
          req.onsuccess = () => {
            const get = req.result.transaction('snapshots').objectStore('snapshots').get(run?.id);
            get.onsuccess = () => {
              req.result.close();
              resolve(get.result?.snapshot?.meta?.at?.t === run?.t ? 'at the run’s time' : null);
            };
          };
        })
    );
    const r0 = performance.now();
    await page.reload();
    await page.waitForFunction(
      (c) => document.querySelector('[aria-label="Simulated time"]')?.textContent === c,
      shown,
      { ...LONG, polling: 50 }
    );
    await play.waitFor(LONG);
    const ready = performance.now() - r0;
    console.log(
      `  ${h} h: simulated in ${(ran / 1000).toFixed(1)} s; snapshot saved: ${saved ?? 'none'}; reload → ready (clock ${shown}, Play enabled): ${(ready / 1000).toFixed(1)} s`
    );
    await context.close();
  }
} finally {
  await browser.close();
  server.kill();
}
