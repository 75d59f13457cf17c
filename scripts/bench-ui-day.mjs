// `npm run bench:ui:day`: the whole simulated day of live play, in Chromium, as bench:ui plays
// its first 20 s: the built site, two lanes of 50 servers (bench/ui-50-servers.json) at the
// highest live speed (1000×), played until the day ends. Every 10 s of wall time it prints the
// simulated hour reached, the speed over those 10 s, the requests played a second, the sim
// worker's CPU (ms a second, and µs a request) and the page's main thread and V8's helper
// threads' CPU. The scenario's request rate climbs through the day (its tight loops never give
// up): ~42,000 a second at 1000× in its first hours, ~74,000 in its last, so the late rows are
// the ones to read. At the end: the wall time the day took, from the click on Play to Play back (86.4 s at exactly 1000×).
// Then the yardstick: the same day by the engine alone in Node on this machine (no page, no
// IndexedDB, no audit index; scripts/bench-ui-floor.ts), so that a figure taken on one machine
// can be read against one taken on another (BENCH_UI_DAY_NODE=0 skips it).
// Figures, not assertions. BENCH_UI_PORT sets the port, BENCH_UI_STEP_S the row's seconds.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import {
  liveReading,
  openFiftyServersAtTopSpeed,
  requireBuild,
  serveAndLaunch,
  sleep
} from './bench-browser.mjs';
import { cpuSince, threadCpu } from './bench-ui-threads.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4191);
const step = Number(process.env.BENCH_UI_STEP_S ?? 10);
requireBuild('bench:ui:day');
const n = (x) => Math.round(x).toLocaleString('en-GB');

const { server, browser } = await serveAndLaunch(port);
try {
  const page = await openFiftyServersAtTopSpeed(browser, port);
  await page.getByRole('button', { name: 'Play' }).click();
  const start = performance.now();
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  // Play comes back when the clock stops at the day's end.
  const endAt = page
    .getByRole('button', { name: 'Play' })
    .waitFor({ timeout: 600_000 })
    .then(() => performance.now());
  let r0 = await liveReading(page);
  let c0 = threadCpu();
  let w0 = performance.now();
  const day = 24 * 3600;
  for (;;) {
    await sleep(step * 1000);
    const r1 = await liveReading(page);
    const c1 = threadCpu();
    const w1 = performance.now();
    const s = (w1 - w0) / 1000;
    const requests = r1.requests - r0.requests;
    const th = Object.fromEntries(cpuSince(c0, c1) ?? []);
    const worker = th['renderer DedicatedWorker'] ?? NaN;
    const ended = r1.sim >= day;
    console.log(
      `${(r1.sim / 3600).toFixed(1).padStart(4)} h  ${n((r1.sim - r0.sim) / s).padStart(5)}×  ${n(requests / s).padStart(6)} requests/s  sim worker ${n(worker / s)} ms/s = ${((worker * 1000) / requests).toFixed(1)} µs a request  main thread ${n((th['renderer chromium'] ?? NaN) / s)}  V8 helpers ${n((th['renderer ThreadPoolForeg'] ?? NaN) / s)} ms/s${ended ? '  (the day ended within these seconds)' : ''}  [load ${loadavg()[0].toFixed(2)}]`
    );
    if (ended) break;
    [r0, c0, w0] = [r1, c1, w1];
  }
  console.log(
    `the simulated day took ${(((await endAt) - start) / 1000).toFixed(1)} s of wall time (86.4 s is 1000×)`
  );
} finally {
  await browser.close();
  server.kill();
}

if (process.env.BENCH_UI_DAY_NODE !== '0') {
  const yard = JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/bench-ui-floor.ts'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_UI_FLOOR_HOURS: '24', BENCH_UI_FLOOR_ENGINE_ONLY: '1' }
    })
  );
  console.log(
    `the engine alone in Node, the same day on this machine: ${(yard.engineMs / 1000).toFixed(1)} s (${n((24 * 3600 * 1000) / yard.engineMs)}×, ${n(yard.engineRps)} requests/s over ${n(yard.requests)} requests)  [load ${loadavg()[0].toFixed(2)}]`
  );
}
