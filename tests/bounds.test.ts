/**
 * Issue #19, item 2: links and files the limits admitted crashed the tab or broke the page. A
 * behaviour parameter out of bounds is refused with its path; an engine error in the middle of a
 * fast-forward ends it with what broke, as live play's does, and the clock stays a time.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { encodeScenarioHash } from '../src/lib/ui/share';

async function open(page: Page, url = './') {
  await page.goto(url);
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

const clock = (page: Page) => page.getByLabel('Simulated time', { exact: true });

test('a link whose tight loop retries every 0 ms is refused with the path, not run', async ({
  page
}) => {
  // Before: it opened, and the tab crashed after 98 s (worker 3.5 GB).
  const data = JSON.parse(readFileSync('static/scenarios/budget-window.json', 'utf8')) as {
    servers: Record<string, unknown>[];
  };
  data.servers[1] = { ...data.servers[1], params: { intervalMs: 0 } };
  await open(page, `./${encodeScenarioHash(data)}`);
  await expect(page.getByRole('alert')).toContainText(
    '$.servers[1].params.intervalMs: must be at least 10 ms, got the number 0'
  );
  await expect(page.getByLabel('Scenario', { exact: true })).toHaveValue('reconnect-bypass');
});

test('an engine error in the middle of a fast-forward ends it, says what broke, and the clock is a time', async ({
  page
}) => {
  // The worker's engine throws "Invalid time value" after a while, as it did on a wait of NaN ms.
  await page.route('**/workers/sim.worker-*.js', async (route) => {
    const res = await route.fetch();
    const inject = `(() => {
      const toIso = Date.prototype.toISOString;
      let calls = 0;
      Date.prototype.toISOString = function () {
        if (++calls > 300) throw new RangeError('Invalid time value');
        return toIso.call(this);
      };
    })();\n`;
    await route.fulfill({ response: res, body: inject + (await res.text()) });
  });
  await open(page);
  await page.getByLabel('Hours', { exact: true }).fill('24');
  await page.getByRole('button', { name: 'Simulate 24 h' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Fast-forward stopped' })).toHaveText(
    /^Fast-forward stopped: the engine failed at \d+:\d\d:\d\d \(simulated\): Invalid time value$/
  );
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
  await expect(clock(page)).toHaveText(/^\d+:\d\d:\d\d$/);
  await expect(clock(page)).not.toHaveText('0:00:00');
});
