// `node scripts/bench-ui-trace.mjs`: where the page's own CPU goes during bench:ui's live play
// (two lanes of 50 servers at the highest speed): a Chromium trace of the renderer for a few
// seconds of play, its events' self time summed by thread and by event name (the main thread:
// script, message deserialisation, style, layout, paint; the renderer's thread pool: V8's
// garbage collection helpers among others). Figures, not assertions. BENCH_UI_SECONDS sets the
// trace's length (default 5), BENCH_UI_PORT the port; the trace is written to the path printed.
// BENCH_UI_CSS adds a style to the page (what a rule would save, tried before editing),
// BENCH_UI_TRACE_CATEGORIES more trace categories (comma-separated). BENCH_UI_PROFILE=1 profiles
// the page's main thread instead of tracing it: JavaScript self time by function, named through
// the sourcemaps of a `BUILD_SOURCEMAP=1 npm run build`.
import { readFileSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  requireBuild,
  serveAndLaunch,
  sleep,
  sourcePositions,
  uploadFiftyServersAtTopSpeed
} from './bench-browser.mjs';

const port = Number(process.env.BENCH_UI_PORT ?? 4191);
const seconds = Number(process.env.BENCH_UI_SECONDS ?? 5);
const root = requireBuild('bench:ui:trace');

const { server, browser } = await serveAndLaunch(port);
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  // An experiment's style, added to the page (BENCH_UI_CSS): what a rule saves, before editing.
  if (process.env.BENCH_UI_CSS)
    await page.addInitScript((css) => {
      addEventListener('DOMContentLoaded', () => {
        const s = document.createElement('style');
        s.textContent = css;
        document.head.append(s);
      });
    }, process.env.BENCH_UI_CSS);
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled')).waitFor();
  await uploadFiftyServersAtTopSpeed(page);
  await page.getByRole('button', { name: 'Play' }).click();
  await sleep(2_000); // ramp-up, as bench:ui
  if (process.env.BENCH_UI_PROFILE === '1') {
    await profileMain(context, page);
    // Not through `finally` (the trace's path below is skipped): its server must not outlive
    // it, or the next bench on this port measures this build.
    await browser.close();
    server.kill();
    process.exit(0);
  }
  const out = join(mkdtempSync(join(tmpdir(), 'page-trace-')), 'trace.json');
  const load0 = loadavg()[0];
  await browser.startTracing(page, {
    path: out,
    categories: [
      'devtools.timeline',
      'disabled-by-default-devtools.timeline',
      'disabled-by-default-devtools.timeline.frame',
      'toplevel',
      'v8',
      'v8.execute',
      'blink',
      'cc',
      'gpu',
      'disabled-by-default-v8.gc',
      'ipc',
      'mojom',
      ...(process.env.BENCH_UI_TRACE_CATEGORIES ?? '').split(',').filter(Boolean)
    ]
  });
  await sleep(seconds * 1000);
  await browser.stopTracing();
  await page.getByRole('button', { name: 'Pause' }).click();

  const { traceEvents } = JSON.parse(readFileSync(out, 'utf8'));
  const names = new Map();
  const procs = new Map();
  for (const e of traceEvents)
    if (e.ph === 'M' && e.name === 'process_name') procs.set(e.pid, e.args.name);
  for (const e of traceEvents)
    if (e.ph === 'M' && e.name === 'thread_name')
      names.set(`${e.pid}:${e.tid}`, `${procs.get(e.pid) ?? e.pid} ${e.args.name}`);
  // Self time per thread and event name: complete events ('X') and begin/end pairs, nested.
  const byThread = new Map();
  for (const e of traceEvents) {
    if (e.ph !== 'X' && e.ph !== 'B' && e.ph !== 'E') continue;
    const k = `${e.pid}:${e.tid}`;
    if (!byThread.has(k)) byThread.set(k, []);
    byThread.get(k).push(e);
  }
  const result = [];
  for (const [k, evs] of byThread) {
    // Flatten B/E into spans.
    const spans = [];
    const open = [];
    for (const e of evs.sort((a, b) => a.ts - b.ts)) {
      // Thread time (CPU) where the event has it, else wall time.
      if (e.ph === 'X')
        spans.push({ name: e.name, ts: e.ts, end: e.ts + (e.dur ?? 0), cpu: e.tdur ?? e.dur ?? 0 });
      else if (e.ph === 'B') open.push(e);
      else {
        const b = open.pop();
        if (b)
          spans.push({
            name: b.name,
            ts: b.ts,
            end: e.ts,
            cpu: b.tts != null && e.tts != null ? e.tts - b.tts : e.ts - b.ts
          });
      }
    }
    spans.sort((a, b) => a.ts - b.ts || b.end - a.end);
    const self = new Map();
    const stack = [];
    let top = 0;
    for (const s of spans) {
      while (stack.length && stack[stack.length - 1].end <= s.ts) stack.pop();
      const parent = stack[stack.length - 1];
      const d = s.cpu;
      if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - d);
      else top += d;
      self.set(s.name, (self.get(s.name) ?? 0) + d);
      stack.push(s);
    }
    result.push({ thread: names.get(k) ?? k, top, self });
  }
  result.sort((a, b) => b.top - a.top);
  console.log(
    `page trace: ${seconds} s of live play at the highest speed  [load ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}]`
  );
  for (const r of result.slice(0, 12)) {
    console.log(
      `${r.thread}: ${(r.top / 1000 / seconds).toFixed(0)} ms per s in events (thread time)`
    );
    for (const [n, t] of [...r.self].sort((a, b) => b[1] - a[1]).slice(0, 18))
      if (t / 1000 / seconds >= 0.5)
        console.log(`   ${(t / 1000 / seconds).toFixed(1).padStart(6)}  ${n}`);
  }
  // Counts, which move far less with the machine's load than times: how much the main thread
  // laid out, restyled and painted per second of play.
  const mainKeys = [...names].filter(([, n]) => n.endsWith(' CrRendererMain')).map(([k]) => k);
  const per = (f) => (f / seconds).toFixed(0);
  let layouts = 0,
    dirty = 0,
    styles = 0,
    restyled = 0,
    paints = 0,
    canvases = 0,
    frames = 0;
  for (const k of mainKeys)
    for (const e of byThread.get(k) ?? []) {
      if (e.ph !== 'X') continue;
      if (e.name === 'Layout') {
        layouts++;
        dirty += e.args?.beginData?.dirtyObjects ?? 0;
      } else if (e.name === 'UpdateLayoutTree') {
        styles++;
        restyled += e.args?.elementCount ?? 0;
      } else if (e.name === 'Paint') paints++;
      else if (e.name === 'Canvas2DResourceProviderSharedImage::ProduceCanvasResource') canvases++;
      else if (e.name === 'ProxyMain::BeginMainFrame::commit') frames++;
    }
  console.log(
    `main thread per s: ${per(frames)} commits, ${per(layouts)} layouts (${per(dirty)} objects laid out), ` +
      `${per(styles)} style recalcs (${per(restyled)} elements), ${per(paints)} paints, ${per(canvases)} canvas resources`
  );
  console.log(`trace: ${out}`);
} finally {
  await browser.close();
  server.kill();
}

/** The main thread's V8 CPU profile over `seconds` of play: self time by function, ms per s. */
async function profileMain(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await sleep(seconds * 1000);
  const { profile } = await cdp.send('Profiler.stop');
  await page.getByRole('button', { name: 'Pause' }).click();
  const where = sourcePositions(root);
  const name = (cf) => {
    const fn = cf.functionName || '(anonymous)';
    const pos = where(cf);
    if (pos) return `${pos.name ?? fn} (${pos.module}:${pos.line})`;
    return cf.url ? `${fn} (${cf.url.replace(/.*\//, '')}:${cf.lineNumber})` : fn;
  };
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++)
    self.set(
      profile.samples[i],
      (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0)
    );
  const byFn = new Map();
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0;
    if (t) byFn.set(name(node.callFrame), (byFn.get(name(node.callFrame)) ?? 0) + t);
  }
  console.log(`page main thread profile: ${seconds} s of live play, self time in ms per s`);
  for (const [f, t] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${(t / 1000 / seconds).toFixed(1).padStart(6)}  ${f}`);
}
