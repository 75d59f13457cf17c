/**
 * Helpers the playground's Playwright tests share: a row of the audit log by its reason, the run
 * the tab remembers for a reload (sessionStorage, run-memory.ts), and the parts of the page that
 * arrive after the first load (issue #24): the charts with the run's first move, the lower panels
 * when seen; the audit log as its JSONL download.
 */
import { readFileSync } from 'node:fs';
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
 * Scrolls a lazily mounted part's place into the window, which mounts it (the playground fetches
 * the code of its statechart, time-travel panel, audit log and frame inspector when they are
 * seen or the run starts: Lazy.svelte, when-seen.ts); nothing when it is mounted already.
 */
async function scrollToLazy(page: Page, name: string): Promise<void> {
  // In one step in the page: a place counted here and then scrolled to could be replaced by its
  // part in between (the part mounts when it comes near the window, or when a run starts), and
  // the scroll would then fail on a detached element (seen in CI).
  await page.evaluate(
    (n) => document.querySelector(`[data-lazy="${n}"]`)?.scrollIntoView({ block: 'center' }),
    name
  );
}

/** The statechart, scrolled to and drawn. */
export async function scrollToStatechart(page: Page): Promise<void> {
  await scrollToLazy(page, 'statechart');
  const drawing = page
    .getByRole('region', { name: 'Authorisation machine' })
    .getByRole('img', { name: /^Statechart of the authorisation machine/ });
  await drawing.scrollIntoViewIfNeeded();
  await expect(drawing).toBeVisible();
}

/** The time-travel panel (fork, breakpoints), scrolled to and mounted. */
export async function scrollToTravel(page: Page): Promise<void> {
  await scrollToLazy(page, 'time-travel');
  await expect(page.getByRole('region', { name: 'Time travel' })).toBeVisible();
}

/** The audit log's table, scrolled to and mounted. */
export async function scrollToAudit(page: Page): Promise<void> {
  await scrollToLazy(page, 'audit-log');
  await expect(page.getByRole('region', { name: 'Audit log' })).toBeVisible();
}

/** The audit log as the page's "Download JSONL" gives it (the file's text). */
export async function downloadJsonl(page: Page): Promise<string> {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download JSONL' }).click()
  ]);
  return readFileSync((await file.path())!, 'utf8');
}
