// `npm run bench:ui`: opens the built site in Chromium, runs two lanes of 50 servers at the
// highest live speed for 20 s, and prints the 95th-percentile frame time and the first-load
// JavaScript size, gzipped. Figures, not assertions.
import { spawn } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';
import { findChromium, chromiumArgs } from './chromium.mjs';

const port = 4191;
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench:ui: no build/ — run `npm run build` first');
  process.exit(2);
}

// First-load JS: every script the root page loads before any interaction, gzipped (counted
// from the network below). Monaco, uPlot and the worker load later, on demand.
const server = spawn(process.execPath, ['scripts/serve.mjs'], {
  env: { ...process.env, PORT: String(port) },
  stdio: 'ignore'
});
await new Promise((r) => setTimeout(r, 600));
const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const loaded = [];
  page.on('response', (r) => {
    if (r.url().endsWith('.js')) loaded.push(r.url());
  });
  const scenario = JSON.parse(readFileSync('bench/ui-50-servers.json', 'utf8'));
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const firstLoad = [...new Set(loaded)];
  let bytes = 0;
  for (const u of firstLoad) {
    const path = new URL(u).pathname.replace(/^\//, '');
    if (path.includes('worker')) continue;
    bytes += gzipSync(readFileSync(root + path)).length;
  }
  // Load the 50-server scenario through the upload control, at the highest live speed.
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'ui-50.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(scenario))
  });
  await page.getByRole('button', { name: 'Play' }).waitFor();
  await page.getByLabel('Speed', { exact: true }).fill('100');
  await page.evaluate(() => {
    const w = /** @type {any} */ (window);
    w.__frames = [];
    let last = performance.now();
    const tick = (t) => {
      w.__frames.push(t - last);
      last = t;
      if (w.__frames.length < 100000) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.getByRole('button', { name: 'Play' }).click();
  await page.waitForTimeout(20_000);
  const frames = await page.evaluate(() => /** @type {any} */ (window).__frames.slice(5));
  await page.getByRole('button', { name: 'Pause' }).click();
  const sorted = [...frames].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? NaN;
  const simTime = await page.getByLabel('Simulated time', { exact: true }).textContent();
  console.log(`frames            ${frames.length} in 20 s (simulated ${simTime})`);
  console.log(`frame time p50    ${sorted[Math.floor(sorted.length * 0.5)]?.toFixed(1)} ms`);
  console.log(`frame time p95    ${p95.toFixed(1)} ms (goal ≤ 16.7 ms)`);
  console.log(
    `first-load JS     ${(bytes / 1024).toFixed(1)} KB gzipped in ${firstLoad.length} files (goal ≤ 150 KB)`
  );
} finally {
  await browser.close();
  server.kill();
}
