/**
 * Issue #21: a reload mid-run is ready (the clock back at the run's time, Play enabled) without
 * waiting for the audit table's index, which is built again from the browser's storage in the
 * background. Its reads are held here until the test lets them through, so the page is shown
 * ready while the table has no index yet: it says so rather than show part of the log, and once
 * the index is built it shows every row — with the ones played meanwhile, neither lost nor doubled.
 */
import { expect, test, type Page } from '@playwright/test';
import {
  AUDIT_DB,
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
