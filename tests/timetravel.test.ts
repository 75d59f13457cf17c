import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { fromMicros } from '../src/lib/machine/money';
import { Simulation } from '../src/lib/sim/engine/engine';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { parseScenario, type Scenario } from '../src/lib/sim/input/scenario';
import { Session } from '../src/lib/sim/session/session';
import { loadParsers } from '../src/lib/sim/input/parsers';
import type { ForkSpec } from '../src/lib/sim/engine/fork';
import { decodeForkHash } from '../src/lib/ui/share';
import { rememberedRun, scrollToTravel } from './run-helpers';
import type { LaneId } from '../src/lib/machine/vocabulary';

// The session in this process (the expected numbers) takes its parsers from here, loaded on
// first use as in the worker (sim/input/parsers.ts).
test.beforeAll(() => loadParsers());

const scenarioData = (name: string) =>
  JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<string, unknown>;

function scenario(name: string): Scenario {
  const p = parseScenario(scenarioData(name));
  if (!p.ok) throw new Error(`${name}: ${p.errors[0]?.message}`);
  return p.scenario;
}

/** The lanes table's rows, as the page formats them (LanesTable.svelte). */
const ROWS: [string, (c: LaneCounters) => string][] = [
  ['requests', (c) => c.requests.toLocaleString('en')],
  ['consent prompts', (c) => c.consentPrompts.toLocaleString('en')],
  ['provider calls', (c) => c.providerCalls.toLocaleString('en')],
  ['spend', (c) => `$${fromMicros(c.spendMicros)}`],
  ['fresh evaluations', (c) => c.fresh.toLocaleString('en')],
  ['replayed decisions', (c) => c.replays.toLocaleString('en')],
  ['flagged retry loops', (c) => c.alertedIdentities.toLocaleString('en')]
];

async function expectLanes(
  page: Page,
  counters: Record<LaneId, LaneCounters>,
  lanes: readonly LaneId[] = ['A', 'B']
) {
  for (const lane of lanes)
    for (const [name, fmt] of ROWS)
      await expect(page.getByLabel(`Lane ${lane} ${name}`, { exact: true })).toHaveText(
        fmt(counters[lane])
      );
}

/** "0:12:15 of 1:00:00" → ms since the start. */
function parseValueText(text: string): number {
  const [h, m, s] = text.split(' of ')[0]!.split(':').map(Number);
  return ((h! * 60 + m!) * 60 + s!) * 1000;
}

async function open(page: Page, name: string) {
  await page.goto(`./?scenario=${name}`);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect(page.getByLabel('Scenario', { exact: true })).toHaveValue(name);
}

const slider = (page: Page) => page.getByRole('slider', { name: 'Time' });

interface RunAt {
  A: LaneCounters;
  B: LaneCounters;
  audit: number;
  edges: Record<LaneId, Record<string, number>>;
  stored: Record<LaneId, number>;
}

/** The engine in Node, run straight to `ms` after the start: what `lab run` computes. */
function countersAt(name: string, ms: number): RunAt {
  return runAt(scenario(name), ms);
}

function runAt(s: Scenario, ms: number): RunAt {
  let audit = 0;
  const sim = new Simulation(s, { onAudit: () => audit++ });
  sim.advanceTo(s.start + ms);
  const { A, B } = sim.lanes;
  return {
    A: A.metrics.counters,
    B: B.metrics.counters,
    audit,
    edges: { A: { ...A.metrics.edges }, B: { ...B.metrics.edges } },
    stored: { A: Number(A.host.store.count()), B: Number(B.host.store.count()) }
  };
}

/**
 * The audit log, the stored decisions and the statechart's edge counts (its table for screen
 * readers) at t. The durable lane's decisions on disk are those of the branch at t: a seek back
 * writes into a fresh namespace, so the abandoned branch's later decisions are not counted.
 */
async function expectLogAndEdges(page: Page, want: RunAt, durable: LaneId[] = ['B']) {
  for (const lane of ['A', 'B'] as const)
    await expect(page.getByLabel(`Lane ${lane} stored decisions`, { exact: true })).toHaveText(
      String(want.stored[lane])
    );
  for (const lane of durable)
    await expect(page.getByLabel(`Lane ${lane} decisions saved`, { exact: true })).toHaveText(
      String(want.stored[lane])
    );
  await expect(page.getByLabel('Matching records', { exact: true })).toHaveText(
    want.audit.toLocaleString('en-US')
  );
  const table = page.getByRole('table', { name: 'Statechart edge counts' });
  for (const key of Object.keys({ ...want.edges.A, ...want.edges.B })) {
    const [from, to] = key.split('→');
    const row = table.getByRole('row').filter({
      has: page.getByRole('rowheader', { name: `${from} → ${to}`, exact: true })
    });
    await expect(row.getByRole('cell').nth(0)).toHaveText(String(want.edges.A[key] ?? 0));
    await expect(row.getByRole('cell').nth(1)).toHaveText(String(want.edges.B[key] ?? 0));
  }
}

/** The run's namespace id, as the tab remembers it (run-memory.ts). */
const runId = (page: Page) =>
  page.evaluate(
    () =>
      (JSON.parse(sessionStorage.getItem('sampling-policy-lab-run') ?? 'null') as { id?: string })
        ?.id ?? null
  );

test('a seek back in a long run restores from an engine checkpoint in place: log, stored decisions and lanes are those at t', async ({
  page
}) => {
  test.slow();
  // The retry storm for three hours: about 78,000 clock events, so engine checkpoints (every
  // 25,000: at about 1.07, 2.03 and 2.91 h) exist to restore from; lane A is durable.
  const data = JSON.parse(readFileSync('bench/retry-storm.json', 'utf8')) as Record<
    string,
    unknown
  >;
  data.durationMs = 3 * 3_600_000;
  const parsed = parseScenario(data);
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  await page.goto('./?scenario=reconnect-bypass');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Upload scenario').setInputFiles({
    name: 'storm-3h.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(data))
  });
  const time = slider(page);
  await expect(time).toHaveAttribute('aria-valuetext', '0:00:00 of 3:00:00');
  await time.focus();
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '3:00:00 of 3:00:00', { timeout: 60_000 });
  await expectLanes(page, runAt(parsed.scenario, 3 * 3_600_000));
  await expectLogAndEdges(page, runAt(parsed.scenario, 3 * 3_600_000), ['A']);
  const before = await runId(page);
  expect(before).not.toBeNull();

  // Back to about 1.5 h: a copy of the checkpoint before it (1.07 h), run on to t — in place,
  // the same namespace (a re-simulation would have moved to a fresh one).
  const box = (await time.boundingBox())!;
  const clickAt = (f: number) => page.mouse.click(box.x + box.width * f, box.y + box.height / 2);
  await clickAt(0.5);
  await expect(time).not.toHaveAttribute('aria-valuetext', '3:00:00 of 3:00:00');
  const t1 = Number(await time.getAttribute('aria-valuenow')) * 1000;
  await expect(page.getByLabel('Simulated time', { exact: true })).not.toHaveText('3:00:00');
  await expectLanes(page, runAt(parsed.scenario, t1));
  await expectLogAndEdges(page, runAt(parsed.scenario, t1), ['A']);
  await expect.poll(() => runId(page)).toBe(before);

  // Forward to about 2.7 h: the checkpoint at 2.03 h is well ahead, so the run is copied from it
  // (in place again) and the table reads the rows in between from the log.
  await clickAt(0.9);
  await expect
    .poll(async () => Number(await time.getAttribute('aria-valuenow')) * 1000)
    .toBeGreaterThan(t1 + 3_600_000);
  const t2 = Number(await time.getAttribute('aria-valuenow')) * 1000;
  await expectLanes(page, runAt(parsed.scenario, t2));
  await expectLogAndEdges(page, runAt(parsed.scenario, t2), ['A']);
  await expect.poll(() => runId(page)).toBe(before);

  // And on to the end again: the log grows from the rows at t, to the same count as before.
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '3:00:00 of 3:00:00', { timeout: 60_000 });
  await expectLanes(page, runAt(parsed.scenario, 3 * 3_600_000));
  await expectLogAndEdges(page, runAt(parsed.scenario, 3 * 3_600_000), ['A']);
});

test('scrubbing back and forth: the lanes table at t equals the engine run straight to t', async ({
  page
}) => {
  await open(page, 'reconnect-bypass');
  const time = slider(page);
  await expect(time).toHaveAttribute('aria-valuetext', '0:00:00 of 1:00:00');
  // End runs the whole hour, Home re-simulates back to the start.
  await time.focus();
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00');
  await expectLanes(page, countersAt('reconnect-bypass', 3_600_000));
  await expectLogAndEdges(page, countersAt('reconnect-bypass', 3_600_000));

  // Click at about a third: the run moves back to there (re-simulated) and shows that moment.
  const box = (await time.boundingBox())!;
  await page.mouse.click(box.x + box.width / 3, box.y + box.height / 2);
  await expect(time).not.toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  await expect(page.getByLabel('Seek time', { exact: true })).toBeVisible();
  const t1 = parseValueText((await time.getAttribute('aria-valuetext'))!);
  expect(t1).toBeGreaterThan(15 * 60_000);
  expect(t1).toBeLessThan(25 * 60_000);
  // The clock shows whole seconds; the lanes are compared at the exact moment the slider names.
  const ms1 = Number(await time.getAttribute('aria-valuenow')) * 1000;
  expect(Math.abs(ms1 - t1)).toBeLessThan(1000);

  // ← steps back one checkpoint (15 s apart here), → forward again: each shows the run at t.
  await time.press('ArrowLeft');
  await expect
    .poll(async () => parseValueText((await time.getAttribute('aria-valuetext'))!))
    .toBeLessThan(t1);
  const t2 = parseValueText((await time.getAttribute('aria-valuetext'))!);
  expect(t2 % 15_000).toBe(0);
  await expectLanes(page, countersAt('reconnect-bypass', t2));
  await expectLogAndEdges(page, countersAt('reconnect-bypass', t2));
  await expect(page.getByLabel('Simulated time', { exact: true })).not.toHaveText('1:00:00');

  await time.press('ArrowRight');
  await time.press('ArrowRight');
  await expect
    .poll(async () => parseValueText((await time.getAttribute('aria-valuetext'))!))
    .toBe(t2 + 30_000);
  await expectLanes(page, countersAt('reconnect-bypass', t2 + 30_000));
  await expectLogAndEdges(page, countersAt('reconnect-bypass', t2 + 30_000));

  // Home: back to the very start, everything at zero; Play continues from there.
  await time.press('Home');
  await expect(time).toHaveAttribute('aria-valuetext', '0:00:00 of 1:00:00');
  await expect(page.getByLabel('Lane A requests', { exact: true })).toHaveText('0');
  await page.getByRole('button', { name: 'Play' }).click();
  await expect
    .poll(async () =>
      Number(await page.getByLabel('Lane A requests', { exact: true }).textContent())
    )
    .toBeGreaterThan(0);
  await page.getByRole('button', { name: 'Pause' }).click();
});

test('a breakpoint on the first alert pauses at the right request and shows its facts', async ({
  page
}) => {
  // Where the engine itself stops: the same session the worker runs, in Node.
  const s = new Session();
  s.handle({ type: 'load', scenario: scenarioData('retryable-loop') });
  s.handle({ type: 'setBreakpoints', conditions: ['alert'] });
  const [snap] = s.handle({ type: 'advance', to: Number.MAX_SAFE_INTEGER });
  const want = snap?.type === 'snapshot' ? snap.paused : null;
  if (!want) throw new Error('the engine did not stop on an alert');

  await open(page, 'retryable-loop');
  // The panel mounts when seen (or once the run has started).
  await scrollToTravel(page);
  await page.getByLabel('Break when', { exact: true }).fill('alrt');
  await page.getByRole('button', { name: 'Add breakpoint' }).click();
  await expect(page.getByRole('alert')).toContainText('unknown condition "alrt"');
  await page.getByLabel('Break when', { exact: true }).fill('alert');
  await page.getByRole('button', { name: 'Add breakpoint' }).click();
  await expect(page.getByRole('list', { name: 'Breakpoints' })).toContainText('alert');
  await expect(page.getByRole('button', { name: 'Remove breakpoint alert' })).toBeVisible();

  await page.getByRole('button', { name: 'Play' }).click();
  const facts = page.getByRole('region', { name: 'Paused at a breakpoint' });
  await expect(facts).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('button', { name: 'Play' })).toBeVisible();
  await expect(facts.getByText(/^Paused at /)).toContainText(
    `breakpoint alert held on lane ${want.lane}`
  );
  await expect(facts.getByLabel('Paused request id', { exact: true })).toHaveText(
    String(want.request.id)
  );
  await expect(facts.getByLabel('Paused request server', { exact: true })).toHaveText(
    want.request.server
  );
  await expect(facts.getByLabel('Paused request identity', { exact: true })).toHaveText(
    want.identity
  );
  await expect(facts.getByLabel('Paused decision outcome', { exact: true })).toHaveText(
    want.outcome!
  );
  await expect(facts.getByLabel('Path through the machine', { exact: true })).toHaveText(
    want.path.join(' → ')
  );
  await expect(facts.getByLabel('Stored decision', { exact: true })).toContainText(
    `represented ${want.stored!.represented}×`
  );
  await expect(page.getByLabel('Highlighted path')).toContainText(
    `lane ${want.lane}'s paused request, ${want.edges.length} transitions`
  );
  // Server text stays text: the params are the JSON the server sent, not markup.
  await facts.getByText('Request params').click();
  await expect(facts.getByLabel('Paused request params', { exact: true })).toContainText(
    JSON.stringify(want.request.params.messages[0]!.role)
  );
  const t = want.t - scenario('retryable-loop').start;
  await expect(slider(page)).toHaveAttribute('aria-valuenow', String(Math.round(t / 1000)));

  await facts.getByRole('button', { name: 'Resume' }).click();
  await expect(facts).toBeHidden();
  await expect(page.getByRole('button', { name: 'Pause' })).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();
});

test('fork from here: lane A re-runs with a changed store; lane B equals the unforked run', async ({
  page
}) => {
  await open(page, 'reconnect-bypass');
  const time = slider(page);
  await time.focus();
  // Run to 10 min in 15-second checkpoints' worth: click there.
  const box = (await time.boundingBox())!;
  await page.mouse.click(box.x + box.width / 6, box.y + box.height / 2);
  await expect(page.getByLabel('Seek time', { exact: true })).toBeVisible();
  const at = Number(await time.getAttribute('aria-valuenow'));
  expect(at).toBeGreaterThan(0);

  await page.getByRole('button', { name: 'Fork from here' }).click();
  await expect(page.getByText(/^Forking at /)).toBeVisible();
  await page.getByText('Configure lane A').click();
  await page.getByRole('radio', { name: 'Durable' }).first().check();
  await expect(page.getByLabel('Fork', { exact: true })).toContainText(
    'lane A runs a changed configuration from there; lane B keeps its history'
  );

  await time.focus();
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  const unforked = countersAt('reconnect-bypass', 3_600_000);
  await expectLanes(page, unforked, ['B']);
  // Lane A now keeps its decisions across reconnects: fewer prompts than unforked.
  await expect
    .poll(async () =>
      Number(await page.getByLabel('Lane A consent prompts', { exact: true }).textContent())
    )
    .toBeLessThan(unforked.A.consentPrompts);
  await expect(page.getByLabel('Fork mark')).toContainText('(lane A)');
  const forkedA = await page.getByLabel('Lane A consent prompts', { exact: true }).textContent();

  // The share link carries the fork; opening it reproduces the same run.
  await page.getByRole('button', { name: 'Copy link' }).click();
  const link = await page.getByLabel('Scenario link').inputValue();
  expect(link).toContain('&f=');
  // In a new tab: a link differing only in its hash would not reload this one.
  const other = await page.context().newPage();
  await other.goto(link);
  await expect(other.getByLabel('Fork', { exact: true })).toContainText(
    'lane A runs a changed configuration from there'
  );
  await expect(slider(other)).toHaveAttribute('aria-valuenow', String(at));
  await slider(other).focus();
  await slider(other).press('End');
  await expect(slider(other)).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  await expectLanes(other, unforked, ['B']);
  await expect(other.getByLabel('Lane A consent prompts', { exact: true })).toHaveText(forkedA!);
});

test('a fork of a fork: lane A keeps the first fork’s numbers when the second forks lane B; the link re-creates both', async ({
  page
}) => {
  await open(page, 'reconnect-bypass');
  const time = slider(page);
  await time.focus();
  const clickAt = async (frac: number) => {
    await time.scrollIntoViewIfNeeded();
    const box = (await time.boundingBox())!; // an editor opened above moves it
    await page.mouse.click(box.x + box.width * frac, box.y + box.height / 2);
    // There (within a minute of the click's time) and done moving.
    await expect
      .poll(async () => Math.abs(Number(await time.getAttribute('aria-valuenow')) - frac * 3600))
      .toBeLessThan(60);
    await expect(time).toHaveAttribute('aria-busy', 'false');
  };
  await clickAt(1 / 6);
  await page.getByRole('button', { name: 'Fork from here' }).click();
  await page.getByText('Configure lane A').click();
  await page.getByRole('radio', { name: 'Durable' }).first().check();
  await expect(page.getByLabel('Fork', { exact: true })).toContainText('lane A runs a changed');
  await clickAt(2 / 6);
  await page.getByRole('button', { name: 'Fork from here' }).click();
  await page.getByText('Configure lane B').click();
  await page
    .getByRole('radio', { name: 'Connection-scoped' })
    .and(page.locator('[name="scope-B"]'))
    .check();
  const fork = page.getByLabel('Fork', { exact: true });
  await expect(fork).toContainText('lane B runs a changed configuration from there');
  await expect(fork).toContainText('as it was on the fork this one was made on (lane A at');
  // Lane A's editor still shows what lane A runs: the first fork's durable store.
  await expect(
    page.getByRole('radio', { name: 'Durable' }).and(page.locator('[name="scope-A"]'))
  ).toBeChecked();
  await time.focus();
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');

  // The share link carries both forks, first first.
  await page.getByRole('button', { name: 'Copy link' }).click();
  const link = await page.getByLabel('Scenario link').inputValue();
  const chain = decodeForkHash(new URL(link).hash);
  if (!chain.ok || !Array.isArray(chain.fork)) throw new Error('the link carries no fork chain');
  const [f1, f2] = chain.fork as ForkSpec[];
  expect([f1!.lane, f2!.lane]).toEqual(['A', 'B']);

  // Lane A never forked again: its numbers are the first fork's alone (made in Node).
  const first = new Session();
  first.handle({ type: 'load', scenario: scenarioData('reconnect-bypass') });
  first.handle({ type: 'fork', fork: f1 });
  const [onlyFirst] = first.handle({ type: 'advance', to: Number.MAX_SAFE_INTEGER });
  if (onlyFirst?.type !== 'snapshot') throw new Error('no snapshot');
  for (const [name, fmt] of ROWS)
    await expect(page.getByLabel(`Lane A ${name}`, { exact: true })).toHaveText(
      fmt(onlyFirst.lanes.A.counters)
    );
  const laneB = await page.getByLabel('Lane B consent prompts', { exact: true }).textContent();

  // Opened in a new tab, the link re-creates the chain: the same numbers.
  const other = await page.context().newPage();
  await other.goto(link);
  // Two forks, each a re-simulation from the start: allow for a loaded machine.
  await expect(other.getByLabel('Fork', { exact: true })).toContainText('lane B runs a changed', {
    timeout: 60_000
  });
  await expect(slider(other)).toHaveAttribute('aria-busy', 'false', { timeout: 60_000 });
  await slider(other).focus();
  await slider(other).press('End');
  await expect(slider(other)).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  await expectLanes(other, { A: onlyFirst.lanes.A.counters, B: onlyFirst.lanes.B.counters }, ['A']);
  await expect(other.getByLabel('Lane B consent prompts', { exact: true })).toHaveText(laneB!);
});

test('a fork survives a reload: the editors show what lane A runs, and the numbers are the forked run’s with a restart there', async ({
  page
}) => {
  await open(page, 'reconnect-bypass');
  const time = slider(page);
  await time.focus(); // scrolled into view: the click below is in the viewport
  const box = (await time.boundingBox())!;
  await page.mouse.click(box.x + box.width / 6, box.y + box.height / 2);
  await expect(page.getByLabel('Seek time', { exact: true })).toBeVisible();
  await page.getByRole('button', { name: 'Fork from here' }).click();
  await page.getByText('Configure lane A').click();
  await page.getByRole('radio', { name: 'Durable' }).first().check();
  const forkText = 'lane A runs a changed configuration from there; lane B keeps its history';
  await expect(page.getByLabel('Fork', { exact: true })).toContainText(forkText);
  // The editor shows what lane A runs now: durable (not the scenario's connection scope).
  await expect(page.getByRole('radio', { name: 'Durable' }).first()).toBeChecked();
  // Play on a little, so the reload has a fork and actions after it to bring back.
  await page.getByRole('button', { name: 'Play' }).click();
  await expect
    .poll(async () => Number(await time.getAttribute('aria-valuenow')), { timeout: 30_000 })
    .toBeGreaterThan(15 * 60);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  const saved = () => rememberedRun(page);
  await expect.poll(async () => (await saved())?.fork?.spec.lane).toBe('A');
  const memory = (await saved())!;

  // The worker's reload, in Node: the fork re-created, its actions, to t; then a restart; to the end.
  const session = new Session();
  const replies = session.handle({
    type: 'load',
    scenario: scenarioData('reconnect-bypass'),
    at: { t: memory.t, actions: memory.actions, fork: memory.fork }
  });
  expect(replies.some((r) => r.type === 'restarted')).toBe(true);
  const [end] = session.handle({ type: 'advance', to: Number.MAX_SAFE_INTEGER });
  if (end?.type !== 'snapshot') throw new Error('no snapshot');

  await page.reload();
  await expect(page.getByRole('status', { name: 'Run notices' })).toContainText('Client restarted');
  await expect(page.getByLabel('Fork', { exact: true })).toContainText(forkText);
  await page.getByText('Configure lane A').click();
  await expect(page.getByRole('radio', { name: 'Durable' }).first()).toBeChecked();
  await time.focus();
  await time.press('End');
  await expect(time).toHaveAttribute('aria-valuetext', '1:00:00 of 1:00:00');
  await expectLanes(page, { A: end.lanes.A.counters, B: end.lanes.B.counters });
  // The share link still carries the fork; in a new tab, lane A's editor shows the fork's
  // configuration (durable), not the linked scenario's (connection-scoped), from the fork on.
  await page.getByRole('button', { name: 'Copy link' }).click();
  const link = await page.getByLabel('Scenario link').inputValue();
  expect(link).toContain('&f=');
  const other = await page.context().newPage();
  await other.goto(link);
  await expect(other.getByLabel('Fork', { exact: true })).toContainText(forkText);
  await other.getByText('Configure lane A').click();
  await expect(other.getByRole('radio', { name: 'Durable' }).first()).toBeChecked();
  await expect(other.getByRole('radio', { name: 'Connection-scoped' }).first()).not.toBeChecked();
  await other.getByText('Configure lane B').click();
  await expect(other.getByRole('radio', { name: 'Durable' }).nth(1)).toBeChecked();
});

test('a consent breakpoint pauses as the dialog opens; breakpoints stay across Reset and fire again', async ({
  page
}) => {
  await open(page, 'reconnect-bypass');
  // The panel mounts when seen (or once the run has started).
  await scrollToTravel(page);
  await page.getByLabel('Break when', { exact: true }).fill('consent@B');
  await page.getByRole('button', { name: 'Add breakpoint' }).click();
  await expect(page.getByText('Kept across Reset, seeks and forks')).toBeVisible();
  await page.getByRole('button', { name: 'Play' }).click();
  const facts = page.getByRole('region', { name: 'Paused at a breakpoint' });
  await expect(facts).toBeVisible({ timeout: 30_000 });
  await expect(facts.getByLabel('Paused decision outcome', { exact: true })).toHaveText(
    'none yet: the consent dialog is open, the request waits on the user'
  );
  await expect(facts.getByLabel('Path through the machine', { exact: true })).toHaveText(
    / → consenting$/
  );
  const id = await facts.getByLabel('Paused request id', { exact: true }).textContent();
  const at = await slider(page).getAttribute('aria-valuenow');

  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await expect(facts).toBeHidden();
  await expect(page.getByRole('list', { name: 'Breakpoints' })).toContainText('consent@B');
  await page.getByRole('button', { name: 'Play' }).click();
  await expect(facts).toBeVisible({ timeout: 30_000 });
  await expect(facts.getByLabel('Paused request id', { exact: true })).toHaveText(id!);
  await expect(slider(page)).toHaveAttribute('aria-valuenow', at!);
});
