/**
 * A long run's memory (issue #19): what it thins to stay within its budgets, the page says in
 * plain words, and the numbers it shows are those of the whole run. The budgets are forced small
 * through the page's test knobs (`?checkpointBudgetKb=`, `?chartPoints=`, `?heldRecords=`) so that
 * three simulated hours show what a week would, without running a week in a test.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario } from '../src/lib/sim/input/scenario';
import { injectWorkerFault } from './storage-helpers';

const STORM = readFileSync('bench/retry-storm.json', 'utf8');
const HOUR = 3_600_000;

async function openStorm(page: Page, query: string) {
  await page.goto(`./${query}`);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'retry-storm.json',
    mimeType: 'application/json',
    buffer: Buffer.from(STORM)
  });
  await expect(page.getByRole('region', { name: 'Lesson' })).toContainText('Retry storm');
}

async function simulate(page: Page, hours: number) {
  await page.getByLabel('Hours', { exact: true }).fill(String(hours));
  await page.getByRole('button', { name: `Simulate ${hours} h` }).click();
}

const figure = async (page: Page, label: string) =>
  Number((await page.getByLabel(label, { exact: true }).textContent())!.replace(/[^0-9]/g, ''));

test('thinned checkpoints and coarser charts are said in words; the figures stay exact', async ({
  page
}) => {
  test.setTimeout(180_000);
  await openStorm(page, '?checkpointBudgetKb=1&chartPoints=8');
  await simulate(page, 3);
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('3:00:00', {
    timeout: 150_000
  });
  const notes = page.getByRole('status', { name: 'Long run' });
  await expect(notes).toContainText(
    /Long run: to keep memory bounded \(at most 48 engine copies, 1 KB\), one copy a seek back starts from is kept, at .+ into the run; a seek back re-simulates from it/
  );
  await expect(notes).toContainText(
    /Long run: the charts show one point every .+ before .+ into the run and every sample \(6 min\) after/
  );

  // The lanes' figures are those of the whole run, as `lab run` computes them.
  const parsed = parseScenario(STORM);
  if (!parsed.ok) throw new Error('retry-storm.json does not parse');
  const sim = new Simulation(parsed.scenario);
  sim.advanceTo(sim.start + 3 * HOUR);
  for (const lane of ['A', 'B'] as const) {
    const c = sim.lanes[lane].metrics.counters;
    expect(await figure(page, `Lane ${lane} requests`)).toBe(c.requests);
    expect(await figure(page, `Lane ${lane} consent prompts`)).toBe(c.consentPrompts);
    expect(await figure(page, `Lane ${lane} denials`)).toBe(c.frames.denied + c.silenced);
  }
});

test('a run whose audit rows cannot be saved stops, in words, before it fills memory', async ({
  page
}) => {
  test.setTimeout(120_000);
  await injectWorkerFault(page, { kind: 'quota', after: 0 });
  await openStorm(page, '?heldRecords=2000');
  await simulate(page, 24);
  const notices = page.getByRole('status', { name: 'Run notices' });
  // Held because the writes fail, or because the log could not be opened at all: either way, said.
  await expect(notices).toContainText(
    /Stopped: .*[\d,]+ (audit )?records.*; going on would fill the tab's memory\. (Retry storage, then go on|Reset to start again)\./,
    { timeout: 90_000 }
  );
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
  const clock = (await page.getByLabel('Simulated time', { exact: true }).textContent())!;
  expect(Number(clock.split(':')[0])).toBeLessThan(24);
});

test('a fast-forward writes its audit rows as it goes: none is left in memory only', async ({
  page
}) => {
  // The group commit chased a fast-forward that never paused, past its time limit, and storage
  // was reported failed while it was writing fine; every later row then stayed in memory.
  test.setTimeout(180_000);
  await openStorm(page, '');
  await simulate(page, 6);
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('6:00:00', {
    timeout: 150_000
  });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Retry storage' })).toHaveCount(0);
});
