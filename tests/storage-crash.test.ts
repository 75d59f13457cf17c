/**
 * Crash safety and tabs (SPEC §4). A browser killed mid-run loses at most its last unflushed
 * batch, which the page never counted as saved; two tabs on one profile run in their own
 * namespaces, without errors and without touching each other's decisions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, expect, test, type Page } from '@playwright/test';
import { chromiumArgs, findChromium } from '../scripts/chromium.mjs';
import type { StoredDecision } from '../src/lib/machine/types';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario } from '../src/lib/sim/input/scenario';
import {
  DECISIONS_DB,
  dayLink,
  diskCount,
  diskDecisions,
  openDay,
  runId,
  shown,
  simulate
} from './storage-helpers';

/** A Chromium of our own on `profile`, so the test can kill its process outright. */
async function launch(profile: string) {
  const proc: ChildProcess = spawn(findChromium()!, [
    ...chromiumArgs,
    '--headless=new',
    `--user-data-dir=${profile}`,
    '--remote-debugging-port=0',
    'about:blank'
  ]);
  const ws = await new Promise<string>((resolve, reject) => {
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    proc.on('exit', () => reject(new Error(`Chromium exited before it listened: ${err}`)));
  });
  const browser = await chromium.connectOverCDP(ws);
  return { proc, browser, context: browser.contexts()[0]! };
}

test('killed mid-run: every decision shown as saved is on disk when the profile is reopened', async ({
  baseURL
}) => {
  test.setTimeout(120_000);
  const profile = mkdtempSync(join(tmpdir(), 'spl-crash-'));
  try {
    const first = await launch(profile);
    const page = await first.context.newPage();
    await page.goto(new URL(dayLink(), baseURL).href);
    await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 20_000 });
    await page.getByLabel('Hours', { exact: true }).fill('24');
    await page.getByRole('button', { name: 'Simulate 24 h' }).click();
    // Mid-run: some decisions saved, the fast-forward still going.
    await expect
      .poll(() => shown(page, 'Lane B decisions saved'), { timeout: 60_000 })
      .toBeGreaterThanOrEqual(50);
    const saved = await shown(page, 'Lane B decisions saved');
    const run = (await runId(page))!;
    const exited = new Promise((resolve) => first.proc.once('exit', resolve));
    first.proc.kill('SIGKILL');
    await exited;

    const second = await launch(profile);
    const reopened = await second.context.newPage();
    await reopened.goto(new URL('./scenarios/reconnect-bypass.json', baseURL).href);
    const onDisk = await diskCount(reopened, DECISIONS_DB, [run, 'B']);
    test.info().annotations.push({
      type: 'figures',
      description: `shown as saved before the kill: ${saved}; on disk after: ${onDisk}`
    });
    expect(onDisk).toBeGreaterThanOrEqual(saved);
    expect(onDisk).toBeLessThanOrEqual(299);
    await second.browser.close();
    const gone = new Promise((resolve) => second.proc.once('exit', resolve));
    second.proc.kill('SIGKILL');
    await gone;
  } finally {
    // Chromium's helper processes outlive a SIGKILLed browser by a moment and may still write
    // into the profile; a temp directory left behind is not a test failure.
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch {
      /* left for the OS to clean */
    }
  }
});

async function storedShapes(page: Page, run: string): Promise<string[]> {
  return (await diskDecisions(page, [run, 'B']))
    .map((d) => `${d.server}|${d.identity}|${d.verdict}`)
    .sort();
}

test('two tabs on one profile at once: each run in its own namespace, nothing lost, no errors', async ({
  context
}) => {
  test.setTimeout(120_000);
  // What `lab run` holds in lane B's durable store at the end of the same hour.
  const parsed = parseScenario(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8'));
  if (!parsed.ok) throw new Error(parsed.errors[0]?.message);
  const sim = new Simulation(parsed.scenario);
  sim.runToEnd();
  const entries = sim.lanes.B.host.store.entries() as StoredDecision[];
  const expected = entries.map((d) => `${d.server}|${d.identity}|${d.verdict}`).sort();
  expect(expected).toHaveLength(14);
  const one = await context.newPage();
  await openDay(one, 1);
  // The second tab starts as a duplicate of the first (same sessionStorage): it must not share
  // the first tab's run while that tab holds it.
  const copied = await one.evaluate(() => sessionStorage.getItem('sampling-policy-lab-run'));
  const two = await context.newPage();
  await two.addInitScript((v) => {
    if (v) sessionStorage.setItem('sampling-policy-lab-run', v);
  }, copied);
  await openDay(two, 1);
  const runs = [(await runId(one))!, (await runId(two))!];
  expect(runs[0]).not.toBe(runs[1]);

  await Promise.all([simulate(one, 1), simulate(two, 1)]);
  for (const [i, page] of [one, two].entries()) {
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(page.getByLabel('Lane B stored decisions', { exact: true })).toHaveText('14');
    await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText('14');
    expect(await diskCount(page, DECISIONS_DB, [runs[i]!, 'B'])).toBe(14);
    expect(await storedShapes(page, runs[i]!)).toEqual(expected);
  }
});
