/**
 * Issue #25 in the page, where the other tests leave a gap: the two refusal lessons' Try steps
 * quote what `lab run` computes for the changed scenario (their Explain steps are checked in
 * lessons.test.ts), and the Guarantees panel says which lane refuses in a foreign style by
 * design — waived, in its own words — while the frames-conform check stays a check that holds.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { runAndWrite } from '../src/cli/run';
import {
  fillTemplate,
  mergePatch,
  parseLesson,
  type LessonData
} from '../src/lib/sim/input/lessons';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { sdkFrameProblem } from '../src/lib/sim/checks/conformance';
import { guardedSimulation } from '../src/lib/sim/checks/guard';
import { parseScenario, type LaneId } from '../src/lib/sim/input/scenario';

function lesson(name: string): LessonData {
  const r = parseLesson(readFileSync(`static/lessons/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(r.errors[0]!.message);
  return r.lesson;
}

/** The lanes' counters from `lab run --out`'s metrics.json for the lesson's scenario, tried. */
function cliTried(l: LessonData): Record<LaneId, LaneCounters> {
  const data = JSON.parse(readFileSync(`static/scenarios/${l.scenario}.json`, 'utf8')) as unknown;
  const parsed = parseScenario(mergePatch(data, l.try.patch));
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const out = mkdtempSync(join(tmpdir(), 'try-'));
  try {
    runAndWrite({ scenario: parsed.scenario, out });
    const m = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8')) as {
      lanes: Record<LaneId, { counters: LaneCounters }>;
    };
    return { A: m.lanes.A.counters, B: m.lanes.B.counters };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

for (const name of ['refusal-codes', 'who-hears']) {
  test(`${name}: Try quotes lab run's numbers for the changed scenario`, async ({ page }) => {
    const l = lesson(name);
    await page.goto(`./lessons/${l.name}/try/`);
    await page.getByRole('button', { name: l.try.label }).click();
    await page.getByRole('button', { name: 'Skip to the end' }).click();
    await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByLabel('What changed')).toHaveText(
      fillTemplate(l.try.explain, cliTried(l))
    );
  });
}

test('the Guarantees panel names the lane that refuses like VS Code by design; frames still conform', async ({
  page
}) => {
  test.setTimeout(120_000);
  // The same run in Node, guarded as the page's worker guards it (the SDK's schemas).
  const parsed = parseScenario(readFileSync('static/scenarios/refusal-codes.json', 'utf8'));
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const { sim, guard } = guardedSimulation(parsed.scenario, {}, { validate: sdkFrameProblem });
  sim.runToEnd();
  const results = guard.results();
  const typed = results.find((g) => g.id === 'refusals-typed')!;
  const conform = results.find((g) => g.id === 'frames-conform')!;
  expect(typed.status).toBe('waived');
  expect(typed.summary).toMatch(/^lane B refuses like VS Code \(-32000, no data\): /);
  expect(conform.status).toBe('held');

  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Scenario', { exact: true }).selectOption('refusal-codes');
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00', {
    timeout: 90_000
  });
  const panel = page.getByRole('region', { name: /^Guarantees/ });
  const waived = { name: `✗ ${typed.summary}`, exact: true };
  await expect(panel.getByRole('button', waived)).toBeVisible();
  // Its why, in the panel's words, on the same line.
  const item = panel.getByRole('listitem').filter({ has: page.getByRole('button', waived) });
  await expect(item).toContainText(
    "A real client's refusal carries no reason and no retryable flag"
  );
  await expect(
    panel.getByRole('button', { name: `✓ ${conform.summary}`, exact: true })
  ).toBeVisible();
  // Waived is not held: the tally counts it out.
  await expect(panel.getByRole('status')).toHaveText(
    `${results.length - 1} of ${results.length} hold`
  );
});
