/**
 * Issue #22 in the page: a Claude Desktop log dropped on the playground is imported, replayed
 * against the scenario's lanes, and the page says it is in trace mode — "Replaying <file>", the
 * servers and time span, no scenario question — with what the policy would have done beside what
 * the log shows (the same numbers `lab replay` prints for this log against reconnect-bypass).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';

const FILE = 'mcp-server-weather.log';
const TEXT = readFileSync(`static/traces/logs/${FILE}`, 'utf8');

async function dropLog(page: Page, name: string, text: string): Promise<void> {
  const dt = await page.evaluateHandle(
    ([n, t]) => {
      const d = new DataTransfer();
      d.items.add(new File([t], n));
      return d;
    },
    [name, text] as const
  );
  await page
    .getByRole('region', { name: 'Client logs' })
    .dispatchEvent('drop', { dataTransfer: dt });
}

/** The cells of the what-if table's row named `label` in the group of `server`. */
function cells(page: Page, server: string, label: string) {
  const table = page.getByRole('table', { name: 'What the policy would have done' });
  return table
    .getByRole('rowgroup')
    .filter({ has: page.getByRole('rowheader', { name: server, exact: true }) })
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: label, exact: true }) })
    .getByRole('cell');
}

test('a dropped Claude log replays in trace mode with the what-if table', async ({ page }) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await expect(page.getByRole('region', { name: 'Lesson' })).toContainText('Predict:');

  await dropLog(page, FILE, TEXT);

  await expect(page.getByRole('heading', { name: `Replaying ${FILE}` })).toBeVisible();
  const logs = page.getByRole('region', { name: 'Client logs' });
  await expect(logs).toContainText(
    '1 server (weather), 6 sampling requests on 2 connections, from 2025-07-20 13:44:16.395Z to 2025-07-20 13:45:25.000Z (1 min).'
  );
  await expect(logs).toContainText('1 answered with a result, 4 with an error, 1 not at all.');
  await expect(logs.getByText('3 lines skipped')).toBeVisible();
  // The scenario's own question does not belong to this traffic.
  await expect(page.getByRole('region', { name: 'Lesson' })).toHaveCount(0);

  // What the log shows, then lane A, then lane B.
  await expect(cells(page, 'weather', 'Sampling requests')).toHaveText(['6', '', '']);
  await expect(cells(page, 'weather', 'Served')).toHaveText(['1', '0', '0']);
  await expect(cells(page, 'weather', 'Refused')).toHaveText(['4', '6', '6']);
  await expect(cells(page, 'weather', 'Served then, refused now')).toHaveText(['', '1', '1']);
  await expect(cells(page, 'weather', 'by user.denied')).toHaveText(['', '1', '1']);
  await expect(cells(page, 'weather', 'No answer then: served / refused now')).toHaveText([
    '',
    '0 / 1',
    '0 / 1'
  ]);
  await expect(cells(page, 'weather', 'Consent dialogs')).toHaveText(['—', '3', '2']);
  await expect(logs).toContainText('2 requests changed outcome in a lane.');
  await logs.getByText('The requests that changed').click();
  const changed = logs.getByRole('table', { name: 'Requests whose outcome changed' });
  await expect(changed.getByRole('row').nth(1).getByRole('cell')).toHaveText([
    '+3.905 s',
    'weather',
    'result',
    'user.denied',
    'user.denied'
  ]);
  await expect(changed.getByRole('row')).toHaveCount(3);

  // The playground runs the same trace: six requests in each lane once simulated.
  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect(page.getByLabel('Lane A requests')).toHaveText('6', { timeout: 45_000 });
  await expect(page.getByLabel('Lane B requests')).toHaveText('6');
});

test('a file that is no client log is refused in one line, and the scenario stays', async ({
  page
}) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await dropLog(page, 'notes.txt', 'hello\n'.repeat(60));
  await expect(page.getByRole('alert')).toHaveText(
    'Log not imported: notes.txt: cannot tell the format from its first 50 lines: not a Claude Desktop log, an Inspector export, a JSON-RPC capture or an audit log (lab import --format names it)'
  );
  await expect(page.getByRole('region', { name: 'Lesson' })).toContainText('Predict:');
});

test('trace mode is in the address: a reload replays the same log', async ({ page }) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await dropLog(page, FILE, TEXT);
  await expect(page.getByRole('heading', { name: `Replaying ${FILE}` })).toBeVisible();
  // The dropped log is small: the address carries it, with the scenario it replays against.
  await expect(page).toHaveURL(/#s=[A-Za-z0-9+$-]+&t=[A-Za-z0-9+$-]+$/);

  await page.reload();
  await expect(page.getByRole('heading', { name: `Replaying ${FILE}` })).toBeVisible();
  await expect(cells(page, 'weather', 'Served then, refused now')).toHaveText(['', '1', '1']);
  await expect(page.getByRole('region', { name: 'Lesson' })).toHaveCount(0);
});

test('a ready-made log by name: ?trace=, and a copied link opens it elsewhere', async ({
  page,
  context,
  browser
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto('./?scenario=reconnect-bypass&trace=claude-weather');
  await expect(page.getByRole('heading', { name: `Replaying ${FILE}` })).toBeVisible();
  await expect(cells(page, 'weather', 'Sampling requests')).toHaveText(['6', '', '']);

  // Picked in the panel: the address names it.
  await page.getByLabel('Or a ready-made log').selectOption('inspector');
  await expect(
    page.getByRole('heading', { name: 'Replaying inspector-history.json' })
  ).toBeVisible();
  await expect(page).toHaveURL(/\?scenario=reconnect-bypass&trace=inspector$/);

  const share = page.getByRole('region', { name: 'Share and import' });
  await share.getByRole('button', { name: 'Copy link' }).click();
  await expect(share.getByRole('status')).toContainText('Link copied');
  await expect(share.getByRole('status')).not.toContainText('leaves out the recorded trace');
  const url = await page.evaluate(() => navigator.clipboard.readText());
  expect(url).toMatch(/#s=[A-Za-z0-9+$-]+&t=[A-Za-z0-9+$-]+/);

  const other = await browser.newContext();
  const again = await other.newPage();
  await again.goto(url);
  await expect(
    again.getByRole('heading', { name: 'Replaying inspector-history.json' })
  ).toBeVisible();
  await expect(again.getByRole('table', { name: 'What the policy would have done' })).toBeVisible();
  await other.close();
});

test('a log too large for a link is replayed, and the page says to share the file', async ({
  page
}) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  // The weather log and 40 error lines of digits that do not compress: about 160 KB.
  let seed = 11;
  const noise = Array.from({ length: 40 }, () => {
    let line = '';
    for (let k = 0; k < 4000; k++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      line += String(seed % 10);
    }
    return `2025-07-20T13:45:30.000Z [weather] [error] ${line}`;
  }).join('\n');
  const big = TEXT + noise + '\n';
  await dropLog(page, 'big.log', big);
  await expect(page.getByRole('heading', { name: 'Replaying big.log' })).toBeVisible();
  const kb = Math.ceil(Buffer.byteLength(big) / 1024);
  await expect(page.getByRole('region', { name: 'Client logs' })).toContainText(
    `This page’s link cannot carry your log (${kb} KB): share the file with the link.`
  );
  await expect(page).not.toHaveURL(/&t=/);
});

test('a what-if row is one click from the audit log filtered to its requests', async ({ page }) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await dropLog(page, FILE, TEXT);
  await expect(page.getByRole('heading', { name: `Replaying ${FILE}` })).toBeVisible();
  await page.getByRole('button', { name: /Simulate/ }).click();
  await expect(page.getByLabel('Lane A requests')).toHaveText('6', { timeout: 45_000 });

  const body = page.getByRole('grid', { name: 'Audit records' }).getByRole('rowgroup').nth(1);
  const rows = body.getByRole('row');
  /** Each shown audit row as "lane reason". */
  const shown = async () =>
    (
      await rows.evaluateAll((rs) =>
        rs.map((r) => {
          const c = [...r.querySelectorAll('[role="gridcell"]')].map((x) => x.textContent!.trim());
          return `${c[1]} ${c[4]}`;
        })
      )
    ).sort();
  await expect(rows).toHaveCount(12);

  // The weather server's "served then, refused now": one request, refused in each lane.
  const table = page.getByRole('table', { name: 'What the policy would have done' });
  const row = table.getByRole('button', { name: 'Served then, refused now', exact: true });
  await row.click();
  await expect(row).toHaveAttribute('aria-pressed', 'true');
  const focus = page.getByRole('status').filter({ hasText: 'Showing the rows behind' });
  await expect(focus).toHaveText(
    /Showing the rows behind “weather: Served then, refused now: 2 audit rows once the replay has run to its end”\./
  );
  await expect(rows).toHaveCount(2);
  expect(await shown()).toEqual(['A user.denied', 'B user.denied']);

  // Every changed request: the two the table lists, each lane's row of each.
  await page.getByRole('button', { name: 'Show the 2 changed requests in the audit log' }).click();
  await expect(focus).toContainText('The requests whose outcome changed: 4 audit rows');
  await expect(rows).toHaveCount(4);
  expect(await shown()).toEqual([
    'A user.denied',
    'A user.denied',
    'B user.denied',
    'B user.denied'
  ]);

  // Clearable: the whole log again.
  await focus.getByRole('button', { name: 'Show every row' }).click();
  await expect(focus).toHaveCount(0);
  await expect(rows).toHaveCount(12);
});

test('a picked folder of Claude logs replays its MCP logs as one trace, and says what it skipped', async ({
  page
}) => {
  // Claude Desktop's logs folder: two MCP logs, and its own logs and a note beside them.
  const dir = join(mkdtempSync(join(tmpdir(), 'claude-logs-')), 'Claude');
  mkdirSync(dir);
  writeFileSync(join(dir, FILE), TEXT);
  writeFileSync(join(dir, 'mcp.log'), readFileSync('static/traces/logs/mcp.log', 'utf8'));
  writeFileSync(join(dir, 'main.log'), '2025-07-20 13:44:00 [info] Starting app\n');
  writeFileSync(join(dir, 'notes.txt'), 'not a log\n');

  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await page.getByLabel('Or a folder of Claude Desktop logs').setInputFiles(dir);

  await expect(page.getByRole('heading', { name: 'Replaying Claude (2 files)' })).toBeVisible();
  const logs = page.getByRole('region', { name: 'Client logs' });
  // The same counts as `lab import mcp-server-weather.log mcp.log`.
  await expect(logs).toContainText(
    '3 servers (weather, memory, research), 10 sampling requests on 4 connections'
  );
  await expect(logs).toContainText(
    'Skipped 2 files in the folder that are not MCP logs (mcp.log, mcp-server-<name>.log): main.log, notes.txt.'
  );
  await expect(cells(page, 'All servers', 'Sampling requests')).toHaveText(['10', '', '']);
  // The folder's logs are small: the address carries them, and a reload replays the folder.
  await expect(page).toHaveURL(/&t=/);
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Replaying Claude (2 files)' })).toBeVisible();
});

test('several log files dropped at once are one trace', async ({ page }) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  const dt = await page.evaluateHandle(
    ([a, b]) => {
      const d = new DataTransfer();
      d.items.add(new File([a], 'mcp.log'));
      d.items.add(new File([b], 'mcp-server-weather.log'));
      return d;
    },
    [readFileSync('static/traces/logs/mcp.log', 'utf8'), TEXT] as const
  );
  await page
    .getByRole('region', { name: 'Client logs' })
    .dispatchEvent('drop', { dataTransfer: dt });
  await expect(page.getByRole('heading', { name: 'Replaying 2 files' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Client logs' })).toContainText(
    '3 servers (weather, memory, research), 10 sampling requests on 4 connections'
  );
});

test('an edit during the replay: the what-if says it is of the lanes as loaded, and works them out again on request', async ({
  page
}) => {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
  await dropLog(page, FILE, TEXT);
  await expect(cells(page, 'weather', 'Consent dialogs')).toHaveText(['—', '3', '2']);
  const logs = page.getByRole('region', { name: 'Client logs' });
  const table = page.getByRole('table', { name: 'What the policy would have done' });
  await expect(table.getByRole('button', { name: 'Consent dialogs' })).toBeVisible();

  // Lane B's decisions go connection-scoped, as lane A's are.
  await page.getByText('Configure lane B').click();
  await page
    .getByRole('radio', { name: 'Connection-scoped' })
    .and(page.locator('[name="scope-B"]'))
    .check();
  const stale = logs.getByRole('status').filter({ hasText: 'The lanes have changed' });
  await expect(stale).toContainText(
    'The lanes have changed since this replay began: the what-if shows what the lanes as they were would have done, and its rows no longer lead to the audit log.'
  );
  // Its rows would name the audit rows of a run that is no longer the playground's.
  await expect(table.getByRole('button', { name: 'Consent dialogs' })).toHaveCount(0);

  await stale
    .getByRole('button', { name: 'Replay the log again with the lanes as they are now' })
    .click();
  await expect(stale).toHaveCount(0);
  await expect(cells(page, 'weather', 'Consent dialogs')).toHaveText(['—', '3', '3']);
  await expect(table.getByRole('button', { name: 'Consent dialogs' })).toBeVisible();
  await expect(page.getByRole('heading', { name: `Replaying ${FILE}` })).toBeVisible();
});
