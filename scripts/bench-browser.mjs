// The browser benchmarks' shared start: serve build/ (scripts/serve.mjs) on a port, wait until it
// answers, and launch Debian's Chromium through Playwright. The caller closes the browser and
// kills the server when it is done.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { findChromium, chromiumArgs } from './chromium.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** @param {number} port */
export async function serveAndLaunch(port) {
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
  const browser = await chromium.launch({ executablePath: findChromium(), args });
  return { server, browser };
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
