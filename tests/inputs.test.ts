/**
 * The page reads files and policies as `lab` does (issue #19, items 5 and 7): one encoding rule
 * for uploads, a member name given twice refused with its path (in an upload and in the policy
 * editor, inline, with its line and column), and a huge member name quoted as a short excerpt.
 */
import { expect, test, type Page } from '@playwright/test';

async function open(page: Page) {
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();
}

const shareBar = (page: Page) => page.getByRole('region', { name: 'Share and import' });

async function readyMade(page: Page, name: string): Promise<string> {
  return (await page.request.get(`./scenarios/${name}.json`)).text();
}

function utf16le(text: string, bom = true): Buffer {
  const body = Buffer.from(text, 'utf16le');
  return bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body;
}

async function upload(page: Page, name: string, buffer: Buffer) {
  await shareBar(page)
    .getByLabel('Upload scenario')
    .setInputFiles({ name, mimeType: 'application/json', buffer });
}

test('an upload is decoded as lab decodes it: BOM and UTF-16 load, the rest says "save it as UTF-8"', async ({
  page
}) => {
  await open(page);
  const text = await readyMade(page, 'tired-user');

  await upload(
    page,
    'bom.json',
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
  );
  await expect(shareBar(page).getByRole('status')).toContainText(
    'Loaded the scenario from bom.json'
  );

  await upload(page, 'wide.json', utf16le(text));
  await expect(shareBar(page).getByRole('status')).toContainText(
    'Loaded the scenario from wide.json'
  );

  await upload(page, 'nobom.json', utf16le(text, false));
  const alert = shareBar(page).getByRole('alert');
  await expect(alert).toContainText(
    'nobom.json: the scenario cannot be read: it holds NUL bytes from its start, as UTF-16 or UTF-32 text without a byte order mark does: save it as UTF-8'
  );
  await expect(alert).toContainText('The current scenario is unchanged');

  await upload(page, 'latin1.json', Buffer.from(text.replace('"title"', '"t\u00eetle"'), 'latin1'));
  await expect(alert).toContainText(
    /latin1\.json: the scenario cannot be read: it is not UTF-8 text: the bytes at offset \d+ \(line 4\)/
  );
});

test('an upload with "sampling" twice in a block is refused with the path and the place', async ({
  page
}) => {
  await open(page);
  const text = await readyMade(page, 'tired-user');
  const at = text.indexOf('"sampling":');
  expect(at).toBeGreaterThan(0);
  const twice = text.slice(0, at) + '"sampling": false,\n' + text.slice(at);
  await upload(page, 'twice.json', Buffer.from(twice));
  const alert = shareBar(page).getByRole('alert');
  await expect(alert).toContainText(
    /Scenario not loaded: twice\.json: \$\.lanes\.A\.policy\.defaults\.sampling: duplicate member "sampling" at line \d+, column \d+: JSON would silently keep only the last one/
  );
  await expect(alert).toContainText('The current scenario is unchanged');
});

test('a 4.9 MB member name is quoted as a short excerpt, not a 9.8-million-character alert', async ({
  page
}) => {
  await open(page);
  const scenario = JSON.parse(await readyMade(page, 'tired-user')) as Record<string, unknown>;
  const key = 'k'.repeat(4_900_000);
  await upload(page, 'huge-key.json', Buffer.from(JSON.stringify({ ...scenario, [key]: 1 })));
  const alert = shareBar(page).getByRole('alert');
  await expect(alert).toContainText('unknown member "kkkk');
  await expect(alert).toContainText('(4,900,000 characters)');
  expect((await alert.textContent())!.length).toBeLessThan(1_000);
});

test('the policy editor shows a member given twice inline, with its line and column', async ({
  page
}) => {
  await open(page);
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  const editor = page.getByRole('textbox', { name: 'Policy JSON for lane A' });
  await expect(editor).toBeVisible();
  const policy = `{"version": 1, "defaults": {"sampling": false, "sampling": true}, "servers": {}}`;
  await editor.focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(policy);
  const errors = page.getByRole('list', { name: 'Policy errors, lane A' });
  const column = policy.lastIndexOf('"sampling"') + 1;
  const item = errors.getByRole('listitem').filter({ hasText: 'duplicate member "sampling"' });
  await expect(item).toContainText('$.defaults.sampling');
  await expect(item).toContainText(`line 1, column ${column}`);
  await expect(item).toContainText('JSON would silently keep only the last one');
  // Underlined where the second name is (Monaco's marker, as for every policy error).
  await expect(page.locator('.squiggly-error').first()).toBeVisible();
  await expect(
    page
      .getByRole('region', { name: /^Policy for lane A/ })
      .getByRole('button', { name: 'Apply', exact: true })
  ).toBeDisabled();
});
