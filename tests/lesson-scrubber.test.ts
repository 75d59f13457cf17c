/**
 * The lesson's Run step has the playground's time scrubber (issue #24): a presenter drags back in
 * time while the chart is on screen, and the run — clock, chart, numbers — is there.
 */
import { expect, test } from '@playwright/test';

test('a presenter drags the lesson run back in time, and the keys stay the scrubber’s', async ({
  page
}) => {
  // Reduced motion: the run waits, so what moves it is the presenter alone.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('./lessons/tired-user/run/');
  await page.getByRole('button', { name: 'Skip to the end' }).click();
  await expect(page.getByText('Run complete.')).toBeVisible();

  const time = page.getByRole('slider', { name: 'Time' });
  await expect(time).toBeInViewport();
  await expect(time).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  const prompts = page.getByLabel('Lane A Consent prompts', { exact: true });
  const atEnd = Number((await prompts.textContent())!.replace(/,/g, ''));
  expect(atEnd).toBeGreaterThan(0);

  // Drag the thumb from the end back to a quarter of the run.
  const box = (await time.boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width - 1, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2, y, { steps: 5 });
  await page.mouse.move(box.x + box.width / 4, y, { steps: 5 });
  await page.mouse.up();

  await expect(time).toHaveAttribute('aria-valuetext', /^0:1[45]:\d\d of 1:00:00$/);
  await expect(time).toHaveAttribute('aria-busy', 'false');
  await expect(page.getByText('Run complete.')).toBeHidden();
  await expect
    .poll(async () => Number(await page.getByLabel('Run progress').getAttribute('value')))
    .toBeLessThan(0.3);
  await expect
    .poll(async () => Number((await prompts.textContent())!.replace(/,/g, '')))
    .toBeLessThan(atEnd);
  await expect(page.getByRole('status').filter({ hasText: /^Last seek took/ })).toBeVisible();

  // On the scrubber ← is a checkpoint back, not the previous step; End is the run's end.
  const before = Number(await time.getAttribute('aria-valuenow'));
  await time.focus();
  await time.press('ArrowLeft');
  await expect
    .poll(async () => Number(await time.getAttribute('aria-valuenow')))
    .toBeLessThan(before);
  await expect(page).toHaveURL(/\/lessons\/tired-user\/run\/$/);
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  await expect(page.getByText('Run complete.')).toBeVisible();
});
