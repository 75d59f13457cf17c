// The IndexedDB benchmarks' page (bench-idb-audit.mjs, bench-idb-decisions.mjs): `entry` (a
// TypeScript module that sets its functions on globalThis) bundled with esbuild, served as the only
// script of a blank page, opened in Debian's Chromium. The caller closes the browser and the server.
import { createServer } from 'node:http';
import { build } from 'esbuild';
import { chromium } from '@playwright/test';
import { findChromium, chromiumArgs } from './chromium.mjs';

/** @param {string} entry */
export async function openIdbBenchPage(entry) {
  const out = await build({
    stdin: { contents: entry, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    format: 'iife',
    write: false,
    target: 'es2022'
  });
  const js = out.outputFiles[0].text;
  const server = createServer((req, res) => {
    if (req.url === '/bench.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else
      res.writeHead(200, { 'content-type': 'text/html' }).end('<script src="/bench.js"></script>');
  });
  await new Promise((r) => server.listen(Number(process.env.E2E_PORT ?? 4197), '127.0.0.1', r));
  const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  return { server, browser, page };
}
