/**
 * Issue #21 in real Chromium: snapshots outlive the page. A run stopped mid-way has its latest
 * snapshot saved in IndexedDB; a reload resumes from it — the same simulated time, the same
 * counters — and the run then goes on as `lab run --restart-at T` (a reload is a client restart).
 * A saved snapshot that cannot be read is dropped with a note and the run re-simulated instead.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { runAndWrite } from '../src/cli/run';
import type { LaneCounters } from '../src/lib/sim/engine/metrics';
import { parseScenario, type LaneId } from '../src/lib/sim/input/scenario';
import { loadParsers } from '../src/lib/sim/input/parsers';

test.beforeAll(() => loadParsers());

const LANES: LaneId[] = ['A', 'B'];
const COUNTERS = ['requests', 'consent prompts', 'provider calls', 'replayed decisions'];
const counter = (page: Page, lane: LaneId, name: string) =>
  page.getByLabel(`Lane ${lane} ${name}`, { exact: true });
const clock = (page: Page) => page.getByLabel('Simulated time', { exact: true });

function scenario() {
  const parsed = parseScenario(
    JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as unknown
  );
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  return parsed.scenario;
}

function cliCounters(restartMs: number): Record<LaneId, LaneCounters> {
  const out = mkdtempSync(join(tmpdir(), 'reload-snapshot-'));
  try {
    runAndWrite({ scenario: scenario(), out, restartAt: [restartMs] });
    const m = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8')) as {
      lanes: Record<LaneId, { counters: LaneCounters }>;
    };
    return { A: m.lanes.A.counters, B: m.lanes.B.counters };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function counters(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const id of LANES)
    for (const name of COUNTERS) out.push((await counter(page, id, name).textContent()) ?? '');
  return out;
}

/** What the tab remembers of its run: its namespace and where it was (run-memory.ts). */
function remembered(page: Page) {
  return page.evaluate(
    () =>
      JSON.parse(sessionStorage.getItem('sampling-policy-lab-run') ?? 'null') as {
        id: string;
        t: number;
      }
  );
}

/** The virtual time of run `id`'s snapshot in IndexedDB, or null when none is saved. */
function savedAt(page: Page, id: string) {
  return page.evaluate(
    (run) =>
      new Promise<number | null>((resolve) => {
        const req = indexedDB.open('sampling-policy-lab-run-snapshots', 1);
        req.onupgradeneeded = () => req.result.createObjectStore('snapshots');
        req.onsuccess = () => {
          const get = req.result.transaction('snapshots').objectStore('snapshots').get(run);
          get.onsuccess = () => {
            const v = get.result as { snapshot?: { meta?: { at?: { t?: number } } } } | undefined;
            req.result.close();
            resolve(v?.snapshot?.meta?.at?.t ?? null);
          };
        };
      }),
    id
  );
}

/** Simulate half of the run's hour and wait for it to stop there. */
async function halfway(page: Page) {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Hours', { exact: true }).fill('0.5');
  await page.getByRole('button', { name: 'Simulate 0.5 h' }).click();
  await expect(clock(page)).toHaveText('0:30:00', { timeout: 60_000 });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

/** Damages run `id`'s saved snapshot on disk: a snapshot of a version this build does not read. */
function damage(page: Page, id: string) {
  return page.evaluate(
    (run) =>
      new Promise<void>((resolve) => {
        const req = indexedDB.open('sampling-policy-lab-run-snapshots', 1);
        req.onupgradeneeded = () => req.result.createObjectStore('snapshots');
        req.onsuccess = () => {
          const tx = req.result.transaction('snapshots', 'readwrite');
          const t = (
            JSON.parse(sessionStorage.getItem('sampling-policy-lab-run')!) as { t: number }
          ).t;
          tx.objectStore('snapshots').put(
            {
              snapshot: { version: -1, meta: { at: { t, events: 1 } }, root: null },
              counts: { auditRows: 0, frames: 0 },
              views: [],
              actions: '[]'
            },
            run
          );
          tx.oncomplete = () => {
            req.result.close();
            resolve();
          };
        };
      }),
    id
  );
}

/**
 * Stops the run half-way, waits for its snapshot to be saved where it stands, lets `meanwhile`
 * act on run `id`'s saved state, and reloads: the run is back at 0:30:00, ready to play, with the
 * same counters (whether resumed from the snapshot or re-simulated). Returns what the tab
 * remembered of the run before the reload.
 */
async function reloadHalfway(page: Page, meanwhile?: (id: string) => Promise<unknown>) {
  await halfway(page);
  const before = await counters(page);
  const run = await remembered(page);
  // Saved when the fast-forward stopped: the snapshot is of the run where it stands.
  await expect.poll(() => savedAt(page, run.id)).toBe(run.t);
  await meanwhile?.(run.id);
  await page.reload();
  await expect(clock(page)).toHaveText('0:30:00');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  // The reload's client restart changes none of these at its instant.
  expect(await counters(page)).toEqual(before);
  return run;
}

test('a reload mid-run resumes at the same time with the same counters, then goes on as lab run --restart-at T', async ({
  page
}) => {
  const run = await reloadHalfway(page);
  await expect(page.getByRole('status').filter({ hasText: 'saved snapshot' })).toHaveCount(0);

  await page.getByLabel('Hours', { exact: true }).fill('');
  await page.getByRole('button', { name: /^Simulate to the end/ }).click();
  await expect(clock(page)).toHaveText('1:00:00', { timeout: 60_000 });
  const cli = cliCounters(run.t - scenario().start);
  for (const id of LANES) {
    await expect(counter(page, id, 'requests')).toHaveText(cli[id].requests.toLocaleString('en'));
    await expect(counter(page, id, 'provider calls')).toHaveText(
      cli[id].providerCalls.toLocaleString('en')
    );
  }
});

test('a saved snapshot that cannot be read is dropped with a note; the run is re-simulated, the same', async ({
  page
}) => {
  const run = await reloadHalfway(page, (id) => damage(page, id));
  await expect(page.getByText(/The run's saved snapshot could not be read/)).toBeVisible();
  // Dropped: read once, then gone (the resumed run saves again once it moves on).
  await expect.poll(() => savedAt(page, run.id)).toBeNull();
});
