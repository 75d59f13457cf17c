/**
 * The designer's workspace (issue #24): every page fits its window from 360 px wide up, with one
 * column on a phone; /single/'s consent dialog opens in view with the focus; /selftest/ gives a
 * verdict; no serious or critical axe finding in light or dark.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { drawCharts } from './run-helpers';

const PAGES = [
  './',
  './single/',
  './lessons/',
  './lessons/reconnect-bypass/run',
  './selftest/',
  './sweep/'
];
const SIZES = [
  { width: 360, height: 780 },
  { width: 390, height: 844 },
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 }
];

/** What the page is ready to be measured at: its main control, or its heading. */
async function ready(page: Page, path: string) {
  if (path === './')
    await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 30_000 });
  else await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
}

const overflow = (page: Page) =>
  page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth
  }));

for (const path of PAGES) {
  test(`${path} has no horizontal scroll from 360 px up`, async ({ page }) => {
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await page.goto(path);
      await ready(page, path);
      // Charts and the statechart size themselves after load: measure once they are drawn. The
      // charts' code loads when the run first moves, so the playground plays first.
      if (path === './') await drawCharts(page);
      await expect
        .poll(
          async () => {
            const o = await overflow(page);
            return o.scroll - o.client;
          },
          { message: `${path} at ${size.width}px` }
        )
        .toBeLessThanOrEqual(0);
    }
  });
}

test('on a phone the playground is one column: lanes, charts and controls fit the width', async ({
  page
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('./');
  await ready(page, './');
  const width = await page.evaluate(() => document.documentElement.clientWidth);
  const lanes = await page.getByRole('region', { name: 'Lanes' }).boundingBox();
  const charts = await page.getByRole('region', { name: 'Charts' }).boundingBox();
  expect(lanes && charts).toBeTruthy();
  // Stacked, not side by side, and each as wide as the page allows.
  expect(charts!.y).toBeGreaterThanOrEqual(lanes!.y + lanes!.height - 1);
  expect(lanes!.width).toBeGreaterThan(width * 0.9);
  // Both lanes' columns are on screen, and each chart's canvas is within its box.
  for (const lane of ['A', 'B'])
    await expect(page.getByLabel(`Lane ${lane} requests`, { exact: true })).toBeInViewport();
  await expect(page.getByRole('button', { name: /^Simulate/ })).toBeInViewport();
  // The charts' code loads when the run first moves.
  await drawCharts(page);
  const canvases = await page.evaluate(() =>
    [...document.querySelectorAll('.uplot canvas')].map((c) => c.getBoundingClientRect().right)
  );
  expect(canvases.length).toBeGreaterThan(0);
  for (const right of canvases) expect(right).toBeLessThanOrEqual(width);
});

test('/single/: the consent dialog opens in view with the focus, and the page links back', async ({
  page
}) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await page.goto('./single/?scope=connection');
  await expect(page.getByRole('link', { name: 'Back to the playground' })).toBeVisible();
  await page.getByRole('button', { name: 'Send request' }).click();
  const dialog = page.getByRole('dialog', { name: 'Allow sampling?' });
  await expect(dialog).toBeInViewport({ ratio: 1 });
  // Modal: the focus is inside it, not left on the page behind.
  await expect.poll(() => dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('summary')).toContainText('denied');
  await page.getByRole('link', { name: 'Back to the playground' }).click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
});

test('/selftest/ says pass or fail, and which check', async ({ page }) => {
  await page.goto('./selftest/');
  await expect(page.getByRole('status')).toHaveText('Done', { timeout: 60_000 });
  await expect(page.getByLabel('Verdict')).toHaveText("✓ Pass: all 6 checks equal Node's.");
  await expect(page.getByText('✓ equals Node')).toHaveCount(6);
  await expect(page.getByRole('link', { name: 'Back to the playground' })).toBeVisible();
});

for (const colorScheme of ['light', 'dark'] as const)
  for (const path of ['./', './single/', './lessons/', './selftest/'])
    test(`axe: no serious or critical finding on ${path} in ${colorScheme} mode`, async ({
      page
    }) => {
      test.setTimeout(120_000);
      await page.emulateMedia({ colorScheme });
      await page.goto(path);
      await ready(page, path);
      const r = await new AxeBuilder({ page }).analyze();
      const bad = r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${path} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      expect(bad).toEqual([]);
    });

test("a lane's configuration fits its column: no line runs past it, the reasons' codes wrap", async ({
  page
}) => {
  for (const size of [SIZES[1]!, SIZES[2]!]) {
    await page.setViewportSize(size);
    await page.goto('./');
    await ready(page, './');
    await page.getByText('Configure lane B').click();
    const box = page.getByRole('group', { name: /^Reasons: retryable/ });
    await expect(
      box.getByRole('textbox', { name: 'TTL of policy.input_too_large, lane B' })
    ).toBeVisible();
    // The fieldset, and the scroll box of the lane's settings around it, are no wider than
    // their columns: the hint and the table wrap rather than run on past the right edge.
    const widths = await box.evaluate((f) => {
      const grid = f.parentElement!;
      return {
        field: f.scrollWidth - f.clientWidth,
        grid: grid.scrollWidth - grid.clientWidth
      };
    });
    expect(widths, `at ${size.width}px`).toEqual({ field: 0, grid: 0 });
    // A reason's code still reads whole (its break points are not characters).
    await expect(box.getByRole('rowheader', { name: 'policy.input_too_large' })).toBeVisible();
  }
});

test('on a phone a chart says its whole divergence line, wrapped, not cut short', async ({
  page
}) => {
  await page.setViewportSize(SIZES[1]!);
  await page.goto('./lessons/reconnect-bypass/run');
  // The Run step plays by itself; the consent chart's line appears once the lanes diverge.
  const line = page.getByText(/^A showed [\d.]+× the consent prompts of B$/);
  await expect(line).toBeVisible({ timeout: 30_000 });
  await expect
    .poll(() => line.evaluate((p) => p.scrollWidth - p.clientWidth))
    .toBeLessThanOrEqual(0);
});
