import AxeBuilder from '@axe-core/playwright';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { runAndWrite } from '../src/cli/run';
import {
  fillTemplate,
  formatMetric,
  mergePatch,
  METRIC_LABELS,
  metricValue,
  parseLesson,
  type LessonData
} from '../src/lib/sim/input/lessons';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { parseScenario, type LaneId } from '../src/lib/sim/input/scenario';

const LESSONS: LessonData[] = readdirSync('static/lessons')
  .map((f) => {
    const r = parseLesson(readFileSync(`static/lessons/${f}`, 'utf8'));
    if (!r.ok) throw new Error(`${f}: ${r.errors[0]!.path}: ${r.errors[0]!.message}`);
    return r.lesson;
  })
  .sort((a, b) => a.order - b.order);
const LANES: LaneId[] = ['A', 'B'];

function lesson(name: string): LessonData {
  return LESSONS.find((l) => l.name === name)!;
}

function scenarioData(l: LessonData, tried = false): unknown {
  const data = JSON.parse(readFileSync(`static/scenarios/${l.scenario}.json`, 'utf8')) as unknown;
  return tried ? mergePatch(data, l.try.patch) : data;
}

/** The lanes' counters from the CLI's metrics.json (`lab run --out`), same scenario and seed. */
function cliMetrics(data: unknown): Record<LaneId, LaneCounters> {
  const parsed = parseScenario(data);
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const out = mkdtempSync(join(tmpdir(), 'lesson-'));
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

async function expectNumbers(
  page: Page,
  l: LessonData,
  m: Record<LaneId, LaneCounters>,
  prefix = 'Lane'
) {
  for (const key of l.metrics)
    for (const id of LANES)
      await expect(
        page.getByLabel(`${prefix} ${id} ${METRIC_LABELS[key]}`, { exact: true })
      ).toHaveText(formatMetric(key, metricValue(m[id], key)));
}

/** Skip the Run step to its end and go on to Explain with the presenter's → key. */
async function runToExplain(page: Page) {
  await page.getByRole('button', { name: 'Skip to the end' }).click();
  await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/explain\/$/);
}

test.describe('every lesson', () => {
  for (const l of LESSONS) {
    test(`${l.name}: Explain quotes the CLI's metrics.json for the same scenario and seed`, async ({
      page
    }) => {
      await page.goto(`./lessons/${l.name}/run/`);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(l.title);
      await runToExplain(page);
      const m = cliMetrics(scenarioData(l));
      await expect(page.getByLabel('Explanation')).toHaveText(fillTemplate(l.explain, m));
      await expectNumbers(page, l, m);
    });
  }
});

test('the lessons page lists every lesson in teaching order, with its promise and length', async ({
  page
}) => {
  await page.goto('./lessons/');
  const items = page.getByRole('listitem');
  await expect(items).toHaveCount(LESSONS.length);
  for (const [i, l] of LESSONS.entries()) {
    await expect(items.nth(i).getByRole('link')).toHaveText(l.title);
    await expect(items.nth(i)).toContainText(l.promise);
    await expect(items.nth(i)).toContainText(`${l.minutes} min`);
    await expect(items.nth(i)).toContainText('Not yet');
  }
  await expect(page.getByText(`0 of ${LESSONS.length} completed in this browser`)).toBeVisible();
  await expect(page.getByRole('button', { name: 'Print handout' })).toBeDisabled();
});

test('the playground links to the lessons', async ({ page }) => {
  await page.goto('./');
  await page.getByRole('link', { name: 'Lessons' }).click();
  await expect(page.getByRole('heading', { name: 'Lessons', level: 1 })).toBeVisible();
});

test('the run plays by itself at the lesson pace and the lanes diverge on screen', async ({
  page
}) => {
  const l = lesson('reconnect-bypass');
  await page.goto(`./lessons/${l.name}/run/`);
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
  // Lane A (connection-scoped) out-prompts lane B while the run is still going.
  await expect
    .poll(
      async () => {
        const a = await page.getByLabel('Lane A Consent prompts', { exact: true }).textContent();
        const b = await page.getByLabel('Lane B Consent prompts', { exact: true }).textContent();
        return Number(a!.replace(/,/g, '')) - Number(b!.replace(/,/g, '')) * 5;
      },
      { timeout: 10_000 }
    )
    .toBeGreaterThan(0);
  await expect(page.getByText('Run complete.')).toBeHidden();
});

test('with reduced motion the run waits for the presenter instead of playing by itself', async ({
  page
}) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('./lessons/tired-user/run/');
  const play = page.getByRole('button', { name: 'Play' });
  await expect(play).toBeEnabled();
  await expect(page.getByLabel('Run progress')).toHaveAttribute('value', '0');
  await page.keyboard.press(' ');
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
});

test('keyboard only: pick a lesson, predict, run, explain, try, and back to the list', async ({
  page
}) => {
  const l = LESSONS[0]!;
  expect(l.predict.kind).toBe('lane');
  await page.goto('./lessons/');
  const link = page.getByRole('link', { name: l.title });
  for (let i = 0; i < 10 && !(await link.evaluate((e) => e === document.activeElement)); i++)
    await page.keyboard.press('Tab');
  await expect(link).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/lessons/${l.name}/predict/$`));

  // Predict: Tab into the choices, pick lane B with the arrow keys, commit with Enter.
  const laneA = page.getByRole('radio', { name: 'Lane A' });
  for (let i = 0; i < 15 && !(await laneA.evaluate((e) => e === document.activeElement)); i++)
    await page.keyboard.press('Tab');
  await expect(laneA).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(page.getByRole('radio', { name: 'Lane B' })).toBeChecked();
  await expect(page).toHaveURL(/\/predict\/$/);
  await page.keyboard.press('Enter');
  await expect(page.getByText('Committed: lane B.')).toBeVisible();

  // → Run: it plays; Space pauses and plays.
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/run\/$/);
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
  await page.keyboard.press(' ');
  await expect(page.getByRole('button', { name: 'Play' })).toBeVisible();
  await page.keyboard.press(' ');
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();

  // → Explain: the run is finished at once; the prediction sits beside the result.
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/explain\/$/);
  const m = cliMetrics(scenarioData(l));
  await expect(page.getByLabel('Explanation')).toHaveText(fillTemplate(l.explain, m));
  await expect(page.getByLabel('Your prediction')).toContainText(
    'You said lane B; this run: lane B. Right.'
  );

  // Type size, blank screen.
  const root = page.locator('[data-step="explain"]');
  await page.keyboard.press('+');
  await expect(root).toHaveAttribute('style', /--scale: 1.125\b/);
  await page.keyboard.press('-');
  await page.keyboard.press('-');
  await expect(root).toHaveAttribute('style', /--scale: 0.875\b/);
  await page.keyboard.press('b');
  await expect(page.locator('.blank')).toBeVisible();
  await page.keyboard.press('ArrowRight'); // ignored while blank
  await expect(page).toHaveURL(/\/explain\/$/);
  await page.keyboard.press('b');
  await expect(page.locator('.blank')).toBeHidden();
  await page.keyboard.press('f');
  await expect.poll(() => page.evaluate(() => document.fullscreenElement !== null)).toBe(true);
  await page.keyboard.press('f');
  await expect.poll(() => page.evaluate(() => document.fullscreenElement !== null)).toBe(false);

  // ← and → again, then Try: the change applied with its button, run again.
  await page.keyboard.press('ArrowLeft');
  await expect(page).toHaveURL(/\/run\/$/);
  await page.keyboard.press('ArrowRight');
  // One step at a time: a key pressed while the next step is still loading is not a second step.
  await expect(page).toHaveURL(/\/explain\/$/);
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/try\/$/);
  const tryButton = page.getByRole('button', { name: l.try.label });
  for (let i = 0; i < 15 && !(await tryButton.evaluate((e) => e === document.activeElement)); i++)
    await page.keyboard.press('Tab');
  await expect(tryButton).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByText(`Changed: ${l.try.label}.`)).toBeVisible();

  // Esc: back to the list, where the lesson now counts as completed in this browser.
  await page.keyboard.press('Escape');
  await expect(page).toHaveURL(/\/lessons\/$/);
  await expect(page.getByRole('listitem').first()).toContainText('Completed');
  await expect(page.getByText(`1 of ${LESSONS.length} completed in this browser`)).toBeVisible();
});

test('Try: the change closes the gap, with numbers from the CLI, and opens in the playground', async ({
  page
}) => {
  const l = lesson('reconnect-bypass');
  await page.goto(`./lessons/${l.name}/explain/`);
  const before = cliMetrics(scenarioData(l));
  await expect(page.getByLabel('Explanation')).toHaveText(fillTemplate(l.explain, before));
  await page.keyboard.press('ArrowRight');
  await page.getByRole('button', { name: l.try.label }).click();
  await page.getByRole('button', { name: 'Skip to the end' }).click();
  await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
  const after = cliMetrics(scenarioData(l, true));
  await expect(page.getByLabel('What changed')).toHaveText(fillTemplate(l.try.explain, after));
  await expectNumbers(page, l, after, 'After lane');
  expect(after.A.consentPrompts).toBe(after.B.consentPrompts);

  await page.getByRole('link', { name: 'Open this in the full playground' }).click();
  await expect(
    page.getByRole('columnheader', { name: /^A Durable store \(was connection/ })
  ).toBeVisible();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
});

test('a step is a deep link; the prediction survives a reload', async ({ page }) => {
  const l = lesson('reconnect-bypass');
  await page.goto(`./lessons/${l.name}/predict/`);
  // Enabled once the page has hydrated: an answer typed before that is reset by hydration.
  await expect(page.getByRole('button', { name: 'Commit prediction' })).toBeEnabled();
  await page.getByRole('textbox').fill('120');
  await page.getByRole('button', { name: 'Commit prediction' }).click();
  await expect(page.getByText('Committed: 120.')).toBeVisible();
  await page.goto(`./lessons/${l.name}/explain/`);
  const m = cliMetrics(scenarioData(l));
  await expect(page.getByLabel('Your prediction')).toContainText(
    `You said 120; this run: ${formatMetric('consentPrompts', m.A.consentPrompts)}.`
  );
  await page.reload();
  await expect(page.getByLabel('Your prediction')).toContainText('You said 120;');
});

/** Whether this browser's lesson progress (IndexedDB, progress.ts) records `name` as completed. */
function completedIn(page: Page, name: string): Promise<boolean> {
  return page.evaluate(async (name) => {
    // Never create the database here: idb-keyval creates its store only on a first open.
    const dbs = await indexedDB.databases();
    if (!dbs.some((d) => d.name === 'sampling-lab-lessons')) return false;
    return new Promise<boolean>((resolve) => {
      const open = indexedDB.open('sampling-lab-lessons');
      open.onerror = () => resolve(false);
      open.onsuccess = () => {
        const db = open.result;
        if (!db.objectStoreNames.contains('progress')) return (db.close(), resolve(false));
        const get = db.transaction('progress').objectStore('progress').get(name);
        get.onsuccess = () => (db.close(), resolve(get.result?.completed === true));
        get.onerror = () => (db.close(), resolve(false));
      };
    });
  }, name);
}

test('Print handout lays out each completed lesson with its chart and numbers', async ({
  page
}) => {
  await page.addInitScript(() => {
    (window as unknown as { printed: number }).printed = 0;
    window.print = () => {
      (window as unknown as { printed: number }).printed++;
    };
  });
  const done = [lesson('tired-user'), lesson('direct-provider')];
  for (const l of done) {
    await page.goto(`./lessons/${l.name}/explain/`);
    await expect(page.getByLabel('Explanation')).toBeVisible({ timeout: 30_000 });
    // Explain records the lesson as completed in IndexedDB; leave only once it has (a navigation
    // right away can cut the write short).
    await expect.poll(() => completedIn(page, l.name)).toBe(true);
  }
  await page.goto('./lessons/');
  await expect(page.getByText(`2 of ${LESSONS.length} completed in this browser`)).toBeVisible();
  await page.getByRole('button', { name: 'Print handout' }).click();
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { printed: number }).printed))
    .toBe(1);
  await page.emulateMedia({ media: 'print' });
  await expect(page.getByRole('heading', { name: 'Lessons', level: 1 })).toBeHidden();
  const handout = page.getByRole('region', { name: 'Handout' });
  await expect(handout.getByRole('article')).toHaveCount(2);
  for (const l of done) {
    const m = cliMetrics(scenarioData(l));
    await expect(handout).toContainText(fillTemplate(l.explain, m));
    await expectNumbers(page, l, m, `${l.title} lane`);
  }
  await expect(handout.locator('.uplot')).toHaveCount(2);
});

for (const scheme of ['light', 'dark'] as const) {
  test(`no accessibility violations on the lessons pages (axe-core, ${scheme})`, async ({
    page
  }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const check = async () => {
      const r = await new AxeBuilder({ page }).analyze();
      expect(r.violations.map((v) => `${v.id}: ${v.nodes.length} × ${v.help}`)).toEqual([]);
    };
    await page.goto('./lessons/');
    await expect(page.getByRole('listitem')).toHaveCount(LESSONS.length);
    await check();
    const l = lesson('tired-user');
    await page.goto(`./lessons/${l.name}/predict/`);
    await expect(page.getByRole('button', { name: 'Commit prediction' })).toBeVisible();
    await check();
    await page.goto(`./lessons/${l.name}/explain/`);
    await expect(page.getByLabel('Explanation')).toBeVisible({ timeout: 30_000 });
    await check();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('button', { name: l.try.label }).click();
    await page.getByRole('button', { name: 'Skip to the end' }).click();
    await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
    await check();
  });
}

test('Run entered while the lesson is still loading plays once it has loaded', async ({ page }) => {
  // The worker's code after its entry comes late, so the Predict step's load is still under way
  // when the learner moves on: Run must wait for it, not send Play into a scenario not yet there.
  await page.route('**/workers/chunks/*.js', async (route) => {
    await new Promise((r) => setTimeout(r, 1_500));
    await route.continue();
  });
  const l = LESSONS[0]!;
  await page.goto(`./lessons/${l.name}/predict/`);
  // The page is live (its form mounted) while the worker is still fetching its code.
  await expect(page.getByRole('button', { name: 'Commit prediction' })).toBeEnabled();
  await page.getByRole('link', { name: '2 Run' }).click();
  await expect(page).toHaveURL(/\/run\/$/);
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
  await expect(page.getByRole('progressbar', { name: 'Run progress' })).not.toHaveAttribute(
    'value',
    '0'
  );
});
