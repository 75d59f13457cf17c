/**
 * The designer's tools (issue #24): the policy editor with room beside the lanes (resizable,
 * remembered, a diff before Apply, the other lane one click away), a long fast-forward that shows
 * the run moving, downloads named from the scenario and filter, the scrubber in reach, and the
 * lesson Run step under reduced motion.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';

async function open(page: Page, scenario = 'reconnect-bypass') {
  await page.goto(`./?scenario=${scenario}`);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

const box = async (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((e) => {
      const r = e.getBoundingClientRect();
      return { width: Math.round(r.width), height: Math.round(r.height) };
    });

test('the policy editor opens beside the lanes with room, resizes, remembers, diffs, and switches lanes', async ({
  page
}) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await open(page);
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  const panelA = page.getByRole('region', { name: /^Policy for lane A/ });
  await expect(page.getByRole('textbox', { name: 'Policy JSON for lane A' })).toBeVisible();
  // Beside the lanes, in the side panel: wide and tall (it was ~270 px wide, ~18 lines).
  await expect(page.getByRole('complementary', { name: 'Policy editors' })).toContainText(
    'Policy for lane A'
  );
  const before = await box(page, '.side-panels .monaco-editor');
  expect(before.width).toBeGreaterThanOrEqual(560);
  expect(before.height).toBeGreaterThanOrEqual(400);

  // Resized from the keyboard; the width holds across a reload.
  const handle = page.getByRole('separator', { name: 'Resize the policy editor' });
  await handle.focus();
  await page.keyboard.press('Shift+ArrowLeft');
  await expect(handle).toHaveAttribute('aria-valuetext', '760 px wide');
  await page.reload();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  await expect(page.getByRole('textbox', { name: 'Policy JSON for lane A' })).toBeVisible();
  await expect(handle).toHaveAttribute('aria-valuetext', '760 px wide');

  // A change, then its diff against the policy in force before Apply.
  const text = page.getByRole('textbox', { name: 'Policy JSON for lane A' });
  await text.focus();
  await page.keyboard.press('ControlOrMeta+End');
  await page.keyboard.press('ControlOrMeta+Home');
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('"__diff_probe": 1,');
  await expect(panelA).toContainText(/errors?: cannot be applied|Valid, not applied yet/);
  await panelA.getByRole('button', { name: 'Show changes' }).click();
  const diff = panelA.getByRole('region', { name: "Changes to lane A's policy, before Apply" });
  await expect(diff.locator('.monaco-diff-editor')).toBeVisible();
  await expect(diff).toContainText('__diff_probe');

  // Lane B's policy, one click away.
  await panelA.getByRole('button', { name: "Lane B's policy" }).click();
  await expect(page.getByRole('textbox', { name: 'Policy JSON for lane B' })).toBeVisible();
  await expect(page.getByRole('complementary', { name: 'Policy editors' })).toContainText(
    'Policy for lane B'
  );
});

test('a long fast-forward shows the clock, counters and a percentage with the time left as it runs', async ({
  page
}) => {
  test.setTimeout(120_000);
  await open(page);
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'retry-storm.json',
    mimeType: 'application/json',
    buffer: Buffer.from(readFileSync('bench/retry-storm.json', 'utf8'))
  });
  await expect(page.getByRole('region', { name: 'Lesson' })).toContainText('Retry storm');
  await page.getByLabel('Hours', { exact: true }).fill('6');
  await page.getByRole('button', { name: 'Simulate 6 h' }).click();
  // While it runs (the progress bar still up): the clock and the counters have moved.
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          const bar = document.querySelector('progress[aria-label="Fast-forward progress"]');
          const clock = document.querySelector('[aria-label="Simulated time"]')?.textContent;
          const requests = document.querySelector('[aria-label="Lane A requests"]')?.textContent;
          const words = document.querySelector('[aria-label="Fast-forward done"]')?.textContent;
          return (
            !!bar &&
            clock !== '0:00:00' &&
            Number(requests?.replace(/\D/g, '')) > 0 &&
            /^\d+% · about .+ left$/.test(words ?? '')
          );
        }),
      { timeout: 60_000 }
    )
    .toBe(true);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
});

test('downloads are named from the scenario and filter; a filter matching nothing says so', async ({
  page
}) => {
  await open(page);
  await page.getByRole('button', { name: /^Simulate to the end/ }).click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeDisabled();
  const log = page.getByRole('region', { name: 'Audit log' }).first();
  await page.getByLabel('Lane', { exact: true }).selectOption('B');
  await page.getByLabel('Reason', { exact: true }).selectOption('user.denied');
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click()
  ]);
  expect(file.suggestedFilename()).toBe('reconnect-bypass-audit-laneB-user.denied.csv');

  let downloads = 0;
  page.on('download', () => downloads++);
  await page.getByLabel('From (min)', { exact: true }).fill('5000');
  await expect(page.getByText('Matching records')).toBeVisible();
  await expect(log).toBeVisible();
  await page.getByRole('button', { name: 'Download JSONL' }).click();
  await expect(
    page.getByRole('status').filter({ hasText: 'No rows match these filters' })
  ).toBeVisible();
  expect(downloads).toBe(0);
});

test('the time scrubber stays in reach while the charts are on screen', async ({ page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await open(page);
  const slider = page.getByRole('slider', { name: 'Time' });
  await expect(slider).toBeInViewport();
  await page
    .getByRole('figure', { name: /^Retry-loop alerts/ })
    .evaluate((e) => e.scrollIntoView({ block: 'end' }));
  await expect(page.getByRole('figure', { name: /^Retry-loop alerts/ })).toBeInViewport();
  await expect(slider).toBeInViewport();
});

test('under reduced motion the Run step says how to start it; Space does', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('./lessons/reconnect-bypass/run/');
  const hint = page.getByRole('status').filter({ hasText: 'The run waits for you' });
  await expect(hint).toContainText('press Space or Play to start it');
  await page.getByRole('heading', { level: 1 }).click();
  await page.keyboard.press('Space');
  await expect(hint).toBeHidden();
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
});
