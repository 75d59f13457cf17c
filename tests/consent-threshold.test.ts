import { expect, test } from '@playwright/test';

// askAbove in the playground: a call the policy let through without a dialog says so in the
// audit log, with the estimate and the threshold it stood on (the record's consentSkipped).
test('the audit log names the basis of a dialog skipped under askAbove', async ({ page }) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Scenario', { exact: true }).selectOption('cheap-calls');
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toHaveCount(0, {
    timeout: 120_000
  });
  const log = page.getByRole('region', { name: 'Audit log', exact: true });
  const basis = /^not asked: estimate 0\.\d+ USD ≤ askAbove 0\.005 USD$/;
  await expect(log.getByRole('gridcell', { name: basis }).first()).toHaveText('≤ askAbove');
  // Only lane B has askAbove: a skipped row is B's.
  const row = log
    .getByRole('row')
    .filter({ has: page.getByRole('gridcell', { name: basis }) })
    .first();
  await expect(row.getByRole('gridcell').nth(1)).toHaveText('B');
});
