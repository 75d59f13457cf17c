import { expect, test, type Locator, type Page } from '@playwright/test';
import type { LaneId } from '../src/lib/machine/vocabulary';

const num = async (page: Page, lane: LaneId, name: string) =>
  Number(
    (await page.getByLabel(`Lane ${lane} ${name}`, { exact: true }).textContent())!.replace(
      /[^0-9.]/g,
      ''
    )
  );

/** The scenario picker (`getByLabel('Scenario')` also finds "Upload scenario" and "Scenario link"). */
const scenarioPicker = (page: Page) => page.getByRole('combobox', { name: /^Scenario/ });

async function open(page: Page) {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

/** The policy editor of one lane, as a learner sees it. */
function policyEditor(page: Page, lane: LaneId) {
  const panel = page.getByRole('region', { name: new RegExp(`^Policy for lane ${lane}`) });
  return {
    toggle: page.getByRole('button', { name: `Edit policy (lane ${lane})` }),
    panel,
    text: page.getByRole('textbox', { name: `Policy JSON for lane ${lane}` }),
    errors: page.getByRole('list', { name: `Policy errors, lane ${lane}` }),
    apply: panel.getByRole('button', { name: 'Apply', exact: true }),
    reset: panel.getByRole('button', { name: 'Reset to the policy in force' }),
    close: panel.getByRole('button', { name: 'Close' }),
    refusal: panel
      .getByRole('alert')
      .filter({ hasText: 'Invalid policy not applied — the last valid policy stays in force' }),
    report: panel.getByRole('status').filter({ hasText: 'Policy applied' })
  };
}

async function openEditor(page: Page, lane: LaneId) {
  const ed = policyEditor(page, lane);
  await ed.toggle.click();
  await expect(ed.toggle).toHaveAttribute('aria-expanded', 'true');
  // Monaco is loaded on demand; its input carries the label.
  await expect(ed.text).toBeVisible();
  return ed;
}

/** Replace the editor's text by typing, as a learner would. */
async function typeInto(page: Page, text: Locator, value: string) {
  await text.focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.type(value);
  await page.keyboard.press('Escape'); // any completion list
  // Monaco auto-closes brackets and quotes; whatever it added after the cursor goes.
  await page.keyboard.press('Shift+ControlOrMeta+End');
  await page.keyboard.press('Delete');
}

/** Replace the editor's text by pasting, as a learner with a policy in hand would. */
async function pasteInto(page: Page, text: Locator, value: string) {
  await page.evaluate((v) => navigator.clipboard.writeText(v), value);
  await text.focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+V');
}

test('Monaco is not part of the first load; it loads when an editor opens', async ({ page }) => {
  const scripts: string[] = [];
  page.on('request', (r) => {
    if (r.resourceType() === 'script') scripts.push(r.url());
  });
  await open(page);
  await expect(page.locator('.monaco-editor')).toHaveCount(0);
  const before = scripts.length;
  await openEditor(page, 'A');
  await expect(page.locator('.monaco-editor')).toHaveCount(1);
  expect(scripts.length).toBeGreaterThan(before);
});

test('an invalid policy is refused with its errors; the last valid policy stays in force', async ({
  page
}) => {
  await open(page);
  const ed = await openEditor(page, 'A');
  await expect(ed.panel).toContainText('Valid: this is the policy in force');
  await expect(ed.apply).toBeEnabled();

  await typeInto(page, ed.text, '{"version": 2}');

  // Listed with path and message, and underlined in the editor.
  await expect(ed.errors).toContainText('$.version');
  await expect(ed.errors).toContainText('unsupported policy version 2');
  await expect(ed.errors).toContainText('missing required member "defaults"');
  await expect(ed.panel).toContainText(/\d+ errors: cannot be applied/);
  const squiggle = ed.panel.locator('.squiggly-error').first();
  await expect(squiggle).toBeVisible();
  // The inline error names the path too (Monaco shows a marker's message on hover). Monaco
  // redraws its decorations as the layout settles, so the squiggle found may be replaced before
  // its box is read: find it again and hover until the message shows.
  const hover = page.locator('.monaco-hover').filter({ hasText: /\$(\.\w+)?: / });
  await expect(async () => {
    const box = await squiggle.boundingBox();
    expect(box).not.toBeNull();
    await page.mouse.move(box!.x + 2, box!.y + box!.height / 2, { steps: 4 });
    await expect(hover).toBeVisible({ timeout: 3_000 });
  }).toPass({ timeout: 20_000 });

  // Apply is disabled, and forcing it with the keyboard is refused.
  await expect(ed.apply).toBeDisabled();
  await ed.text.focus();
  await page.keyboard.press('ControlOrMeta+Enter');
  await expect(ed.refusal).toBeVisible();
  await expect(ed.refusal).toContainText('Fix the 3 errors listed below');
  await expect(ed.report).toHaveCount(0);

  // Lane B's editor is untouched by lane A's draft.
  const b = await openEditor(page, 'B');
  await expect(b.panel).toContainText('Valid: this is the policy in force');
  await expect(b.errors).toHaveCount(0);

  // Reset brings back the policy in force.
  await ed.reset.click();
  await expect(ed.panel).toContainText('Valid: this is the policy in force');
  await expect(ed.errors).toHaveCount(0);
  await expect(ed.refusal).toHaveCount(0);
});

test('a valid edit applies and reports the stored decisions it invalidated, per server', async ({
  page,
  context,
  request
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await open(page);
  // Run a while so both lanes hold stored decisions.
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00', {
    timeout: 30_000
  });
  const lane: LaneId = (await num(page, 'A', 'stored decisions')) > 0 ? 'A' : 'B';
  expect(await num(page, lane, 'stored decisions')).toBeGreaterThan(0);

  // The scenario's own policy for the lane, with one default changed: every server's block changes.
  const name = await scenarioPicker(page).inputValue();
  const file = (await (await request.get(`./scenarios/${name}.json`)).json()) as {
    lanes: Record<LaneId, { policy: { defaults: { maxInputTokens: number } } }>;
  };
  const policy = file.lanes[lane].policy;
  policy.defaults.maxInputTokens += 1;

  const ed = await openEditor(page, lane);
  await pasteInto(page, ed.text, JSON.stringify(policy, null, 2));
  await expect(ed.panel).toContainText('Valid, not applied yet');
  await expect(ed.errors).toHaveCount(0);
  await ed.apply.click();

  await expect(ed.report).toContainText(`Policy applied to lane ${lane}.`);
  await expect(ed.report.getByRole('listitem').first()).toHaveText(
    /^\S.*: \d+ stored decisions? invalidated$/
  );
  const counts = await ed.report.getByRole('listitem').allTextContents();
  const total = counts.reduce((n, t) => n + Number(/: (\d+) stored/.exec(t)![1]), 0);
  expect(total).toBeGreaterThan(0);
  await expect(ed.panel).toContainText('Valid: this is the policy in force');

  // Close hands focus back to the button that opened the editor.
  await ed.close.click();
  await expect(ed.panel).toHaveCount(0);
  await expect(ed.toggle).toBeFocused();
});
