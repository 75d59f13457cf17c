/**
 * Storage faults told honestly (SPEC §4): for every fault, the lane says in words what could not
 * be saved, stops calling itself durable, splits its count into saved and held-in-memory, and the
 * number it shows as saved is exactly what IndexedDB holds — and what a reload finds.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario } from '../src/lib/sim/input/scenario';
import {
  AUDIT_DB,
  DECISIONS_DB,
  dayLink,
  diskCount,
  healStorage,
  injectWorkerFault,
  openDay,
  runId,
  shown,
  simulate
} from './storage-helpers';

/** How many audit records `lab run` writes for the day scenario (both lanes). */
function auditRecords(hours: number): number {
  const data = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
    string,
    unknown
  >;
  data.durationMs = hours * 3_600_000;
  const parsed = parseScenario(data);
  if (!parsed.ok) throw new Error(parsed.errors[0]?.message);
  let n = 0;
  new Simulation(parsed.scenario, { onAudit: () => n++ }).runToEnd();
  return n;
}

const laneBHeader = (page: Page) => page.getByRole('columnheader', { name: /^B / });

async function expectReloadFinds(page: Page, saved: number) {
  await page.unrouteAll();
  await page.reload();
  // The run had ended: it resumes at its end (Play has nothing left to play).
  await expect(page.getByRole('button', { name: 'Reset', exact: true })).toBeEnabled();
  if (saved > 0)
    await expect(page.getByRole('status').filter({ hasText: 'Resumed' })).toContainText(
      `lane B found ${saved} stored decisions`
    );
  await expect(page.getByLabel('Lane B stored decisions', { exact: true })).toHaveText(
    String(saved)
  );
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText(
    String(saved)
  );
}

for (const fault of [
  {
    kind: 'quota' as const,
    words: "the browser's storage for this site is full",
    title: 'quota exceeded after 20 writes'
  },
  {
    kind: 'abort' as const,
    words: 'the browser aborted the storage transaction',
    title: 'transactions aborted after 20 writes'
  }
]) {
  test(`${fault.title}: said at once, nothing counted as saved that was lost`, async ({ page }) => {
    test.setTimeout(150_000);
    await injectWorkerFault(page, { kind: fault.kind, after: 20 });
    await openDay(page);
    await simulate(page);

    const laneAlert = page.getByRole('alert').filter({ hasText: /^Lane B: / });
    await expect(laneAlert).toContainText(fault.words);
    await expect(laneAlert).toContainText('for this page only');
    // The lane's name ("Durable store") is struck through and hidden from its accessible name.
    await expect(laneBHeader(page)).toHaveAccessibleName(
      /^B\s*Held in memory only \(storage failed\)$/
    );
    await expect(page.getByRole('alert').filter({ hasText: /^Audit log: / })).toContainText(
      fault.words
    );

    const stored = await shown(page, 'Lane B stored decisions');
    const saved = await shown(page, 'Lane B decisions saved');
    const held = await shown(page, 'Lane B decisions held in memory only');
    expect(stored).toBe(299);
    expect(held).toBeGreaterThan(0);
    expect(saved + held).toBe(stored);
    await expect(laneAlert).toContainText(`Lane B: ${held} decisions could not be saved`);

    const run = (await runId(page))!;
    const onDisk = await diskCount(page, DECISIONS_DB, [run, 'B']);
    test.info().annotations.push({
      type: 'figures',
      description: `lane B: ${stored} stored, ${saved} shown saved, ${held} held; on disk ${onDisk}`
    });
    expect(onDisk).toBe(saved);
    const auditText = await page
      .getByRole('alert')
      .filter({ hasText: /^Audit log: / })
      .innerText();
    const auditSaved = Number(
      /([\d,]+) records? (?:is|are) saved/.exec(auditText)![1]!.replace(/,/g, '')
    );
    expect(await diskCount(page, AUDIT_DB, [run])).toBe(auditSaved);

    await expectReloadFinds(page, saved);
  });
}

test('Retry storage, once there is room again, saves everything that was held', async ({
  page
}) => {
  test.setTimeout(150_000);
  await injectWorkerFault(page, { kind: 'quota', after: 20 });
  await openDay(page);
  await simulate(page);
  await expect(page.getByRole('alert').filter({ hasText: /^Lane B: / })).toBeVisible();

  await healStorage(page);
  await page.getByRole('button', { name: 'Retry storage' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveText('299');
  await expect(
    page.getByLabel('Lane B decisions held in memory only', { exact: true })
  ).toHaveCount(0);
  await expect(laneBHeader(page)).toContainText('Durable store');
  const run = (await runId(page))!;
  expect(await diskCount(page, DECISIONS_DB, [run, 'B'])).toBe(299);
  // The audit log's rows are written after the decisions, batch by batch: once the page says
  // all of them are saved, they are on disk.
  await expect(page.getByLabel('Audit records saved', { exact: true })).toHaveText(
    auditRecords(24).toLocaleString('en-US'),
    { timeout: 60_000 }
  );
  expect(await diskCount(page, AUDIT_DB, [run])).toBe(auditRecords(24));
});

test('an IndexedDB open that never answers: the page is ready within seconds and says so', async ({
  page
}) => {
  await injectWorkerFault(page, { kind: 'hang' });
  await page.goto(dayLink());
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 15_000 });
  await expect(page.getByRole('alert').first()).toContainText('did not open in time');
  await expect(laneBHeader(page)).toContainText('Connection-scoped (durable storage unavailable)');
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveCount(0);
  await expectReloadFinds(page, 0);
});

test('IndexedDB absent: durable lanes run connection-scoped and say so', async ({ page }) => {
  await injectWorkerFault(page, { kind: 'absent' });
  await openDay(page, 1);
  await expect(page.getByRole('alert').first()).toContainText('offers no IndexedDB');
  await expect(laneBHeader(page)).toContainText('Connection-scoped (durable storage unavailable)');
  await simulate(page, 1);
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveCount(0);
  expect(await runId(page)).toBeNull();
  await expectReloadFinds(page, 0);
});

test("an open blocked by another tab's version change: reported, and Retry recovers once it is gone", async ({
  page,
  context
}) => {
  const blocker = await context.newPage();
  await blocker.goto('./scenarios/reconnect-bypass.json');
  await blocker.evaluate(async (db) => {
    const first = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(db);
      r.onupgradeneeded = () => r.result.createObjectStore('decisions');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    // This tab keeps its connection open and asks for an upgrade: the upgrade waits (blocked),
    // and every later open of the database queues behind it.
    (globalThis as { held?: IDBDatabase }).held = first;
    await new Promise((resolve) => {
      indexedDB.open(db, first.version + 1).onblocked = resolve;
    });
  }, DECISIONS_DB);

  await page.goto(dayLink(1));
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 15_000 });
  await expect(page.getByRole('alert').first()).toContainText('is blocked');
  await expect(laneBHeader(page)).toContainText('Connection-scoped (durable storage unavailable)');
  await expect(page.getByLabel('Lane B decisions saved', { exact: true })).toHaveCount(0);

  await blocker.close();
  await page.getByRole('button', { name: 'Retry storage' }).click();
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(laneBHeader(page)).toContainText('Durable store');
  await simulate(page, 1);
  await expect(
    page.getByLabel('Lane B decisions held in memory only', { exact: true })
  ).toHaveCount(0);
  // The saved count follows the group commits, so it is read once it has settled: it must come to
  // what the disk holds (read once, it was seen at 3 while 14 were committed).
  const run = (await runId(page))!;
  const onDisk = () => diskCount(page, DECISIONS_DB, [run, 'B']);
  await expect
    .poll(async () => (await shown(page, 'Lane B decisions saved')) - (await onDisk()))
    .toBe(0);
  expect(await shown(page, 'Lane B decisions saved')).toBeGreaterThan(0);
});
