/**
 * Security in the page (issues #12 and #8): names are data through every way in — an uploaded
 * scenario, a shared link, the policy editor; hostile text is shown as text and runs nothing;
 * inputs past the limits are refused with a message a person can act on.
 */
import { expect, test, type Page } from '@playwright/test';
import { encodeScenarioHash } from '../src/lib/ui/share';
import type { LaneId } from '../src/lib/machine/vocabulary';

const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

const POLICY_DEFAULTS = {
  sampling: true,
  allowedModels: ['example-model-v2'],
  defaultModel: 'example-model-v2',
  maxInputTokens: 32000,
  maxContext: 'thisServer',
  rateLimit: null,
  budget: null,
  perCallCap: null,
  consent: 'allow'
};

/**
 * One server named `name`, ten tasks in an hour; lane A's policy blocks that name (when
 * `blockA`), lane B's does not. As text: a `__proto__` member must reach the page as a file or a
 * link would deliver it.
 */
function scenarioText(name: string, blockA: boolean, extra: Record<string, unknown> = {}): string {
  const s = {
    version: 1,
    name: 'names-are-data',
    title: 'Names are data',
    seed: 7,
    durationMs: 3_600_000,
    servers: [
      {
        name: 'NAME',
        behaviour: 'well-behaved',
        request: { prompt: 'Summarise {n}.', maxTokens: 100 },
        intervalMs: 60_000,
        tasks: 10
      }
    ],
    lanes: {
      A: {
        label: 'blocks the name',
        policy: { version: 1, defaults: POLICY_DEFAULTS, servers: 'A' }
      },
      B: { label: 'defaults', policy: { version: 1, defaults: POLICY_DEFAULTS, servers: {} } }
    },
    ...extra
  };
  return JSON.stringify(s)
    .replace('"name":"NAME"', `"name":${JSON.stringify(name)}`)
    .replace(
      '"servers":"A"',
      `"servers":${blockA ? `{${JSON.stringify(name)}:{"sampling":false}}` : '{}'}`
    );
}

const counter = (page: Page, lane: LaneId, what: string) =>
  page.getByLabel(`Lane ${lane} ${what}`, { exact: true });

async function open(page: Page, url = './') {
  await page.goto(url);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

async function upload(page: Page, name: string, text: string, label = 'Upload scenario') {
  await page.getByLabel(label).setInputFiles({
    name,
    mimeType: label === 'Upload trace' ? 'application/x-ndjson' : 'application/json',
    buffer: Buffer.from(text)
  });
}

/** Run the hour and check lane A denied all ten and called the model for none. */
async function expectBlockedInA(page: Page) {
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00');
  await expect(counter(page, 'B', 'provider calls')).toHaveText('10');
  await expect(counter(page, 'A', 'requests')).toHaveText('10');
  await expect(counter(page, 'A', 'denials')).toHaveText('10');
  await expect(counter(page, 'A', 'provider calls')).toHaveText('0');
}

test('upload: a lane-A block for a server named __proto__, constructor, … denies all its requests', async ({
  page
}) => {
  await open(page);
  for (const name of NAMES) {
    await upload(page, `${name}.json`, scenarioText(name, true));
    await expect(page.getByRole('status').filter({ hasText: `Loaded the scenario` })).toBeVisible();
    await expectBlockedInA(page);
  }
});

test('share link: the same blocks hold when the scenario comes in a link', async ({ page }) => {
  for (const name of NAMES) {
    // A new hash on the same page is a same-document navigation: load each link afresh.
    await page.goto('about:blank');
    await open(page, `./${encodeScenarioHash(JSON.parse(scenarioText(name, true)))}`);
    await expect(page.getByRole('region', { name: 'Lesson' })).toBeVisible();
    await expectBlockedInA(page);
  }
});

test('policy editor: a block for "__proto__" typed by the learner applies to that server', async ({
  page,
  context
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await open(page);
  await upload(page, 'open.json', scenarioText('__proto__', false));
  await expect(page.getByRole('status').filter({ hasText: 'Loaded the scenario' })).toBeVisible();
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  const text = page.getByRole('textbox', { name: 'Policy JSON for lane A' });
  await expect(text).toBeVisible();
  const policy = `{"version":1,"defaults":${JSON.stringify(POLICY_DEFAULTS)},"servers":{"__proto__":{"sampling":false}}}`;
  await page.evaluate((v) => navigator.clipboard.writeText(v), policy);
  await text.focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+V');
  const panel = page.getByRole('region', { name: /^Policy for lane A/ });
  await expect(panel).toContainText('Valid, not applied yet');
  await panel.getByRole('button', { name: 'Apply', exact: true }).click();
  await expect(panel.getByRole('status').filter({ hasText: 'Policy applied' })).toBeVisible();
  await expectBlockedInA(page);
});

const HOSTILE = [
  '<script>window.__pwned = 1</script>',
  '<img src=x onerror=window.__pwned=2>',
  '<svg onload="window.__pwned = 3"><circle r="9"/></svg>'
];

test('hostile text in an upload, a link and the editor is shown as text and runs nothing', async ({
  page,
  context
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const extra = {
    title: HOSTILE[0],
    summary: HOSTILE[1],
    lesson: { title: HOSTILE[2], predict: HOSTILE[1], explain: HOSTILE[0] }
  };
  await open(page);
  await upload(page, 'hostile.json', scenarioText(HOSTILE[1]!, true, extra));
  const lesson = page.getByRole('region', { name: 'Lesson' });
  // The lesson shows the title, the prediction and the explanation, as text.
  await expect(lesson).toContainText(`${HOSTILE[0]}. Predict: ${HOSTILE[1]}`);
  await page.getByRole('button', { name: 'Play' }).click();
  await expect(counter(page, 'A', 'requests')).not.toHaveText('0');
  await page.getByRole('button', { name: 'Pause' }).click();

  await page.goto('about:blank');
  await open(page, `./${encodeScenarioHash(JSON.parse(scenarioText(HOSTILE[2]!, true, extra)))}`);
  await expect(page.getByRole('region', { name: 'Lesson' })).toContainText(HOSTILE[0]!);

  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  const text = page.getByRole('textbox', { name: 'Policy JSON for lane A' });
  await expect(text).toBeVisible();
  await text.focus();
  const policy = { version: 1, defaults: POLICY_DEFAULTS, servers: {}, [HOSTILE[1]!]: 1 };
  await page.evaluate((v) => navigator.clipboard.writeText(v), JSON.stringify(policy));
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+V');
  await expect(page.getByRole('list', { name: 'Policy errors, lane A' })).toContainText(
    `unknown member ${JSON.stringify(HOSTILE[1])}`
  );

  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  await expect(
    page.locator('main img[src="x"], main svg[onload], main script:not([src])')
  ).toHaveCount(0);
});

test('inputs past the limits are refused with one line saying what and where', async ({ page }) => {
  await open(page);
  const alert = page.getByRole('region', { name: 'Share and import' }).getByRole('alert');

  // Work: 1,000 servers ten times a second for ten minutes.
  const heavy = JSON.parse(scenarioText('busy', false)) as {
    servers: Record<string, unknown>[];
    durationMs: number;
  };
  heavy.servers[0] = { ...heavy.servers[0], count: 1000, intervalMs: 100, tasks: undefined };
  heavy.durationMs = 600_000;
  await upload(page, 'heavy.json', JSON.stringify(heavy));
  await expect(alert).toContainText(
    /heavy\.json: Scenario not loaded: \$: this run would be about [\d,]+ requests \/ [\d,]+ MB; the limit is 8,000,000 requests \/ 64,000 MB/
  );

  // A bound in the schema, with a plain message.
  await upload(
    page,
    'tiny.json',
    scenarioText('x', false).replace('"intervalMs":60000', '"intervalMs":0.001')
  );
  await expect(alert).toContainText(
    '$.servers[0].intervalMs: must be at least 10 ms, got the number 0.001'
  );

  // A trace whose params nest 2,000 deep: refused before anything recursive runs.
  const deep = `{"t":0,"server":"a","type":"request","params":{"messages":[],"maxTokens":5,"metadata":${'['.repeat(2000)}${']'.repeat(2000)}}}`;
  await upload(page, 'deep.jsonl', deep, 'Upload trace');
  await expect(alert).toContainText(
    "deep.jsonl: Trace not loaded: line 1: $.params.metadata[0][0][0][0]…: nested deeper than 64 levels (the limit for a request's params)"
  );

  // maxTokens out of range in a trace.
  const big = `{"t":0,"server":"a","type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":9000000000000000}}`;
  await upload(page, 'big.jsonl', big, 'Upload trace');
  await expect(alert).toContainText(
    'line 1: $.params.maxTokens: must be at most 1000000, got the number 9000000000000000'
  );
});

test('a link that holds no scenario says so in terms of a link', async ({ page }) => {
  await page.goto(`./${encodeScenarioHash([1, 2, 3])}`);
  await expect(page.getByRole('alert').first()).toContainText(
    'The shared link could not be opened: the scenario link does not hold a scenario: it decodes to an array, not a scenario object. The default scenario is shown instead.'
  );
});
