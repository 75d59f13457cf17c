/**
 * Issue #21: a reload mid-run is ready (the clock back at the run's time, Play enabled) without
 * waiting for the audit table's index, which is built again from the browser's storage in the
 * background. Its reads are held here until the test lets them through, so the page is shown
 * ready while the table has no index yet: it says so rather than show part of the log, and once
 * the index is built it shows every row — with the ones played meanwhile, neither lost nor doubled.
 * The records played meanwhile wait in memory, so there are only so many: then the run waits for
 * the index, says so, and goes on by itself. An export asked for meanwhile waits for it too.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import {
  AUDIT_DB,
  dayLink,
  diskCount,
  healStorage,
  injectWorkerFault,
  openDay,
  runId,
  simulate
} from './storage-helpers';

const total = (page: Page) => page.getByLabel('Matching records', { exact: true });
const count = async (page: Page) => Number((await total(page).textContent())!.replace(/\D/g, ''));
const auditLog = (page: Page) => page.getByRole('region', { name: 'Audit log', exact: true });
const clock = (page: Page) => page.getByLabel('Simulated time', { exact: true });

test('a reload is ready before the audit index is built; the table then shows every row', async ({
  page
}) => {
  test.setTimeout(120_000);
  await openDay(page);
  await simulate(page, 2);
  const run = await runId(page);
  // Every row on disk before the reload (none of them lost to a write still behind).
  await expect.poll(() => count(page)).toBeGreaterThan(0);
  const rows = await count(page);
  await expect.poll(() => diskCount(page, AUDIT_DB, [run!]), { timeout: 30_000 }).toBe(rows);

  await injectWorkerFault(page, { kind: 'holdReads', store: 'audit' });
  await page.reload();
  await expect(clock(page)).toHaveText('2:00:00');
  const play = page.getByRole('button', { name: 'Play' });
  await expect(play).toBeEnabled();
  // Ready while its index cannot be read: the table says so and shows no row count as the log's.
  await expect(auditLog(page)).toContainText('Indexing the audit log…');
  await expect(page.getByRole('grid', { name: 'Audit records' })).toHaveAttribute(
    'aria-rowcount',
    '1'
  );

  // Played before the index is there: its rows follow the ones read back.
  await play.click();
  await expect(clock(page)).not.toHaveText('2:00:00');
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(play).toBeEnabled();
  await healStorage(page);

  await expect(auditLog(page)).not.toContainText('Indexing the audit log…');
  await expect.poll(() => count(page)).toBeGreaterThanOrEqual(rows);
  // Every row the run wrote, once each: the table's count is the log's on disk.
  await expect
    .poll(async () => (await count(page)) - (await diskCount(page, AUDIT_DB, [run!])), {
      timeout: 30_000
    })
    .toBe(0);
  const all = await count(page);
  expect(all).toBeGreaterThanOrEqual(rows);
  await expect(page.getByRole('grid', { name: 'Audit records' })).toHaveAttribute(
    'aria-rowcount',
    String(all + 1)
  );
});

/**
 * A day's run simulated for `hours` with every row on disk, then reloaded with the index's reads
 * held: the page ready at that time and its table still indexing. The run's id and its rows on disk.
 */
async function reloadHeld(
  page: Page,
  search = '',
  hours = 2
): Promise<{ run: string; rows: number }> {
  await page.goto(`./${search}${dayLink().slice(2)}`);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 20_000 });
  await simulate(page, hours);
  const run = (await runId(page))!;
  await expect.poll(() => count(page)).toBeGreaterThan(0);
  const rows = await count(page);
  await expect.poll(() => diskCount(page, AUDIT_DB, [run]), { timeout: 30_000 }).toBe(rows);
  await injectWorkerFault(page, { kind: 'holdReads', store: 'audit' });
  await page.reload();
  await expect(clock(page)).toHaveText(`${hours}:00:00`);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect(auditLog(page)).toContainText('Indexing the audit log…');
  return { run, rows };
}

test('played while the index is built, the run holds only so many records: it waits, says so, and goes on once the index is there', async ({
  page
}) => {
  test.setTimeout(120_000);
  // The page's knob for the records a run may hold in memory (the worker's bound is higher).
  const held = 300;
  const { run, rows } = await reloadHeld(page, `?heldRecords=${held}`);
  // At the highest speed: this scenario makes a few hundred records a second of it.
  await page.getByLabel('Speed', { exact: true }).fill('100');
  await page.getByRole('button', { name: 'Play' }).click();
  const note = page.getByRole('status', { name: 'Long run' });
  await expect(note).toContainText("Waiting for the audit log's index");
  // Still playing: nothing for the user to do but wait.
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
  // What it made meanwhile (written as it was made): the bound, give or take the last batch.
  await expect
    .poll(async () => (await diskCount(page, AUDIT_DB, [run])) - rows)
    .toBeGreaterThanOrEqual(held);
  const made = (await diskCount(page, AUDIT_DB, [run])) - rows;
  expect(made).toBeLessThan(2 * held);
  const waitedAt = await clock(page).textContent();

  await healStorage(page);
  await expect(note).toBeHidden();
  await expect(auditLog(page)).not.toContainText('Indexing the audit log…');
  // It goes on by itself, and every row reaches the table once.
  await expect(clock(page)).not.toHaveText(waitedAt!);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect
    .poll(async () => (await count(page)) - (await diskCount(page, AUDIT_DB, [run])), {
      timeout: 30_000
    })
    .toBe(0);
  expect(await count(page)).toBeGreaterThan(rows + held);
});

for (const reset of [false, true])
  test(`an export asked for while the index is built waits for it and holds the whole log${reset ? ', a Reset clicked meanwhile too' : ''}`, async ({
    page
  }) => {
    test.setTimeout(120_000);
    // Long enough that the file takes a few reads back, and played on a little meanwhile (the
    // engine's code then loaded: a Reset goes straight to replacing the log).
    const { run, rows } = await reloadHeld(page, '', 8);
    await page.getByRole('button', { name: 'Play' }).click();
    await expect(clock(page)).not.toHaveText('8:00:00');
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
    const download = page.waitForEvent('download', { timeout: 60_000 });
    await page.getByRole('button', { name: 'Download JSONL' }).click();
    if (reset) await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await healStorage(page);
    const lines = readFileSync((await (await download).path())!, 'utf8')
      .trimEnd()
      .split('\n');
    // Every row of the run's log, once each: the disk's count (the reload's restart may add to
    // the rows before it), in the log's order.
    expect(lines.length).toBeGreaterThanOrEqual(rows);
    expect(lines.length).toBe(await diskCount(page, AUDIT_DB, [run]));
    const records = lines.map((l) => JSON.parse(l) as { t: number });
    expect(records.every((r, i) => i === 0 || r.t >= records[i - 1]!.t)).toBe(true);
    await expect(page.getByText(/The export failed/)).toHaveCount(0);
    if (reset) await expect(clock(page)).toHaveText('0:00:00');
  });
