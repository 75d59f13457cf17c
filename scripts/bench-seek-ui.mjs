// `npm run bench:seek:ui`: what a seek costs in the browser (issue #10), on the built site in
// Chromium. A simulated day of bench/retry-storm.json (or the scenario given as the argument) is
// uploaded and run to its end with the scrubber's End key; then the scrubber is clicked back to a
// quarter, a half and three quarters of the day, playing forward to the end between. For each:
// the wall time from the click to the run being there (the scrubber no longer busy), and what the
// page itself says the seek took. A seek back copies the last engine checkpoint before t and runs
// on to t (engine-checkpoints.ts); so does playing on to the end from there, from the checkpoint
// nearest the end. Figures, not assertions. BENCH_UI_PORT sets the port.
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { serveAndLaunch } from './bench-browser.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4192);
const file = process.argv[2] ?? 'bench/retry-storm.json';
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench:seek:ui: no build/ — run `npm run build` first');
  process.exit(2);
}
const { server, browser } = await serveAndLaunch(port);
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`http://127.0.0.1:${port}/`);
  const play = page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled'));
  await play.waitFor();
  const span = await page.getByRole('slider', { name: 'Time' }).getAttribute('aria-valuemax');
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'bench.json',
    mimeType: 'application/json',
    buffer: readFileSync(file)
  });
  const time = page.getByRole('slider', { name: 'Time' });
  // Loaded: the scrubber's span is the uploaded scenario's.
  await page.waitForFunction(
    (old) =>
      document.querySelector('[role=slider][aria-label=Time]')?.getAttribute('aria-valuemax') !==
      old,
    span
  );
  await play.waitFor();
  const max = Number(await time.getAttribute('aria-valuemax'));
  const settled = () =>
    page.waitForFunction(
      () =>
        document.querySelector('[role=slider][aria-label=Time]')?.getAttribute('aria-busy') ===
        'false',
      null,
      { timeout: 900_000, polling: 100 }
    );
  const at = async () => Number(await time.getAttribute('aria-valuenow'));
  const toEnd = async () => {
    await time.focus();
    const t0 = performance.now();
    await time.press('End');
    await page.waitForFunction(
      (m) =>
        Number(
          document.querySelector('[role=slider][aria-label=Time]')?.getAttribute('aria-valuenow')
        ) === m,
      max,
      { timeout: 900_000, polling: 100 }
    );
    await settled();
    return performance.now() - t0;
  };
  console.log(`${file}: ${(max / 3600).toFixed(1)} h simulated (load ${loadavg()[0].toFixed(2)})`);
  console.log(`  run to the end (End key): ${((await toEnd()) / 1000).toFixed(1)} s`);
  for (const frac of [0.25, 0.5, 0.75]) {
    await time.scrollIntoViewIfNeeded();
    const box = await time.boundingBox();
    const t0 = performance.now();
    await page.mouse.click(box.x + box.width * frac, box.y + box.height / 2);
    await page.waitForFunction(
      (m) =>
        Number(
          document.querySelector('[role=slider][aria-label=Time]')?.getAttribute('aria-valuenow')
        ) < m,
      max,
      { timeout: 900_000, polling: 100 }
    );
    await settled();
    const wall = performance.now() - t0;
    const said = await page.getByLabel('Seek time', { exact: true }).textContent();
    const h = ((await at()) / 3600).toFixed(2);
    console.log(
      `  seek back to ${h} h: ${(wall / 1000).toFixed(1)} s from the click (the page says ${(Number(said) / 1000).toFixed(1)} s)`
    );
    console.log(`  play on to the end: ${((await toEnd()) / 1000).toFixed(1)} s`);
  }
} finally {
  await browser.close();
  server.kill();
}
