/**
 * Runs are isolated (SPEC §4): the durable lane keeps each run's decisions under its own
 * namespace, so running a scenario to its end, pressing Reset and running it again gives the
 * same numbers and the same audit log — and the same as `lab run` in Node.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { Simulation } from '../src/lib/sim/engine/engine';
import { auditLineJson, metricsJson } from '../src/lib/sim/report/report';
import { parseScenario } from '../src/lib/sim/input/scenario';
import type { AuditRecord } from '../src/lib/machine/types';
import { downloadJsonl } from './run-helpers';
import { DECISIONS_DB, runId } from './storage-helpers';
import type { LaneId } from '../src/lib/machine/vocabulary';

const ROWS = [
  ['requests', 'requests'],
  ['consent prompts', 'consentPrompts'],
  ['provider calls', 'providerCalls'],
  ['fresh evaluations', 'fresh'],
  ['replayed decisions', 'replays'],
  ['flagged retry loops', 'alertedIdentities'],
  ['abandoned tasks', 'abandoned']
] as const;

function cli(name: string) {
  const parsed = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!parsed.ok) throw new Error(parsed.errors[0]?.message);
  const audit: string[] = [];
  const sim = new Simulation(parsed.scenario, {
    onAudit: (r: AuditRecord) => audit.push(auditLineJson(r))
  });
  sim.runToEnd();
  const metrics = JSON.parse(metricsJson(sim)) as {
    lanes: Record<LaneId, { counters: Record<string, number> }>;
  };
  return { metrics, audit: audit.join('\n') + '\n', hours: parsed.scenario.durationMs / 3.6e6 };
}

async function numbers(page: Page) {
  const out: Record<string, number> = {};
  for (const lane of ['A', 'B'] as const)
    for (const [label] of ROWS) {
      const text = await page.getByLabel(`Lane ${lane} ${label}`, { exact: true }).textContent();
      out[`${lane} ${label}`] = Number(text!.replace(/[^0-9]/g, ''));
    }
  return out;
}

async function runToEnd(page: Page, hours: number) {
  await page.getByLabel('Hours', { exact: true }).fill(String(hours));
  await page.getByRole('button', { name: `Simulate ${hours} h` }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText(`${hours}:00:00`, {
    timeout: 45_000
  });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
}

test('reconnect-bypass to its end, Reset, again: the same numbers and audit, equal to lab run', async ({
  page
}) => {
  test.setTimeout(120_000);
  const expected = cli('reconnect-bypass');
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect(page.getByLabel('Scenario', { exact: true })).toHaveValue('reconnect-bypass');

  await runToEnd(page, expected.hours);
  const first = await numbers(page);
  const firstAudit = await downloadJsonl(page);

  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await expect(page.getByLabel('Lane B requests', { exact: true })).toHaveText('0');
  await expect(page.getByLabel('Lane B stored decisions', { exact: true })).toHaveText('0');
  await runToEnd(page, expected.hours);
  const second = await numbers(page);
  const secondAudit = await downloadJsonl(page);

  expect(second).toEqual(first);
  expect(secondAudit).toBe(firstAudit);
  expect(secondAudit).toBe(expected.audit);
  for (const lane of ['A', 'B'] as const)
    for (const [label, key] of ROWS)
      expect(first[`${lane} ${label}`], `lane ${lane} ${label}`).toBe(
        expected.metrics.lanes[lane].counters[key]
      );
  // The durable lane prompted at all, so this run's decisions were fresh, not the first run's.
  expect(first['B consent prompts']).toBeGreaterThan(0);
});

test('old runs are pruned: after many Resets only the last few namespaces remain', async ({
  page
}) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  const runs = new Set<string>();
  for (let i = 0; i < 7; i++) {
    await page.getByRole('button', { name: 'Step' }).click();
    const id = (await runId(page))!;
    runs.add(id);
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    await expect(page.getByLabel('Lane A requests', { exact: true })).toHaveText('0');
    // The counters read 0 before the worker has answered the reload of the scenario; the
    // tab remembers the new run's namespace only once it has (read earlier, it is the old one).
    await expect.poll(() => runId(page)).not.toBe(id);
  }
  runs.add((await runId(page))!);
  expect(runs.size).toBe(8);
  const kept = () =>
    page.evaluate(
      (db) =>
        new Promise<string[]>((resolve, reject) => {
          const open = indexedDB.open(db);
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const conn = open.result;
            const req = conn
              .transaction('decisions', 'readonly')
              .objectStore('decisions')
              .getAll(IDBKeyRange.bound(['~runs'], ['~runs', []], true, true));
            req.onsuccess = () => {
              conn.close();
              resolve((req.result as { id: string }[]).map((r) => r.id));
            };
          };
        }),
      DECISIONS_DB
    );
  // The current run and the four before it (pruned a moment after the last start, off the
  // path of the run's own first writes).
  await expect.poll(async () => (await kept()).length, { timeout: 20_000 }).toBe(5);
  expect(await kept()).toContain(await runId(page));
});
