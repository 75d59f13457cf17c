/**
 * Helpers the playground's Playwright tests share: a row of the audit log by its reason, and the
 * run the tab remembers for a reload (sessionStorage, run-memory.ts).
 */
import type { Page } from '@playwright/test';
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
