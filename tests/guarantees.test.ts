import { expect, test, type Page } from '@playwright/test';
import type { LaneId } from '../src/lib/machine/vocabulary';

const panel = (page: Page) => page.getByRole('region', { name: /^Guarantees/ });
const counter = (page: Page, lane: LaneId, name: string) =>
  page.getByLabel(`Lane ${lane} ${name}`, { exact: true });
const numberOf = async (text: string | null) => Number(text!.replace(/[^0-9.]/g, ''));
const matching = (page: Page) => page.getByLabel('Matching records', { exact: true });

/** Open the playground and run the default lesson for a simulated hour. */
async function runAnHour(page: Page, before?: () => Promise<void>) {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await before?.();
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00', {
    timeout: 45_000
  });
}

test('the guarantees hold live, with their counts, and each links to the audit rows behind it', async ({
  page
}) => {
  await runAnHour(page);
  const g = panel(page);
  await expect(g.getByRole('status')).toHaveText(/^\d+ of \d+ hold$/);
  const answered = g.getByRole('button', { name: /^✓ [\d,]+ of [\d,]+ requests answered/ });
  await expect(answered).toBeVisible();
  // Every request both lanes decided, answered: the counts are the lanes' own.
  const requests =
    (await numberOf(await counter(page, 'A', 'requests').textContent())) +
    (await numberOf(await counter(page, 'B', 'requests').textContent()));
  const [shown, of] = (await answered.textContent())!
    .match(/([\d,]+) of ([\d,]+)/)!
    .slice(1)
    .map((x) => Number(x.replace(/,/g, '')));
  expect(shown).toBe(of);
  expect(of).toBeLessThanOrEqual(requests);
  expect(of).toBeGreaterThanOrEqual(requests - 10); // a few may still be in flight at 1:00:00
  await expect(g.getByRole('button', { name: /^✓ no window overdrawn/ })).toBeVisible();

  // The consent guarantee links to exactly the rows that showed a dialog: both lanes' prompts.
  const prompts =
    (await numberOf(await counter(page, 'A', 'consent prompts').textContent())) +
    (await numberOf(await counter(page, 'B', 'consent prompts').textContent()));
  expect(prompts).toBeGreaterThan(0);
  const consent = g.getByRole('button', { name: /consent dialogs, none repeated$/ });
  await expect(consent).toHaveAccessibleName(
    `✓ ${prompts.toLocaleString('en-US')} consent dialogs, none repeated`
  );
  await consent.click();
  await expect(consent).toHaveAttribute('aria-pressed', 'true');
  await expect(
    page.getByRole('status').filter({ hasText: 'Showing the rows behind' })
  ).toBeVisible();
  await expect.poll(async () => numberOf(await matching(page).textContent())).toBe(prompts);
  await page.getByRole('button', { name: 'Show every row' }).click();
  await expect(consent).toHaveAttribute('aria-pressed', 'false');
  await expect
    .poll(async () => numberOf(await matching(page).textContent()))
    .toBeGreaterThan(prompts);
});

test('turning silence on shows what it gives up, and links to the silenced rows', async ({
  page
}) => {
  await runAnHour(page, async () => {
    const laneB = page.locator('details', { hasText: 'Configure lane B' });
    await laneB.getByText('Configure lane B').click();
    await laneB.getByRole('checkbox', { name: 'Silence on denial (drop the frame)' }).check();
  });
  const silenced = await numberOf(await counter(page, 'B', 'silenced (no frame)').textContent());
  expect(silenced).toBeGreaterThan(0);
  const given = panel(page).getByRole('button', {
    name: `✗ ${silenced.toLocaleString('en-US')} requests got no frame — silence is on`
  });
  await expect(given).toBeVisible();
  await expect(panel(page)).toContainText('Silence gives up');
  await given.click();
  await expect.poll(async () => numberOf(await matching(page).textContent())).toBe(silenced);
});
