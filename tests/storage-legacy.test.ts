/**
 * A run saved by a build before the audit log was stored in chunks (store/audit-chunks.ts): its
 * rows, one a record, sit in a database of the old name. The new build never reads them (a row
 * record is not a chunk): it deletes that database, and a reload of the run re-simulates the rows
 * from the run's seed and actions, writes them in chunks and says so — the same rows, byte for
 * byte, as the run had.
 */
import { expect, test, type Page } from '@playwright/test';
import { downloadJsonl } from './run-helpers';
import { AUDIT_DB, diskCount, openDay, runId, simulate } from './storage-helpers';

const LEGACY_AUDIT_DB = 'sampling-policy-lab-run-audit';

const matching = async (page: Page) =>
  Number(
    (await page.getByLabel('Matching records', { exact: true }).textContent())!.replace(/,/g, '')
  );

test('a run whose audit rows the build before chunks saved: the reload re-simulates them into the new log, byte-identical, and the old database is deleted', async ({
  page
}) => {
  test.setTimeout(150_000);
  await openDay(page, 2);
  await simulate(page, 2);
  await expect(page.getByLabel('Audit records being written', { exact: true })).toBeHidden({
    timeout: 60_000
  });
  const total = await matching(page);
  expect(total).toBeGreaterThan(1_000);
  const run = (await runId(page))!;
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(total);
  const before = await downloadJsonl(page);

  // Away from the playground (its worker lets go of the databases), the storage made to look as
  // the build before left it: the run's rows one a record under the old name, none in the new.
  await page.goto('./scenarios/reconnect-bypass.json');
  await page.evaluate(
    ([dbName, legacy, run]) => {
      const open = (name: string, create: boolean) =>
        new Promise<IDBDatabase>((resolve, reject) => {
          const req = indexedDB.open(name);
          if (create) req.onupgradeneeded = () => req.result.createObjectStore('audit');
          req.onsuccess = () => resolve(req.result);
          req.onerror = () => reject(req.error);
        });
      const done = (tx: IDBTransaction) =>
        new Promise<void>((resolve, reject) => {
          tx.oncomplete = () => resolve();
          tx.onerror = tx.onabort = () => reject(tx.error);
        });
      return (async () => {
        const now = await open(dbName, false);
        const range = IDBKeyRange.bound([run], [run, []], true, true);
        const read = now.transaction('audit', 'readonly').objectStore('audit').getAll(range);
        const chunks = await new Promise<string[]>((resolve) => {
          read.onsuccess = () => resolve(read.result as string[]);
        });
        const rows = chunks.flatMap((c) => c.split('\n').filter(Boolean));
        const old = await open(legacy, true);
        const put = old.transaction('audit', 'readwrite');
        rows.forEach((line, n) => put.objectStore('audit').put(JSON.parse(line), [run, n]));
        await done(put);
        old.close();
        const drop = now.transaction('audit', 'readwrite');
        drop.objectStore('audit').delete(range);
        await done(drop);
        now.close();
      })();
    },
    [AUDIT_DB, LEGACY_AUDIT_DB, run] as const
  );
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(0);

  // Back to the run: a reload of it.
  await page.goBack();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('2:00:00', {
    timeout: 60_000
  });
  await expect(
    page.getByRole('status').filter({ hasText: /^Restored the [\d,]+ audit records/ })
  ).toHaveText(
    `Restored the ${total.toLocaleString('en-US')} audit records the reload had lost: re-simulated from the run's seed and actions, they are saved in this browser again.`,
    { timeout: 60_000 }
  );
  await expect.poll(() => matching(page), { timeout: 60_000 }).toBe(total);
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(total);
  expect(
    await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name))
  ).not.toContain(LEGACY_AUDIT_DB);
  expect(await downloadJsonl(page)).toBe(before);
});
