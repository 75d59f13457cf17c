/**
 * Issue #10 in real Chromium: a reload is a client restart, the Restart client button, and
 * "Simulate N h" past the scenario's end. Numbers are checked against the CLI's run
 * (`lab run S --restart-at T`, i.e. `runAndWrite` with `restartAt`) of the same scenario and seed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { runAndWrite } from '../src/cli/run';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { parseScenario, type LaneId } from '../src/lib/sim/input/scenario';
import { Session } from '../src/lib/sim/session/session';
import { loadParsers } from '../src/lib/sim/input/parsers';
import { auditRowWith, downloadJsonl, rememberedRun } from './run-helpers';

// The session in this process (the expected numbers) takes its parsers from here, loaded on
// first use as in the worker (sim/input/parsers.ts).
test.beforeAll(() => loadParsers());

const LANES: LaneId[] = ['A', 'B'];
const counter = (page: Page, lane: LaneId, name: string) =>
  page.getByLabel(`Lane ${lane} ${name}`, { exact: true });
const num = async (page: Page, lane: LaneId, name: string) =>
  Number((await counter(page, lane, name).textContent())!.replace(/[^0-9.]/g, ''));
const notices = (page: Page) => page.getByRole('status', { name: 'Run notices' });

/** The CLI's run of the default scenario with a client restart `ms` after its start. */
function cliRun(ms: number): {
  counters: Record<LaneId, LaneCounters>;
  notice: string;
  audit: string;
} {
  const parsed = parseScenario(
    JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as unknown
  );
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const out = mkdtempSync(join(tmpdir(), 'restart-'));
  try {
    const r = runAndWrite({ scenario: parsed.scenario, out, restartAt: [ms] });
    const m = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8')) as {
      lanes: Record<LaneId, { counters: LaneCounters }>;
    };
    // The summary's line for the restart: "at +25m 3s: Client restarted: lane A lost …".
    const notice = /Client restarted: [^\n]*/.exec(r.text)?.[0];
    if (!notice) throw new Error(`no restart in the CLI's summary:\n${r.text}`);
    return {
      counters: { A: m.lanes.A.counters, B: m.lanes.B.counters },
      notice,
      audit: readFileSync(join(out, 'audit.jsonl'), 'utf8')
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The lanes table shows these counters (the rows a learner compares). */
async function expectCounters(page: Page, c: Record<LaneId, LaneCounters>) {
  for (const id of LANES) {
    await expect(counter(page, id, 'requests')).toHaveText(c[id].requests.toLocaleString('en'));
    await expect(counter(page, id, 'consent prompts')).toHaveText(
      c[id].consentPrompts.toLocaleString('en')
    );
    await expect(counter(page, id, 'provider calls')).toHaveText(
      c[id].providerCalls.toLocaleString('en')
    );
    await expect(counter(page, id, 'replayed decisions')).toHaveText(
      c[id].replays.toLocaleString('en')
    );
  }
}

const plural = (n: number) => `${n} stored decision${n === 1 ? '' : 's'}`;

async function open(page: Page) {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

/** Play until both lanes hold stored decisions, pause, and wait until lane B's are on disk. */
async function playUntilStored(page: Page): Promise<{ t: number; start: number }> {
  await page.getByLabel('Speed', { exact: true }).fill('70');
  await page.getByRole('button', { name: 'Play' }).click();
  await expect
    .poll(
      async () =>
        (await num(page, 'A', 'stored decisions')) > 1 &&
        (await num(page, 'B', 'stored decisions')) > 1,
      { timeout: 30_000 }
    )
    .toBe(true);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect(counter(page, 'B', 'decisions held in memory only')).toHaveCount(0);
  // Where the tab's run is, exactly (the clock shows whole seconds): what a reload resumes.
  const saved = await page.evaluate(
    () => JSON.parse(sessionStorage.getItem('sampling-policy-lab-run') ?? 'null') as { t: number }
  );
  const start = parseScenario(
    JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as unknown
  );
  if (!start.ok) throw new Error('bad scenario');
  return { t: saved.t, start: start.scenario.start };
}

async function simulateToEnd(page: Page) {
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00', {
    timeout: 60_000
  });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
}

test('reload mid-run resumes at the same virtual time: lane A lost its decisions, lane B kept them, and the run equals lab run --restart-at T', async ({
  page
}) => {
  await open(page);
  const { t, start } = await playUntilStored(page);
  const clock = await page.getByLabel('Simulated time', { exact: true }).textContent();
  const storedA = await num(page, 'A', 'stored decisions');
  const storedB = await num(page, 'B', 'stored decisions');
  const cli = cliRun(t - start);
  expect(cli.notice).toContain(`lane A lost ${plural(storedA)}, lane B kept ${plural(storedB)}`);

  await page.reload();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText(clock!);
  await expect(notices(page)).toContainText(cli.notice);
  await expect(counter(page, 'A', 'stored decisions')).toHaveText('0');
  await expect(counter(page, 'B', 'stored decisions')).toHaveText(String(storedB));
  // Lane B's decisions are the ones IndexedDB kept: all saved, none written twice.
  await expect(counter(page, 'B', 'decisions saved')).toHaveText(String(storedB));
  await expect(page.getByRole('list', { name: 'Timeline marks' })).toContainText(
    `lane A: client restarted (lost ${storedA} stored decisions)`
  );
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();

  await simulateToEnd(page);
  await expectCounters(page, cli.counters);
  // The audit log, read back through the table's export: the rows before the reload (from
  // IndexedDB), the restart's, and the rest — each once, none lost — as the CLI writes it.
  expect(await downloadJsonl(page)).toBe(cli.audit);
});

test('Restart client: the notice gives the numbers, the timeline marks it, and the run equals lab run --restart-at T', async ({
  page
}) => {
  await open(page);
  const { t, start } = await playUntilStored(page);
  const cli = cliRun(t - start);
  await page.getByRole('button', { name: 'Restart client' }).click();
  await expect(notices(page)).toContainText(cli.notice);
  await expect(counter(page, 'A', 'stored decisions')).toHaveText('0');
  const axe = await new AxeBuilder({ page }).exclude('.monaco-editor').analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.length} × ${v.help}`)).toEqual([]);
  const keptB = Number(/lane B kept (\d+)/.exec(cli.notice)![1]);
  await expect(counter(page, 'B', 'stored decisions')).toHaveText(String(keptB));
  await expect(page.getByRole('list', { name: 'Timeline marks' })).toContainText(
    `lane B: client restarted (kept ${keptB} stored decisions)`
  );
  await simulateToEnd(page);
  await expectCounters(page, cli.counters);
});

test('Simulate past the scenario’s end says where it ends, and Extend runs the rest', async ({
  page
}) => {
  await open(page);
  await page.getByLabel('Hours', { exact: true }).fill('2');
  await page.getByRole('button', { name: 'Simulate 2 h' }).click();
  await expect(notices(page)).toContainText(
    'The scenario ends at 1 h: simulating 1 h of the 2 h asked. Extend the run to 2 h to simulate all of it.'
  );
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('1:00:00', {
    timeout: 60_000
  });
  // The notice and its button pass axe (names, contrast) while shown.
  const axe = await new AxeBuilder({ page })
    .include('[aria-label="Run notices"]')
    .include('header')
    .analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.length} × ${v.help}`)).toEqual([]);
  await page.getByRole('button', { name: 'Extend to 2:00:00' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('2:00:00', {
    timeout: 60_000
  });
  await expect(notices(page)).not.toContainText('The scenario ends');
});

test('you are the user: an answer survives a reload — not asked again, the numbers those of the run with a restart there', async ({
  page
}) => {
  await open(page);
  await page.getByLabel('You are the user: consent dialogs come to you').check();
  await page.getByRole('button', { name: 'Play' }).click();
  const dialog = page.getByRole('dialog', { name: /Allow sampling\?/ });
  await expect(dialog).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();
  await dialog.getByRole('button', { name: 'Deny' }).click();
  // The answer is on the tab's timeline (sessionStorage), at its place in the run.
  const saved = () => rememberedRun(page);
  await expect
    .poll(async () => (await saved())?.actions.filter((a) => a.kind === 'consent').length ?? 0)
    .toBe(1);
  await expect(auditRowWith(page, 'user.denied')).toBeVisible();
  const before: Record<LaneId, { requests: number }> = {
    A: { requests: await num(page, 'A', 'requests') },
    B: { requests: await num(page, 'B', 'requests') }
  };
  const memory = (await saved())!;
  const answer = memory.actions.find((a) => a.kind === 'consent')!;

  // What the worker does on a reload, run in Node: the timeline re-simulated, then a restart.
  const session = new Session();
  const replies = session.handle({
    type: 'load',
    scenario: JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')),
    at: { t: memory.t, actions: memory.actions }
  });
  const restarted = replies.find((r) => r.type === 'restarted');
  if (restarted?.type !== 'restarted') throw new Error('no restart in the reload');
  const want = session.snapshot();

  await page.reload();
  await expect(notices(page)).toContainText(restarted.notice);
  // Still the user (the timeline says so), and the answered dialog is not asked again.
  await expect(page.getByLabel('You are the user: consent dialogs come to you')).toBeChecked();
  await expect(dialog).toBeHidden();
  // The same requests as before the reload; the prompts are those of the run with the answer
  // (the restart closes the dialogs still open, which counts them as shown).
  for (const id of LANES)
    await expect(counter(page, id, 'requests')).toHaveText(String(before[id].requests));
  await expectCounters(page, { A: want.lanes.A.counters, B: want.lanes.B.counters });
  await expect(auditRowWith(page, 'user.denied')).toBeVisible();
  // The answer is still on the timeline after the reload, where it was.
  await expect
    .poll(async () => (await saved())?.actions.find((a) => a.kind === 'consent'))
    .toEqual(answer);
});
