// `node scripts/bench-memory.mjs [scenario] [hours]`: fast-forwards a scenario in the built site
// (default: prompt-mutator, the case that used to keep every expired decision, for a simulated
// week) and prints the JS heap of the page and of the simulation worker as it goes, from the
// Chrome DevTools Protocol (`Performance.getMetrics` / `Runtime.getHeapUsage`, after a GC), then
// times the audit table with every row loaded. Figures, not assertions.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { chromiumArgs, findChromium } from './chromium.mjs';

const [name = 'prompt-mutator', hoursArg = '168'] = process.argv.slice(2);
const hours = Number(hoursArg);
const port = 4195;
const root = new URL('../build/', import.meta.url).pathname;
if (!existsSync(root + 'index.html')) {
  console.error('bench-memory: no build/ — run `npm run build` first');
  process.exit(2);
}
const server = spawn(process.execPath, ['scripts/serve.mjs'], {
  env: { ...process.env, PORT: String(port) },
  stdio: 'ignore'
});
await new Promise((r) => setTimeout(r, 600));
const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
const mb = (b) => `${(b / 2 ** 20).toFixed(1)} MB`;
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  // The worker is a target of its own: attach to it to read its heap.
  let workerSession = null;
  let nextId = 1;
  const waiting = new Map();
  cdp.on('Target.attachedToTarget', (e) => {
    if (e.targetInfo.type === 'worker' && e.targetInfo.url.includes('sim.worker'))
      workerSession = e.sessionId;
  });
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const msg = JSON.parse(e.message);
    waiting.get(msg.id)?.(msg.result);
    waiting.delete(msg.id);
  });
  await cdp.send('Target.setAutoAttach', {
    autoAttach: true,
    waitForDebuggerOnStart: false,
    flatten: false
  });
  const inWorker = (method, params = {}) =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      void cdp.send('Target.sendMessageToTarget', {
        sessionId: workerSession,
        message: JSON.stringify({ id, method, params })
      });
    });
  async function heaps() {
    await cdp.send('HeapProfiler.collectGarbage');
    const m = await cdp.send('Performance.getMetrics');
    const pageHeap = m.metrics.find((x) => x.name === 'JSHeapUsedSize').value;
    let workerHeap = NaN;
    if (workerSession) {
      await inWorker('HeapProfiler.collectGarbage');
      workerHeap = (await inWorker('Runtime.getHeapUsage')).usedSize;
    }
    return { pageHeap, workerHeap };
  }

  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const data = JSON.parse(
    readFileSync(
      existsSync(`bench/${name}.json`) ? `bench/${name}.json` : `static/scenarios/${name}.json`,
      'utf8'
    )
  );
  data.durationMs = hours * 3_600_000;
  await page.getByLabel('Upload scenario').setInputFiles({
    name: `${name}.json`,
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(data))
  });
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const start = await heaps();
  console.log(`${name}, ${hours} h simulated`);
  console.log(`at start            page ${mb(start.pageHeap)}   worker ${mb(start.workerHeap)}`);
  const t0 = Date.now();
  for (let h = 24; h <= hours; h += 24) {
    await page.getByLabel('Hours', { exact: true }).fill('24');
    await page.getByRole('button', { name: 'Simulate 24 h' }).click();
    await page
      .getByLabel('Simulated time', { exact: true })
      .filter({ hasText: `${h}:00:00` })
      .waitFor({ timeout: 600_000 });
    await page.getByRole('progressbar', { name: 'Fast-forward progress' }).waitFor({
      state: 'hidden'
    });
    const { pageHeap, workerHeap } = await heaps();
    const stored = await page.getByLabel('Lane B stored decisions', { exact: true }).textContent();
    const rows = await page.locator('dt:text-is("Matching records") + dd').first().textContent();
    console.log(
      `after ${String(h).padStart(3)} h  (${((Date.now() - t0) / 1000).toFixed(0)} s)  page ${mb(pageHeap)}   worker ${mb(workerHeap)}   lane B stored ${stored}   audit rows ${rows}`
    );
  }

  // The audit table with every row: time a filter and a jump to the last row.
  const table = page.getByRole('grid', { name: 'Audit records' });
  const outcome = page.getByLabel('Outcome', { exact: true });
  const value = await outcome.locator('option').nth(1).getAttribute('value');
  const matching = page.locator('dt:text-is("Matching records") + dd').first();
  const before = await matching.textContent();
  let t = Date.now();
  await outcome.selectOption(value);
  await page.waitForFunction(
    (b) => document.querySelector('dd[aria-labelledby$="-count"]')?.textContent !== b,
    before
  );
  console.log(
    `audit filter        ${Date.now() - t} ms (${before} rows → ${await matching.textContent()})`
  );
  await outcome.selectOption('');
  t = Date.now();
  if (await table.count()) {
    await table.focus();
    await page.keyboard.press('End');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
    console.log(`audit jump to end   ${Date.now() - t} ms`);
  }
} finally {
  await browser.close();
  server.kill();
}
