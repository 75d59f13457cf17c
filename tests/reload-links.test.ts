/**
 * Issue #18 in real Chromium: a reload after a run has ended resumes it at its end (a client
 * restart there) instead of a fresh clock over its stored decisions, and a share link carries
 * when the sender changed things, so the recipient's run is the sender's.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { fromMicros } from '../src/lib/machine/money';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { parseScenario, type LaneId } from '../src/lib/sim/input/scenario';
import { Session } from '../src/lib/sim/session/session';
import { loadParsers } from '../src/lib/sim/input/parsers';

// The session in this process (the expected numbers) takes its parsers from here, loaded on
// first use as in the worker (sim/input/parsers.ts).
test.beforeAll(() => loadParsers());

const scenarioData = () =>
  JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as {
    lanes: Record<LaneId, { policy: { defaults: Record<string, unknown> } }>;
  };

/** The lanes table's rows, as the page formats them (LanesTable.svelte). */
const ROWS: [string, (c: LaneCounters) => string][] = [
  ['requests', (c) => c.requests.toLocaleString('en')],
  ['consent prompts', (c) => c.consentPrompts.toLocaleString('en')],
  ['provider calls', (c) => c.providerCalls.toLocaleString('en')],
  ['spend', (c) => `$${fromMicros(c.spendMicros)}`],
  ['fresh evaluations', (c) => c.fresh.toLocaleString('en')],
  ['replayed decisions', (c) => c.replays.toLocaleString('en')],
  ['denials', (c) => (c.frames.denied + c.silenced).toLocaleString('en')]
];
const NAMES = ROWS.map(([name]) => name);

const cell = (page: Page, lane: LaneId, name: string) =>
  page.getByLabel(`Lane ${lane} ${name}`, { exact: true });
const clock = (page: Page) => page.getByLabel('Simulated time', { exact: true });
const slider = (page: Page) => page.getByRole('slider', { name: 'Time' });
const notices = (page: Page) => page.getByRole('status', { name: 'Run notices' });

/** Every row of both lanes, as shown. */
async function figures(page: Page): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const lane of ['A', 'B'] as const)
    for (const name of NAMES)
      out[`${lane} ${name}`] = (await cell(page, lane, name).textContent())!;
  return out;
}

async function expectFigures(page: Page, want: Record<string, string>) {
  for (const [key, text] of Object.entries(want)) {
    const [lane, ...name] = key.split(' ');
    await expect(cell(page, lane as LaneId, name.join(' '))).toHaveText(text);
  }
}

async function open(page: Page) {
  await page.goto('./?scenario=reconnect-bypass');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

async function simulateHour(page: Page) {
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(clock(page)).toHaveText('1:00:00', { timeout: 60_000 });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
}

/** Click the scrubber at `frac` of the run and wait until the run is there. */
async function seekTo(page: Page, frac: number) {
  const time = slider(page);
  await time.scrollIntoViewIfNeeded();
  const box = (await time.boundingBox())!;
  await page.mouse.click(box.x + box.width * frac, box.y + box.height / 2);
  await expect
    .poll(async () => Math.abs(Number(await time.getAttribute('aria-valuenow')) - frac * 3600))
    .toBeLessThan(60);
  await expect(time).toHaveAttribute('aria-busy', 'false');
}

test('a reload after the run ended resumes at its end: lane B’s numbers stay, its decisions are not replayed over a fresh clock', async ({
  page
}) => {
  await open(page);
  await simulateHour(page);
  const before = await figures(page);
  // The default scenario's durable lane at the end (what `lab run` gives).
  const s = new Session();
  s.handle({ type: 'load', scenario: scenarioData() });
  const [end] = s.handle({ type: 'advance', to: Number.MAX_SAFE_INTEGER });
  if (end?.type !== 'snapshot') throw new Error('no snapshot');
  for (const [name, fmt] of ROWS) expect(before[`B ${name}`]).toBe(fmt(end.lanes.B.counters));
  const storedB = await cell(page, 'B', 'stored decisions').textContent();
  await expect(cell(page, 'B', 'decisions saved')).toHaveText(storedB!);

  await page.reload();
  await expect(clock(page)).toHaveText('1:00:00');
  await expect(notices(page)).toContainText('Client restarted: lane A lost');
  await expect(notices(page)).toContainText(`lane B kept ${storedB} stored decisions`);
  for (const [name] of ROWS) await expect(cell(page, 'B', name)).toHaveText(before[`B ${name}`]!);
  await expect(cell(page, 'B', 'stored decisions')).toHaveText(storedB!);
  await expect(cell(page, 'B', 'decisions saved')).toHaveText(storedB!);
  // The run has ended: nothing is left to simulate over the decisions it kept.
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await expect(page.getByRole('button', { name: 'Simulate 1 h' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Play' })).toBeDisabled();
  // And no guarantee is broken — no-future-decisions, which a fresh clock over them breaks, included.
  const guarantees = page.getByRole('region', { name: 'Guarantees' });
  await expect(guarantees).toContainText(/\d+ of \d+ hold/);
  await expect(guarantees).not.toContainText('decided after the run');
});

test('a forked run reloaded at its end is still the fork', async ({ page }) => {
  await open(page);
  await seekTo(page, 1 / 6);
  await page.getByRole('button', { name: 'Fork from here' }).click();
  await page.getByText('Configure lane A').click();
  await page.getByRole('radio', { name: 'Durable' }).first().check();
  const forkText = 'lane A runs a changed configuration from there; lane B keeps its history';
  await expect(page.getByLabel('Fork', { exact: true })).toContainText(forkText);
  await simulateHour(page);
  const before = await figures(page);

  await page.reload();
  await expect(clock(page)).toHaveText('1:00:00');
  await expect(notices(page)).toContainText('Client restarted');
  await expect(page.getByLabel('Fork', { exact: true })).toContainText(forkText);
  await expect(page.getByLabel('Fork mark')).toContainText('(lane A)');
  for (const [name] of ROWS) await expect(cell(page, 'B', name)).toHaveText(before[`B ${name}`]!);
  // Lane A is durable since the fork: its decisions outlive the restart at the end too.
  await expect(cell(page, 'A', 'consent prompts')).toHaveText(before['A consent prompts']!);
});

test('a share link carries when the policy and the configuration changed: the recipient’s run is the sender’s', async ({
  page,
  context
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await open(page);
  // Minute 3: lane A's policy asks no one and denies.
  await seekTo(page, 3 / 60);
  const policy = scenarioData().lanes.A.policy;
  policy.defaults.consent = 'deny';
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  const text = page.getByRole('textbox', { name: 'Policy JSON for lane A' });
  await expect(text).toBeVisible();
  await page.evaluate((v) => navigator.clipboard.writeText(v), JSON.stringify(policy, null, 2));
  await text.focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+V');
  const panel = page.getByRole('region', { name: /^Policy for lane A/ });
  await expect(panel).toContainText('Valid, not applied yet');
  await panel.getByRole('button', { name: 'Apply', exact: true }).click();
  await expect(panel.getByRole('status').filter({ hasText: 'Policy applied' })).toBeVisible();
  await panel.getByRole('button', { name: 'Close' }).click();
  // Minute 10: lane B goes connection-scoped.
  await seekTo(page, 10 / 60);
  await page.getByText('Configure lane B').click();
  await page
    .getByRole('radio', { name: 'Connection-scoped' })
    .and(page.locator('[name="scope-B"]'))
    .check();
  await simulateHour(page);
  const charts = page.getByRole('region', { name: 'Charts' });
  await expect(charts).toContainText('2 config changes');
  const sent = await figures(page);

  await page.getByRole('button', { name: 'Copy link' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Link copied.' })).toBeVisible();
  const link = await page.getByLabel('Scenario link').inputValue();

  const other = await context.newPage();
  await other.goto(link);
  await expect(other.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect(clock(other)).toHaveText('0:00:00');
  // The recipient is told what the link brought, and where each change falls.
  await expect(other.getByRole('main')).toContainText(
    /Opened from a share link: the sender's run, its 2 changes applied where they were made — 0:0[23]:\d\d lane A: policy edited; 0:(09|10):\d\d lane B: /
  );
  await simulateHour(other);
  await expectFigures(other, sent);
  await expect(other.getByRole('region', { name: 'Charts' })).toContainText('2 config changes');
  // The sender's lane A spent before minute 3 and nothing after: the edit took effect there.
  expect(sent['A provider calls']).not.toBe('0');
});

test('a link made before the timeline member, or of a run nobody changed, opens as it always did', async ({
  page
}) => {
  await open(page);
  await page.getByRole('button', { name: 'Copy link' }).click();
  const link = await page.getByLabel('Scenario link').inputValue();
  expect(link).not.toContain('&e=');
  const other = await page.context().newPage();
  await other.goto(link);
  await simulateHour(other);
  const parsed = parseScenario(scenarioData());
  if (!parsed.ok) throw new Error('bad scenario');
  const s = new Session();
  s.handle({ type: 'load', scenario: scenarioData() });
  const [end] = s.handle({ type: 'advance', to: Number.MAX_SAFE_INTEGER });
  if (end?.type !== 'snapshot') throw new Error('no snapshot');
  for (const lane of ['A', 'B'] as const)
    for (const [name, fmt] of ROWS)
      await expect(cell(other, lane, name)).toHaveText(fmt(end.lanes[lane].counters));
});

test('the link says what it cannot carry: stored decisions cleared during the run', async ({
  page
}) => {
  await open(page);
  await simulateHour(page);
  await page.getByRole('button', { name: 'Clear stored decisions (lane B)' }).click();
  await expect(cell(page, 'B', 'stored decisions')).toHaveText('0');
  await page.getByRole('button', { name: 'Copy link' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Link copied.' })).toContainText(
    "The link leaves out the stored decisions cleared at 1:00:00 (clearing is not part of the run's timeline: the recipient's run keeps them)."
  );
});
