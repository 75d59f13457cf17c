// `npm run bench:profile:worker`: where a live second of the playground's sim worker goes, in
// Chromium. Opens the built site (build it with sourcemaps for source names:
// `BUILD_SOURCEMAP=1 npm run build`), loads bench/ui-50-servers.json (two lanes of 50 servers),
// plays at the highest live speed, and records a V8 CPU profile of the worker thread through the
// DevTools protocol (the page's session attaches to its dedicated worker). Self time is then
// summed by source module (through the worker's sourcemap when there is one) and by function.
// Figures, not assertions. BENCH_UI_SECONDS sets the profile's length (default 10),
// BENCH_PROFILE_RAMP the seconds of play before it starts (default 2: the scenario's first hours;
// 45 profiles its busiest, where the worker is saturated and checkpoints are rarer), BENCH_UI_PORT
// the port; the .cpuprofile is written to the path printed at the end.
// `--heap` (`npm run bench:profile:worker -- --heap`) records a sampling heap profile instead,
// counting the objects the collector has already freed too (V8's includeObjectsCollectedBy*):
// what each function allocates per second of live play, the garbage the worker makes, not what
// it keeps. Sampled every 16 KiB on average, so the bytes per second are an estimate.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  liveReading,
  requireBuild,
  serveAndLaunch,
  sleep,
  sourcePositions,
  uploadFiftyServersAtTopSpeed
} from './bench-browser.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4191);
const seconds = Number(process.env.BENCH_UI_SECONDS ?? 10);
const heap = process.argv.includes('--heap');
const root = requireBuild('bench:profile:worker');

const { server, browser } = await serveAndLaunch(port);
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  // The worker's own session, spoken to through the page's (non-flat attach: messages wrapped).
  let workerSession = null;
  let nextId = 1;
  const pending = new Map();
  cdp.on('Target.attachedToTarget', (e) => {
    if (e.targetInfo.type === 'worker' && e.targetInfo.url.includes('sim.worker'))
      workerSession = e.sessionId;
    else
      // Anything else (the editor's workers) runs on: it was paused for nobody.
      void cdp
        .send('Target.sendMessageToTarget', {
          sessionId: e.sessionId,
          message: JSON.stringify({ id: 0, method: 'Runtime.runIfWaitingForDebugger' })
        })
        .catch(() => {});
  });
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const m = JSON.parse(e.message);
    if (m.id && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    }
  });
  const wsend = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result)));
      void cdp.send('Target.sendMessageToTarget', {
        sessionId: workerSession,
        message: JSON.stringify({ id, method, params })
      });
    });
  await cdp.send('Target.setAutoAttach', {
    autoAttach: true,
    waitForDebuggerOnStart: false,
    flatten: false
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled')).waitFor();
  for (let i = 0; i < 100 && !workerSession; i++) await sleep(50);
  if (!workerSession) throw new Error('no sim worker target attached');

  await uploadFiftyServersAtTopSpeed(page);
  await page.getByRole('button', { name: 'Play' }).click();
  await sleep(Number(process.env.BENCH_PROFILE_RAMP ?? 2) * 1000); // ramp-up (2 s: as bench:ui)
  const load0 = loadavg()[0];
  const r0 = await liveReading(page);
  let profile;
  if (heap) {
    await wsend('HeapProfiler.enable');
    await wsend('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    });
    await sleep(seconds * 1000);
    profile = (await wsend('HeapProfiler.stopSampling')).profile;
  } else {
    await wsend('Profiler.enable');
    await wsend('Profiler.setSamplingInterval', { interval: 200 });
    await wsend('Profiler.start');
    await sleep(seconds * 1000);
    profile = (await wsend('Profiler.stop')).profile;
  }
  // The requests played meanwhile: the allocations or the worker's time per request, which move
  // less with the machine's load than per second do.
  const requests = (await liveReading(page)).requests - r0.requests;
  // At the highest speed a short scenario can reach its end inside the profile: nothing to pause.
  const pause = page.getByRole('button', { name: 'Pause' });
  if (await pause.isVisible()) await pause.click();
  else
    console.log(
      '(the run reached its end during the profile: a shorter BENCH_UI_SECONDS profiles only play)'
    );
  const dir = mkdtempSync(join(tmpdir(), 'worker-profile-'));
  const out = join(dir, heap ? 'sim-worker.heapprofile' : 'sim-worker.cpuprofile');
  writeFileSync(out, JSON.stringify(profile));
  if (heap) {
    heapReport(profile, sourcePositions(root), load0, requests);
    console.log(`profile: ${out}`);
  } else cpuReport(profile, sourcePositions(root), load0, out, requests);
} finally {
  await browser.close();
  server.kill();
}

/** A CPU profile's self time by source module and by function. */
function cpuReport(profile, where, load0, out, requests) {
  // Self time by sample.
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++)
    self.set(
      profile.samples[i],
      (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0)
    );
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byModule = new Map();
  const byFn = new Map();
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0;
    if (!t) continue;
    const cf = node.callFrame;
    let mod = cf.url ? cf.url.replace(/.*\//, '') : `(${cf.functionName || 'program'})`;
    let fn = cf.functionName || '(anonymous)';
    const pos = where(cf);
    if (pos) {
      mod = pos.module;
      fn = `${pos.name ?? fn} (${mod}:${pos.line})`;
    }
    byModule.set(mod, (byModule.get(mod) ?? 0) + t);
    byFn.set(fn, (byFn.get(fn) ?? 0) + t);
  }
  const pct = (t) => ((100 * t) / total).toFixed(1).padStart(5) + ' %';
  console.log(
    `sim worker profile: ${(total / 1e6).toFixed(1)} s sampled over ${seconds} s of live play at the highest speed  [load ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}]`
  );
  const idle = profile.nodes
    .filter((n) => n.callFrame.functionName === '(idle)')
    .reduce((a, n) => a + (self.get(n.id) ?? 0), 0);
  console.log(
    `${requests.toLocaleString('en-GB')} requests played: ${((total - idle) / Math.max(1, requests)).toFixed(2)} µs of the worker's busy time per request`
  );
  console.log('by module:');
  for (const [m, t] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${pct(t)}  ${m}`);
  console.log('by function:');
  for (const [f, t] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${pct(t)}  ${f}`);
  console.log(`profile: ${out}`);
}

/**
 * A sampling heap profile by function: bytes allocated per second (self), and by the nearest
 * frame of the project's own source (for allocations inside built-ins and libraries: who asked).
 */
function heapReport(profile, where, load0, requests) {
  const byFn = new Map();
  const byOwn = new Map();
  const byModule = new Map();
  let total = 0;
  const name = (cf) => {
    const pos = where(cf);
    if (!pos)
      return {
        fn: `${cf.functionName || '(anonymous)'} (${cf.url.replace(/.*\//, '') || 'native'})`,
        own: false,
        mod: cf.url.replace(/.*\//, '') || '(native)'
      };
    return {
      fn: `${pos.name ?? cf.functionName ?? '(anonymous)'} (${pos.module}:${pos.line})`,
      own: pos.module.startsWith('src/'),
      mod: pos.module
    };
  };
  const walk = (node, ownAbove) => {
    const n = name(node.callFrame);
    const own = n.own ? n.fn : ownAbove;
    if (node.selfSize) {
      total += node.selfSize;
      byFn.set(n.fn, (byFn.get(n.fn) ?? 0) + node.selfSize);
      byModule.set(n.mod, (byModule.get(n.mod) ?? 0) + node.selfSize);
      const o = own ?? n.fn;
      byOwn.set(o, (byOwn.get(o) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, own);
  };
  walk(profile.head, null);
  const mbs = (b) => (b / seconds / 1e6).toFixed(2).padStart(6) + ' MB/s';
  const pct = (b) => ((100 * b) / total).toFixed(1).padStart(5) + ' %';
  console.log(
    `sim worker allocations: ${mbs(total)} sampled over ${seconds} s of live play at the highest speed  [load ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}]`
  );
  console.log(
    `${requests.toLocaleString('en-GB')} requests played: ${(total / Math.max(1, requests)).toFixed(0)} bytes allocated per request`
  );
  for (const [title, m] of [
    ['by module:', byModule],
    ['by function (self):', byFn],
    ["by the project's nearest function:", byOwn]
  ]) {
    console.log(title);
    for (const [f, b] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 30))
      console.log(`  ${mbs(b)} ${pct(b)}  ${f}`);
  }
}
