import { expect, test, type Page } from '@playwright/test';
import type { LaneId } from '../src/lib/machine/vocabulary';

const COUNTERS = ['requests', 'consent prompts', 'provider calls', 'spend', 'replayed decisions'];

/** The scenario picker (`getByLabel('Scenario')` also finds "Upload scenario" and "Scenario link"). */
const scenarioPicker = (page: Page) => page.getByRole('combobox', { name: /^Scenario/ });

async function open(page: Page, url = './') {
  await page.goto(url);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

async function simulateOneHour(page: Page) {
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00', {
    timeout: 30_000
  });
}

/** Every lane counter the comparison looks at, by its label. */
async function counters(page: Page): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const lane of ['A', 'B'] as LaneId[]) {
    for (const name of COUNTERS) {
      out[`Lane ${lane} ${name}`] = (await page
        .getByLabel(`Lane ${lane} ${name}`, { exact: true })
        .textContent())!;
    }
  }
  return out;
}

const shareBar = (page: Page) => page.getByRole('region', { name: 'Share and import' });

test('"Copy link" puts the whole scenario in the URL; opening it replays the same numbers', async ({
  page,
  context,
  browser,
  request
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await open(page);
  // Not the default scenario, and not its seed: the link has to carry both.
  const ready = (await (await request.get('./scenarios/tired-user.json')).json()) as {
    seed: number;
  };
  await scenarioPicker(page).selectOption('tired-user');
  await expect(page.getByLabel('Seed', { exact: true })).toHaveValue(String(ready.seed));
  await page.getByLabel('Seed', { exact: true }).fill('4242');
  await page.getByLabel('Seed', { exact: true }).press('Enter');
  await expect(page.getByLabel('Seed', { exact: true })).toHaveValue('4242');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await simulateOneHour(page);
  const before = await counters(page);
  expect(Number(before['Lane A requests']!.replace(/\D/g, ''))).toBeGreaterThan(0);

  await shareBar(page).getByRole('button', { name: 'Copy link' }).click();
  await expect(shareBar(page).getByRole('status')).toContainText('Link copied');
  const url = await page.evaluate(() => navigator.clipboard.readText());
  expect(url).toMatch(/#s=[A-Za-z0-9+$-]+$/);
  await expect(shareBar(page).getByLabel('Scenario link')).toHaveValue(url);

  // Someone else opens it: a fresh browser context, so lane B's durable store starts empty as it
  // did here (in this context it now holds the decisions of the run above, and would replay them).
  const other = await browser.newContext();
  const again = await other.newPage();
  await open(again, url);
  await expect(again.getByRole('region', { name: 'Lesson' })).toContainText('The tired user');
  await expect(again.getByLabel('Seed', { exact: true })).toHaveValue('4242');
  await expect(again.getByLabel('Simulated time', { exact: true })).toHaveText('0:00:00');
  await simulateOneHour(again);
  expect(await counters(again)).toEqual(before);
  await other.close();
});

test('a damaged link says what is wrong and falls back to a ready-made scenario', async ({
  page
}) => {
  await open(page, './#s=this*is*not*a*scenario');
  await expect(page.getByRole('alert').filter({ hasText: 'corrupted' })).toBeVisible();
});

test('uploading an invalid scenario names the JSON path; nothing is replaced', async ({
  page,
  request
}) => {
  await open(page);
  const name = await scenarioPicker(page).inputValue();
  const lesson = (await page.getByRole('region', { name: 'Lesson' }).textContent())!;
  const scenario = (await (await request.get(`./scenarios/${name}.json`)).json()) as {
    lanes: { A: { policy: { version: number } } };
  };
  scenario.lanes.A.policy.version = 2;

  const upload = shareBar(page).getByLabel('Upload scenario');
  await upload.setInputFiles({
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(scenario))
  });
  await expect(
    page.getByRole('alert').filter({ hasText: '$.lanes.A.policy.version' }).first()
  ).toBeVisible();
  await expect(page.getByText('Loaded the scenario from broken.json')).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Lesson' })).toHaveText(lesson);

  // Not JSON at all: the file name and the reason.
  await upload.setInputFiles({
    name: 'truncated.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"version": 1, "name": ')
  });
  await expect(shareBar(page).getByRole('alert')).toContainText('truncated.json is not JSON');
  await expect(shareBar(page).getByRole('alert')).toContainText(
    'The current scenario is unchanged'
  );
});

test('uploading a bad trace names the line; a good one loads', async ({ page }) => {
  await open(page);
  const upload = shareBar(page).getByLabel('Upload trace');
  await upload.setInputFiles({
    name: 'bad.jsonl',
    mimeType: 'application/x-ndjson',
    buffer: Buffer.from(
      '{"t": 0, "server": "release-notes", "type": "connect"}\n{"t": -5, "server": "release-notes", "type": "connect"}\n'
    )
  });
  await expect(shareBar(page).getByRole('alert')).toContainText('bad.jsonl');
  await expect(shareBar(page).getByRole('alert')).toContainText('line 2');

  await upload.setInputFiles({
    name: 'good.jsonl',
    mimeType: 'application/x-ndjson',
    buffer: Buffer.from('{"t": 0, "server": "release-notes", "type": "connect"}\n')
  });
  await expect(shareBar(page).getByRole('status')).toContainText(
    'Loaded the trace from good.jsonl'
  );
  await expect(shareBar(page).getByRole('alert')).toHaveCount(0);
});

test('"Download scenario" saves the scenario as <name>.json', async ({ page }) => {
  await open(page);
  const name = await scenarioPicker(page).inputValue();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    shareBar(page).getByRole('button', { name: 'Download scenario' }).click()
  ]);
  expect(download.suggestedFilename()).toBe(`${name}.json`);
  const stream = await download.createReadStream();
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  const saved = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    name: string;
    seed: number;
  };
  expect(saved.name).toBe(name);
  expect(typeof saved.seed).toBe('number');
});
