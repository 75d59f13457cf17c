/**
 * `/single/` over real MCP (issue #20 item 6): the request goes from an MCP SDK `Server` to an
 * SDK `Client` whose sampling handler is the lab's client, over the SDK's in-memory transport in
 * the page, and the page shows what the server's SDK call received — the result, or the
 * `McpError` it threw — beside the frame the lab built. Under the site's CSP, with no violation.
 */
import { expect, test, type Page } from '@playwright/test';

/** CSP violations from before the first script runs, and console errors. */
async function watch(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`)
    );
  });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return {
    errors,
    violations: () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp)
  };
}

async function send(page: Page, answer: 'Approve' | 'Deny') {
  await page.getByRole('button', { name: 'Send request' }).click();
  const dialog = page.getByRole('dialog', { name: 'Allow sampling?' });
  await dialog.getByRole('button', { name: answer }).click();
  await expect(page.getByRole('button', { name: 'Send request' })).toBeEnabled();
}

/** The lab's frame as the page shows it. */
async function labFrame(page: Page) {
  return JSON.parse(await page.getByLabel('Frame JSON').innerText()) as {
    id: number;
    result?: { content: { text: string }; model: string };
    error?: { code: number; message: string; data: Record<string, unknown> };
  };
}

test('the server SDK receives the result, then a denial as McpError -32003 with the lab’s data', async ({
  page
}) => {
  const seen = await watch(page);
  await page.goto('./single/?scope=connection');
  const received = page.getByRole('region', { name: 'What the server received' });
  await expect(received.getByTestId('received-summary')).toHaveText('—');

  await send(page, 'Approve');
  await expect(received.getByTestId('received-summary')).toHaveText(
    'createMessage resolved with a result.'
  );
  const allowed = await labFrame(page);
  // The frame answers the SDK server's own first request id.
  expect(allowed.id).toBe(0);
  const result = JSON.parse(await received.getByLabel('Result the server received').innerText());
  expect(result).toMatchObject({
    role: 'assistant',
    model: allowed.result!.model,
    content: { type: 'text', text: allowed.result!.content.text }
  });

  // A new connection is a new SDK pair: a fresh dialog, and this time the person denies.
  await page.getByRole('button', { name: 'Reconnect' }).click();
  await expect(page.getByLabel('Connection', { exact: true })).toHaveText('release-notes#2');
  await send(page, 'Deny');
  await expect(received.getByTestId('received-summary')).toHaveText(
    'createMessage threw McpError (code -32003).'
  );
  const denied = await labFrame(page);
  expect(denied.error!.code).toBe(-32003);
  await expect(received.getByLabel('Error the server received')).toHaveText(
    `MCP error -32003: ${denied.error!.message}`
  );
  const data = JSON.parse(await received.getByLabel('Error data the server received').innerText());
  expect(data).toEqual(denied.error!.data);
  expect(data).toMatchObject({ reason: 'user.denied', server: 'release-notes' });

  // The same request again on this connection: replayed from the store, no dialog, same error.
  await page.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByTestId('summary')).toContainText('replayed from the store');
  await expect(received.getByTestId('received-summary')).toHaveText(
    'createMessage threw McpError (code -32003).'
  );
  await expect(page.getByLabel('Consent prompts shown')).toHaveText('2');

  expect(await seen.violations()).toEqual([]);
  expect(seen.errors).toEqual([]);
});
