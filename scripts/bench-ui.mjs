// `npm run bench:ui`: opens the built site in Chromium and measures
//  - first load: every JavaScript file fetched — by the page, by its sim worker, lazily (charts)
//    — from navigation until the playground is ready to play and the network has been idle for
//    half a second, gzipped (level 9, as a static host would serve it), by file;
//  - live speed: two lanes of 50 servers (bench/ui-50-servers.json) at the highest live speed
//    for 20 s of wall time: the simulated/wall ratio the worker achieved (the speed asks for
//    1000×), and the main thread's frame times (p50, p95).
// Figures, not assertions. BENCH_UI_SECONDS sets the live run's length, BENCH_UI_PORT the port.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';
import { findChromium, chromiumArgs } from './chromium.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4191);
const seconds = Number(process.env.BENCH_UI_SECONDS ?? 20);
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench:ui: no build/ — run `npm run build` first');
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const load = () => `load ${loadavg()[0].toFixed(2)}`;

const server = spawn(process.execPath, ['scripts/serve.mjs'], {
  env: { ...process.env, PORT: String(port) },
  stdio: 'ignore'
});
for (let i = 0; i < 50; i++) {
  try {
    await fetch(`http://127.0.0.1:${port}/`);
    break;
  } catch {
    await sleep(100);
  }
}
const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  // Requests from the page and from its dedicated workers both reach the context.
  const scripts = new Set();
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.endsWith('.js')) scripts.add(u.pathname);
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  // Ready to play: Play enabled (the worker has loaded the scenario; the button shows, disabled,
  // before that) and the charts drawn. Then the network idle, so nothing fetched late is missed.
  await page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled')).waitFor();
  await page.getByRole('region', { name: 'Charts' }).locator('canvas').first().waitFor();
  await page.waitForLoadState('networkidle');
  const files = [...scripts].map((p) => {
    const gz = gzipSync(readFileSync(root + p.replace(/^\//, '')), { level: 9 }).length;
    return { p, gz };
  });
  const total = files.reduce((a, f) => a + f.gz, 0);
  const kb = (b) => (b / 1024).toFixed(1);
  // Which file is uPlot: the client manifest names each chunk's source (the worker is a file
  // under workers/).
  const manifest = JSON.parse(
    readFileSync(
      new URL('../.svelte-kit/output/client/.vite/manifest.json', import.meta.url),
      'utf8'
    )
  );
  const charts = new Set(
    Object.entries(manifest)
      .filter(([src]) => src.toLowerCase().includes('uplot'))
      .map(([, v]) => `/${v.file}`)
  );
  const kind = (p) => (p.includes('/workers/') ? 'worker' : charts.has(p) ? 'charts' : 'page');
  const by = { page: 0, worker: 0, charts: 0 };
  for (const f of files) by[kind(f.p)] += f.gz;
  console.log(
    `first load        ${kb(total)} KB gzipped in ${files.length} JS files until idle and ready (page ${kb(by.page)}, worker ${kb(by.worker)}, charts ${kb(by.charts)}; goal ≤ 150 KB)`
  );
  for (const f of files.sort((a, b) => b.gz - a.gz).slice(0, 8))
    console.log(`                  ${kb(f.gz).padStart(6)} KB  ${f.p}`);

  // The 50-server scenario through the upload control, at the highest live speed.
  const scenario = JSON.parse(readFileSync('bench/ui-50-servers.json', 'utf8'));
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'ui-50.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(scenario))
  });
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const slider = page.getByLabel('Speed', { exact: true });
  await slider.fill((await slider.getAttribute('max')) ?? '100');
  const asked = await page.getByLabel('Speed value').textContent();
  const simSeconds = async () => {
    const [h, m, s] = (
      (await page.getByLabel('Simulated time', { exact: true }).textContent()) ?? ''
    )
      .split(':')
      .map(Number);
    return h * 3600 + m * 60 + s;
  };
  await page.evaluate(() => {
    const w = /** @type {any} */ (window);
    w.__frames = [];
    w.__count = false;
    let last = performance.now();
    const tick = (t) => {
      if (w.__count) w.__frames.push(t - last);
      last = t;
      if (w.__frames.length < 100000) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.getByRole('button', { name: 'Play' }).click();
  await sleep(2_000); // ramp-up: the first frames compile the worker's hot paths
  const sim0 = await simSeconds();
  const wall0 = performance.now();
  await page.evaluate(() => /** @type {any} */ (window.__count = true));
  await sleep(seconds * 1000);
  await page.evaluate(() => /** @type {any} */ (window.__count = false));
  const sim1 = await simSeconds();
  const wall1 = performance.now();
  const frames = await page.evaluate(() => /** @type {any} */ (window).__frames);
  await page.getByRole('button', { name: 'Pause' }).click();
  const sorted = [...frames].sort((a, b) => a - b);
  const q = (f) => sorted[Math.floor(sorted.length * f)] ?? NaN;
  const ratio = (sim1 - sim0) / ((wall1 - wall0) / 1000);
  console.log(
    `live              speed ${asked}: simulated/wall ${Math.round(ratio)}× achieved (${sim1 - sim0} s simulated in ${((wall1 - wall0) / 1000).toFixed(1)} s; goal 1000×)  [${load()}]`
  );
  console.log(
    `main thread       ${frames.length} frames: p50 ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms (goal ≤ 16.7 ms)`
  );
} finally {
  await browser.close();
  server.kill();
}
