/**
 * The site's Content-Security-Policy (issue #8): a `<meta http-equiv>` CSP in every prerendered
 * page (a static host sends no headers of ours), and the whole product working under it — the
 * playground playing in its worker, the charts drawing, Monaco's policy editor opening and
 * validating with its own workers, a fast-forward — with no violation reported and no console
 * error.
 */
import { expect, test, type Page } from '@playwright/test';

interface Violation {
  directive: string;
  blocked: string;
  source: string;
}

/** Listen for violations from before the first script runs; collect console errors. */
async function watch(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: Violation[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      w.__csp.push({ directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile })
    );
  });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return {
    errors,
    violations: () => page.evaluate(() => (window as unknown as { __csp: Violation[] }).__csp)
  };
}

test('every page carries a CSP meta: self only, hashed inline scripts, no eval', async ({
  page
}) => {
  for (const path of ['./', './single/']) {
    await page.goto(path);
    const csp = await page
      .locator('meta[http-equiv="content-security-policy"]')
      .getAttribute('content');
    expect(csp).toContain("default-src 'self'");
    expect(csp).toMatch(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+;/);
    expect(csp).toContain("worker-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).not.toMatch(/https?:\/\//);
  }
});

test('the playground plays, charts draw, Monaco validates and fast-forward runs with 0 CSP violations', async ({
  page
}) => {
  const w = await watch(page);
  await page.goto('./');
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled();

  // The simulation worker runs and the charts draw.
  await page.getByRole('button', { name: 'Play' }).click();
  await expect
    .poll(async () =>
      Number(
        (await page.getByLabel('Lane A requests', { exact: true }).textContent())!.replace(
          /\D/g,
          ''
        )
      )
    )
    .toBeGreaterThan(0);
  const charts = page.getByRole('region', { name: 'Charts' });
  await expect(charts.locator('canvas').first()).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();

  // Monaco opens with its workers and validates: a broken policy is refused with its error.
  await page.getByRole('button', { name: 'Edit policy (lane A)' }).click();
  const text = page.getByRole('textbox', { name: 'Policy JSON for lane A' });
  await expect(text).toBeVisible();
  await text.focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.type('{"version": 2');
  await expect(page.getByRole('list', { name: 'Policy errors, lane A' })).toContainText(
    'unsupported policy version 2: the only version is 1'
  );
  // The schema's findings are warnings drawn by Monaco's JSON worker: they appear only if the
  // worker started under the CSP.
  await expect(page.locator('.monaco-editor .squiggly-warning').first()).toBeAttached();

  // A fast-forward in the worker.
  await page.getByLabel('Hours', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Simulate 1 h' }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText(/^1:0\d:\d\d$/, {
    timeout: 30_000
  });

  expect(await w.violations()).toEqual([]);
  expect(w.errors).toEqual([]);
});
