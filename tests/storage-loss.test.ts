/**
 * Storage taken away from outside (issue #19, items 3 and 4): the run's databases deleted by
 * another tab, or the site's data cleared as a person does from the browser's settings. The page
 * says so in words at once, stops counting as saved what is gone, counts it, goes on from memory,
 * and its audit export still holds every row that is really there — and says which are not.
 * Also: a reload after the end of a day-long run never leaves an export that fails, and a reload
 * while the audit log's writes are behind keeps every decision of the durable lane (they never
 * wait behind the audit rows) and writes the rows that had not reached disk again, re-simulated,
 * the same as `lab run`'s.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import type { AuditRecord } from '../src/lib/machine/types';
import { Simulation } from '../src/lib/sim/engine/engine';
import { auditLineJson } from '../src/lib/sim/report/report';
import { parseScenario } from '../src/lib/sim/input/scenario';
import {
  AUDIT_DB,
  DECISIONS_DB,
  diskCount,
  injectWorkerFault,
  openDay,
  runId,
  shown,
  simulate
} from './storage-helpers';
import { downloadJsonl } from './run-helpers';

const laneAlert = (page: Page) => page.getByRole('alert').filter({ hasText: /^Lane B: / });
const auditAlert = (page: Page) => page.getByRole('alert').filter({ hasText: /^Audit log: / });
const matching = async (page: Page) =>
  Number(
    (await page.getByLabel('Matching records', { exact: true }).textContent())!.replace(/,/g, '')
  );
/** A figure in an alert's text: the number before `words`. */
const figureBefore = (text: string, words: string) =>
  Number(new RegExp(`([\\d,]+) ${words}`).exec(text)![1]!.replace(/,/g, ''));

/** Download the audit log as JSONL: its lines, and what the page said about the file. */
async function exportJsonl(page: Page): Promise<{ lines: number; said: string; text: string[] }> {
  const text = (await downloadJsonl(page)).split('\n').filter(Boolean);
  const lines = text.length;
  await expect(page.getByRole('button', { name: 'Download JSONL' })).toBeEnabled();
  // The status beside the download buttons.
  const said = await page
    .getByRole('button', { name: 'Download JSONL' })
    .locator('..')
    .getByRole('status')
    .innerText();
  return { lines, said, text };
}

/**
 * Wait until the whole run is on disk. On a loaded machine a group commit can outlast the
 * worker's time limit, which the page reports; Retry storage then writes what was held.
 */
async function everythingSaved(page: Page): Promise<void> {
  const saved = page.getByLabel('Lane B decisions saved', { exact: true });
  await expect(async () => {
    const retry = page.getByRole('button', { name: 'Retry storage' });
    if (await retry.isVisible()) await retry.click();
    await expect(page.getByRole('alert')).toHaveCount(0, { timeout: 2_000 });
    await expect(saved).toHaveText('299', { timeout: 2_000 });
    // The audit log's rows too (they are written after the decisions, on their own).
    await expect(page.getByLabel('Audit records being written', { exact: true })).toBeHidden({
      timeout: 2_000
    });
  }).toPass({ timeout: 60_000 });
}

/** Both of the run's databases deleted from a second page of the same browser. */
async function deleteFromAnotherTab(page: Page): Promise<void> {
  const other = await page.context().newPage();
  await other.goto('./scenarios/reconnect-bypass.json');
  await other.evaluate(
    async (dbs) => {
      for (const db of dbs)
        await new Promise((resolve, reject) => {
          const req = indexedDB.deleteDatabase(db);
          req.onsuccess = resolve;
          req.onerror = () => reject(req.error);
        });
    },
    [DECISIONS_DB, AUDIT_DB]
  );
  await other.close();
}

test('the run’s databases deleted from another tab: said at once, what was saved counted as lost, and Retry saves it again', async ({
  page
}) => {
  test.setTimeout(150_000);
  await openDay(page);
  await simulate(page);
  await everythingSaved(page);
  const rows = await matching(page);
  expect(rows).toBe(16_282);

  await deleteFromAnotherTab(page);
  // Nothing is written after the end of the run: the page hears of it from the browser.
  await expect(laneAlert(page)).toContainText("Another tab deleted this page's storage");
  await expect(laneAlert(page)).toContainText(
    '299 decisions saved in this browser are gone from its storage; 299 decisions hold for this page only, 0 are saved in this browser.'
  );
  await expect(page.getByLabel('Lane B stored decisions', { exact: true })).toHaveText('299');
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText('0');
  await expect(page.getByLabel('Lane B decisions held in memory only', { exact: true })).toHaveText(
    '299'
  );
  await expect(auditAlert(page)).toContainText(
    '16,282 records saved in this browser are gone from its storage'
  );
  await expect(auditAlert(page)).toContainText('0 records are saved in this browser');
  const run = (await runId(page))!;
  expect(await diskCount(page, DECISIONS_DB, [run, 'B'])).toBe(0);
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(0);

  // The rows still in this page's memory export; the ones that were only on disk are counted.
  const { lines, said } = await exportJsonl(page);
  const m =
    /^The file has ([\d,]+) of ([\d,]+) rows: ([\d,]+) are not in it — they were lost with this browser's storage: another tab deleted/.exec(
      said
    );
  expect(m, said).not.toBeNull();
  const [inFile, of, left] = m!.slice(1).map((x) => Number(x.replace(/,/g, '')));
  test.info().annotations.push({
    type: 'figures',
    description: `after the delete: lane B 299 shown, 0 saved, 299 held; export ${inFile} of ${of} rows, ${left} lost`
  });
  expect(lines).toBe(inFile);
  expect(of).toBe(rows);
  expect(inFile! + left!).toBe(rows);
  expect(inFile).toBeGreaterThan(0);
  expect(left).toBeGreaterThan(0);

  // The table says so too, for the oldest rows (the ones only the disk held).
  const log = page.getByRole('region', { name: 'Audit log', exact: true });
  await log.locator('[role="row"][tabindex="0"]').focus();
  await page.keyboard.press('Home');
  await expect(
    page.getByRole('status').filter({ hasText: /^These rows cannot be shown/ })
  ).toContainText("of the audit log were lost with this browser's storage: another tab deleted");

  await page.getByRole('button', { name: 'Retry storage' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText('299');
  expect(await diskCount(page, DECISIONS_DB, [run, 'B'])).toBe(299);
});

test('site data cleared mid-run, as from the browser’s settings: said as such, not as a disk error, and the counts add up', async ({
  page,
  context
}) => {
  test.setTimeout(150_000);
  await openDay(page);
  await page.getByLabel('Hours', { exact: true }).fill('24');
  await page.getByRole('button', { name: 'Simulate 24 h' }).click();
  await expect
    .poll(() => shown(page, 'Lane B decisions saved'), { timeout: 60_000 })
    .toBeGreaterThanOrEqual(50);
  const savedBefore = await shown(page, 'Lane B decisions saved');
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.clearDataForOrigin', {
    origin: new URL(page.url()).origin,
    storageTypes: 'indexeddb'
  });
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('24:00:00', {
    timeout: 90_000
  });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();

  await expect(laneAlert(page)).toContainText('its site data was cleared');
  await expect(laneAlert(page)).not.toContainText('disk error');
  await expect(auditAlert(page)).toContainText('its site data was cleared');
  const text = await laneAlert(page).innerText();
  const lost = figureBefore(text, 'decisions saved in this browser are gone');
  const stored = await shown(page, 'Lane B stored decisions');
  const saved = await shown(page, 'Lane B decisions saved');
  const held = await shown(page, 'Lane B decisions held in memory only');
  const run = (await runId(page))!;
  const onDisk = await diskCount(page, DECISIONS_DB, [run, 'B']);
  test.info().annotations.push({
    type: 'figures',
    description: `saved before the clear ≥ ${savedBefore}; after: ${stored} shown, ${saved} saved, ${held} held, ${lost} lost; on disk ${onDisk}`
  });
  expect(stored).toBe(299);
  expect(saved + held).toBe(stored);
  expect(saved).toBe(onDisk);
  expect(lost).toBeGreaterThanOrEqual(savedBefore);
  const auditText = await auditAlert(page).innerText();
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(
    figureBefore(auditText, 'records? (?:is|are) saved in this browser')
  );
});

test('a reload after the end of a day-long run: the audit export holds every matching row', async ({
  page
}) => {
  test.setTimeout(150_000);
  await openDay(page);
  await simulate(page);
  // The reload comes once the audit log's writes have caught up with the run: nothing is lost.
  // A reload while they are behind is the next test (there, writes are held, so it never races
  // how fast the machine writes).
  const total = await matching(page);
  const run = (await runId(page))!;
  await expect.poll(() => diskCount(page, AUDIT_DB, [run]), { timeout: 60_000 }).toBe(total);
  await page.reload();
  // A reload after the end resumes at the end (a client restart there, issue #18): Play stays
  // disabled, the clock shows the end.
  const t = page.getByLabel('Simulated time', { exact: true });
  await expect(t).toHaveText('24:00:00', { timeout: 60_000 });
  await expect.poll(() => matching(page), { timeout: 60_000 }).toBeGreaterThan(10_000);
  const rows = await matching(page);
  const { lines, said } = await exportJsonl(page);
  test.info().annotations.push({
    type: 'figures',
    description: `after the reload: ${rows} matching rows, ${lines} in the file; said: "${said}"`
  });
  expect(said).toBe('');
  expect(lines).toBe(rows);
});

test('a reload while the audit log’s writes are behind: every decision of the durable lane was on disk, and the lost audit rows are re-simulated and written again, the same as lab run’s', async ({
  page
}) => {
  test.setTimeout(180_000);
  const fmt = (n: number) => n.toLocaleString('en-US');
  // The audit log's group commits stop reaching disk once 3,000 rows are there: the rest of the
  // day's rows stay behind, whatever the machine's speed.
  await injectWorkerFault(page, { kind: 'hold', store: 'audit', after: 3_000 });
  await openDay(page);
  await page.getByLabel('Hours', { exact: true }).fill('24');
  await page.getByRole('button', { name: 'Simulate 24 h' }).click();
  // While they are behind the page says so (until the writes' time limit calls it a failure).
  await expect(page.getByLabel('Audit records being written', { exact: true })).toBeVisible({
    timeout: 60_000
  });
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('24:00:00', {
    timeout: 90_000
  });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
  const total = await matching(page);
  expect(total).toBe(16_282);
  // The held commit runs out of time: the page says what is saved, and that is what is on disk.
  await expect(auditAlert(page)).toContainText('could not be saved', { timeout: 30_000 });
  const saved = figureBefore(
    await auditAlert(page).innerText(),
    'records? (?:is|are) saved in this browser'
  );
  const run = (await runId(page))!;
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(saved);
  expect(saved).toBeGreaterThanOrEqual(3_000);
  expect(saved).toBeLessThan(total);
  // The durable lane's decisions never waited behind the held audit rows: all on disk, and the
  // lane claims no more.
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText('299');
  await expect(laneAlert(page)).toHaveCount(0);
  const decisionsBefore = await diskCount(page, DECISIONS_DB, [run, 'B']);
  expect(decisionsBefore).toBe(299);

  await page.unrouteAll();
  // Wall-clock figures for the report only (nothing is asserted on them).
  const reloadAt = Date.now();
  await page.reload();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText('24:00:00', {
    timeout: 60_000
  });
  const resumedMs = Date.now() - reloadAt;
  const lost = total - saved;
  // The reload re-simulated the run to where it was: the rows that had not reached disk are made
  // again, shown and written; once they are on disk the page says they were restored.
  await expect(
    page.getByRole('status').filter({ hasText: /^Restored the [\d,]+ audit records/ })
  ).toHaveText(
    `Restored the ${fmt(lost)} audit records the reload had lost: re-simulated from the run's seed and actions, they are saved in this browser again.`,
    { timeout: 60_000 }
  );
  const restoredMs = Date.now() - reloadAt;
  await expect(page.getByRole('status').filter({ hasText: /^The reload lost / })).toHaveCount(0);
  await expect.poll(() => matching(page), { timeout: 60_000 }).toBe(total);
  await expect(page.getByLabel('Audit records saved', { exact: true })).toHaveText(fmt(total));
  await expect(page.getByLabel('Audit records being written', { exact: true })).toBeHidden();
  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(total);
  // Every decision made before the reload is there: the lane found them all.
  await expect(page.getByRole('status').filter({ hasText: 'Resumed' })).toContainText(
    'lane B found 299 stored decisions'
  );
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText('299');
  expect(await diskCount(page, DECISIONS_DB, [run, 'B'])).toBe(299);

  // The file is the run's whole log, byte for byte the CLI's.
  const { lines, said, text } = await exportJsonl(page);
  test.info().annotations.push({
    type: 'figures',
    description: `run ${total} rows, ${saved} on disk at the reload (${lost} restored); lane B decisions on disk at the reload ${decisionsBefore} of 299; reload to the clock ${resumedMs} ms, to every restored row on disk ${restoredMs} ms; after it: ${await matching(page)} in the table, ${lines} in the file; said: "${said}"`
  });
  expect(said).toBe('');
  expect(lines).toBe(total);
  expect(text).toEqual(recordsUpTo(24).map(auditLineJson));

  // A seek back to mid-day: the table has the rows up to there, all saved.
  const time = page.getByRole('slider', { name: 'Time' });
  await time.scrollIntoViewIfNeeded();
  const box = (await time.boundingBox())!;
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await expect
    .poll(async () => Math.abs(Number(await time.getAttribute('aria-valuenow')) - 12 * 3600))
    .toBeLessThan(30 * 60);
  await expect(time).toHaveAttribute('aria-busy', 'false', { timeout: 60_000 });
  await expect(page.getByRole('status').filter({ hasText: /^Restored the / })).toHaveCount(0);
  const midday = await matching(page);
  expect(midday).toBeGreaterThan(saved);
  expect(midday).toBeLessThan(total);
  // The re-simulation writes the rows up to there into a fresh namespace. On a loaded machine a
  // batch can outlast the worker's write time limit, which the page reports; Retry writes them.
  await expect(async () => {
    const retry = page.getByRole('button', { name: 'Retry storage' });
    if (await retry.isVisible()) await retry.click();
    await expect(page.getByLabel('Audit records saved', { exact: true })).toHaveText(fmt(midday), {
      timeout: 5_000
    });
  }).toPass({ timeout: 60_000 });
});

/** The day scenario as `lab run` runs it (with client restarts `restartAt` ms after its start). */
function daySim(onAudit: (r: AuditRecord) => void, restartAt: number[] = []): Simulation {
  const data = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
    string,
    unknown
  >;
  data.durationMs = 24 * 3_600_000;
  const parsed = parseScenario(data);
  if (!parsed.ok) throw new Error(parsed.errors[0]?.message);
  return new Simulation(parsed.scenario, { onAudit, restartAt });
}

/** The day scenario's audit records up to `hours` into the run, as `lab run` makes them. */
function recordsUpTo(hours: number): AuditRecord[] {
  const out: AuditRecord[] = [];
  const sim = daySim((r) => out.push(r));
  sim.advanceTo(sim.start + hours * 3_600_000);
  return out;
}

test('a reload mid-run while the audit writes were held: the durable lane asks no dialog again for what it decided before, the run equals lab run --restart-at, and a seek back shows the run’s own rows in order', async ({
  page
}) => {
  test.setTimeout(240_000);
  const clock = page.getByLabel('Simulated time', { exact: true });
  await injectWorkerFault(page, { kind: 'hold', store: 'audit', after: 1_000 });
  await openDay(page);
  await simulate(page, 12);
  await expect(auditAlert(page)).toContainText('could not be saved', { timeout: 30_000 });
  const { t } = await page.evaluate(
    () => JSON.parse(sessionStorage.getItem('sampling-policy-lab-run') ?? 'null') as { t: number }
  );
  const stored = await shown(page, 'Lane B stored decisions');
  expect(stored).toBeGreaterThan(0);
  await page.unrouteAll();
  await page.reload();
  await expect(clock).toHaveText('12:00:00', { timeout: 60_000 });
  // Every decision lane B had made was on disk (the held audit writes did not hold them back).
  await expect(page.getByRole('status').filter({ hasText: 'Resumed' })).toContainText(
    `lane B found ${stored} stored decisions`
  );
  // The audit rows the reload lost are made again and written.
  await expect(page.getByRole('status').filter({ hasText: /^Restored the / })).toBeVisible({
    timeout: 60_000
  });
  await expect(page.getByRole('status').filter({ hasText: /^The reload lost / })).toHaveCount(0);
  // On to the end: the run takes engine copies after the restart, which a seek back could start
  // from in place.
  await page.getByLabel('Hours', { exact: true }).fill('12');
  await page.getByRole('button', { name: 'Simulate 12 h' }).click();
  await expect(clock).toHaveText('24:00:00', { timeout: 90_000 });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();

  // The reload was a client restart at t, nothing more: lane B replayed the decisions it had
  // stored before it instead of asking again, exactly as `lab run --restart-at t` does — and
  // the whole audit log is that run's, byte for byte.
  const cliRows: string[] = [];
  const cli = daySim((r) => cliRows.push(auditLineJson(r)), [t - daySim(() => {}).start]);
  cli.advanceTo(cli.end);
  for (const lane of ['A', 'B'] as const) {
    const c = cli.lanes[lane].metrics.counters;
    for (const [label, n] of [
      ['requests', c.requests],
      ['consent prompts', c.consentPrompts],
      ['replayed decisions', c.replays]
    ] as const)
      await expect(page.getByLabel(`Lane ${lane} ${label}`, { exact: true })).toHaveText(
        n.toLocaleString('en-US')
      );
  }
  const whole = await exportJsonl(page);
  expect(whole.said).toBe('');
  expect(whole.text).toEqual(cliRows);

  const time = page.getByRole('slider', { name: 'Time' });
  await time.scrollIntoViewIfNeeded();
  const box = (await time.boundingBox())!;
  await page.mouse.click(box.x + box.width * 0.75, box.y + box.height / 2);
  await expect
    .poll(async () => Math.abs(Number(await time.getAttribute('aria-valuenow')) - 18 * 3600))
    .toBeLessThan(30 * 60);
  await expect(time).toHaveAttribute('aria-busy', 'false', { timeout: 60_000 });
  await expect(page.getByRole('status').filter({ hasText: /^The reload lost / })).toHaveCount(0);

  // Every row up to noon is the run's own, in order (after noon the reload's restart changed
  // the run, so `lab run`'s rows are not the reference there).
  const noon = recordsUpTo(12);
  const rows = await matching(page);
  const { lines, said, text } = await exportJsonl(page);
  test.info().annotations.push({
    type: 'figures',
    description: `after the seek back: ${rows} rows in the table, ${lines} in the file (${noon.length} up to noon); said: "${said}"`
  });
  expect(rows).toBeGreaterThan(noon.length);
  expect(lines).toBe(rows);
  expect(said).toBe('');
  const key = (r: AuditRecord) => `${r.lane ?? ''} ${r.seq} ${r.t}`;
  expect(text.slice(0, noon.length).map((l) => key(JSON.parse(l) as AuditRecord))).toEqual(
    noon.map(key)
  );
});
