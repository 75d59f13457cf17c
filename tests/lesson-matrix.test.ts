/**
 * "Same refusal, six codes" (issue #25): the refusal-codes lesson's Explain step runs its scenario
 * once per refusal style in the page and shows the matrix as a table. Every number in it is what
 * `lab styles` prints for the same file and lane (the CLI's own command, run here); the text under
 * it is filled from those numbers; it fits a phone without the page scrolling sideways.
 */
import { readFileSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { commands, runCommand } from '../src/cli/commands';
import { parseLesson, type LessonData } from '../src/lib/sim/input/lessons';
import { refusalMatrix } from '../src/lib/sim/report/refusal-matrix';
import { fillMatrixTemplate } from '../src/lib/sim/report/refusal-matrix-text';

function lesson(): LessonData {
  const r = parseLesson(readFileSync('static/lessons/refusal-codes.json', 'utf8'));
  if (!r.ok) throw new Error(r.errors[0]!.message);
  return r.lesson;
}

/** `lab styles static/scenarios/<scenario>.json --lane <lane>`'s table, as rows of named cells. */
async function labStyles(l: LessonData): Promise<Record<string, Record<string, string>>> {
  let out = '';
  const code = await runCommand(
    commands.styles!,
    [`static/scenarios/${l.scenario}.json`, '--lane', l.matrix!.lane],
    { out: (s) => void (out += s), err: () => {}, stdin: async () => '' }
  );
  expect(code).toBe(0);
  const [title, head, ...lines] = out.trimEnd().split('\n');
  expect(title).toMatch(
    new RegExp(`^lane ${l.matrix!.lane}, seed \\d+, one run per refusal style:$`)
  );
  // Columns are separated by two spaces or more; "spend (USD)" holds one.
  const split = (line: string) => line.trim().split(/\s{2,}/);
  const names = split(head!);
  const rows: Record<string, Record<string, string>> = {};
  for (const line of lines) {
    const cells = split(line);
    rows[cells[0]!] = Object.fromEntries(names.map((n, i) => [n, cells[i]!]));
  }
  return rows;
}

async function toMatrix(page: Page, l: LessonData) {
  await page.goto(`./lessons/${l.name}/run/`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Same refusal, six codes');
  await page.getByRole('button', { name: 'Skip to the end' }).click();
  await expect(page.getByText('Run complete.')).toBeVisible({ timeout: 30_000 });
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/explain\/$/);
  const section = page.getByRole('region', { name: 'Six clients, one population' });
  const table = section.getByRole('table', { name: /one run per refusal style/ });
  await expect(table).toBeVisible({ timeout: 60_000 });
  return { section, table };
}

test('the matrix in the page is `lab styles`’ matrix for the same file, and its text quotes it', async ({
  page
}) => {
  test.setTimeout(120_000);
  const l = lesson();
  expect(l.matrix).toBeDefined();
  const cli = await labStyles(l);
  const { section, table } = await toMatrix(page, l);

  const headers = (await table.getByRole('columnheader').allTextContents()).map((t) =>
    t.replace(/\u00ad/g, '').trim()
  );
  expect(headers).toEqual([
    'Style (code)',
    'Retries',
    'Reconnects',
    'Prompts',
    'Abandoned',
    'Spend'
  ]);
  const rows = table.locator('tbody tr');
  // One row per refusal style, in the order `lab styles` prints them.
  await expect(rows).toHaveCount(Object.keys(cli).length);
  for (const [i, [style, want]] of Object.entries(cli).entries()) {
    const row = rows.nth(i);
    await expect(row.getByRole('rowheader')).toHaveText(`${style} ${want.code}`);
    await expect(row.getByRole('cell')).toHaveText([
      want.retries!,
      want.reconnects!,
      want.prompts!,
      want.abandoned!,
      `$${want['spend (USD)']}`
    ]);
  }
  // The rows differ where the lesson says they do: VS Code's reconnects, nobody else's.
  expect(Number(cli.vscode!.reconnects)).toBeGreaterThan(0);
  expect(Number(cli.lab!.reconnects)).toBe(0);

  // The text is the template filled from the same matrix (the core, in Node), and quotes the
  // CLI's numbers where it names them.
  const m = refusalMatrix(
    JSON.parse(readFileSync(`static/scenarios/${l.scenario}.json`, 'utf8')),
    l.matrix!.lane
  );
  if (!m.ok) throw new Error(m.errors[0]!.message);
  const text = fillMatrixTemplate(l.matrix!.explain, m.rows);
  await expect(section.getByLabel('What the matrix showed')).toHaveText(text);
  expect(text).toContain(`${cli.vscode!.reconnects} reconnects`);
  expect(text).toContain(`${cli.vscode!.prompts} prompts`);
  expect(text).toContain(
    `$${cli.vscode!['spend (USD)']} spent against $${cli.lab!['spend (USD)']}`
  );
  await expect(section.getByRole('status')).toHaveCount(0);
  await expect(
    section.getByText(`npm run lab -- styles static/scenarios/${l.scenario}.json`)
  ).toBeVisible();

  // Back from Try, the matrix computed on this page is shown again, the same.
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/\/try\/$/);
  await page.keyboard.press('ArrowLeft');
  await expect(page).toHaveURL(/\/explain\/$/);
  await expect(section.getByLabel('What the matrix showed')).toHaveText(text);
  const vscode = rows.nth(Object.keys(cli).indexOf('vscode'));
  await expect(vscode.getByRole('cell').nth(1)).toHaveText(cli.vscode!.reconnects!);

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const r = await new AxeBuilder({ page }).include('.matrix').analyze();
    expect(r.violations.map((v) => `${scheme}: ${v.id}: ${v.help}`)).toEqual([]);
  }
});

test('on a phone the matrix fits: no sideways scroll, in the page or in the table', async ({
  page
}) => {
  test.setTimeout(120_000);
  const l = lesson();
  for (const size of [
    { width: 390, height: 844 },
    { width: 360, height: 780 }
  ]) {
    await page.setViewportSize(size);
    const { table } = await toMatrix(page, l);
    await expect
      .poll(
        () =>
          page.evaluate(() => {
            const d = document.documentElement;
            const box = document.querySelector('.matrix .scroll')!;
            return [d.scrollWidth - d.clientWidth, box.scrollWidth - box.clientWidth];
          }),
        { message: `at ${size.width}px` }
      )
      .toEqual([0, 0]);
    // The last column's cells are on screen, not cut off at the right edge.
    await table.scrollIntoViewIfNeeded();
    const spend = table.locator('tbody tr').last().getByRole('cell').last();
    const box = (await spend.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(size.width);
  }
});
