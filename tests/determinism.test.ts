import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { digestRun } from '../src/lib/sim/report/report';
import { parseScenario } from '../src/lib/sim/input/scenario';
import { GOLDEN_SCENARIOS } from '../src/lib/ui/golden';

test('frames.jsonl and audit.jsonl are byte-identical in Node and in a Web Worker', async ({
  page
}) => {
  await page.goto('./selftest/');
  await expect(page.getByRole('status')).toHaveText('Done', { timeout: 60_000 });
  for (const name of GOLDEN_SCENARIOS) {
    const parsed = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
    if (!parsed.ok) throw new Error(`${name}: ${parsed.errors[0]?.message}`);
    const node = digestRun(parsed.scenario);
    expect(node.frameLines).toBeGreaterThan(0);
    const row = page.locator(`tr[data-scenario="${name}"]`);
    await expect(row.locator('.frames')).toHaveText(node.frames);
    await expect(row.locator('.audit')).toHaveText(node.audit);
  }
});
