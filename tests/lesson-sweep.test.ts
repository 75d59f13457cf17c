/**
 * A lesson whose Explain reads from a sweep (issue #23): the reconnect-bypass lesson's Explain
 * step runs its ready-made sweep in the page and quotes it; the quoted numbers are what the sweep
 * core gives for the same file in Node (as `lab sweep` would write them), and "Open this sweep"
 * lands on the Sweep page with that sweep picked.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { parseLesson, type LessonData } from '../src/lib/sim/input/lessons';
import {
  fillSweepTemplate,
  parseSweep,
  planSweep,
  runOnce,
  sweepResults
} from '../src/lib/sim/sweep';

function lesson(): LessonData {
  const r = parseLesson(readFileSync('static/lessons/reconnect-bypass.json', 'utf8'));
  if (!r.ok) throw new Error(r.errors[0]!.message);
  return r.lesson;
}

/** The lesson's sweep run whole in Node with the core's functions; its text filled from it. */
function expected(l: LessonData) {
  const file = `static/sweeps/${l.sweep}.json`;
  const s = parseSweep(readFileSync(file, 'utf8'));
  if (!s.ok) throw new Error(s.errors[0]!.message);
  const scenario = readFileSync(join(dirname(file), s.sweep.scenario as string), 'utf8');
  const p = planSweep(s.sweep, scenario);
  if (!p.ok) throw new Error(p.errors[0]!.message);
  const plan = p.plan;
  const runs = plan.points.map((pt) =>
    plan.seeds.map((seed) => runOnce(pt.scenario, seed, plan.metrics))
  );
  const results = sweepResults(plan, runs);
  return {
    plan,
    results,
    text: fillSweepTemplate(l.sweepExplain!, plan.sweep, plan.seeds.length, results)
  };
}

test('the Explain step runs the lesson’s sweep and quotes what the core computes', async ({
  page
}) => {
  test.setTimeout(180_000);
  const l = lesson();
  expect(l.sweep).toBeDefined();
  await page.goto(`./lessons/${l.name}/run/`);
  await page.getByRole('button', { name: 'Skip to the end' }).click();
  await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/explain\/$/);

  const block = page.getByRole('region', { name: 'From the sweep' });
  await expect(block).toBeVisible();
  const want = expected(l);
  await expect(block.getByLabel('What the sweep showed')).toHaveText(want.text, {
    timeout: 150_000
  });
  // The front's size and the run count, read from the core's results, not from the fill.
  expect(want.text).toContain(
    `${want.results.pareto.length} of the ${want.plan.points.length} settings`
  );
  expect(want.text).toContain(`${want.plan.runs} runs`);
  await expect(block.getByRole('status')).toHaveCount(0);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const r = await new AxeBuilder({ page }).include('.from-sweep').analyze();
    expect(r.violations.map((v) => `${scheme}: ${v.id}: ${v.help}`)).toEqual([]);
  }

  await block.getByRole('link', { name: 'Open this sweep' }).click();
  await expect(page).toHaveURL(new RegExp(`/sweep/\\?sweep=${l.sweep}$`));
  await expect(page.getByLabel('Ready-made sweep')).toHaveValue(l.sweep!);
  await expect(page.getByRole('heading', { name: want.plan.sweep.title!, level: 2 })).toBeVisible();
});
