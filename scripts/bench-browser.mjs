// The browser benchmarks' shared start: serve build/ (scripts/serve.mjs) on a port, wait until it
// answers, and launch Debian's Chromium through Playwright. The caller closes the browser and
// kills the server when it is done.
import { spawn } from 'node:child_process';
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
