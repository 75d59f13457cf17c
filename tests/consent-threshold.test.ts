import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { runAndWrite } from '../src/cli/run';
import {
  fillTemplate,
  formatMetric,
  mergePatch,
  parseLesson,
  type LessonData
} from '../src/lib/sim/input/lessons';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { parseScenario, type LaneId } from '../src/lib/sim/input/scenario';

// askAbove in the playground: a call the policy let through without a dialog says so in the
// audit log, with the estimate and the threshold it stood on (the record's consentSkipped).
test('the audit log names the basis of a dialog skipped under askAbove', async ({ page }) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Scenario', { exact: true }).selectOption('cheap-calls');
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toHaveCount(0, {
    timeout: 120_000
  });
  const log = page.getByRole('region', { name: 'Audit log', exact: true });
  const basis = /^not asked: estimate 0\.\d+ USD ≤ askAbove 0\.005 USD$/;
  await expect(log.getByRole('gridcell', { name: basis }).first()).toHaveText('≤ askAbove');
  // Only lane B has askAbove: a skipped row is B's.
  const row = log
    .getByRole('row')
    .filter({ has: page.getByRole('gridcell', { name: basis }) })
    .first();
  await expect(row.getByRole('gridcell').nth(1)).toHaveText('B');
  // The rows say their consent and model whole, not cut to an ellipsis.
  const cut = await log
    .getByRole('gridcell')
    .evaluateAll((cells) =>
      cells.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent)
    );
  expect(cut).toEqual([]);
});

function cheapCalls(): LessonData {
  const r = parseLesson(readFileSync('static/lessons/cheap-calls.json', 'utf8'));
  if (!r.ok) throw new Error(r.errors[0]!.message);
  return r.lesson;
}

/** The lanes' counters from the CLI's metrics.json for the lesson's scenario (tried or not). */
function cliMetrics(l: LessonData, tried: boolean): Record<LaneId, LaneCounters> {
  const data = JSON.parse(readFileSync(`static/scenarios/${l.scenario}.json`, 'utf8')) as unknown;
  const parsed = parseScenario(tried ? mergePatch(data, l.try.patch) : data);
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const out = mkdtempSync(join(tmpdir(), 'cheap-calls-'));
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

test('the cheap-calls Try: a budget window bounds the spend no person saw', async ({ page }) => {
  const l = cheapCalls();
  const before = cliMetrics(l, false);
  const after = cliMetrics(l, true);
  await page.goto(`./lessons/${l.name}/try/`);
  await page.getByRole('button', { name: l.try.label }).click();
  await page.getByRole('button', { name: 'Skip to the end' }).click();
  await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
  await expect(page.getByLabel('What changed')).toHaveText(fillTemplate(l.try.explain, after));
  await expect(page.getByLabel('After lane B Spend no person saw', { exact: true })).toHaveText(
    formatMetric('unaskedSpendMicros', after.B.unaskedSpendMicros)
  );
  expect(after.B.unaskedSpendMicros).toBeLessThan(before.B.unaskedSpendMicros);
});
