/**
 * Helpers the playground's Playwright tests share: a row of the audit log by its reason, the run
 * the tab remembers for a reload (sessionStorage, run-memory.ts), and the parts of the page that
 * arrive after the first load (issue #24): the charts with the run's first move, the statechart
 * when seen.
 */
import { expect, type Page } from '@playwright/test';
import type { TimelineAction } from '../src/lib/sim/engine/engine';
import type { TimelineFork } from '../src/lib/sim/session/protocol';

/** The first visible audit row showing `reason` (e.g. `user.denied`). */
export function auditRowWith(page: Page, reason: string) {
  return page
    .getByRole('region', { name: 'Audit log' })
    .getByText(reason, { exact: true })
    .filter({ visible: true })
    .first();
}

export interface RememberedRun {
  t: number;
  actions: TimelineAction[];
  fork: TimelineFork | null;
}

/** What the tab remembers of its run for a reload, or null. */
export function rememberedRun(page: Page): Promise<RememberedRun | null> {
  return page.evaluate(
    () =>
      JSON.parse(
        sessionStorage.getItem('sampling-policy-lab-run') ?? 'null'
      ) as RememberedRun | null
  );
}

/**
 * Plays the ready playground until its charts are drawn, then pauses: uPlot loads when the run's
 * clock first moves (Charts.svelte), so a test that looks at the drawn charts plays first.
 */
export async function drawCharts(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Play' }).click();
  const charts = page.getByRole('region', { name: 'Charts' });
  await charts.scrollIntoViewIfNeeded();
  await expect(charts.locator('.uplot canvas').first()).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();
}

/**
 * Scrolls the statechart into the window, which mounts it (the playground fetches its code when
 * it is seen or the run starts, when-seen.ts), and waits for the drawing.
 */
export async function scrollToStatechart(page: Page): Promise<void> {
  const section = page.getByRole('region', { name: 'Authorisation machine' });
  await section.scrollIntoViewIfNeeded();
  await expect(
    section.getByRole('img', { name: /^Statechart of the authorisation machine/ })
  ).toBeVisible();
}
