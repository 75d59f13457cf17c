/**
 * The Sweep view (issue #23): a sweep file runs in Web Workers with a progress bar; the scatter
 * names each point's settings and opens it as a lane beside the base scenario in the playground;
 * Cancel stops a sweep and shows nothing half-run. A dropped file keeps it to seconds: ten
 * minutes of the reconnect-bypass lesson, 2 points × 2 seeds.
 */
import { readFileSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';

const scenario = JSON.parse(
  readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')
) as Record<string, unknown>;

const small = {
  version: 1,
  title: 'Store on the connection or durably',
  scenario: { ...scenario, durationMs: 600_000, restarts: [] },
  grid: { 'lanes.A.client.store': ['connection', 'durable'] },
  seeds: [1, 2],
  objectives: { 'A.consentPrompts': 'min', 'A.spendMicros': 'min' }
};

async function drop(page: Page, sweep: unknown, name = 'small.json') {
  // Enabled once the page has hydrated: a file set before that would have no handler.
  await expect(page.getByLabel('Open a sweep file')).toBeEnabled();
  await page.getByLabel('Open a sweep file').setInputFiles({
    name,
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(sweep))
  });
}

test('a dropped sweep runs to the end; a point opens as a lane beside the base scenario', async ({
  page
}) => {
  // The playground's top bar leads here.
  await page.goto('./');
  await page.getByRole('link', { name: 'Sweeps' }).click();
  await expect(page).toHaveURL(/\/sweep\/$/);
  await expect(page.getByRole('heading', { name: 'Sweep', level: 1 })).toBeVisible();
  await drop(page, small);
  await expect(
    page.getByRole('heading', { name: 'Store on the connection or durably' })
  ).toBeVisible();
  await expect(page.getByText(/^2 points × 2 seeds = 4 runs on \d+ workers?/)).toBeVisible();
  await page.getByRole('button', { name: 'Run sweep' }).click();
  await expect(page.getByRole('status')).toHaveText(/^4 runs in [\d.]+ s on \d+ workers?\.$/, {
    timeout: 60_000
  });
  await expect(page.getByRole('progressbar', { name: 'Sweep progress' })).toHaveAttribute(
    'value',
    '4'
  );

  // The durable store asks once per task: it is the front; hovering names its settings.
  const durable = page.getByRole('link', {
    name: /^Point 1: lanes\.A\.client\.store = "durable";.*on the front/
  });
  await expect(durable).toBeVisible();
  await expect(
    page.getByRole('link', { name: /^Point 0: lanes\.A\.client\.store = "connection";/ })
  ).toBeVisible();
  await durable.hover();
  await expect(
    page
      .getByRole('region', { name: 'Trade-off' })
      .getByRole('paragraph')
      .filter({ hasText: /^Point 1: lanes\.A\.client\.store = "durable"; A\.consentPrompts / })
  ).toBeVisible();
  const table = page.getByRole('region', { name: 'Points' });
  await expect(table.getByRole('row')).toHaveCount(3);
  // Spend reads as dollars in the table, as on the chart's axis: mean (lowest–highest seed).
  const spendCells = table.getByRole('row').nth(2).getByRole('cell');
  await expect(spendCells.nth(3)).toHaveText(/^\$\d+\.\d{2,4} \(\$\d+\.\d{2,4}–\$\d+\.\d{2,4}\)$/);
  await expect(spendCells.nth(2)).toHaveText(/^[\d,.]+ \([\d,]+–[\d,]+\)$/);

  // The results (chart and table) fit a phone's width: the table scrolls inside its panel.
  await page.setViewportSize({ width: 360, height: 780 });
  await expect
    .poll(() =>
      page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth
      )
    )
    .toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1366, height: 768 });

  // With its results on screen, the page has no serious or critical axe finding, light or dark.
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${colorScheme} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    expect(bad).toEqual([]);
  }

  await durable.click();
  await expect(page).toHaveURL(/#s=/);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 30_000 });
  await expect(
    page.getByText('Sweep point 1: lanes.A.client.store = "durable"').first()
  ).toBeVisible();
  await expect(page.getByText('Base: Connection-scoped store').first()).toBeVisible();
});

test('a bad sweep file is refused in one line naming where; Cancel stops a running sweep', async ({
  page
}) => {
  await page.goto('./sweep/');
  await drop(page, { ...small, grid: { 'lanes.A.client.store': ['disk'] } }, 'bad.json');
  await expect(page.getByRole('alert')).toHaveText(
    /^bad\.json: point 0 \(lanes\.A\.client\.store = "disk"\): makes an invalid scenario: \$\.lanes\.A\.client\.store: /
  );
  await expect(page.getByRole('button', { name: 'Run sweep' })).toHaveCount(0);

  // A ready-made sweep: 30 runs of an hour, stopped after it starts.
  await page.getByLabel('Ready-made sweep').selectOption('reconnect-bypass');
  await expect(page.getByText(/^6 points × 5 seeds = 30 runs/)).toBeVisible();
  await page.getByRole('button', { name: 'Run sweep' }).click();
  await expect(page.getByRole('button', { name: 'Cancel' })).toBeEnabled();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('status')).toHaveText(
    /^Cancelled after \d+ of 30 runs: nothing from a partial sweep is shown\.$/
  );
  await expect(page.getByRole('region', { name: 'Trade-off' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Run sweep' })).toBeEnabled();
});
