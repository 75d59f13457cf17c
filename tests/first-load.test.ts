/**
 * What the playground fetches before it is ready (issues #9 and #24, first load): the page brings
 * no validation library and no XState runtime — the worker parses what a scenario brings, the
 * statechart is drawn from a generated graph, and the parsers load when a learner first edits or
 * uploads — and the sim worker brings no XState either: it runs the authorisation flow from its
 * transition table (machine/authorize/fast.ts), XState only with the actor executor the /single/
 * page uses. Sizes are a benchmark's figures (`npm run bench:ui`); this guards what may not come
 * back by accident.
 */
import { expect, test } from '@playwright/test';

/** A string only the XState runtime carries (our table interpreter names no spawned actors). */
const XSTATE = 'xstate.spawn';

test('the page loads neither zod nor XState until a learner edits', async ({ page }) => {
  const bodies: Promise<{ url: string; text: string }>[] = [];
  // The context sees the page's requests and its dedicated workers' alike.
  page.context().on('response', (r) => {
    if (new URL(r.url()).pathname.endsWith('.js'))
      bodies.push(r.text().then((text) => ({ url: r.url(), text })));
  });
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.waitForLoadState('networkidle');
  const all = await Promise.all(bodies);
  // The sim worker is built under workers/.
  const scripts = all.filter((s) => !s.url.includes('/workers/'));
  const worker = all.filter((s) => s.url.includes('/workers/sim.worker'));
  expect(scripts.length).toBeGreaterThan(3);
  expect(worker.length, 'the sim worker was fetched').toBeGreaterThan(0);
  const carrying = (of: typeof all, marker: string) =>
    of.filter((s) => s.text.includes(marker)).map((s) => new URL(s.url).pathname);
  expect(carrying(scripts, 'ZodError'), 'zod in the first load').toEqual([]);
  expect(carrying(scripts, 'xstate.init'), 'XState in the first load').toEqual([]);
  expect(carrying(scripts, XSTATE), 'XState in the first load').toEqual([]);
  expect(carrying(worker, XSTATE), "XState in the worker's first load").toEqual([]);

  // The policy parser arrives with the editor.
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  await expect(
    page.getByRole('region', { name: /^Policy for lane A/ }).getByText(/^Valid: /)
  ).toBeVisible();
  const later = (await Promise.all(bodies)).filter((s) => !s.url.includes('/workers/'));
  expect(carrying(later, 'ZodError').length, 'the parser with the editor').toBeGreaterThan(0);
});

test('the XState marker is one the runtime carries: the /single/ page, which runs actors, has it', async ({
  page
}) => {
  const bodies: Promise<string>[] = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.endsWith('.js')) bodies.push(r.text());
  });
  await page.goto('./single/');
  await page.waitForLoadState('networkidle');
  const texts = await Promise.all(bodies);
  expect(texts.some((t) => t.includes(XSTATE))).toBe(true);
});
