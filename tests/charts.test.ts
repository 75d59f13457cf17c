import { expect, test, type Page } from '@playwright/test';

const CHARTS = [
  'Spend',
  'Provider calls',
  'Consent prompts',
  'Fresh vs replayed',
  'Denials',
  'Retry-loop alerts'
];

/** A chart: a figure named by its caption, whose plot is an image named by what it shows. */
const chart = (page: Page, title: string) =>
  page.getByRole('figure', { name: new RegExp(`^${title}\\b`) });

async function openAndPlay(page: Page) {
  await page.goto('./');
  const play = page.getByRole('button', { name: 'Play' });
  await expect(play).toBeEnabled();
  await play.click();
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
}

test('the live charts draw both lanes and say, as a number, how far they diverge', async ({
  page
}) => {
  await openAndPlay(page);
  const region = page.getByRole('region', { name: 'Charts' });
  for (const title of CHARTS) {
    const fig = region.getByRole('figure', { name: new RegExp(`^${title}\\b`) });
    await expect(fig.getByRole('img', { name: new RegExp(`^${title}\\b`) })).toBeVisible();
    await expect(fig.locator('canvas').first()).toBeVisible();
  }
  // The ready-made scenario prompts one lane far more than the other.
  await expect(chart(page, 'Consent prompts')).toContainText(
    /[AB] showed [\d.,]+× the consent prompts of [AB]|[AB]: 0, [AB]: [1-9]/
  );
  await expect(chart(page, 'Consent prompts').getByRole('img')).toHaveAttribute(
    'aria-label',
    /lane A \(.+\) [\d,]+, lane B \(.+\) [\d,]+/
  );
});

test('the charts update in place and follow their container', async ({ page }) => {
  await openAndPlay(page);
  const spend = chart(page, 'Spend');
  const plot = chart(page, 'Denials').getByRole('img');
  const canvas = chart(page, 'Denials').locator('canvas').first();
  await expect(canvas).toBeVisible();
  await canvas.evaluate((el) => el.setAttribute('data-probe', 'same canvas'));
  const before = await plot.getAttribute('aria-label');
  // New snapshots arrive (the label carries the elapsed time) and the same canvas draws them.
  await expect(plot).not.toHaveAttribute('aria-label', before ?? '');
  await expect(chart(page, 'Denials').locator('canvas[data-probe="same canvas"]')).toHaveCount(1);

  const width = async () => (await canvas.boundingBox())?.width ?? 0;
  const wide = await width();
  await page.setViewportSize({ width: 1100, height: 900 });
  await expect.poll(width).not.toBe(wide);
  await expect(spend.locator('canvas').first()).toBeVisible();
});

test('the statechart counts requests on its edges, lane by lane', async ({ page }) => {
  await openAndPlay(page);
  const machine = page.getByRole('img', { name: /^Statechart of the authorisation machine/ });
  await expect(machine).toBeVisible();
  const table = page.getByRole('table', { name: 'Statechart edge counts' });
  const row = table.getByRole('row', { name: /^lookingUp → evaluating\b/ });
  await expect(row).toHaveCount(1);
  await expect(row.getByRole('cell').filter({ hasText: /^[1-9]\d*$/ })).not.toHaveCount(0);
  // The same count is drawn on the edge itself.
  await expect(machine.locator('[data-count="lookingUp→evaluating"]')).toContainText(/[1-9]/);
  // Every state of the machine is drawn, the terminal ones with the frame they send.
  await expect(machine).toContainText('one frame: result / -32003');
  await expect(machine).toContainText('no frame (silence)');
});
