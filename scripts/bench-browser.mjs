// The browser benchmarks' shared start: serve build/ (scripts/serve.mjs) on a port, wait until it
// answers, and launch Debian's Chromium through Playwright. The caller closes the browser and
// kills the server when it is done.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { findChromium, chromiumArgs } from './chromium.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Refuses a port something already listens on: the server spawned below would fail to bind and
 * the bench would measure whatever answers there (a server an earlier bench left, serving another
 * checkout's build) without a word.
 */
async function requireFreePort(port) {
  await new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e) =>
      reject(
        new Error(
          e.code === 'EADDRINUSE'
            ? `port ${port} is in use (a server an earlier bench left?): stop it, or set BENCH_UI_PORT`
            : e.message
        )
      )
    );
    probe.listen(port, '127.0.0.1', () => probe.close(resolve));
  });
}

/** @param {number} port */
export async function serveAndLaunch(port) {
  await requireFreePort(port);
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
  // BENCH_JS_FLAGS (e.g. `--trace-deopt`) passes V8 flags to the page and its worker; their
  // output reaches this terminal with DEBUG=pw:browser.
  const jsFlags = process.env.BENCH_JS_FLAGS;
  const args = jsFlags ? [...chromiumArgs, `--js-flags=${jsFlags}`] : chromiumArgs;
  if (process.env.BENCH_OFF_RECORD !== '1') return { server, browser: await diskBrowser(args) };
  const browser = await chromium.launch({ executablePath: findChromium(), args });
  return { server, browser };
}

/**
 * The browser with a profile on disk, as a user's is (BENCH_OFF_RECORD=1: Playwright's own
 * newContext(), off the record). Off the record, IndexedDB lives in Chromium's in-memory LevelDB,
 * which costs its threads ~4× what files do (bench:ui: ~415 against ~107 ms per s of live play),
 * so the benchmarks measure what a user meets. The stand-in answers newContext() with the one
 * persistent context (of its options only the viewport is used); close() removes the profile.
 */
async function diskBrowser(args) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  let context = null;
  return {
    async newContext(options = {}) {
      context = await chromium.launchPersistentContext(dir, {
        executablePath: findChromium(),
        args,
        viewport: options.viewport
      });
      return context;
    },
    async newPage(options = {}) {
      return (await this.newContext(options)).newPage();
    },
    // A persistent context's own browser traces (bench:ui:trace).
    startTracing: (...a) => context.browser().startTracing(...a),
    stopTracing: () => context.browser().stopTracing(),
    async close() {
      await context?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** The built site's directory; exits with what to run first when there is none. */
export function requireBuild(name) {
  const root = new URL('../build/', import.meta.url).pathname;
  if (!existsSync(root + 'index.html')) {
    console.error(`${name}: no build/ — run \`npm run build\` first`);
    process.exit(2);
  }
  return root;
}

/**
 * Load bench/ui-50-servers.json through the page's upload control and set the highest live speed;
 * the caller clicks Play. The live benchmarks (bench:ui, its trace, the worker's profile) all play
 * this scenario the same way.
 */
export async function uploadFiftyServersAtTopSpeed(page) {
  const scenario = JSON.parse(readFileSync('bench/ui-50-servers.json', 'utf8'));
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'ui-50.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(scenario))
  });
  // The upload is read by a module loaded on first use: Play is there before the scenario is,
  // so wait for the scenario itself (its title in the lesson panel), not for the button.
  await page.getByRole('region', { name: 'Lesson' }).filter({ hasText: '50 servers' }).waitFor();
  await page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled')).waitFor();
  const slider = page.getByLabel('Speed', { exact: true });
  await slider.fill((await slider.getAttribute('max')) ?? '100');
}

/**
 * A new page of the playground in `browser` (1440×900, as the live benchmarks take it), ready to
 * play bench/ui-50-servers.json at the highest live speed: the caller clicks Play.
 */
export async function openFiftyServersAtTopSpeed(browser, port) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).and(page.locator(':enabled')).waitFor();
  await uploadFiftyServersAtTopSpeed(page);
  return page;
}

/**
 * The playground's simulated time (s) and both lanes' request counts, as the page shows them: the
 * live benchmarks read it before and after their window, for the speed and the requests played.
 */
export function liveReading(page) {
  return page.evaluate(() => {
    const text = (label) => document.querySelector(`[aria-label="${label}"]`)?.textContent ?? '';
    const count = (label) => Number(text(label).replace(/[^0-9]/g, ''));
    const [h, m, s] = text('Simulated time').split(':').map(Number);
    return {
      sim: h * 3600 + m * 60 + s,
      requests: count('Lane A requests') + count('Lane B requests')
    };
  });
}

/**
 * Where a CPU profile's call frame is in the source, through the built site's sourcemaps (a
 * `BUILD_SOURCEMAP=1 npm run build`): `{ module, name, line }`, or null when the frame's file has
 * no map. Used by the worker's profile and the page's trace; each map is read once.
 */
export function sourcePositions(root) {
  const maps = new Map();
  const mapFor = (url) => {
    if (maps.has(url)) return maps.get(url);
    let m = null;
    try {
      const p = root + new URL(url).pathname.replace(/^\//, '') + '.map';
      if (existsSync(p)) m = new TraceMap(readFileSync(p, 'utf8'));
    } catch {
      /* not a file of the site */
    }
    maps.set(url, m);
    return m;
  };
  return (cf) => {
    const map = cf.url && mapFor(cf.url);
    if (!map || cf.lineNumber < 0) return null;
    const pos = originalPositionFor(map, { line: cf.lineNumber + 1, column: cf.columnNumber });
    if (!pos.source) return null;
    const module = pos.source.replace(/.*node_modules\//, '').replace(/.*\/src\//, 'src/');
    return { module, name: pos.name, line: pos.line };
  };
}
