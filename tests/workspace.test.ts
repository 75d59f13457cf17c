/**
 * The designer's workspace (issue #24): words on the page that are true — lane headers from the
 * live configuration, the seek note, "Simulate" to the scenario's end, the paused request in its
 * lane's colour, what each retry-loop count counts, marks said once.
 */
import { expect, test, type Page } from '@playwright/test';
import type { LaneId } from '../src/lib/machine/vocabulary';
import { scrollToTravel } from './run-helpers';

async function open(page: Page, scenario: string) {
  await page.goto(`./?scenario=${scenario}`);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

const header = (page: Page, lane: LaneId) =>
  page.getByRole('columnheader', { name: new RegExp(`^${lane} `) });

test('lane headers say the live configuration, once; a change shows at once', async ({ page }) => {
  await open(page, 'reconnect-bypass');
  // The scenario's name and the store said once, not "Connection-scoped store · connection-scoped".
  await expect(header(page, 'A')).toHaveAccessibleName('A Connection-scoped store');
  await expect(header(page, 'B')).toHaveAccessibleName('B Durable store');
  await expect(page.getByText('A lane is one client')).toBeVisible();

  await open(page, 'retryable-loop');
  await expect(header(page, 'A')).toHaveAccessibleName(
    'A Durable store retryable: false (default)'
  );
  await page.getByText('Configure lane A').click();
  await page
    .getByRole('checkbox', { name: 'retryable (policy.sampling_disabled, lane A)' })
    .check();
  await expect(header(page, 'A')).toHaveAccessibleName(
    'A Durable store · sampling_disabled retryable as loaded: retryable: false (default)'
  );
  // The change is on the timeline once, with its lane named once.
  const marks = page.getByRole('list', { name: 'Timeline marks' });
  await expect(marks).toContainText('lane A: policy.sampling_disabled retryable → true');
  await expect(marks).not.toContainText('lane A: lane A:');
});

test('"Simulate" runs to the scenario\'s end by default; a number of hours still works', async ({
  page
}) => {
  await open(page, 'reconnect-bypass');
  const run = page.getByRole('button', { name: /^Simulate to the end \((\d+ h)?( ?\d+ min)?\)$/ });
  await expect(run).toBeEnabled();
  await run.click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeDisabled();
  const slider = page.getByRole('slider', { name: 'Time' });
  const max = await slider.getAttribute('aria-valuemax');
  await expect(slider).toHaveAttribute('aria-valuenow', max!);
  // Nothing was asked past the end: no offer to extend the run.
  await expect(page.getByRole('button', { name: /^Extend to/ })).toHaveCount(0);
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await page.getByLabel('Hours', { exact: true }).fill('2');
  await expect(page.getByRole('button', { name: 'Simulate 2 h' })).toBeEnabled();
});

test('the seek note says what the seek did', async ({ page }) => {
  await open(page, 'reconnect-bypass');
  await page.getByRole('button', { name: /^Simulate to the end/ }).click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeDisabled();
  const slider = page.getByRole('slider', { name: 'Time' });
  await slider.focus();
  await page.keyboard.press('Home');
  const note = page.getByRole('status').filter({ hasText: 'Last seek took' });
  // Back: from an engine checkpoint in place, or re-simulated into fresh storage — one of them.
  await expect(note).toHaveText(
    /^Last seek took \d+ ms:\s+(restored an engine checkpoint in place and ran on from it \(this timeline's storage kept\)|re-simulated from the start into fresh storage \(the later branch's stored decisions are not used\))\.$/
  );
  await page.keyboard.press('ArrowRight');
  await expect(note).toHaveText(
    /^Last seek took \d+ ms:\s+(ran the run on to there|restored an engine checkpoint in place and ran on from it \(this timeline's storage kept\))\.$/
  );
});

test("a paused request is drawn in its lane's colour", async ({ page }) => {
  await open(page, 'reconnect-bypass');
  // The panel mounts when seen (or once the run has started).
  await scrollToTravel(page);
  await page.getByLabel('Break when', { exact: true }).fill('consent@B');
  await page.getByRole('button', { name: 'Add breakpoint' }).click();
  await page.getByRole('button', { name: 'Play' }).click();
  await expect(page.getByLabel('Highlighted path')).toContainText("lane B's paused request", {
    timeout: 30_000
  });
  const colours = await page.evaluate(() => {
    const line = document.querySelector('.edge.lit .line');
    const probe = document.createElement('span');
    probe.style.color = 'var(--lane-b)';
    document.body.append(probe);
    const laneB = getComputedStyle(probe).color;
    probe.remove();
    return { lit: line ? getComputedStyle(line).stroke : null, laneB };
  });
  expect(colours.lit).toBe(colours.laneB);
});

test('each retry-loop count says what it counts; the lessons list has no stale line', async ({
  page
}) => {
  await open(page, 'retryable-loop');
  await expect(page.getByRole('rowheader', { name: /^Flagged retry loops/ })).toContainText(
    'distinct requests'
  );
  await expect(
    page.getByRole('figure', { name: /^Retry-loop alerts \(presentations\)/ })
  ).toBeVisible();
  await page.goto('./lessons/');
  await expect(page.getByRole('link', { name: 'Restart the client' })).toBeVisible();
  await expect(page.getByText('Not here yet')).toHaveCount(0);
});
