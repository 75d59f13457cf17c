// `npm run build && npm run bench:sweep:ui`: the Sweep view in Chromium (issue #23). The 48 × 5
// sweep of `bench:sweep` (bench/sweep-48x5.json, its scenario inlined) is dropped on /sweep/ and
// run in the page's Web Workers (one per core); the wall time from the click to the results, and
// the page's frames meanwhile (requestAnimationFrame intervals: p50, p95, worst), with the load
// average before and after. Goals: at most 45 s, p95 frame at most 50 ms. Figures, not
// assertions. BENCH_UI_PORT sets the port.
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { serveAndLaunch } from './bench-browser.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4193);
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'sweep/index.html')) {
  console.error('bench:sweep:ui: no build/sweep/ — run `npm run build` first');
  process.exit(2);
}
const sweep = JSON.parse(readFileSync('bench/sweep-48x5.json', 'utf8'));
sweep.scenario = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8'));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const { server, browser } = await serveAndLaunch(port);
try {
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  await page.goto(`http://127.0.0.1:${port}/sweep/`);
  await page.getByLabel('Open a sweep file').setInputFiles({
    name: 'sweep-48x5.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(sweep))
  });
  await page.getByText(/^48 points × 5 seeds = 240 runs/).waitFor();
  const workers = await page.evaluate(() => navigator.hardwareConcurrency);
  // Frame intervals while the sweep runs, collected in the page.
  await page.evaluate(() => {
    const w = /** @type {any} */ (window);
    w.__frames = [];
    let last = performance.now();
    const tick = (t) => {
      w.__frames.push(t - last);
      last = t;
      if (!w.__stop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const before = load();
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Run sweep' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /runs in/ })
    .waitFor({ timeout: 600_000 });
  const wall = (Date.now() - t0) / 1000;
  const frames = await page.evaluate(() => {
    const w = /** @type {any} */ (window);
    w.__stop = true;
    return w.__frames;
  });
  frames.sort((a, b) => a - b);
  const q = (p) => frames[Math.min(frames.length - 1, Math.floor(p * frames.length))] ?? NaN;
  console.log(
    `bench:sweep:ui: 48 points × 5 seeds of reconnect-bypass in Chromium, ${workers} workers`
  );
  console.log(
    `  ${wall.toFixed(1)} s wall (goal ≤ 45 s); the page says: ${await page.getByRole('status').textContent()}`
  );
  console.log(
    `  frames while running: ${frames.length}, p50 ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms (goal ≤ 50 ms), worst ${frames.at(-1)?.toFixed(1)} ms`
  );
  console.log(`  load average before ${before}, after ${load()}`);
} finally {
  await browser.close();
  server.kill();
}
