/**
 * What the playground fetches before it is ready (issues #9 and #24, first load): the page brings
 * no validation library and no XState runtime — the worker parses what a scenario brings, the
 * statechart is drawn from a generated graph, and the parsers load when a learner first edits or
 * uploads — and the sim worker brings no XState either: it runs the authorisation flow from its
 * transition table (machine/authorize/fast.ts), XState only with the actor executor the /single/
 * page uses. Sizes are a benchmark's figures (`npm run bench:ui`); this guards what may not come
 * back by accident.
 */
import { expect, test, type Page } from '@playwright/test';
import { scrollToAudit, scrollToStatechart, scrollToTravel } from './run-helpers';

/** A string only the XState runtime carries (our table interpreter names no spawned actors). */
const XSTATE = 'xstate.spawn';

/** Every script the page and its dedicated workers fetch from now on, with its text. */
function scriptsFetched(page: Page): Promise<{ url: string; text: string }>[] {
  const bodies: Promise<{ url: string; text: string }>[] = [];
  // The context sees the page's requests and its dedicated workers' alike.
  page.context().on('response', (r) => {
    if (new URL(r.url()).pathname.endsWith('.js'))
      bodies.push(
        // A body still coming when the test ends is not one it looks at.
        r.text().then(
          (text) => ({ url: r.url(), text }),
          () => ({ url: r.url(), text: '' })
        )
      );
  });
  return bodies;
}

/** The text of every script the page itself (not its workers) fetches from now on. */
function pageScriptsFetched(page: Page): Promise<string>[] {
  const bodies: Promise<string>[] = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.endsWith('.js')) bodies.push(r.text().catch(() => ''));
  });
  return bodies;
}

test('the page loads neither zod nor XState until a learner edits', async ({ page }) => {
  const bodies = scriptsFetched(page);
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
  // Nor zod (issue #24): the ready-made scenario loads precompiled; the parsers and the SDK's
  // frame schemas (built in zod) come with the first Play or a person's own input.
  const workers = all.filter((s) => s.url.includes('/workers/'));
  expect(carrying(workers, 'ZodError'), "zod in the worker's first load").toEqual([]);
  // Nor the strict JSON reader (duplicate members, positions): only the parsers use it, and it
  // came with the frame builders until the frame parser moved out (machine/frame-parse.ts).
  expect(
    carrying(workers, 'JSON would silently keep'),
    "the JSON reader in the worker's first load"
  ).toEqual([]);

  // The policy parser arrives with the editor.
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  await expect(
    page.getByRole('region', { name: /^Policy for lane A/ }).getByText(/^Valid: /)
  ).toBeVisible();
  const later = (await Promise.all(bodies)).filter((s) => !s.url.includes('/workers/'));
  expect(carrying(later, 'ZodError').length, 'the parser with the editor').toBeGreaterThan(0);
});

test("the first Play brings the worker's parsers and frame checks, and plays at once", async ({
  page
}) => {
  const bodies = scriptsFetched(page);
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.waitForLoadState('networkidle');
  const zodInWorker = async () =>
    (await Promise.all(bodies)).some(
      (s) => s.url.includes('/workers/') && s.text.includes('ZodError')
    );
  expect(await zodInWorker()).toBe(false);
  await page.getByRole('button', { name: 'Play' }).click();
  // The run moves (its frames checked against the SDK's schemas, loaded for it).
  await expect(page.getByRole('status', { name: 'Simulated time' })).not.toHaveText('0:00:00');
  expect(await zodInWorker()).toBe(true);
});

/** A class name only uPlot's code carries. */
const UPLOT = 'u-cursor-x';

test("uPlot is not fetched before the run's clock moves: the charts draw with the first Play", async ({
  page
}) => {
  const bodies = pageScriptsFetched(page);
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.waitForLoadState('networkidle');
  const charts = page.getByRole('region', { name: 'Charts' });
  // The plot boxes are there, on screen and at their size, before uPlot is.
  const plot = charts.getByRole('img').first();
  await expect(plot).toBeInViewport();
  const box = await plot.boundingBox();
  expect(box!.height).toBeGreaterThan(50);
  expect((await Promise.all(bodies)).some((t) => t.includes(UPLOT))).toBe(false);
  await expect(charts.locator('canvas')).toHaveCount(0);
  // Played, the charts draw without anything else asked, in the boxes they had: uPlot sits out of
  // the flow, so a box is the same size with its chart as without it. Measured in one step in the
  // page, not against the size before Play: the lanes beside the charts may grow a line as the run
  // goes (a longer number, a guarantee's words wrapping), and the charts' grid area with them —
  // compared across Play, that made this test fail now and then.
  await page.getByRole('button', { name: 'Play' }).click();
  await expect(charts.locator('canvas').first()).toBeVisible();
  expect((await Promise.all(bodies)).some((t) => t.includes(UPLOT))).toBe(true);
  const [withChart, without] = await plot.evaluate((el) => {
    const drawn = el.querySelector<HTMLElement>('.uplot')!;
    const h = el.getBoundingClientRect().height;
    drawn.style.display = 'none';
    const bare = el.getBoundingClientRect().height;
    drawn.style.display = '';
    return [h, bare];
  });
  expect(withChart).toBe(without);
  expect(withChart).toBeGreaterThan(50);
});

test('the statechart is drawn when it is scrolled to, in the place held for it', async ({
  page
}) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.waitForLoadState('networkidle');
  const section = page.getByRole('region', { name: 'Authorisation machine' });
  const drawing = section.getByRole('img', { name: /^Statechart of the authorisation machine/ });
  await expect(drawing).toHaveCount(0);
  const held = (await section.boundingBox())!.height;
  await scrollToStatechart(page);
  await expect(drawing).toBeVisible();
  expect((await section.boundingBox())!.height).toBeCloseTo(held, 0);
});

test('the XState marker is one the runtime carries: the /single/ page, which runs actors, has it', async ({
  page
}) => {
  const bodies = pageScriptsFetched(page);
  await page.goto('./single/');
  await page.waitForLoadState('networkidle');
  const texts = await Promise.all(bodies);
  expect(texts.some((t) => t.includes(XSTATE))).toBe(true);
});

/**
 * Strings only the parts loaded on first use carry (issue #24): links and uploads
 * (ui/page-links.ts), the audit table's row pages and export (ui/audit-rows.svelte.ts), setting
 * breakpoints and making forks (ui/time-travel-edits.ts).
 */
const ON_USE = {
  'links and uploads': 'The shared link could not be opened',
  'audit rows and export': 'there is nothing to download',
  'breakpoints and forks': "The link's fork"
};

test('links and uploads, the audit rows and export, breakpoints and forks load when first used', async ({
  page
}) => {
  const bodies = pageScriptsFetched(page);
  const fetched = async (marker: string) =>
    (await Promise.all(bodies)).some((t) => t.includes(marker));
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.waitForLoadState('networkidle');
  for (const [what, marker] of Object.entries(ON_USE))
    expect(await fetched(marker), `${what} in the first load`).toBe(false);

  // Each comes with its first use.
  await scrollToAudit(page);
  await expect.poll(() => fetched(ON_USE['audit rows and export'])).toBe(true);
  await scrollToTravel(page);
  await page.getByLabel('Break when', { exact: true }).fill('alert');
  await page.getByRole('button', { name: 'Add breakpoint' }).click();
  await expect(page.getByRole('list', { name: 'Breakpoints' })).toContainText('alert');
  expect(await fetched(ON_USE['breakpoints and forks'])).toBe(true);
  const scenario = await (await page.request.get('./scenarios/reconnect-bypass.json')).text();
  await page
    .getByRole('region', { name: 'Share and import' })
    .getByLabel('Upload scenario')
    .setInputFiles({
      name: 'mine.json',
      mimeType: 'application/json',
      buffer: Buffer.from(scenario)
    });
  await expect.poll(() => fetched(ON_USE['links and uploads'])).toBe(true);
});
