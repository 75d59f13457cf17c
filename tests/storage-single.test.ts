/**
 * `/single/` under storage faults: a decision that cannot be saved is said to be held for this
 * page only — it still answers, as the playground's degraded durable lanes do, until a reload
 * forgets it — and the saved count is what a reload finds.
 */
import { expect, test, type Page } from '@playwright/test';
import { breakIndexedDb, healStorage, type Fault } from './storage-helpers';

async function sendAndDeny(page: Page) {
  await page.getByRole('button', { name: 'Send request' }).click();
  const dialog = page.getByRole('dialog', { name: 'Allow sampling?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await expect(page.getByTestId('summary')).toContainText('denied (user.denied)');
}

test('quota exceeded on the first commit: said at once, held for this page only, nothing counted as saved', async ({
  page
}) => {
  // The open probe is write 1; the first decision is write 2.
  await page.addInitScript(breakIndexedDb, { kind: 'quota', after: 1 } as Fault);
  await page.goto('./single/?scope=durable');
  await expect(page.getByTestId('store-note')).toContainText('stored durably');
  await sendAndDeny(page);
  await expect(page.getByLabel('Frame JSON')).toContainText('"code": -32003');
  const alert = page.getByRole('alert');
  await expect(alert).toContainText(
    "1 decision could not be saved — the browser's storage for this site is full"
  );
  await expect(alert).toContainText('it holds for this page only (a reload forgets it)');
  await expect(alert).toContainText('no durable guarantee');
  await expect(page.getByLabel('Stored decisions', { exact: true })).toHaveText('1');
  await expect(page.getByLabel('Decisions saved', { exact: true })).toHaveText('0');
  await expect(page.getByLabel('Decisions held in memory only', { exact: true })).toHaveText('1');

  // Held in memory with the durable store's meaning: a reconnect is still answered by it.
  await page.getByRole('button', { name: 'Reconnect' }).click();
  await expect(page.getByLabel('Connection', { exact: true })).toHaveText('release-notes#2');
  await page.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByTestId('summary')).toContainText('replayed from the store');
  await expect(page.getByLabel('Consent prompts shown')).toHaveText('1');

  await page.reload();
  await expect(page.getByLabel('Stored decisions', { exact: true })).toHaveText('0');
  await expect(page.getByLabel('Decisions saved', { exact: true })).toHaveText('0');
});

test('Retry storage writes the held decision once there is room, and the page is durable again', async ({
  page
}) => {
  await page.addInitScript(breakIndexedDb, { kind: 'quota', after: 1 } as Fault);
  await page.goto('./single/?scope=durable');
  await sendAndDeny(page);
  await expect(page.getByRole('alert')).toBeVisible();
  await healStorage(page);
  await page.getByRole('button', { name: 'Retry storage' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(page.getByLabel('Decisions saved', { exact: true })).toHaveText('1');
  await expect(page.getByLabel('Decisions held in memory only', { exact: true })).toHaveCount(0);
});

test('an IndexedDB open that never answers: the page is usable within seconds and says why', async ({
  page
}) => {
  await page.addInitScript(breakIndexedDb, { kind: 'hang' } as Fault);
  await page.goto('./single/?scope=durable');
  await expect(page.getByTestId('store-note')).toContainText('did not open in time', {
    timeout: 10_000
  });
  await expect(page.getByRole('button', { name: 'Send request' })).toBeEnabled();
});
