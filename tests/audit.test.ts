import { readFileSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from '@playwright/test';

/** The audit log's scroll region (exact: the page's own section is "Audit log and frame inspector"). */
const auditLog = (page: Page) => page.getByRole('region', { name: 'Audit log', exact: true });
const inspector = (page: Page) =>
  page.getByRole('region', { name: 'Frame inspector', exact: true });
const total = (page: Page, name: string) => page.getByLabel(name, { exact: true });
const numberIn = async (l: Locator) => Number((await l.textContent())!.replace(/[^0-9.]/g, ''));

/** Open the playground, fast-forward, and wait until the run has produced audit rows. */
async function simulate(page: Page): Promise<number> {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toHaveCount(0, {
    timeout: 45_000
  });
  await expect.poll(() => numberIn(total(page, 'Matching records'))).toBeGreaterThan(0);
  await expect(total(page, 'Totals for the filtered rows')).toHaveAttribute('aria-busy', 'false');
  const n = await numberIn(total(page, 'Matching records'));
  // The table has every row the count says (the last audit view may trail the counters).
  await expect(page.getByRole('grid', { name: 'Audit records' })).toHaveAttribute(
    'aria-rowcount',
    String(n + 1)
  );
  return n;
}

/** Select `value` in the Outcome filter and wait for the table and its totals to follow. */
async function filterOutcome(page: Page, value: string): Promise<void> {
  await page.getByLabel('Outcome', { exact: true }).selectOption(value);
  if (value) {
    await expect(auditLog(page).getByRole('row').nth(1).getByRole('gridcell').nth(3)).toContainText(
      value
    );
  }
  await expect(total(page, 'Totals for the filtered rows')).toHaveAttribute('aria-busy', 'false');
}

test('the audit log fills with rows and each outcome filter narrows the totals', async ({
  page
}) => {
  const all = await simulate(page);
  const grid = auditLog(page).getByRole('grid', { name: 'Audit records' });
  await expect(grid.getByRole('columnheader', { name: 'Outcome' })).toBeVisible();
  await expect(grid.getByRole('row').nth(1)).toBeVisible();
  // Virtualised: however long the log, only a screenful of rows is in the DOM.
  expect(await grid.getByRole('row').count()).toBeLessThan(80);
  await expect(grid).toHaveAttribute('aria-rowcount', String(all + 1));
  const allPrompts = await numberIn(total(page, 'Consent prompts'));

  const outcomes = (
    await page
      .getByLabel('Outcome', { exact: true })
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
  ).filter((v) => v !== '');
  expect(outcomes.length).toBeGreaterThan(0);

  let rows = 0;
  let prompts = 0;
  for (const outcome of outcomes) {
    await filterOutcome(page, outcome);
    const n = await numberIn(total(page, 'Matching records'));
    expect(n).toBeGreaterThan(0);
    if (outcomes.length > 1) expect(n).toBeLessThan(all);
    rows += n;
    prompts += await numberIn(total(page, 'Consent prompts'));
  }
  // The outcomes partition the log: their counts and consent prompts add up to the whole.
  expect(rows).toBe(all);
  expect(prompts).toBe(allPrompts);

  await page.getByRole('button', { name: 'Reset filters' }).click();
  await expect(total(page, 'Matching records')).toHaveText(all.toLocaleString('en-US'));
});

test('Download JSONL and CSV export the filtered rows', async ({ page }) => {
  await simulate(page);
  const outcome = (await page
    .getByLabel('Outcome', { exact: true })
    .locator('option')
    .nth(1)
    .getAttribute('value'))!;
  await filterOutcome(page, outcome);
  const n = await numberIn(total(page, 'Matching records'));

  const [jsonl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download JSONL' }).click()
  ]);
  expect(jsonl.suggestedFilename()).toMatch(/\.jsonl$/);
  const lines = readFileSync((await jsonl.path())!, 'utf8')
    .split('\n')
    .filter(Boolean);
  const first = JSON.parse(lines[0]!) as { outcome: string; seq: number };
  expect(first.outcome).toBe(outcome);
  expect(lines).toHaveLength(n);

  const [csv] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click()
  ]);
  expect(csv.suggestedFilename()).toMatch(/\.csv$/);
  const csvLines = readFileSync((await csv.path())!, 'utf8')
    .split('\r\n')
    .filter(Boolean);
  expect(csvLines[0]).toMatch(/^seq,t,time,server,/);
  expect(csvLines).toHaveLength(n + 1);
});

test('choosing a row, by keyboard or by click, fills the frame inspector', async ({ page }) => {
  await simulate(page);
  await expect(inspector(page)).toContainText('Choose a row');

  // Keyboard: the table holds one tab stop; End goes to the newest row, Enter inspects it.
  const log = auditLog(page);
  await log.locator('[role="row"][tabindex="0"]').focus();
  await page.keyboard.press('End');
  // End moves the roving tab stop to the newest row; Enter on it inspects it. The row is held by
  // its place (aria-rowindex), not as "the last row": a row that arrives afterwards is not the
  // one the learner chose. (Focus is re-asserted: streaming rows can re-render the window under
  // a busy headless run.)
  const grid = page.getByRole('grid', { name: 'Audit records' });
  const rows = Number(await grid.getAttribute('aria-rowcount'));
  const newest = log.locator(`[role="row"][aria-rowindex="${rows}"]`);
  await expect(newest).toHaveAttribute('tabindex', '0');
  await newest.focus();
  await page.keyboard.press('Enter');
  await expect(newest).toHaveAttribute('aria-selected', 'true');
  await expect(inspector(page).getByRole('heading', { level: 3 })).toContainText(
    /Lane [AB] · #\d+/
  );
  await expect(inspector(page).getByLabel('Request params')).toContainText('"messages"');
  await expect(
    inspector(page).getByLabel('Response frame').or(inspector(page).getByText('No frame:'))
  ).toBeVisible();

  // Click: a row whose outcome always has a frame (silence only drops denials).
  const withFrame = (
    await page
      .getByLabel('Outcome', { exact: true })
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
  ).find((v) => v !== '' && v !== 'denied');
  if (withFrame) {
    await filterOutcome(page, withFrame);
    await log.locator('[role="row"][tabindex="0"]').focus();
    await page.keyboard.press('End');
    const row = log.getByRole('row').last();
    await row.click();
    await expect(row).toHaveAttribute('aria-selected', 'true');
    const frame = inspector(page).getByLabel('Response frame');
    await expect(frame).toContainText('"jsonrpc": "2.0"');
    await expect(
      inspector(page).getByRole('list', { name: 'Path through the machine' })
    ).toContainText('identifying');
    await expect(inspector(page)).toContainText(withFrame);
  }

  const axe = await new AxeBuilder({ page })
    .include('[aria-label="Audit log"]')
    .include('[aria-label="Frame inspector"]')
    .analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes[0]?.html}`)).toEqual([]);
});

test('a reset empties the table and a new run refills it under the same filter', async ({
  page
}) => {
  await simulate(page);
  const outcome = (await page
    .getByLabel('Outcome', { exact: true })
    .locator('option')
    .nth(1)
    .getAttribute('value'))!;
  await filterOutcome(page, outcome);
  const grid = auditLog(page).getByRole('grid', { name: 'Audit records' });
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await expect(total(page, 'Matching records')).toHaveText('0');
  await expect(grid).toHaveAttribute('aria-rowcount', '1');
  await expect(auditLog(page)).toContainText('No audit records yet.');
  await expect(page.getByLabel('Outcome', { exact: true })).toHaveValue(outcome);

  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect.poll(() => numberIn(total(page, 'Matching records'))).toBeGreaterThan(0);
  const body = grid.getByRole('rowgroup').nth(1);
  await expect(body.getByRole('row').first()).toContainText(outcome);
  await expect(body.getByRole('row').filter({ hasNotText: outcome })).toHaveCount(0);
});
