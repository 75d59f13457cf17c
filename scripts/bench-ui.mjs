// `npm run bench:ui`: opens the built site in Chromium and measures
//  - first load: every JavaScript file fetched — by the page, by its sim worker, lazily (charts)
//    — from navigation until the playground is ready to play and the network has been idle for
//    half a second, gzipped (level 9, as a static host would serve it), by file;
//  - the first Play: from the click to the simulated clock's first move on screen, and to the
//    charts drawn (uPlot loads then), with what that Play fetched;
//  - live speed: two lanes of 50 servers (bench/ui-50-servers.json) at the highest live speed
//    for 20 s of wall time: the simulated/wall ratio the worker achieved (the speed asks for
//    1000×) and the requests/s that is, beside what 1000× would need, the engine alone and the
//    identity floor on the same requests in Node (scripts/bench-ui-floor.ts), and what the
//    page's bar said of the speed it reached (it speaks up below nine tenths of the speed); the
//    main thread's frame times (p50, p95) and its CPU time per second of play (thread time, so
//    less moved by other work on the machine than the frame times).
// Figures, not assertions. BENCH_UI_SECONDS sets the live run's length, BENCH_UI_PORT the port,
// BENCH_UI_FLOOR_HOURS the simulated hours of the Node yardsticks (default 0.25).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import {
  liveReading,
  requireBuild,
  serveAndLaunch,
  sleep,
  uploadFiftyServersAtTopSpeed
} from './bench-browser.mjs';
import { cpuSince, threadCpu } from './bench-ui-threads.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4191);
const seconds = Number(process.env.BENCH_UI_SECONDS ?? 20);
const root = requireBuild('bench:ui');
const load = () => `load ${loadavg()[0].toFixed(2)}`;

const { server, browser } = await serveAndLaunch(port);
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
  // before that). Then the network idle, so nothing fetched late is missed. The charts' code is
  // not part of it: it loads when the run's clock first moves (Charts.svelte).
  await page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled')).waitFor();
  // Time to ready: from the navigation's start to Play enabled (the page's own clock, read at
  // once; wall time, so it moves with the machine's load, printed beside it).
  const readyMs = await page.evaluate(() => performance.now());
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
  // Breakdown: the worker's own file and the chunks it imported (the ready-made scenario's
  // precompiled parse), and the time to ready.
  const workerEntry = files.filter((f) => /\/workers\/sim\.worker/.test(f.p));
  const workerChunks = files.filter((f) => f.p.includes('/workers/chunks/'));
  const sum = (fs) => fs.reduce((a, f) => a + f.gz, 0);
  console.log(
    `first load parts  worker entry ${kb(sum(workerEntry))} + its chunks ${kb(sum(workerChunks))} (${workerChunks.length}); ready to play (Play enabled) ${Math.round(readyMs)} ms after navigation  [${load()}]`
  );
  for (const f of files.sort((a, b) => b.gz - a.gz).slice(0, 8))
    console.log(`                  ${kb(f.gz).padStart(6)} KB  ${f.p}`);

  // The first Play of the ready-made scenario, timed in the page (the click to the clock's first
  // move, then to a chart's canvas): what a person waits for after pressing Play.
  const before = new Set(scripts);
  const firstPlay = await page.evaluate(
    () =>
      new Promise((done) => {
        const clock = document.querySelector('[aria-label="Simulated time"]');
        const start = clock?.textContent;
        const play = [...document.querySelectorAll('button')].find(
          (b) => b.textContent?.trim() === 'Play'
        );
        const t0 = performance.now();
        let frame = NaN;
        const poll = () => {
          const t = performance.now();
          if (Number.isNaN(frame) && clock?.textContent !== start) frame = t - t0;
          const drawn = document.querySelector('section[aria-label="Charts"] canvas');
          if (!Number.isNaN(frame) && drawn) done({ frame, charts: t - t0 });
          else if (t - t0 > 30_000) done({ frame, charts: NaN });
          else requestAnimationFrame(poll);
        };
        play?.click();
        requestAnimationFrame(poll);
      })
  );
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.waitForLoadState('networkidle');
  const played = [...scripts].filter((p) => !before.has(p));
  const playedKb = played.reduce(
    (a, p) => a + gzipSync(readFileSync(root + p.replace(/^\//, '')), { level: 9 }).length,
    0
  );
  console.log(
    `first Play        clock moves ${Math.round(firstPlay.frame)} ms after the click, charts drawn at ${Math.round(firstPlay.charts)} ms; it fetched ${kb(playedKb)} KB in ${played.length} JS files (charts ${kb(played.filter((p) => charts.has(p)).reduce((a, p) => a + gzipSync(readFileSync(root + p.slice(1)), { level: 9 }).length, 0))})  [${load()}]`
  );

  // The 50-server scenario through the upload control, at the highest live speed.
  await uploadFiftyServersAtTopSpeed(page);
  const asked = await page.getByLabel('Speed value').textContent();
  // The clock and both lanes' request counts, read in one go (from the same snapshot).
  const reading = () => liveReading(page);
  // Main-thread CPU time (thread ticks): what the page costs, whatever else the machine runs.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const cpu = async () =>
    Object.fromEntries(
      (await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value])
    );
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
  const r0 = await reading();
  const cpu0 = await cpu();
  const threads0 = threadCpu();
  const wall0 = performance.now();
  await page.evaluate(() => /** @type {any} */ (window.__count = true));
  await sleep(seconds * 1000);
  await page.evaluate(() => /** @type {any} */ (window.__count = false));
  const r1 = await reading();
  const cpu1 = await cpu();
  const threads = cpuSince(threads0, threadCpu());
  const wall1 = performance.now();
  const [sim0, sim1] = [r0.sim, r1.sim];
  const frames = await page.evaluate(() => /** @type {any} */ (window).__frames);
  // What the page said of the speed it reached (its bar, over its last 3 s), before the pause.
  const said = page.getByLabel('Speed reached', { exact: true });
  const saidText = (await said.count()) ? await said.textContent() : null;
  await page.getByRole('button', { name: 'Pause' }).click();
  const sorted = [...frames].sort((a, b) => a - b);
  const q = (f) => sorted[Math.floor(sorted.length * f)] ?? NaN;
  const wallS = (wall1 - wall0) / 1000;
  const ratio = (sim1 - sim0) / wallS;
  const rps = (r1.requests - r0.requests) / wallS;
  const perSimS = (r1.requests - r0.requests) / Math.max(1, sim1 - sim0);
  const n = (x) => Math.round(x).toLocaleString('en-GB');
  console.log(
    `live              speed ${asked}: simulated/wall ${Math.round(ratio)}× achieved (${sim1 - sim0} s simulated in ${wallS.toFixed(1)} s; goal 1000×): ${n(rps)} requests/s  [${load()}]`
  );
  console.log(
    `page said         ${saidText ? `"${saidText}" (its last 3 s)` : 'nothing of the speed reached (within nine tenths of the speed asked)'}`
  );
  // What 1000× would take, against what this machine can do on these requests at all.
  const yard = JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/bench-ui-floor.ts'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_UI_FLOOR_HOURS: process.env.BENCH_UI_FLOOR_HOURS ?? '0.25' }
    })
  );
  console.log(
    `live ceiling      ${perSimS.toFixed(0)} requests per simulated second here, so 1000× needs ${n(perSimS * 1000)} requests/s; ` +
      `in Node on the same scenario the engine alone does ${n(yard.engineRps)}/s (${Math.round(yard.engineRps / perSimS)}×) and the identity floor ${n(yard.floorRps)}/s (${Math.round(yard.floorRps / perSimS)}×)  [${load()}]`
  );
  const d = (k) => (cpu1[k] - cpu0[k]) * 1000;
  console.log(
    `main thread       ${frames.length} frames: p50 ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms (goal ≤ 16.7 ms); ` +
      `CPU ${(d('ThreadTime') / wallS).toFixed(0)} ms per s of play (script ${(d('ScriptDuration') / wallS).toFixed(0)}, layout ${(d('LayoutDuration') / wallS).toFixed(0)}, style ${(d('RecalcStyleDuration') / wallS).toFixed(0)})`
  );
  // A frame that missed its vsync lasts two intervals or more; one that made it lasts one, give
  // or take the coarsening of the page's timestamps (0.1 ms in Chromium), so a p95 of 16.8 ms at
  // 60 Hz is every frame on time, not a slow one. Counted against 1.5 × the median interval.
  const late = frames.filter((f) => f > 1.5 * q(0.5)).length;
  console.log(
    `frames late       ${late} of ${frames.length} (${((100 * late) / Math.max(1, frames.length)).toFixed(1)} %) took longer than 1.5 × the median interval (${(1.5 * q(0.5)).toFixed(1)} ms): each a missed vsync`
  );
  // The threads' own CPU time (Linux only): the sim worker's per request is the live figure's
  // cost, and moves far less with the machine's load than the requests/s above.
  if (threads) {
    const ms = (name) => threads.find(([n]) => n === name)?.[1] ?? 0;
    const worker = ms('renderer DedicatedWorker');
    const requests = r1.requests - r0.requests;
    console.log(
      `thread CPU        sim worker ${(worker / wallS).toFixed(0)} ms per s of play = ${((worker * 1000) / Math.max(1, requests)).toFixed(1)} µs per request; ` +
        `page main thread ${(ms('renderer chromium') / wallS).toFixed(0)} ms per s; ` +
        `busiest: ${threads
          .slice(0, 7)
          .map(([n, t]) => `${n} ${(t / wallS).toFixed(0)}`)
          .join(', ')} ms per s`
    );
  }
} finally {
  await browser.close();
  server.kill();
}
