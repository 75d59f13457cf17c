import { expect, test, type Page } from '@playwright/test';

async function sendAndDeny(page: Page) {
  await page.getByRole('button', { name: 'Send request' }).click();
  const dialog = page.getByRole('dialog', { name: 'Allow sampling?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await expect(page.getByTestId('summary')).toContainText('denied (user.denied)');
}

test('durable store: a denial is replayed after a page reload, with no second consent prompt', async ({
  page
}) => {
  await page.goto('./single/?scope=durable');
  await expect(page.getByTestId('store-note')).toContainText('stored durably');
  await page.getByRole('button', { name: 'Clear stored decisions' }).click();
  await expect(page.getByLabel('Stored decisions')).toHaveText('0');
  await sendAndDeny(page);
  await expect(page.getByLabel('Frame JSON')).toContainText('"code": -32003');
  await expect(page.getByLabel('Stored decisions')).toHaveText('1');

  await page.reload();
  await expect(page.getByTestId('store-note')).toContainText('stored durably');
  await expect(page.getByLabel('Stored decisions')).toHaveText('1');
  await page.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByTestId('summary')).toContainText(
    'replayed from the store, represented 1, consent not shown'
  );
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(page.getByLabel('Consent prompts shown')).toHaveText('0');
  await expect(page.getByLabel('Frame JSON')).toContainText('"reason": "user.denied"');
});

test('connection-scoped store: after a reload the same request is evaluated afresh', async ({
  page
}) => {
  await page.goto('./single/?scope=connection');
  await expect(page.getByTestId('store-note')).toContainText('this connection');
  await sendAndDeny(page);
  await page.reload();
  await page.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByRole('dialog', { name: 'Allow sampling?' })).toBeVisible();
  await expect(page.getByLabel('Consent prompts shown')).toHaveText('1');
});

test('connection-scoped store: a reconnect also buys a fresh evaluation', async ({ page }) => {
  await page.goto('./single/?scope=connection');
  await sendAndDeny(page);
  await page.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByTestId('summary')).toContainText('replayed from the store');
  await page.getByRole('button', { name: 'Reconnect' }).click();
  await expect(page.getByRole('status', { name: 'Connection', exact: true })).toHaveText(
    'release-notes#2'
  );
  await page.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByRole('dialog', { name: 'Allow sampling?' })).toBeVisible();
});

test('an approved request returns a result frame with its context annotation', async ({ page }) => {
  await page.goto('./single/?scope=connection');
  // Send is enabled once the page has hydrated and opened its store: a choice made before that
  // is reset by hydration (the form's state wins), so wait for it as a person would see it.
  await expect(page.getByRole('button', { name: 'Send request' })).toBeEnabled();
  await page.getByLabel('Context').selectOption('allServers');
  await page.getByRole('button', { name: 'Send request' }).click();
  // The statechart follows the request live: waiting on the user, then done with one frame.
  await expect(page.getByTestId('live-state')).toHaveText('State: consenting');
  await page.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByTestId('summary')).toContainText('trimmed');
  await expect(page.getByTestId('live-state')).toHaveText('State: sent');
  await expect(page.getByLabel('Frame JSON')).toContainText('"applied": "thisServer"');
});
