/**
 * What the playground's page fetches before it is ready (issue #9, first load): no validation
 * library and no XState runtime — the worker parses what a scenario brings, the statechart is
 * drawn from a generated graph, and the parsers load when a learner first edits or uploads. Sizes
 * are a benchmark's figures (`npm run bench:ui`); this guards what may not come back by accident.
 */
import { expect, test } from '@playwright/test';

test('the page loads neither zod nor XState until a learner edits', async ({ page }) => {
  const bodies: Promise<{ url: string; text: string }>[] = [];
  page.on('response', (r) => {
    // Page scripts only: the sim worker (it does parse, and run XState) is built under workers/.
    if (r.url().endsWith('.js') && !r.url().includes('/workers/'))
      bodies.push(r.text().then((text) => ({ url: r.url(), text })));
  });
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.waitForLoadState('networkidle');
  const scripts = await Promise.all(bodies);
  expect(scripts.length).toBeGreaterThan(3);
  const carrying = (marker: string) =>
    scripts.filter((s) => s.text.includes(marker)).map((s) => new URL(s.url).pathname);
  expect(carrying('ZodError'), 'zod in the first load').toEqual([]);
  expect(carrying('xstate.init'), 'XState in the first load').toEqual([]);

  // The policy parser arrives with the editor.
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  await expect(
    page.getByRole('region', { name: /^Policy for lane A/ }).getByText(/^Valid: /)
  ).toBeVisible();
  const later = await Promise.all(bodies);
  expect(later.some((s) => s.text.includes('ZodError'))).toBe(true);
});
